"""IBM diffprivlib's half of the Adult comparison (bench/sidebyside tasks
paperrows and paperfit are stabpriv's half). Both sides read the same rows:
the Adult splits of the paper's protocol (experiments.Protocol: stratified
80/20 split with seed 1 + s, truncated SVD to 32 fitted on the training
rows, standardization fitted on the training rows, rows clipped to the unit
ball, x' = [x, 1]/sqrt 2), written by

    go run ./bench/sidebyside -task paperrows -rows DIR [-datadir ../shared/datasets]

as DIR/split<s>.{train,test}.{x,y,shape} (raw little-endian float64 rows,
labels -1/+1, "n d").

  verify    checks, on a small problem, that the function diffprivlib's
            LogisticRegression hands to L-BFGS is the objective of
            Chaudhuri, Monteleoni & Sarwate (2011), Algorithm 2 (see the
            patch below), and that the fit returns its minimizer
  accuracy  diffprivlib LogisticRegression(epsilon, data_norm=1, C,
            fit_intercept=False; the bias is the appended feature) on every
            split, every eps and every lambda of the grid (C = 1/(n lambda)),
            seeded noise; writes the per-split rows as CSV and prints the
            table: best lambda per eps on the mean test accuracy (the
            optimistic protocol of stabpriv's tables), mean +- std (n - 1)
            over the splits
  defaults  diffprivlib's default, LogisticRegression(epsilon=E) with
            nothing else (data_norm computed from the training rows, with
            diffprivlib's PrivacyLeakWarning; fit_intercept, C = 1; OvR with
            eps/K per class for K > 2 classes), on the rows and splits that
            bench/defaults writes (DIR/<set>.{x,y,shape},
            DIR/<set>.split<s>.{train,test}: its rows as train reads them,
            categorical columns one-hot; the index of train's split at
            --seed s), for every data set, pure eps and seed; writes
            one CSV line per fit
  time      fit times of diffprivlib LogisticRegression on one split (wall
            and process CPU time, all threads), one JSON line per fit, for
            bench/compare.sh and bench/summarize.py

diffprivlib is not packaged for Debian: this script imports it from the
source directory in $DIFFPRIVLIB (its repository's root, which holds the
package diffprivlib/), with Debian's python3-sklearn, python3-scipy and
python3-numpy. Without $DIFFPRIVLIB, or when diffprivlib does not import,
it prints why and exits 0 (a skip).

The patch. diffprivlib (0.6.x) is written for scikit-learn >= 1.4, whose
LinearModelLoss.loss_gradient returns the MEAN loss
    (1/n) sum_i l(y_i, x_i.w) + (l2/2) ||w||^2
and its gradient. diffprivlib's _logistic_regression_path passes
l2_reg_strength = 1/(n C) and adds the noise term b.w/n and
(Delta/2) ||w||^2 (mechanisms.Vector), so with the mean loss it minimizes
    J(w) = (1/n) sum_i log(1 + exp(-y_i x_i.w)) + (Lambda/2) ||w||^2
           + b.w/n + (Delta/2) ||w||^2,   Lambda = 1/(n C),
Algorithm 2 of Chaudhuri et al. with c = 1/4 and ||x_i|| <= 1 (Vector's
eps' = eps - 2 log(1 + c/(n Lambda)) and ||b|| ~ Gamma(d, 2/eps')).
scikit-learn 1.2 (Debian's 1.2.1) returns the SUM sum_i l(...) +
(l2/2) ||w||^2 instead: the loss is then n times too large against the
regularizer and the noise, i.e. the noise is n times too small (and the
ridge n times too weak), and the guarantee does not hold. When the
installed LinearModelLoss sums (tested on two copies of one row, not by
version), mean_loss_patch() makes diffprivlib's module use a subclass
whose loss_gradient divides the data part of the loss and of its gradient
by sum(sample_weight) (= n: diffprivlib passes ones) and adds the L2 term
undivided, the computation of scikit-learn >= 1.4. Only the name
LinearModelLoss inside diffprivlib.models.logistic_regression is
replaced, at run time; scikit-learn's own classes and files are unchanged.
`verify` checks the result against J(w) computed here from the noise
vector read off the closure diffprivlib builds.
"""
import argparse
import csv
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np

warnings.filterwarnings("ignore")

# The grid of the objective column of docs/RESULTS.md's Adult knob table, and the eps.
LAMBDAS = [1e-5, 2.1544e-5, 4.6416e-5, 1e-4, 2.1544e-4, 4.6416e-4, 1e-3, 2.1544e-3, 4.6416e-3, 1e-2]
EPSILONS = [0.1, 0.5, 1, 2, 5]


def skip(why):
    print(f"bench/diffprivlib_side.py: {why}, skipping", file=sys.stderr)
    sys.exit(0)


