#!/usr/bin/env bash
# Side-by-side with scikit-learn and pandas, on the same rows in one run on
# one machine (bench/sklearn_side.py and bench/sidebyside):
#   fit    whole one-epoch fits (logistic, elastic net, b = 1) at SHAPES, both
#          sides by SGD; Train's fixed cost over a pass, peak memory over the
#          data
#   pass   the marginal time of an epoch at b = 1, 32, 256 (PASS_SHAPE)
#   csv    pandas.read_csv against stabpriv's CSV reader (CSV_SHAPE, label
#          included) as datasets.ReadTableFile, the one stabpriv train uses (a
#          float matrix and the text of the cells that are not numbers,
#          parsed against the schema later by the pipeline), and as
#          datasets.ReadCSVFile (a numeric Dataset)
#   svd    FitTruncatedSVD (SVD_SHAPE, k = SVD_K, default 32, at most the
#          number of columns; the method it takes at that
#          shape is named) against the same algorithm in numpy (X^T X, then
#          eigh: exact) and against scikit-learn's TruncatedSVD (randomized)
#   adult  a private fit on Adult (train, analyze, release, certificate)
#          against scikit-learn's LogisticRegression, the lbfgs solver of
#          diffprivlib's LogisticRegression (diffprivlib is not packaged for
#          Debian), and against stabpriv's plain fit; and the exact
#          minimizer of the same ridge objective on both sides (stabpriv's
#          Newton solver against LogisticRegression's newton-cholesky);
#          skipped without ADULT
#   adult-diffprivlib  private fits on the Adult rows of the paper's protocol
#          (split 0: 36,178 x 33; bench/sidebyside -task paperrows) against
#          IBM diffprivlib's LogisticRegression (bench/diffprivlib_side.py,
#          objective perturbation, lbfgs) at eps DPL_EPS: stabpriv's output
#          perturbation (gamma, SGD 10 passes b = 1, lambda GAMMA_LAMBDA) and
#          objective perturbation (lambda OBJ_LAMBDA), diffprivlib at
#          lambda = 1/(n C) = DPL_LAMBDA; each side at its best lambda for
#          eps = 1 on Adult. Only when DIFFPRIVLIB names a diffprivlib source
#          checkout (not packaged for Debian; the script patches its loss to
#          scikit-learn >= 1.4's mean at run time and checks the result,
#          see bench/diffprivlib_side.py) and ADULT exists
# Pairing: ROUNDS rounds; in every round each measure runs the peer's side
# and then stabpriv's, back to back (ABAB...), REPS timings a side. Every
# timing is tagged with its round and side, and bench/summarize.py gives,
# for each pair, the min and the median over the rounds of the per-round
# ratio (stabpriv's median in the round over the peer's median in the same
# round), so that load which changes between rounds cancels. Each timing
# names its algorithm, and the table says whether the two sides of a pair
# run the same one. The versions of both sides, the BLAS library numpy runs
# with its kernel and thread count, and the machine are recorded in
# OUT/sidebyside.env.jsonl. Skips when scikit-learn is missing (Debian:
# apt-get install python3-sklearn python3-pandas).
set -euo pipefail
cd "$(dirname "$0")/.."
py=""
for c in /usr/bin/python3 python3; do
  if command -v "$c" >/dev/null && "$c" -c 'import sklearn, pandas' 2>/dev/null; then py=$c; break; fi
done
if [ -z "$py" ]; then
  echo "bench/compare.sh: scikit-learn or pandas not found, skipping (apt-get install python3-sklearn python3-pandas)"
  exit 0
