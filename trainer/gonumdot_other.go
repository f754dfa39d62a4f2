//go:build !amd64 || noasm || gccgo || safe

package trainer

// gonumDdotPairs reports whether gonum's Ddot is its amd64 assembly: not
// on this build, where it is one running sum, so passFused leaves rows of
// more than gatherMaxD features to the example-by-example step.
const gonumDdotPairs = false
