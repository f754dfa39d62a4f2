package objpert

import (
	"fmt"
	"math"

	"github.com/stabpriv/stabpriv/perturb"
)

// AutoComparator is R in the rule of AutoLambda, the comparator norm of
// release.AutoKnobs, checked once on public data (the embedded breast
// cancer data) and the same for every data set.
const AutoComparator = 15.0

// AutoLambda returns the ridge strength for a release of pr (its Lambda is
// ignored) by mechanism m with budget (eps, delta), from the public
// quantities alone (n, d, K, the loss constants, the mechanism, the
// budget), so it costs no privacy.
//
// Rule. The noise moves the minimizer by H^{-1} b/n, at most ||b||/(n
// lambda), and that costs at most L ||b||/(n lambda) in the risk of the
// L-Lipschitz loss, while the ridge biases a comparator of norm R by
// lambda R^2/2: the form of release.AutoKnobs (docs/DESIGN.md, section 6).
// The sum is smallest at lambda = sqrt(2 L E||b|| / n)/R. E||b|| is taken
// at the smallest noise budget the floor allows (EpsNoise = EpsObjective/2):
// P theta with theta = 2L/EpsNoise for objective, and the upper bound
// sqrt(P) sigma_1 for amp. The result is raised to twice the floor when it
// falls below it, so the Jacobian part never spends more than about a
// quarter of the objective part's eps. R = 15, as in release.AutoKnobs; on
// the embedded data the mean test accuracy at eps = 1 is flat within 0.01
// for lambda between 0.02 and 0.1, and the rule gives about 0.05.
func AutoLambda(m perturb.Mechanism, eps, delta float64, pr Problem) (float64, string, error) {
	probe := pr
	probe.Lambda = 1 // ignored: only the constants are read
	c, err := constants(m, eps, delta, probe)
	if err != nil {
		return 0, "", err
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
	floor := lambdaFloor(c.Rank, c.Curv, pr.N, c.EpsObjective)
	lambda := math.Sqrt(2*c.L*norm/float64(pr.N)) / AutoComparator
	lambda = math.Max(lambda, 2*floor)
	rule := fmt.Sprintf("lambda = max(sqrt(2 L E||b|| / n)/R, 2 lambda_floor) with L = %g, n = %d, R = %g, E||b|| = %.4g (the noise norm of %s at half of eps %g in dimension %d) and lambda_floor = %.4g; l1 ratio 0",
		c.L, pr.N, AutoComparator, norm, m, c.EpsObjective, c.P, floor)
	return lambda, rule, nil
}
