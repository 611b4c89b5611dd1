#!/usr/bin/env python3
"""Tables of fault-injection campaigns (`xfpx campaign` directories).

Usage: campaign_summary.py OUT WORKLOAD...
Reads OUT/c-WORKLOAD/results.jsonl (one JSON object per run: model,
outcome, seconds, ...), OUT/plain.tsv (`workload<TAB>seconds` of the
uninstrumented program, median of its plain runs) and OUT/walls.tsv
(`workload<TAB>seconds` the whole campaign took). Prints, per workload and
model, the Masked/SDC/DUE/not-activated counts, the median wall time of the
runs that completed (not DUE) against the uninstrumented one, and the
campaign's throughput; then the same counts over all workloads, and the
geometric mean of the cost of the models that touch one instruction class
(every model but IRA and IVRA, which touch any instruction naming a
register, and IVOC, which traps at its first instance), per workload and
over all of them."""
import json
import os
import statistics
import sys

OUTCOMES = ["Masked", "SDC", "DUE", "not-activated"]
# Models whose sites are one class of instructions (a unit, immediates,
# constant/shared reads, shared stores, predicate writes, index reads).
ONE_CLASS = ["IOC", "IIO", "IMS", "IMD", "WV", "IAT", "IAW", "IAC", "IAL"]
MODELS = ["IOC", "IVOC", "IRA", "IVRA", "IIO", "IMS", "IMD", "WV", "IAT", "IAW", "IAC", "IAL"]


def read_tsv(path):
    out = {}
    try:
        for line in open(path):
            parts = line.split()
            if len(parts) >= 2:
                try:
                    out[parts[0]] = float(parts[1])
                except ValueError:
                    pass
    except OSError:
        pass
    return out


def read_runs(path):
    runs = []
    try:
        for line in open(path):
            try:
                runs.append(json.loads(line))
            except ValueError:
                pass  # a line cut short by a kill
    except OSError:
        pass
    return runs


def median_completed(runs):
    """The median wall of the runs that completed (not DUE), or None."""
    done = [r["seconds"] for r in runs if r.get("outcome") != "DUE" and isinstance(r.get("seconds"), (int, float))]
    return statistics.median(done) if done else None


def geomean(values):
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    product = 1.0
    for v in values:
        product *= v
    return product ** (1.0 / len(values))


def row(name, runs, plain):
    counts = [sum(1 for r in runs if r.get("outcome") == o) for o in OUTCOMES]
    med = median_completed(runs)
    cost = "%.2f" % (med / plain) if med and plain else "-"
    return "%-6s %4d %7d %5d %5d %8d %9s %6s" % (
        name, len(runs), *counts, "%.2f" % med if med else "-", cost)


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    out, workloads = sys.argv[1], sys.argv[2:]
    plain, walls = read_tsv(os.path.join(out, "plain.tsv")), read_tsv(os.path.join(out, "walls.tsv"))
    everything = {}
    one_class = {}
    head = "%-6s %4s %7s %5s %5s %8s %9s %6s" % ("model", "runs", "Masked", "SDC", "DUE", "not-act", "median s", "cost x")
    for w in workloads:
        runs = read_runs(os.path.join(out, "c-" + w, "results.jsonl"))
        p, wall = plain.get(w), walls.get(w)
        rate = "%.0f runs/hour" % (len(runs) / wall * 3600) if runs and wall else "no runs"
        print("== %s: %d runs, uninstrumented %s s, campaign %s s (%s)" % (
            w, len(runs), "%.2f" % p if p else "?", "%.0f" % wall if wall else "?", rate))
        print(head)
        for m in MODELS:
            mine = [r for r in runs if r.get("model") == m]
            everything.setdefault(m, []).extend(mine)
            if mine:
                print(row(m, mine, p))
            med = median_completed(mine)
            if m in ONE_CLASS and med and p:
                one_class.setdefault(w, []).append(med / p)
    print("== all workloads")
    print(head)
    for m in MODELS:
        if everything.get(m):
            print(row(m, everything[m], None))
    print("== cost of one-class models (%s): geometric mean of per-model median cost" % ", ".join(ONE_CLASS))
    for w in workloads:
        g = geomean(one_class.get(w, []))
        print("%-8s %s" % (w, "%.2fx over %d models" % (g, len(one_class[w])) if g else "-"))
    g = geomean([c for w in workloads for c in one_class.get(w, [])])
    print("%-8s %s" % ("all", "%.2fx" % g if g else "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
