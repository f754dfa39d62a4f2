//go:build amd64 && !noasm && !gccgo && !safe

package trainer

// gonumDdotPairs reports whether gonum's Ddot, which dot calls, is its
// amd64 assembly (the build tags are gonum's own for it): four partial sums
// added as (s0 + s2) + (s1 + s3), whose bits kernel.ShrinkDdot gives. Only
// then does passFused take rows of more than gatherMaxD features.
const gonumDdotPairs = true
