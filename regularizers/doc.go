// Package regularizers provides the elastic-net penalty of stabpriv in the
// convention of docs/DESIGN.md (section 1),
//
//	R(w) = lambda * ((1-alpha)/2 * ||w||^2 + alpha * ||w||_1),  alpha = l1 ratio,
//
// with its value, the gradient of its smooth part, its proximal operator (soft
// thresholding) and its modulus of strong convexity mu = lambda*(1-alpha).
// L2 and L1 are the special cases alpha = 0 and alpha = 1.
package regularizers
