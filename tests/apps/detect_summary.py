#!/usr/bin/env python3
"""Tables of counters-detect-gpu.sh.

detect_summary.py DIR LEARN TESTS APP...   the in-field check: per app the
    learning runs, false positives among the fault-free checked runs, and
    each faulty run's outcome (DIR holds NAME.rc, NAME.json of each run)
detect_summary.py --cost TIMES.tsv           counters' cost: lines
    `program plain|counters k seconds exit checksum`, ratios and geomeans
"""
import json
import math
import os
import sys

FAULTS = [("wv0", "WV P0"), ("wv1", "WV P1"), ("iat", "IAT x^1 l0-15")]


def rc_of(d, name):
    try:
        return int(open(os.path.join(d, name + ".rc")).read().strip())
    except (OSError, ValueError):
        return None


def report(d, name):
    try:
        return json.load(open(os.path.join(d, name + ".json")))
    except (OSError, ValueError):
        return {}


def outside(rep):
    c = (rep.get("counters") or {}).get("region_check") or {}
    return len(c.get("deviations") or [])


def fault_outcome(d, name):
    rc = rc_of(d, name)
    rep = report(d, name)
    inj = rep.get("injection") or {}
    act = inj.get("activations")
    if rc is None:
        return "not run"
    if rc not in (0, 3):
        return "DUE (exit %d)" % rc
    if act == 0:
        return "not activated" + (" (flagged!)" if rc == 3 else "")
    word = "flagged" if rc == 3 else "missed"
    return "%s (%d dev, %s act)" % (word, outside(rep), act if act is not None else "?")


def detect(d, learn, tests, apps):
    print("app        learn  region  clean flagged (false pos.)  " + "  ".join("%-24s" % f[1] for f in FAULTS))
    total_fp = total_clean = 0
    for app in apps:
        learned = sum(1 for s in range(1, learn + 1) if rc_of(d, "learn-%s-%d" % (app, s)) == 0)
        region = os.path.exists(os.path.join(d, "region-%s.json" % app))
        rcs = [rc_of(d, "clean-%s-%d" % (app, s)) for s in range(101, 101 + tests)]
        done = [r for r in rcs if r in (0, 3)]
        fp = sum(1 for r in done if r == 3)
        errs = sum(1 for r in rcs if r is not None and r not in (0, 3))
        total_fp, total_clean = total_fp + fp, total_clean + len(done)
        clean = "%d/%d" % (fp, len(done)) + (" (%d failed)" % errs if errs else "")
        faults = "  ".join("%-24s" % fault_outcome(d, "%s-%s" % (f, app)) for f, _ in FAULTS)
        print("%-10s %5d  %-6s  %-26s  %s" % (app, learned, "yes" if region else "NO", clean, faults))
    print("false positives: %d of %d fault-free checked runs" % (total_fp, total_clean))


def cost(path):
    rows = {}
    for line in open(path):
        p = line.split()
        if len(p) < 5:
            continue
        prog, how, k, secs, rc = p[0], p[1], int(p[2]), float(p[3]), int(p[4])
        rows.setdefault(prog, {})[(how, k)] = (secs, rc, p[5] if len(p) > 5 else None)
    print("program        base s  counters x (1st)  counters x (2nd, cached)  checksum")
    logs = {1: [], 2: []}
    for prog, r in rows.items():
        plain = [v for (h, _), v in r.items() if h == "plain" and v[1] == 0]
        if not plain:
            print("%-14s plain run failed" % prog)
            continue
        base = min(v[0] for v in plain)
        want = plain[0][2]
        cells, same = [], True
        for k in (1, 2):
            v = r.get(("counters", k))
            if v and v[1] == 0:
                logs[k].append(math.log(v[0] / base))
                cells.append("%.2f" % (v[0] / base))
                same = same and v[2] == want
            else:
                cells.append("failed" if v else "-")
                same = False
        print("%-14s %6.2f  %16s  %24s  %s" % (prog, base, cells[0], cells[1], "same" if same else "DIFFERS/missing"))
    g = ["%.2f" % math.exp(sum(v) / len(v)) if v else "-" for v in (logs[1], logs[2])]
    print("%-14s %6s  %16s  %24s" % ("geomean", "", g[0], g[1]))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--cost":
        cost(sys.argv[2])
        return 0
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    detect(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
