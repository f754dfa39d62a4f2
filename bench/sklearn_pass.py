"""Side-by-side timing of scikit-learn's SGDClassifier on the Adult-shaped problem.

Writes the synthetic data set it times to --csv so that the Go side trains on the
very same rows, then prints one JSON line with the marginal time per pass (fits of 1 and
1+passes passes, differenced), the time of the longer fit and the accuracy.
Usage: python3 bench/sklearn_pass.py --csv /tmp/adultshape.csv [--n 36000 --d 33]
"""
import argparse
import json
import time

import numpy as np
from sklearn.linear_model import SGDClassifier


def make_data(n, d, seed):
    """A planted logistic model with rows in the unit ball (the paper's x' = [x,1]/sqrt2)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d - 1))
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1.0)
    x = np.hstack([x, np.ones((n, 1))]) / np.sqrt(2)
    theta = rng.standard_normal(d) * 3
    p = 1 / (1 + np.exp(-x @ theta))
    y = np.where(rng.random(n) < p, 1, -1)
    return x, y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--n", type=int, default=36000)
    ap.add_argument("--d", type=int, default=33)
    ap.add_argument("--passes", type=int, default=10)
    ap.add_argument("--lam", type=float, default=1e-4)
    ap.add_argument("--repeats", type=int, default=5)
    a = ap.parse_args()
    x, y = make_data(a.n, a.d, 1)
    header = ",".join([f"x{j}" for j in range(a.d)] + ["label"])
    np.savetxt(a.csv, np.hstack([x, y[:, None]]), delimiter=",", header=header, comments="", fmt="%.17g")
    def fit(passes):
        """Best wall time of repeated fits with the given number of passes."""
        best = float("inf")
        for _ in range(a.repeats):
            clf = SGDClassifier(loss="log_loss", penalty="elasticnet", alpha=a.lam, l1_ratio=0.15,
                                max_iter=passes, tol=None, shuffle=True, random_state=1,
                                learning_rate="constant", eta0=0.5, fit_intercept=False, average=False)
            t0 = time.perf_counter()
            clf.fit(x, y)
            best = min(best, time.perf_counter() - t0)
        return best, clf

    # The marginal cost of a pass: fits of 1 and 1+passes passes, differenced,
    # so that set-up costs (validation, copies) do not count as passes.
    t1, _ = fit(1)
    tk, clf = fit(1 + a.passes)
    print(json.dumps({"impl": "scikit-learn SGDClassifier", "n": a.n, "d": a.d, "passes": a.passes,
                      "seconds_per_pass": (tk - t1) / a.passes, "seconds_fit": tk,
                      "train_accuracy": clf.score(x, y)}))

if __name__ == "__main__":
    main()
