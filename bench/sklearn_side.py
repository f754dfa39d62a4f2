"""scikit-learn's (and pandas') half of the side-by-side comparison that
bench/compare.sh runs; bench/sidebyside is stabpriv's half.

  gen    writes a planted logistic problem, rows in the unit ball (the paper's
         x' = [x, 1]/sqrt2), as raw little-endian float64 files <data>.x (n x d)
         and <data>.y (labels -1/+1), and with --csv also as a CSV file
  fit    whole one-epoch SGDClassifier fits (logistic, elastic net, b = 1)
  pass   the marginal time of an SGDClassifier epoch (fits of 1 and 4 epochs)
  csv    pandas.read_csv
  svd    TruncatedSVD (randomized, its default 10 oversamples and 5
         iterations) and the exact truncated SVD by the algorithm of
         stabpriv's exact method: X^T X by numpy (BLAS), then numpy.linalg.eigh
         (LAPACK)
  adult  LogisticRegression on the Adult rows bench/sidebyside wrote: lbfgs
         (the solver diffprivlib's LogisticRegression runs on its perturbed
         objective, as a stand-in where diffprivlib is not installed), and
         newton-cholesky to max |gradient| <= 1e-9 (the algorithm of
         stabpriv's exact solver: Newton steps with a factored Hessian)
  env    the versions of Python, numpy, scipy, scikit-learn and pandas, and
         the BLAS numpy runs: library, version, kernel (the processor
         architecture OpenBLAS chose), threading layer and thread count, by
         threadpoolctl when it is installed, else the library file numpy
         has loaded and the thread variables of the environment

Each timing is one JSON line. Its "algo" names the algorithm, so that
bench/summarize.py can say whether both sides run the same one.
"""
import argparse
import json
import os
import sys
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")


def emit(task, shape, impl, seconds, **extra):
    print(json.dumps(dict(task=task, shape=shape, impl=impl, seconds=seconds, **extra)), flush=True)


THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


def blas_info():
    """The BLAS numpy runs, after a product has loaded it."""
    import numpy as np
    a = np.ones((64, 64))
    a @ a
    try:
        from threadpoolctl import threadpool_info
        return [dict(library=i.get("internal_api"), version=i.get("version"), kernel=i.get("architecture"),
                     threading=i.get("threading_layer"), threads=i.get("num_threads"), file=i.get("filepath"))
                for i in threadpool_info() if i.get("user_api") == "blas"]
    except ImportError:
        pass
    files = set()
    try:
        for line in open("/proc/self/maps"):
            path = line.split()[-1]
            if any(k in path for k in ("blas", "mkl", "blis")) and path.startswith("/"):
                files.add(os.path.realpath(path))
    except OSError:
        pass
    return [dict(library="unknown (threadpoolctl missing)", file=f,
                 threads=" ".join(f"{v}={os.environ[v]}" for v in THREAD_VARS if v in os.environ) or "not set")
            for f in sorted(files)]


def env():
    import platform
    import numpy
    import pandas
    import scipy
    import sklearn
    e = dict(task="env", python=platform.python_version(), numpy=numpy.__version__, scipy=scipy.__version__,
             sklearn=sklearn.__version__, pandas=pandas.__version__, blas=blas_info(),
             thread_vars={v: os.environ[v] for v in THREAD_VARS if v in os.environ})
    src = os.environ.get("DIFFPRIVLIB", "")
    if src and os.path.isdir(os.path.join(src, "diffprivlib")):
        # The diffprivlib source checkout that bench/diffprivlib_side.py
        # imports (its version, for the results' header).
        sys.path.insert(0, src)
        try:
            import diffprivlib
            e["diffprivlib"] = getattr(diffprivlib, "__version__", "unknown")
        except Exception as err:  # a checkout that does not import: say so
            e["diffprivlib"] = f"does not import ({type(err).__name__})"
    print(json.dumps(e), flush=True)


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


def exact_svd(x, k):
    """The top k right singular vectors and singular values of x from the
    eigen-decomposition of x^T x: stabpriv's exact method."""
    import numpy as np
    w, v = np.linalg.eigh(x.T @ x)
    return np.sqrt(np.maximum(w[::-1][:k], 0)), v[:, ::-1][:, :k]


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
    if a.task == "env":
        env()
        return
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
            emit("csv", f"{df.shape[0]}x{df.shape[1]}", "pandas read_csv", t, algo="csv-numeric-frame")
        return
    if a.task == "adult":
        from sklearn.linear_model import LogisticRegression
        n, d = map(int, open(a.data + ".shape").read().split())
        x, y = load(a.data, n, d)
        LogisticRegression().fit(x[:1000], y[:1000])  # untimed warm-up
        for _ in range(a.reps):
            clf = LogisticRegression(C=1 / (n * 1e-4), fit_intercept=False, max_iter=100, tol=1e-4)
            emit("adult", f"{n}x{d}", "scikit-learn LogisticRegression (lbfgs to tol 1e-4; diffprivlib's solver)",
                 timed(lambda: clf.fit(x, y)), algo="lbfgs")
            # The same objective, (1/n) sum loss + (1e-4/2) ||w||^2, by Newton
            # steps with a Cholesky-factored Hessian to max |gradient| <= 1e-9.
            clf = LogisticRegression(C=1 / (n * 1e-4), fit_intercept=False, max_iter=100, tol=1e-9, solver="newton-cholesky")
            emit("adult", f"{n}x{d}", "scikit-learn LogisticRegression (newton-cholesky to max abs gradient <= 1e-9)",
                 timed(lambda: clf.fit(x, y)), algo="newton-cholesky")
        return
    x, y = load(a.data, a.n, a.d)
    sgd(1).fit(x[:1000], y[:1000])  # imports and first-call costs, untimed
    for _ in range(a.reps):
        if a.task == "fit":
            emit("fit", shape, "scikit-learn SGDClassifier", timed(lambda: sgd(1).fit(x, y)), algo="sgd-epoch")
        elif a.task == "pass":
            t1 = timed(lambda: sgd(1).fit(x, y))
            t4 = timed(lambda: sgd(4).fit(x, y))
            emit("pass", shape, "scikit-learn SGDClassifier epoch", (t4 - t1) / 3, algo="sgd-epoch-marginal")
        elif a.task == "svd":
            from sklearn.decomposition import TruncatedSVD
            emit("svd", f"{shape} k={a.k}", "scikit-learn TruncatedSVD (randomized)",
                 timed(lambda: TruncatedSVD(n_components=a.k, random_state=1).fit(x)), algo="randomized")
            emit("svd", f"{shape} k={a.k}", "numpy X^T X, then numpy.linalg.eigh (exact)",
                 timed(lambda: exact_svd(x, a.k)), algo="gram-eigh")
        else:
            raise SystemExit(f"unknown task {a.task}")


if __name__ == "__main__":
    main()
