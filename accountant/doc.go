// Package accountant bounds the privacy of the Poisson-subsampled Gaussian
// mechanism composed over many steps, the mechanism of DP-SGD (Abadi et al.
// 2016, "Deep Learning with Differential Privacy"): its Renyi differential
// privacy (RDP) at a grid of orders (Mironov, Talwar & Zhang 2019, "Renyi
// Differential Privacy of the Sampled Gaussian Mechanism"), composed by
// addition over the steps, and converted to an (eps, delta) guarantee at the
// best order, by the classical conversion (Mironov 2017) or the improved one
// (Balle et al. 2020, Theorem 21). NoiseMultiplier inverts it: the smallest
// noise multiplier that meets a target (eps, delta).
//
// PLD is a tighter accountant of the same mechanism: the privacy loss
// distribution of one step in each direction of add/remove-one neighbours,
// discretized on a grid (connect-the-dots, an upper bound; or rounded
// down, a lower bound), composed by the fast Fourier transform
// (gonum.org/v1/gonum/dsp/fourier) and read at delta, its truncations and
// a rounding allowance added to delta. At the MNIST tutorial's setting it
// gives 2.38 where RDP gives 2.60 (3.01 by the classical conversion), as
// google/differential-privacy's dp_accounting does. NoiseMultiplierPLD
// inverts it.
//
// The papers of the PLD accountant are not in ../shared/papers; the doc
// comments cite them by section and theorem as published: Koskela, Jalko &
// Honkela 2020 (AISTATS), Gopi, Lee & Wutschitz 2021 (NeurIPS), Doroshenko,
// Ghazi, Kamath, Kumar & Manurangsi 2022 (PETS), Zhu, Dong & Wang 2022
// (AISTATS), Balle & Wang 2018 (ICML).
//
// # The guarantee
//
// A SampledGaussian of sample rate q, noise multiplier sigma and T steps
// is (eps, delta)-DP, with eps from its Epsilon, for add/remove-one
// neighbours: data sets that differ by one row present in one and absent
// from the other. Each step must include each row independently with
// probability q (Poisson sampling: a shuffled pass in fixed-size batches is
// another mechanism, which this bound does not cover), sum a function of the
// included rows whose L2 norm is at most C per row (per-example clipping to
// C), and add N(0, sigma^2 C^2) noise to each coordinate of the sum; the
// steps may be chosen adaptively.
//
// The rest of the module certifies replace-one neighbours (same n, one row
// changed). A replacement is a removal followed by an addition, so an
// add/remove (eps, delta) gives replace-one (2 eps, (1 + exp(eps)) delta)
// (Guarantee.ReplaceOne). A certificate for a release made with this
// accountant must therefore either state add/remove-one neighbours (and
// that n is then not public), or claim the ReplaceOne budget and account
// for it in its ledger; it must also bind q, sigma, T, delta, the orders,
// the conversion and the clipping norm C, so that its eps can be recomputed
// from the file.
//
// The package sits beside dp at the bottom of the module's imports: it
// imports only dp, internal/check, gonum's fourier transform and the
// standard library.
package accountant
