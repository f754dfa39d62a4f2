//go:build !amd64.v3 && !purego

package trainer_test

// The Gorgonia engine registers itself for the graph engine's cases of
// BenchmarkEpoch36000x33. The kernel-variant runs of make test (GOAMD64=v3,
// where the compiler may fuse products, and the purego loops), which check
// the bits of the native kernels and run no benchmark, leave it out:
// Gorgonia, its tensor package and their protobuf and Arrow dependencies
// would be most of those builds.
import _ "github.com/stabpriv/stabpriv/graph"
