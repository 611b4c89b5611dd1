#!/usr/bin/env python3
"""The hardware counters' results of hwcounters-check.sh (OUT = its log folder).

`hwcounters_compare.py OUT APP...`: per application, the report of
`xfpx run --tool counters --counters hardware` (OUT/APP/hw.json) against
Nsight Compute's raw page (OUT/APP/ncu.csv) and against the instrumented
counters' report (OUT/APP/inst.json), kernel by kernel and launch by launch
(launches in order): warp instructions (smsp__inst_executed.sum), thread
instructions (smsp__thread_inst_executed.sum) and predicated-on thread
instructions (smsp__thread_inst_executed_pred_on.sum). Equal is expected;
each difference is printed. Also prints the hardware report's notes on
launches not counted, and Nsight Compute's divergent branch targets next to
the instrumented divergent branches (for the record: the hardware counters
have none). Exit status 1 when anything differs or is missing.

`hwcounters_compare.py --summary OUT APP...`: the short table of the whole
check: counts (from compare.txt), wall times (times.txt: median of the
plain and hardware runs, and their ratio) and the region check (region.txt).
"""
import csv
import json
import statistics
import sys
from pathlib import Path

from counters_compare import function_name  # the same kernel-name matching as the instrumented check

FIELDS = [
    ("warp_instructions", "smsp__inst_executed.sum"),
    ("thread_instructions", "smsp__thread_inst_executed.sum"),
    ("thread_instructions_pred_on", "smsp__thread_inst_executed_pred_on.sum"),
]
DIVERGENT = "smsp__sass_branch_targets_threads_divergent.sum"


def lost_launches(note):
    """Whether a note of the hardware run says launches went uncounted (the
    note that opens every such run, naming what the hardware never counts,
    divergence and the mix, says no such thing)."""
    if note.startswith("counters read from the GPU's performance monitors"):
        return False
    return "not counted" in note or "not available" in note or "not read back" in note


def report_launches(path):
    """Per function name: per launch (in order) the three counts summed over
    its windows, and the divergent branches; the report's notes."""
    report = json.loads(path.read_text())
    section = report.get("counters") or {}
    out = {}
    for k in section.get("kernels", []):
        rows = out.setdefault(function_name(k["kernel"]), [])
        for launch in sorted(k["launches"], key=lambda l: l["launch"]):
            row = {f: sum(w[f] for w in launch["windows"]) for f, _ in FIELDS}
            row["divergent_branches"] = sum(w["divergent_branches"] for w in launch["windows"])
            rows.append(row)
    return out, section.get("source", "instrumented"), report.get("run", {}).get("notes", [])


def ncu_launches(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("==")]
    out = {}
    if not rows:
        return out
    header = rows[0]
    for r in rows[1:]:
        row = dict(zip(header, r))
        if not row.get("ID", "").strip().isdigit():
            continue
        values = {}
        for metric in [m for _, m in FIELDS] + [DIVERGENT]:
            try:
                values[metric] = int(float(row.get(metric, "").replace(",", "")))
            except ValueError:
                values[metric] = None
        out.setdefault(function_name(row.get("Kernel Name", "?")), []).append((int(row["ID"]), values))
    return {k: [v for _, v in sorted(l, key=lambda x: x[0])] for k, l in out.items()}


