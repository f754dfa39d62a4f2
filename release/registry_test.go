package release_test

// The decision stump's method and DP-SGD's are registered by packages stump
// and release/dpsgd, which this package cannot import: importing them here
// lets the registry's tests see every method, as a program that imports the
// pipeline does.
import (
	_ "github.com/stabpriv/stabpriv/release/dpsgd"
	_ "github.com/stabpriv/stabpriv/stump"
)
