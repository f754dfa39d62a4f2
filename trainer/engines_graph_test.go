//go:build !amd64.v3 && !purego

package trainer_test

// The Gorgonia engine registers itself for the graph engine's cases of
// TestStepReplaysEveryPath and BenchmarkEpoch36000x33. The kernel-variant
// runs of make test (GOAMD64=v3, where the compiler may fuse products, and
// the purego loops) leave it out: Gorgonia, its tensor package and their
// protobuf and Arrow dependencies would be most of those builds, and a
// margin kernel of plain Go stands in for it there
// (engines_variant_test.go).
import _ "github.com/stabpriv/stabpriv/graph"
