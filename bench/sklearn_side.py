"""scikit-learn's (and pandas') half of the side-by-side comparison that
bench/compare.sh runs; bench/sidebyside is stabpriv's half.

  gen    writes a planted logistic problem, rows in the unit ball (the paper's
         x' = [x, 1]/sqrt2), as raw little-endian float64 files <data>.x (n x d)
         and <data>.y (labels -1/+1), and with --csv also as a CSV file
  fit    whole one-epoch SGDClassifier fits (logistic, elastic net, b = 1)
  pass   the marginal time of an SGDClassifier epoch (fits of 1 and 4 epochs)
  csv    pandas.read_csv
  svd    TruncatedSVD (randomized, its default 10 oversamples and 5 iterations)
  adult  LogisticRegression (lbfgs) on the Adult rows bench/sidebyside wrote:
         the solver diffprivlib's LogisticRegression runs on its perturbed
         objective, as a stand-in where diffprivlib is not installed

Each timing is one JSON line.
"""
import argparse
import json
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")


def emit(task, shape, impl, seconds, **extra):
    print(json.dumps(dict(task=task, shape=shape, impl=impl, seconds=seconds, **extra)), flush=True)


def make_data(n, d, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d - 1))
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1.0)
    x = np.hstack([x, np.ones((n, 1))]) / np.sqrt(2)
    # As stabpriv's unit-ball map (preprocess.UnitBallRow) guarantees: the sum
    # of squares accumulated in column order (cumsum's order) is at most 1,
    # rows on the sphere up to rounding shrunk by 1 - 4 eps, so that no row
    # exceeds kappa = 1 as computed and Train reads the rows in place.
    for _ in range(64):
        over = np.cumsum(x * x, axis=1)[:, -1] > 1
        if not over.any():
            break
        x[over] *= 1 - 4 * np.finfo(float).eps
    theta = rng.standard_normal(d) * 3
    p = 1 / (1 + np.exp(-x @ theta))
    y = np.where(rng.random(n) < p, 1.0, -1.0)
    return x, y


def load(prefix, n, d):
    x = np.fromfile(prefix + ".x", dtype="<f8").reshape(n, d)
    y = np.fromfile(prefix + ".y", dtype="<f8")
    return x, y


def sgd(passes):
    from sklearn.linear_model import SGDClassifier
    return SGDClassifier(loss="log_loss", penalty="elasticnet", alpha=1e-4, l1_ratio=0.15,
                         max_iter=passes, tol=None, shuffle=True, random_state=1,
                         learning_rate="constant", eta0=0.5, fit_intercept=False, average=False)


def timed(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--task", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--csv")
    ap.add_argument("--n", type=int, default=0)
    ap.add_argument("--d", type=int, default=0)
    ap.add_argument("--k", type=int, default=32)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    shape = f"{a.n}x{a.d}"
    if a.task == "gen":
        x, y = make_data(a.n, a.d, 1)
        x.astype("<f8").tofile(a.data + ".x")
        y.astype("<f8").tofile(a.data + ".y")
        if a.csv:
            header = ",".join([f"x{j}" for j in range(a.d)] + ["label"])
            np.savetxt(a.csv, np.hstack([x, y[:, None]]), delimiter=",", header=header, comments="", fmt="%.10g")
        return
    if a.task == "csv":
        import pandas as pd
        for _ in range(a.reps):
            t = time.perf_counter()
            df = pd.read_csv(a.csv)
            t = time.perf_counter() - t
            emit("csv", f"{df.shape[0]}x{df.shape[1]}", "pandas read_csv", t)
        return
    if a.task == "adult":
        from sklearn.linear_model import LogisticRegression
        n, d = map(int, open(a.data + ".shape").read().split())
        x, y = load(a.data, n, d)
        LogisticRegression().fit(x[:1000], y[:1000])  # untimed warm-up
        for _ in range(a.reps):
            clf = LogisticRegression(C=1 / (n * 1e-4), fit_intercept=False, max_iter=100, tol=1e-4)
            emit("adult", f"{n}x{d}", "scikit-learn LogisticRegression (lbfgs; diffprivlib's solver)", timed(lambda: clf.fit(x, y)))
        return
    x, y = load(a.data, a.n, a.d)
    sgd(1).fit(x[:1000], y[:1000])  # imports and first-call costs, untimed
    for _ in range(a.reps):
        if a.task == "fit":
            emit("fit", shape, "scikit-learn SGDClassifier", timed(lambda: sgd(1).fit(x, y)))
        elif a.task == "pass":
            t1 = timed(lambda: sgd(1).fit(x, y))
            t4 = timed(lambda: sgd(4).fit(x, y))
            emit("pass", shape, "scikit-learn SGDClassifier epoch", (t4 - t1) / 3)
        elif a.task == "svd":
            from sklearn.decomposition import TruncatedSVD
            emit("svd", f"{shape} k={a.k}", "scikit-learn TruncatedSVD",
                 timed(lambda: TruncatedSVD(n_components=a.k, random_state=1).fit(x)))
        else:
            raise SystemExit(f"unknown task {a.task}")


if __name__ == "__main__":
    main()
