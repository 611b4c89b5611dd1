#!/usr/bin/env python3
"""The short table at the end of tests/gpu/issue17-18.sh, from the parts'
outputs under OUT (inject/table.txt, campaigns/c-*/results.jsonl,
counters/detect.txt, counters/cost.txt). Usage: issue17_18_summary.py OUT"""
import glob
import json
import os
import sys


def lines(path):
    try:
        return open(path).read().splitlines()
    except OSError:
        return []


def micro(out):
    rows = [l for l in lines(os.path.join(out, "inject", "table.txt"))[2:] if l.strip()]
    if not rows:
        return "no result"
    exact = sum(" exact (" in l for l in rows)
    due = sum("DUE as predicted" in l for l in rows)
    bad = sum("MISMATCH" in l or "no result" in l for l in rows)
    other = len(rows) - exact - due - bad
    sass = next((l for l in lines(os.path.join(out, "inject", "table.txt")) if l.startswith("micro SASS")), "")
    return "%d cases: %d bit-exact, %d DUE as predicted, %d reported, %d MISMATCH%s" % (
        len(rows), exact, due, other, bad, "" if "same SASS" in sass else " (SASS DIFFERS)")


def campaigns(out):
    runs = []
    for f in glob.glob(os.path.join(out, "campaigns", "c-*", "results.jsonl")):
        for l in lines(f):
            try:
                runs.append(json.loads(l))
            except ValueError:
                pass
    if not runs:
        return "no runs"
    c = {o: sum(r.get("outcome") == o for r in runs) for o in ("Masked", "SDC", "DUE", "not-activated")}
    return "%d runs: Masked %d, SDC %d, DUE %d, not activated %d" % (len(runs), *c.values())


def detect(out):
    t = lines(os.path.join(out, "counters", "detect.txt"))
    if len(t) < 2:
        return "no result", "no result"
    fp = next((l for l in t if l.startswith("false positives")), "?")
    cells = " ".join(t[1:-1])
    return fp.replace("false positives: ", ""), "%d flagged, %d missed, %d DUE, %d not activated" % (
        cells.count("flagged ("), cells.count("missed ("), cells.count("DUE ("), cells.count("not activated"))


def cost(out):
    g = next((l for l in lines(os.path.join(out, "counters", "cost.txt")) if l.startswith("geomean")), None)
    if not g:
        return "no result"
    p = g.split()
    return "geomean %sx first run, %sx cached" % (p[1] if len(p) > 1 else "-", p[2] if len(p) > 2 else "-")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    fp, faults = detect(out)
    rows = [
        ("inject micro-kernels", micro(out)),
        ("campaigns (4 workloads)", campaigns(out)),
        ("in-field check: false pos.", fp),
        ("in-field check: faults", faults),
        ("counters cost (bench)", cost(out)),
    ]
    for k, v in rows:
        print("%-28s %s" % (k, v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