def compare(out, apps):
    ok = True
    lines = []
    for app in apps:
        d = out / app
        try:
            hw, source, notes = report_launches(d / "hw.json")
        except (OSError, ValueError, KeyError) as e:
            lines.append("%s: no hardware report (%s)" % (app, e))
            ok = False
            continue
        if source != "hardware":
            lines.append("%s: the report's counters are %s, not hardware" % (app, source))
            ok = False
        for n in notes:
            if lost_launches(n):
                lines.append("%s: note: %s" % (app, n))
                ok = False
        others = []
        try:
            others.append(("ncu", {k: [{f: v[m] for f, m in FIELDS} | {"div": v[DIVERGENT]} for v in l]
                                   for k, l in ncu_launches(d / "ncu.csv").items()}))
        except OSError as e:
            lines.append("%s: no Nsight Compute data (%s)" % (app, e))
            ok = False
        try:
            inst, _, _ = report_launches(d / "inst.json")
            others.append(("instrumented", inst))
        except (OSError, ValueError, KeyError) as e:
            lines.append("%s: no instrumented report (%s)" % (app, e))
            ok = False
        for name, theirs in others:
            for k in sorted(set(hw) | set(theirs)):
                a, b = hw.get(k, []), theirs.get(k, [])
                if len(a) != len(b):
                    lines.append("%s %s: %d launches counted by the hardware, %d by %s" % (app, k, len(a), len(b), name))
                    ok = False
                bad = 0
                for i, (x, y) in enumerate(zip(a, b)):
                    for f, _ in FIELDS:
                        if y.get(f) is None or x[f] != y[f]:
                            bad += 1
                            if bad <= 3:
                                lines.append("%s %s launch %d: %s %s hardware vs %s %s" % (app, k, i, f, x[f], y.get(f), name))
                if bad:
                    ok = False
                lines.append("%s %-22s %4d launches: hardware %s %s" % (app, k[:22], len(a), "=" if not bad and len(a) == len(b) else "!=", name))
        # divergence for the record: the instrumented count next to ncu's sass metric
        ncu = dict(others).get("ncu", {})
        inst = dict(others).get("instrumented", {})
        for k in sorted(inst):
            ours = sum(r["divergent_branches"] for r in inst[k])
            theirs = sum((r.get("div") or 0) for r in ncu.get(k, []))
            lines.append("%s %-22s divergent branches: instrumented %d, ncu %s %d (hardware: not counted)" % (app, k[:22], ours, DIVERGENT, theirs))
    lines.append("counts: %s" % ("every launch equal" if ok else "DIFFERENCES (above)"))
    print("\n".join(lines))
    return 0 if ok else 1


def summary(out, apps):
    compare_text = (out / "compare.txt").read_text() if (out / "compare.txt").exists() else ""
    times = {}
    if (out / "times.txt").exists():
        for line in (out / "times.txt").read_text().splitlines():
            parts = line.split()
            if len(parts) == 4:
                times.setdefault(parts[0], {}).setdefault(parts[1], []).append(float(parts[3]) - float(parts[2]))
    region = {}
    if (out / "region.txt").exists():
        for line in (out / "region.txt").read_text().splitlines():
            name, rest = line.split(" ", 1)
            region[name] = rest
    rows = ["%-12s %-9s %-9s %8s %8s %6s  %s" % ("program", "hw=ncu", "hw=inst", "plain s", "hw s", "ratio", "in-field check (learning runs; live run exit; fault-free runs flagged, margin 0 and the default; instrumented report vs hardware region)")]
    ratios = []
    for name in list(apps) + [t for t in times if t not in apps]:
        def eq(other):
            lines = [l for l in compare_text.splitlines() if l.startswith(name + " ") and other in l and "launches:" in l]
            if not lines:
                return "-"
            return "yes" if all("hardware = " in l for l in lines) else "NO"
        t = times.get(name, {})
        plain = statistics.median(t["plain"]) if t.get("plain") else None
        hw = statistics.median(t["hardware"]) if t.get("hardware") else None
        ratio = hw / plain if plain and hw else None
        if ratio:
            ratios.append(ratio)
        fmt = lambda v, p: ("%.*f" % (p, v)) if v is not None else "-"
        rows.append("%-12s %-9s %-9s %8s %8s %6s  %s" % (name, eq("ncu") if name in apps else "-", eq("instrumented") if name in apps else "-",
                                                  fmt(plain, 3), fmt(hw, 3), fmt(ratio, 3), region.get(name, "-")))
    if ratios:
        rows.append("wall-time ratio hardware/plain (medians of 3): geomean %.3f, max %.3f (goal <= 1.05)"
                    % (statistics.geometric_mean(ratios), max(ratios)))
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0] == "--summary":
        sys.exit(summary(Path(args[1]), args[2:]))
    sys.exit(compare(Path(args[0]), args[1:]))
