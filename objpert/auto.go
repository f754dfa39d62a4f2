package objpert

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/dp"
	"github.com/stabpriv/stabpriv/perturb"
)

// AutoScale is A in the rule of AutoLambda, lambda = A (E||b||/n)^(3/2),
// fitted once on public data (docs/RESULTS.md, the fit of the automatic
// rules) and the same for every data set.
const AutoScale = 0.15

// AutoLambda returns the ridge strength for a release of pr (its Lambda is
// ignored) by mechanism m with budget (eps, delta), from the public
// quantities alone (n, d, K, the loss constants, the mechanism, the
// budget), so it costs no privacy.
//
// Rule. The noise moves the minimizer by H^{-1} b/n, at most ||b||/(n
// lambda); what it costs depends on the curvature of the data, which is
// not public, so the rule is fitted: lambda = A (E||b||/(sqrt(K) n))^(3/2)
// with A = 0.15 and K the model's outputs (1 for a scalar loss), raised to twice the floor when it falls below it (the Jacobian
// part then never spends more than about a quarter of the objective
// part's eps). E||b|| is taken at the smallest noise budget the floor
// allows (EpsNoise = EpsObjective/2): P theta with theta = 2L/EpsNoise for
// objective, and the upper bound sqrt(P) sigma_1 for amp. Fitted on the
// best fixed lambda (test accuracy, 5 seeds) of Adult (eps 0.1 to 2),
// the embedded breast cancer data and LastFM (eps 0.5 to 2), where the
// exponent 3/2 held within a factor 2; the earlier rule sqrt(2 L E||b||/n)/R
// with R = 15, fitted on the breast cancer data alone, was up to 270 times
// too large on Adult. The sqrt(K): the noise's law is spherical in the
// K*d weights, so each of the K weight vectors (one per class, each a
// scalar model of its own) carries E||b||/sqrt(K) of its norm, and the
// rule, fitted for one weight vector, is applied to that share; without
// it the rule's lambda was 2 to 7 times the best fixed one on LastFM (K =
// 18) and 5 to 60 times on scikit-learn's digits (K = 10), the two
// multiclass data sets measured (docs/RESULTS.md, the fit of the automatic
// rules). A private selection (package selection) searches factors of
// this rule.
func AutoLambda(m dp.Mechanism, eps, delta float64, pr Problem) (float64, string, error) {
	norm, c, err := noiseNorm(m, eps, delta, pr)
	if err != nil {
		return 0, "", err
	}
	floor := lambdaFloor(c.Rank, c.Curv, pr.N, c.EpsObjective)
	k := max(c.P/max(pr.D, 1), 1)
	lambda := AutoScale * math.Pow(norm/(math.Sqrt(float64(k))*float64(pr.N)), 1.5)
	lambda = math.Max(lambda, 2*floor)
	rule := fmt.Sprintf("lambda = max(A (E||b|| / (sqrt(K) n))^(3/2), 2 lambda_floor) with A = %g, K = %d outputs, n = %d, E||b|| = %.4g (the noise norm of %s at half of eps %g in dimension %d) and lambda_floor = %.4g; l1 ratio 0",
		AutoScale, k, pr.N, norm, m, c.EpsObjective, c.P, floor)
	return lambda, rule, nil
}

// noiseNorm returns the expected norm of the objective's noise b at the
// smallest noise budget the floor allows (EpsNoise = EpsObjective/2), and
// the constants of pr.
func noiseNorm(m dp.Mechanism, eps, delta float64, pr Problem) (float64, Calibration, error) {
	probe := pr
	probe.Lambda = 1 // ignored: only the constants are read
	c, err := constants(m, eps, delta, probe)
	if err != nil {
		return 0, c, err
	}
	half := c.EpsObjective / 2
	var norm float64
	switch m {
	case perturb.Objective:
		norm = float64(c.P) * 2 * c.L / half
	case perturb.AMP:
		an := 2 * half / (c.Tail + math.Sqrt(c.Tail*c.Tail+2*half))
		norm = math.Sqrt(float64(c.P)) * 2 * c.L / an
	}
	return norm, c, nil
}

// NoiseRatio returns E||b||/(n L), the expected norm of the noise's pull
// on the weights, ||b||/(n lambda), over the bound L/lambda on the norm of
// the noiseless minimizer: a function of public values that does not
// depend on lambda. Near 1 or above, the noise can outweigh any weights
// the data can produce.
func NoiseRatio(m dp.Mechanism, eps, delta float64, pr Problem) (float64, error) {
	norm, c, err := noiseNorm(m, eps, delta, pr)
	if err != nil {
		return 0, err
	}
	return norm / (float64(pr.N) * c.L), nil
}