def import_diffprivlib(patch=True):
    """Imports diffprivlib from $DIFFPRIVLIB and applies mean_loss_patch
    (unless patch is false); exits 0 with a message when it cannot."""
    src = os.environ.get("DIFFPRIVLIB", "")
    if not src:
        skip("DIFFPRIVLIB is not set (the directory of a diffprivlib source checkout)")
    if not os.path.isdir(os.path.join(src, "diffprivlib")):
        skip(f"DIFFPRIVLIB={src} holds no diffprivlib/ package")
    sys.path.insert(0, src)
    try:
        import diffprivlib  # noqa: F401
        import diffprivlib.models.logistic_regression as dplr
    except Exception as e:  # any import failure is a skip, said as such
        skip(f"diffprivlib from {src} does not import ({type(e).__name__}: {e})")
    return dplr, patch and mean_loss_patch(dplr)


def sums_loss(cls):
    """Whether cls(...).loss_gradient sums the per-row losses (scikit-learn
    < 1.4) rather than averaging them: compares one row with two copies."""
    from sklearn._loss import HalfBinomialLoss
    lm = cls(base_loss=HalfBinomialLoss(), fit_intercept=False)
    w = np.array([0.3, -0.2])
    x1, y1 = np.array([[0.5, 0.1]]), np.array([1.0])
    x2, y2 = np.vstack([x1, x1]), np.concatenate([y1, y1])
    l1, _ = lm.loss_gradient(w, x1, y1, np.ones(1), 0.0)
    l2, _ = lm.loss_gradient(w, x2, y2, np.ones(2), 0.0)
    return abs(l2 - 2 * l1) < 1e-12 * abs(l1)


def mean_loss_patch(dplr):
    """Makes diffprivlib's LogisticRegression minimize the mean loss under a
    scikit-learn whose LinearModelLoss sums (see the module's docstring).
    Returns whether it patched."""
    base = dplr.LinearModelLoss
    if getattr(base, "_bench_mean_loss", False) or not sums_loss(base):
        return False

    class MeanLinearModelLoss(base):
        """LinearModelLoss with scikit-learn >= 1.4's mean: the data part of
        the loss and of the gradient divided by sum(sample_weight), the L2
        term (l2_reg_strength/2) ||w||^2 and its gradient added as they are."""
        _bench_mean_loss = True

        def loss_gradient(self, coef, X, y, sample_weight=None, l2_reg_strength=0.0, n_threads=1,
                          raw_prediction=None):
            sw_sum = X.shape[0] if sample_weight is None else np.sum(sample_weight)
            loss, grad = super().loss_gradient(coef, X, y, sample_weight=sample_weight, l2_reg_strength=0.0,
                                               n_threads=n_threads, raw_prediction=raw_prediction)
            if self.base_loss.is_multiclass:
                raise NotImplementedError("bench: the mean-loss patch covers the binary loss only")
            weights, _ = self.weight_intercept(coef)
            loss = loss / sw_sum + self.l2_penalty(weights, l2_reg_strength)
            grad = grad / sw_sum
            grad[:weights.shape[0]] += l2_reg_strength * weights
            return loss, grad

    dplr.LinearModelLoss = MeanLinearModelLoss
    return True


def load(prefix):
    n, d = map(int, open(prefix + ".shape").read().split())
    x = np.fromfile(prefix + ".x", dtype="<f8").reshape(n, d)
    y = np.fromfile(prefix + ".y", dtype="<f8")
    return x, y


def model(dplr, eps, lam, n, seed):
    from diffprivlib.accountant import BudgetAccountant
    # A fresh accountant per fit: the default one keeps every spend and sums
    # them at each fit, a cost that grows with the number of fits.
    return dplr.LogisticRegression(epsilon=eps, data_norm=1.0, C=1.0 / (n * lam), fit_intercept=False,
                                   random_state=seed, accountant=BudgetAccountant())


