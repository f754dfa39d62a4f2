"""Summarizes the JSON lines of bench/compare.sh as Markdown.

  python3 bench/summarize.py RESULTS.jsonl [ENV.jsonl]

Every timing line carries its task, shape, implementation ("impl"), side
("peer" or "stabpriv"), round, seconds and algorithm ("algo"); a stabpriv
line lists in "vs" the peer algorithms it is compared with. For each pair
of a stabpriv implementation and a peer implementation of the same task and
shape, the table gives each side's min and median time over all its
timings, and the min and the median over the rounds of the per-round ratio:
stabpriv's median in round r over the peer's median in round r. The sides
of a round ran back to back, so the ratio of a round is taken under one
load; the ratio of the two mins, which may come from different rounds, is
not reported. The epochs at b = 32 and 256 are compared, the same way, with
stabpriv's epoch at b = 1. Extra numeric fields (peak memory, fixed cost,
solver steps) are given as min..median; others as their set of values.

With ENV.jsonl (the versions and settings compare.sh recorded), a header
names the machine, both sides' versions and the BLAS numpy runs.
"""
import json
import statistics
import sys
from collections import defaultdict

ORDER = "fit pass svd csv adult adult-diffprivlib".split()
LABELS = {"adult-diffprivlib": "private fit on Adult vs diffprivlib"}
KEYS = {"task", "shape", "impl", "seconds", "round", "side", "algo", "vs"}


def load(path):
    return [json.loads(line) for line in open(path) if line.startswith("{")]


def header(envs):
    by = {e.get("task"): e for e in envs}
    m, go, py = by.get("machine", {}), by.get("env", {}), None
    for e in envs:
        if e.get("task") == "env" and "python" in e:
            py = e
        elif e.get("task") == "env" and "go_version" in e:
            go = e
    out = []
    if m:
        out.append(f"Machine: {m.get('cpu', '?')}, nproc {m.get('nproc', '?')}.")
    if go:
        out.append(f"stabpriv: {go.get('go_version')}, GOMAXPROCS {go.get('gomaxprocs')}, "
                   f"GOAMD64 {go.get('GOAMD64', 'v1')}.")
    if py:
        out.append(f"Peer: Python {py['python']}, numpy {py['numpy']}, scipy {py['scipy']}, "
                   f"scikit-learn {py['sklearn']}, pandas {py['pandas']}.")
        for b in py.get("blas", []):
            out.append(f"Peer BLAS: {b.get('library')} {b.get('version') or ''}, kernel {b.get('kernel') or 'unknown'}, "
                       f"{b.get('threading') or 'threading unknown'}, {b.get('threads')} threads ({b.get('file')}).")
        tv = py.get("thread_vars") or {}
        out.append("Thread variables: " + (", ".join(f"{k}={v}" for k, v in tv.items()) or "none set") + ".")
    return out


def main():
    rows = load(sys.argv[1])
    if len(sys.argv) > 2:
        for line in header(load(sys.argv[2])):
            print(line + "  ")
        print()
    # times[key][impl][round] -> list of seconds; meta[key][impl] -> first line
    times = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    meta = defaultdict(dict)
    extras = defaultdict(lambda: defaultdict(list))
    rounds = set()
    for r in rows:
        key = (r["task"], r["shape"])
        rnd = r.get("round", 0)
        rounds.add(rnd)
        times[key][r["impl"]][rnd].append(r["seconds"])
        meta[key].setdefault(r["impl"], r)
        for k, v in r.items():
            if k not in KEYS:
                extras[key, r["impl"]][k].append(v)
    print(f"Rounds: {len(rounds)}; in each, the peer's side then stabpriv's, back to back. "
          "Ratio: stabpriv's time over the peer's, per round (medians of the round), then min and median over the rounds.")
    print()
    print("| task | shape | stabpriv | peer | same algorithm | stabpriv min / median | peer min / median "
          "| ratio min | ratio median | other |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key in sorted(times, key=lambda k: (ORDER.index(k[0]) if k[0] in ORDER else len(ORDER), k[1])):
        impls = times[key]
        side = {i: meta[key][i].get("side") or ("stabpriv" if i.startswith("stabpriv") else "peer") for i in impls}
        peers = [i for i in impls if side[i] == "peer"]
        for s in [i for i in impls if side[i] == "stabpriv"]:
            m = meta[key][s]
            vs = m.get("vs")
            refs = [p for p in peers if vs is None or meta[key][p].get("algo") in vs]
            if m.get("algo", "").startswith("sgd-epoch-marginal-b"):
                refs = [i for i in impls if i == "stabpriv pass b=1"]
            for p in refs or [None]:
                print(row(key, s, p, impls, meta, extras))


def fmt_times(per_round):
    ts = [t for v in per_round.values() for t in v]
    return f"{min(ts) * 1e3:.1f} / {statistics.median(ts) * 1e3:.1f} ms"


def fmt_ratio(r):
    return f"{r:.2f}" if r >= 0.1 else f"{r:.2g}"


def cell(text):
    return str(text).replace("|", "\\|")


def row(key, s, p, impls, meta, extras):
    other = []
    for k, vs in sorted(extras[key, s].items()):
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vs):
            other.append(f"{k} {min(vs):.3g}..{statistics.median(vs):.3g}")
        else:
            other.append(f"{k} {' / '.join(sorted(set(map(str, vs))))}")
    if p is None:
        return (f"| {LABELS.get(key[0], key[0])} | {key[1]} | {cell(s)} | | | {fmt_times(impls[s])} | | | | "
                f"{'; '.join(other)} |")
    ratios = [statistics.median(impls[s][r]) / statistics.median(impls[p][r])
              for r in sorted(impls[s]) if r in impls[p]]
    same = "yes" if meta[key][s].get("algo") == meta[key][p].get("algo") else "no"
    if meta[key][p].get("side") == "stabpriv" or p.startswith("stabpriv"):
        same = "(stabpriv b = 1)"
    rmin = fmt_ratio(min(ratios)) if ratios else ""
    rmed = fmt_ratio(statistics.median(ratios)) if ratios else ""
    return (f"| {LABELS.get(key[0], key[0])} | {key[1]} | {cell(s)} | {cell(p)} | {same} | {fmt_times(impls[s])} "
            f"| {fmt_times(impls[p])} | {rmin} | {rmed} | {'; '.join(other)} |")


if __name__ == "__main__":
    main()
