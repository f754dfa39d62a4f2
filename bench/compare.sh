#!/usr/bin/env bash
# Side-by-side: one pass of per-example SGD (logistic, elastic net, b = 1) on the
# same dense 36,000 x 33 data in scikit-learn's SGDClassifier and in stabpriv's
# native engine, in one run on one machine. Skips when scikit-learn is missing
# (Debian: apt-get install python3-sklearn).
set -euo pipefail
cd "$(dirname "$0")/.."
py=""
for c in /usr/bin/python3 python3; do
  if command -v "$c" >/dev/null && "$c" -c 'import sklearn' 2>/dev/null; then py=$c; break; fi
done
if [ -z "$py" ]; then
  echo "bench/compare.sh: scikit-learn not found, skipping (apt-get install python3-sklearn)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/sidebyside" ./bench/sidebyside
# Three rounds, the two sides alternating, so that neither always runs on a
# machine the other has just warmed or loaded; the best round of each counts.
for round in 1 2 3; do
  "$py" bench/sklearn_pass.py --csv "$tmp/adultshape.csv" | tee -a "$tmp/results.jsonl"
  "$tmp/sidebyside" --csv "$tmp/adultshape.csv" | tee -a "$tmp/results.jsonl"
done
"$py" - "$tmp/results.jsonl" <<'PY'
import json, sys
best = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["impl"] not in best or r["seconds_per_pass"] < best[r["impl"]]["seconds_per_pass"]:
        best[r["impl"]] = r
rows = list(best.values())
base = rows[0]["seconds_per_pass"]
print(f"{'implementation':32s} {'ms/pass':>8s} {'speed-up':>8s} {'fit ms':>8s} {'train acc':>9s}")
for r in rows:
    print(f"{r['impl']:32s} {1e3*r['seconds_per_pass']:8.2f} {base/r['seconds_per_pass']:7.1f}x {1e3*r['seconds_fit']:8.1f} {r['train_accuracy']:9.4f}")
PY