def verify(dplr, patched):
    """Reads the noisy objective off diffprivlib's fit and compares it with
    J(w) of Chaudhuri et al.'s Algorithm 2 computed here."""
    from scipy import optimize
    rng = np.random.default_rng(7)
    n, d = 500, 6
    x = rng.standard_normal((n, d))
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1.0) * 1.0001
    y = np.where(x @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    captured = {}
    real = dplr.optimize

    class Shim:
        """Stands for scipy.optimize inside diffprivlib's module during the
        check: records the function and arguments given to L-BFGS-B."""
        @staticmethod
        def fmin_l_bfgs_b(func, x0, **kw):
            captured["func"], captured["args"] = func, kw["args"]
            return real.fmin_l_bfgs_b(func, x0, **kw)

    ok = True
    for eps, lam in [(1.0, 1e-2), (0.1, 1e-3), (0.5, 1e-4)]:
        dplr.optimize = Shim
        try:
            clf = model(dplr, eps, lam, n, 3).fit(x, y)
        finally:
            dplr.optimize = real
        func, args = captured["func"], captured["args"]
        cells = dict(zip(func.__code__.co_freevars, (c.cell_contents for c in func.__closure__)))
        b, delta, mech = cells["normed_noisy_vector"], cells["delta"], cells["self"]
        c, alpha = 0.25, 1.0 / clf.C
        eps_p = eps - 2 * np.log(1 + c / alpha)
        want_delta = 0.0 if eps_p > 0 else (c / np.expm1(eps / 4) - alpha) / n

        def J(w):
            m = y * (x @ w)
            val = np.mean(np.logaddexp(0, -m)) + lam / 2 * w @ w + b @ w / n + delta / 2 * w @ w
            grad = x.T @ (-y / (1 + np.exp(m))) / n + lam * w + b / n + delta * w
            return val, grad

        worst = 0.0
        for _ in range(5):
            w = rng.standard_normal(d)
            got_v, got_g = func(w.copy(), *args)
            want_v, want_g = J(w)
            worst = max(worst, abs(got_v - want_v) / abs(want_v), np.max(np.abs(got_g - want_g)) / np.max(np.abs(want_g)))
        w_ref = optimize.minimize(lambda w: J(w), np.zeros(d), jac=True, method="L-BFGS-B",
                                  options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 1000}).x
        w_dpl = clf.coef_.ravel()
        gap = np.linalg.norm(w_dpl - w_ref) / max(np.linalg.norm(w_ref), 1e-12)
        good = worst < 1e-9 and mech.n == n and abs(delta - want_delta) <= 1e-12 * max(1, abs(want_delta)) and gap < 1e-3
        ok &= good
        print(f"eps {eps:g} lambda {lam:g}: n {mech.n}, ||b|| {np.linalg.norm(b):.4g}, Delta {delta:.3g} "
              f"(want {want_delta:.3g}), max rel. error of value/gradient against J {worst:.2g}, "
              f"||w_dpl - argmin J|| / ||argmin J|| {gap:.2g}: {'ok' if good else 'MISMATCH'}")
    state = "applied" if patched else "not applied (the loss sums)" if sums_loss(dplr.LinearModelLoss) else "not needed (the loss averages)"
    print(f"mean-loss patch {state}; "
          f"objective {'is' if ok else 'is NOT'} Chaudhuri et al.'s J(w)")
    return 0 if ok else 1


