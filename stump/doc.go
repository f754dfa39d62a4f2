// Package stump releases a private decision stump: the one-feature
// threshold classifier
//
//	h(z) = +1 if s (z_j - t) >= 0, else -1,
//
// of a public finite class (every column j of the mapped rows z, every
// threshold t of a public grid of T points inside [-1, 1], both signs s),
// chosen by the permute-and-flip mechanism (McKenna & Sheldon 2020,
// "Permute-and-Flip: A new mechanism for differentially private
// selection", NeurIPS) with utility the number of training rows the
// candidate classifies correctly. It is the generic private learner of
// Kasiviswanathan, Lee, Nissim, Raskhodnikova & Smith (2011), "What can we
// learn privately?", SIAM J. Comput. 40(3), Section 3 (the exponential
// mechanism of McSherry & Talwar 2007 over a finite concept class), with
// permute-and-flip in place of the exponential mechanism: the same eps-DP
// guarantee, and never a worse expected utility.
//
// The rows are the per-feature map of package preprocess (declared or
// privately estimated bounds, every entry z_j in [-1, 1]) before its
// unit-ball map, so the grid t_k = -1 + 2k/(T+1), k = 1..T, is the same
// public grid of interior points of every column's range (for the default
// T = 1023 the points are the multiples of 1/512, exact in float64). A stump
// is a linear classifier on [z, 1] with the weight s on feature j, -s t on
// the bias and zero elsewhere (Stump.Weights); the model file stores those
// weights, and a reader that computes the margin <w, [z, 1]> in float64
// gets the sign of z_j - t exactly (one nonzero product, one rounded
// subtraction), so predictions reproduce the decisions the utility
// counted.
//
// Neighbours are replace-one: data sets of the same n that differ in one
// row. A row moves each candidate's count by at most 1 (it is counted
// correct or not), so the utility has sensitivity 1 and permute-and-flip
// at eps is eps-DP (perturb.PermuteAndFlip, exact: no floating point in its
// probabilities). Null rows (a label outside the declared classes) count
// for no candidate.
//
// The scores are computed by sorting each column once and sweeping the
// grid: O(p n log n + p T) for n rows of p columns.
//
// For K classes (2 <= K <= MaxClasses) the multiclass class (Multi,
// FitMulti) holds, for every column j and threshold t of the grid, the
// K (K-1) ordered pairs (Lo, Hi) of distinct classes: h(z) = Hi if z_j > t,
// Lo if z_j < t, and min(Lo, Hi) at z_j = t (t on the finer grid of
// MultiGrid = 255 thresholds by default), the decision of a model
// file's argmax on its weights (K outputs on [z, 1]: e_j - t e_bias for
// Hi, the negation for Lo, -1 on the bias for every other class). The
// utility, privacy argument and guarantee are the binary class's over its
// p T K (K-1) candidates; the scores cost O(p n log n + p T K^2).
//
// # Pairs and intervals
//
// Where the guarantee below still holds for the larger class (PairsUseful,
// IntervalsUseful: (2/eps)(ln N + 1) <= n/K for its N candidates, public
// values), the binary class also holds the pairs (Pair: a threshold of
// the grid on fl(z_a - z_b), for 2 to MaxPairFeatures features; on the
// public log map the log of a ratio of two columns), and the multiclass
// class the intervals (Interval: two thresholds t1 < t2 of the grid on one
// feature and three distinct classes below, between and above, at most
// MaxMultiCandidates candidates in all). Both are scored as the stump (a
// row counts once for each candidate: sensitivity 1) and written as
// weights whose margins decide as the candidate; the certificate names the
// class drawn from, and a file written before them verifies on its own
// class.
//
// # The release method
//
// Importing the package registers the stump's release method with package
// release under the name perturb.Stump (release.Register), so that the
// certified pipeline (package private), private model selection and the
// verification of model files reach it as they reach every method: Prepare
// computes the scores of the rows [z, 1] of the stump map
// (release.TakesStumpRows), Release draws the stump (the weights on [z, 1]
// of Stump.Weights or Multi.Weights) with its certificate, whose loss
// names are Loss and MultiLoss (a margin classifier without class
// probabilities) and whose citation is Citation, and Rebuild and
// CheckWeights verify what a model file publishes.
package stump