fi
ROUNDS=${ROUNDS:-3}
REPS=${REPS:-3}
SHAPES=${SHAPES:-"100000x100 1000000x100"}
PASS_SHAPE=${PASS_SHAPE:-100000x100}
SVD_SHAPE=${SVD_SHAPE:-100000x100}
CSV_SHAPE=${CSV_SHAPE:-1000000x20}
SVD_K=${SVD_K:-32}
[ "$SVD_K" -gt "${SVD_SHAPE#*x}" ] && SVD_K=${SVD_SHAPE#*x}
ADULT=${ADULT:-../shared/datasets/adult}
OUT=${OUT:-out}
DIFFPRIVLIB=${DIFFPRIVLIB:-}
DPL_EPS=${DPL_EPS:-1}
DPL_LAMBDA=${DPL_LAMBDA:-4.6416e-5}
GAMMA_LAMBDA=${GAMMA_LAMBDA:-1e-3}
OBJ_LAMBDA=${OBJ_LAMBDA:-4.6416e-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/sidebyside" ./bench/sidebyside
for s in $SHAPES $PASS_SHAPE $SVD_SHAPE; do
  [ -e "$tmp/d$s.x" ] || "$py" bench/sklearn_side.py --task gen --data "$tmp/d$s" --n "${s%x*}" --d "${s#*x}"
done
"$py" bench/sklearn_side.py --task gen --data "$tmp/csv" --n "${CSV_SHAPE%x*}" --d "$((${CSV_SHAPE#*x} - 1))" --csv "$tmp/data.csv"
# The Adult rows, preprocessed by the Go side, for the Python side.
if [ -e "$ADULT/adult.data" ]; then
  "$tmp/sidebyside" -task adult -adult "$ADULT" -data "$tmp/adult" -reps 0
fi
# diffprivlib: used when DIFFPRIVLIB is set, it imports and the check of its
# objective passes (a failed check stops the run: its times would be of
# another objective).
dpl=""
if [ -n "$DIFFPRIVLIB" ] && [ -e "$ADULT/adult.data" ]; then
  if ! check=$(DIFFPRIVLIB="$DIFFPRIVLIB" "$py" bench/diffprivlib_side.py verify); then
    echo "$check"
    echo "bench/compare.sh: diffprivlib's objective is not Chaudhuri et al.'s, stopping" >&2
    exit 1
  fi
  if [ -n "$check" ]; then
    echo "$check"
    "$tmp/sidebyside" -task paperrows -datadir "$ADULT" -rows "$tmp/adultpaper" -splits 1
    dpl=1
  fi
elif [ -z "$DIFFPRIVLIB" ]; then
  echo "bench/compare.sh: DIFFPRIVLIB not set, skipping the diffprivlib row"
fi
res="$tmp/results.jsonl"
env="$tmp/env.jsonl"
# The versions and settings of both sides, and the machine.
{
  "$tmp/sidebyside" -task env
  "$py" bench/sklearn_side.py --task env --data "$tmp/env"
  printf '{"task": "machine", "nproc": %s, "cpu": "%s", "go": "%s"}\n' "$(nproc)" \
    "$(grep -m1 '^model name' /proc/cpuinfo | sed 's/^[^:]*: *//; s/"/\\"/g')" "$(go env GOVERSION)"
} >"$env"
round=0
# side <py|go> <task> <shape> [args]: one side of one task, each JSON line
# tagged with the round and the side.
side() {
  local who=$1 task=$2 s=$3 tag=stabpriv
  shift 3
  [ "$who" = py ] && tag=peer
  if [ "$who" = py ]; then
    "$py" bench/sklearn_side.py --task "$task" --n "${s%x*}" --d "${s#*x}" --reps "$REPS" "$@"
  else
    "$tmp/sidebyside" -task "$task" -n "${s%x*}" -d "${s#*x}" -reps "$REPS" "$@"
  fi | sed -u "s/^{/{\"round\": $round, \"side\": \"$tag\", /" | tee -a "$res"
}
for round in $(seq "$ROUNDS"); do
  for s in $SHAPES; do
    side py fit "$s" --data "$tmp/d$s"
    side go fit "$s" -data "$tmp/d$s"
  done
  side py pass "$PASS_SHAPE" --data "$tmp/d$PASS_SHAPE"
  side go pass "$PASS_SHAPE" -data "$tmp/d$PASS_SHAPE"
  side py svd "$SVD_SHAPE" --data "$tmp/d$SVD_SHAPE" --k "$SVD_K"
  side go svd "$SVD_SHAPE" -data "$tmp/d$SVD_SHAPE" -k "$SVD_K"
  side py csv "$CSV_SHAPE" --data "$tmp/csv" --csv "$tmp/data.csv"
  side go csv "$CSV_SHAPE" -csv "$tmp/data.csv"
  if [ -e "$ADULT/adult.data" ]; then
    side py adult 0x0 --data "$tmp/adult"
    side go adult 0x0 -adult "$ADULT"
  fi
  if [ -n "$dpl" ]; then
    DIFFPRIVLIB="$DIFFPRIVLIB" "$py" bench/diffprivlib_side.py time --rows "$tmp/adultpaper" --eps "$DPL_EPS" --lambda "$DPL_LAMBDA" --reps "$REPS" |
      sed -u "s/^{/{\"round\": $round, \"side\": \"peer\", /" | tee -a "$res"
    "$tmp/sidebyside" -task paperfit -rows "$tmp/adultpaper" -eps "$DPL_EPS" -lambda "$GAMMA_LAMBDA" -lambda-objective "$OBJ_LAMBDA" -reps "$REPS" |
      sed -u "s/^{/{\"round\": $round, \"side\": \"stabpriv\", /" | tee -a "$res"
  fi
done
mkdir -p "$OUT"
cp "$res" "$OUT/sidebyside.jsonl"
cp "$env" "$OUT/sidebyside.env.jsonl"
"$py" bench/summarize.py "$res" "$env" | tee "$OUT/sidebyside.md"