def accuracy(dplr, a):
    splits = range(a.splits)
    eps_list = [float(e) for e in a.epsilons.split(",")]
    lambdas = [float(v) for v in a.lambdas.split(",")]
    rows = []
    t0 = time.perf_counter()
    for s in splits:
        xtr, ytr = load(os.path.join(a.rows, f"split{s}.train"))
        xte, yte = load(os.path.join(a.rows, f"split{s}.test"))
        n = xtr.shape[0]
        for ei, eps in enumerate(eps_list):
            for li, lam in enumerate(lambdas):
                seed = 1_000_000 * (s + 1) + 1000 * ei + li
                clf = model(dplr, eps, lam, n, seed)
                t = time.perf_counter()
                clf.fit(xtr, ytr)
                t = time.perf_counter() - t
                rows.append(dict(split=s, epsilon=eps, lam=lam, C=clf.C, acc=clf.score(xte, yte), seconds=t,
                                 n_iter=int(clf.n_iter_[0])))
        print(f"split {s} done ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    if a.out:
        with open(a.out, "w", newline="") as f:
            wr = csv.DictWriter(f, fieldnames=list(rows[0]))
            wr.writeheader()
            wr.writerows(rows)
    print(f"diffprivlib LogisticRegression on the paper-protocol Adult rows ({a.rows}), {len(splits)} splits, "
          f"lambda = 1/(n C) in {lambdas}, best lambda per eps on the mean test accuracy")
    print("| eps | diffprivlib (mean +- std) | best lambda | best C | median fit |")
    print("|---|---|---|---|---|")
    for eps in eps_list:
        best = None
        for lam in lambdas:
            accs = [r["acc"] for r in rows if r["epsilon"] == eps and r["lam"] == lam]
            m = statistics.mean(accs)
            if best is None or m > best[0]:
                secs = [r["seconds"] for r in rows if r["epsilon"] == eps and r["lam"] == lam]
                best = (m, statistics.stdev(accs) if len(accs) > 1 else 0.0, lam, statistics.median(secs))
        n = load_shape(os.path.join(a.rows, "split0.train"))
        print(f"| {eps:g} | {best[0]:.4f} +- {best[1]:.4f} | {best[2]:g} | {1 / (n * best[2]):.4g} | {best[3] * 1e3:.1f} ms |")
    return 0


def defaults(dplr, a):
    """diffprivlib's default on every data set, eps and seed of the
    defaults table (see the module's docstring)."""
    import diffprivlib
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.utils import PrivacyLeakWarning
    version = getattr(diffprivlib, "__version__", "unknown")
    out = open(a.out, "w", newline="")
    wr = csv.DictWriter(out, fieldnames=["dataset", "epsilon", "seed", "accuracy", "data_norm", "leak_warning", "n_train", "d", "version"])
    wr.writeheader()
    for item in a.sets.split(","):
        name, eps_list = item.split(":")
        prefix = os.path.join(a.rows, name)
        n, d, k = map(int, open(prefix + ".shape").read().split())
        x = np.fromfile(prefix + ".x", dtype="<f8").reshape(n, d)
        y = np.fromfile(prefix + ".y", dtype="<f8")
        t0 = time.perf_counter()
        for seed in range(1, a.seeds + 1):
            tr = np.fromfile(prefix + f".split{seed}.train", dtype="<i8")
            te = np.fromfile(prefix + f".split{seed}.test", dtype="<i8")
            tr, te = tr[~np.isnan(y[tr])], te[~np.isnan(y[te])]
            for ei, eps in enumerate(float(e) for e in eps_list.split("/")):
                clf = dplr.LogisticRegression(epsilon=eps, random_state=1000 * seed + ei, accountant=BudgetAccountant())
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    clf.fit(x[tr], y[tr])
                leak = any(issubclass(w.category, PrivacyLeakWarning) for w in caught)
                wr.writerow(dict(dataset=name, epsilon=eps, seed=seed, accuracy=clf.score(x[te], y[te]),
                                 data_norm=clf.data_norm, leak_warning=int(leak), n_train=len(tr), d=d,
                                 version=version))
            out.flush()
        print(f"{name}: {a.seeds} seeds done ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    out.close()
    return 0


def load_shape(prefix):
    return int(open(prefix + ".shape").read().split()[0])


def timing(dplr, a):
    from threadpoolctl import threadpool_info
    x, y = load(os.path.join(a.rows, f"split{a.split}.train"))
    n, d = x.shape
    blas = ",".join(f"{i['internal_api']}:{i['num_threads']}" for i in threadpool_info())
    model(dplr, a.eps, a.lam, 1000, 0).fit(x[:1000], y[:1000])  # imports and first-call costs, untimed
    for r in range(a.reps):
        clf = model(dplr, a.eps, a.lam, n, 100 + r)
        t, cpu = time.perf_counter(), time.process_time()
        clf.fit(x, y)
        t, cpu = time.perf_counter() - t, time.process_time() - cpu
        print(json.dumps(dict(task="adult-diffprivlib", shape=f"{n}x{d}",
                              impl=f"diffprivlib LogisticRegression (L-BFGS to tol 1e-4, lambda {a.lam:g})",
                              seconds=t, cpu_seconds=cpu, lbfgs_iterations=int(clf.n_iter_[0]), blas_threads=blas,
                              algo="lbfgs-perturbed")), flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("verify")
    p.add_argument("--no-patch", action="store_true", help="check diffprivlib as it runs on the installed scikit-learn (a control)")
    p = sub.add_parser("accuracy")
    p.add_argument("--rows", required=True, help="directory of split<s>.{train,test}.* (sidebyside -task paperrows)")
    p.add_argument("--splits", type=int, default=10)
    p.add_argument("--epsilons", default=",".join(f"{e:g}" for e in EPSILONS))
    p.add_argument("--lambdas", default=",".join(f"{v:g}" for v in LAMBDAS))
    p.add_argument("--out", help="CSV of the per-split results")
    p = sub.add_parser("defaults")
    p.add_argument("--rows", required=True, help="directory of the rows bench/defaults writes")
    p.add_argument("--sets", required=True, help="name:eps/eps/...,... (the data sets and their pure eps)")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--out", required=True, help="CSV of the per-fit results")
    p = sub.add_parser("time")
    p.add_argument("--rows", required=True)
    p.add_argument("--split", type=int, default=0)
    p.add_argument("--eps", type=float, default=1.0)
    p.add_argument("--lambda", dest="lam", type=float, default=1e-4)
    p.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    dplr, patched = import_diffprivlib(patch=not getattr(a, "no_patch", False))
    if a.cmd == "verify":
        return verify(dplr, patched)
    if not patched and sums_loss(dplr.LinearModelLoss):
        raise SystemExit("bench/diffprivlib_side.py: the loss is a sum and the patch did not apply")
    if a.cmd == "accuracy":
        return accuracy(dplr, a)
    if a.cmd == "defaults":
        return defaults(dplr, a)
    return timing(dplr, a)


if __name__ == "__main__":
    sys.exit(main())
