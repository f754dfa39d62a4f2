package release_test

// The decision stump's method is registered by package stump, which this
// package cannot import: importing it here lets the registry's tests see
// every method, as a program that imports the pipeline does.
import _ "github.com/stabpriv/stabpriv/stump"
