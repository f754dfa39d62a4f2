"""Summarizes the JSON lines of bench/compare.sh as a Markdown table: per task
and shape, each implementation's min and median time and their ratios to the
reference (scikit-learn, pandas or diffprivlib; for the epochs at b = 32 and
256 also to stabpriv's b = 1), and the min and median of the extra measures
(the set of values for those that are not numbers, e.g. thread counts)."""
import json
import statistics
import sys
from collections import defaultdict

groups = defaultdict(lambda: defaultdict(list))
extras = defaultdict(lambda: defaultdict(list))
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = (r["task"], r["shape"])
    groups[key][r["impl"]].append(r["seconds"])
    for k, v in r.items():
        if k not in ("task", "shape", "impl", "seconds"):
            extras[key, r["impl"]][k].append(v)

print("| task | shape | implementation | n | min | median | x ref (min) | x ref (median) | other |")
print("|---|---|---|---|---|---|---|---|---|")
# Tasks whose name in the table is not their key.
LABELS = {"adult-diffprivlib": "private fit on Adult vs diffprivlib LogisticRegression"}
for key in sorted(groups, key=lambda k: ("fit pass svd csv adult adult-diffprivlib".split().index(k[0]), k[1])):
    impls = groups[key]
    ref = next((i for i in impls if i.startswith(("scikit-learn", "pandas", "diffprivlib"))), None)
    b1 = impls.get("stabpriv pass b=1")
    for impl, ts in impls.items():
        lo, med = min(ts), statistics.median(ts)
        rmin = rmed = ""
        if ref and impl != ref:
            rmin = f"{lo / min(impls[ref]):.2f}"
            rmed = f"{med / statistics.median(impls[ref]):.2f}"
        other = []
        for k, vs in sorted(extras[key, impl].items()):
            if all(isinstance(v, (int, float)) for v in vs):
                other.append(f"{k} {min(vs):.2f}..{statistics.median(vs):.2f} (min..median)")
            else:
                other.append(f"{k} {' / '.join(sorted(set(map(str, vs))))}")
        if b1 and impl.startswith("stabpriv pass b=") and impl != "stabpriv pass b=1":
            other.append(f"x b=1 {lo / min(b1):.2f} (min), {med / statistics.median(b1):.2f} (median)")
        print(f"| {LABELS.get(key[0], key[0])} | {key[1]} | {impl} | {len(ts)} | {lo * 1e3:.1f} ms | {med * 1e3:.1f} ms | {rmin} | {rmed} | {'; '.join(other)} |")
