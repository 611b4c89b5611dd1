#!/usr/bin/env python3
"""Turns the Nsight Compute raw pages of run-gpu.sh (OUT/ncu/<app>.csv) into
OUT/metrics.csv (one row per launch), OUT/kernels.csv (summed per app and
kernel) and OUT/table.txt (printed): warp and thread instructions, lanes per
warp instruction, predicated-on share, branch targets and divergent ones.

Usage: ncu_table.py OUT APP...   (exit status 1 when an app has no rows)
"""
import csv
import re
import sys
from pathlib import Path

KEYS = ["ID", "Kernel Name", "Grid Size", "Block Size"]


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def read_launches(path):
    """The rows of one raw page, without the units row, as dicts."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("==")]
    if not rows:
        return [], []
    header = rows[0]
    launches = [dict(zip(header, r)) for r in rows[1:] if r and r[0].strip()]
    metrics = [h for h in header if "__" in h]
    return launches, metrics


def main():
    out = Path(sys.argv[1])
    apps = sys.argv[2:]
    all_metrics, per_launch, ok = [], [], True
    for app in apps:
        path = out / "ncu" / f"{app}.csv"
        launches, metrics = read_launches(path) if path.exists() else ([], [])
        if not launches:
            print(f"error: no Nsight Compute rows for {app} ({path})", file=sys.stderr)
            ok = False
        for m in metrics:
            if m not in all_metrics:
                all_metrics.append(m)
        per_launch += [(app, r) for r in launches]
    with open(out / "metrics.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["app", "launch", "kernel", "grid", "block"] + all_metrics)
        for app, r in per_launch:
            w.writerow([app] + [r.get(k, "") for k in KEYS] + [r.get(m, "").replace(",", "") for m in all_metrics])
    sums, order = {}, []
    for app, r in per_launch:
        key = (app, r.get("Kernel Name", "?"))
        if key not in sums:
            sums[key] = {"launches": 0}
            order.append(key)
        s = sums[key]
        s["launches"] += 1
        for m in all_metrics:
            v = number(r.get(m, ""))
            if v is not None and not m.startswith("launch__"):
                s[m] = s.get(m, 0.0) + v
    counted = [m for m in all_metrics if not m.startswith("launch__")]
    with open(out / "kernels.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["app", "kernel", "launches"] + counted)
        for key in order:
            s = sums[key]
            w.writerow(list(key) + [s["launches"]] + ["%.0f" % s[m] if m in s else "" for m in counted])

    def get(s, m):
        return s.get(m)

    def fmt(v, spec="%.0f"):
        return "-" if v is None else spec % v

    lines = ["app        kernel                  launches  warp inst      thread inst     lanes/inst  pred-on  branch tgts  divergent"]
    for key in order:
        s = sums[key]
        inst, thr = get(s, "smsp__inst_executed.sum"), get(s, "smsp__thread_inst_executed.sum")
        pred = get(s, "smsp__thread_inst_executed_pred_on.sum")
        lanes = thr / inst if inst and thr is not None else None
        share = pred / thr if thr and pred is not None else None
        lines.append("%-10s %-23s %8d  %-14s %-15s %-11s %-8s %-12s %s" % (
            key[0], key[1][:23], s["launches"], fmt(inst), fmt(thr), fmt(lanes, "%.2f"), fmt(share, "%.3f"),
            fmt(get(s, "smsp__sass_branch_targets.sum")), fmt(get(s, "smsp__sass_branch_targets_threads_divergent.sum"))))
    missing = out / "missing-metrics.txt"
    if missing.exists():
        lines.append("MISSING METRICS (see missing-metrics.txt): " + ", ".join(
            sorted(set(re.findall(r"\b[a-z]+__[A-Za-z0-9_.]+", missing.read_text())))))
    (out / "table.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
