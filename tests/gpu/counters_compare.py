#!/usr/bin/env python3
"""Compares the counters of `xfpx run --tool counters` (OUT/NAME/counters.json)
with Nsight Compute's of the uninstrumented program (OUT/NAME/ncu.csv, raw
page) kernel by kernel, summed over launches: warp instructions
(smsp__inst_executed.sum), thread instructions (smsp__thread_inst_executed.sum)
and predicated-on thread instructions (smsp__thread_inst_executed_pred_on.sum).
Equal is expected; where not, the ratio xfpx/ncu is printed. Kernels are
matched by their function name (signature, return type and template
arguments left out: the two name a kernel's parameters differently).
Writes OUT/compare.txt and prints it. Exit status 1 when a kernel differs,
is missing on one side, or a program has no data.

Usage: counters_compare.py OUT NAME...
"""
import csv
import json
import re
import sys
from pathlib import Path

PAIRS = [
    ("warp", "warp_instructions", "smsp__inst_executed.sum"),
    ("thread", "thread_instructions", "smsp__thread_inst_executed.sum"),
    ("pred on", "thread_instructions_pred_on", "smsp__thread_inst_executed_pred_on.sum"),
]


def function_name(name):
    """`void ns::k<32>(float*, int)` -> `ns::k`."""
    n = name.replace("(anonymous namespace)", "anon")
    n = n.split("(", 1)[0]
    depth, plain = 0, ""
    for c in n:
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif depth == 0:
            plain += c
    return plain.strip().split()[-1] if plain.strip() else name


def number(text):
    try:
        return int(float(text.replace(",", "")))
    except ValueError:
        return None


def xfpx_side(path):
    """Per function name: launches and the three sums."""
    report = json.loads(path.read_text())
    section = report.get("counters") or {}
    out = {}
    for k in section.get("kernels", []):
        s = out.setdefault(function_name(k["kernel"]), {"launches": 0})
        s["launches"] += len(k["launches"])
        for launch in k["launches"]:
            for w in launch["windows"]:
                for _, field, _ in PAIRS:
                    s[field] = s.get(field, 0) + w[field]
    return out


def ncu_side(path):
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("==")]
    if not rows:
        return {}
    header = rows[0]
    out = {}
    for r in rows[1:]:
        row = dict(zip(header, r))
        if not row.get("ID", "").strip().isdigit():
            continue  # the units row
        s = out.setdefault(function_name(row.get("Kernel Name", "?")), {"launches": 0})
        s["launches"] += 1
        for _, _, metric in PAIRS:
            v = number(row.get(metric, ""))
            if v is not None:
                s[metric] = s.get(metric, 0) + v
    return out


def main():
    out = Path(sys.argv[1])
    ok = True
    lines = [
        "%-12s %-26s %9s  %-24s %-24s %-24s"
        % ("program", "kernel", "launches", "warp instrs", "thread instrs", "pred-on thread instrs")
    ]
    for name in sys.argv[2:]:
        d = out / name
        try:
            mine = xfpx_side(d / "counters.json")
            theirs = ncu_side(d / "ncu.csv")
        except (OSError, ValueError, KeyError) as e:
            lines.append("%-12s no data: %s" % (name, e))
            ok = False
            continue
        if not mine or not theirs:
            lines.append("%-12s no data: %d kernels counted, %d in ncu" % (name, len(mine), len(theirs)))
            ok = False
            continue
        for k in sorted(set(mine) | set(theirs)):
            a, b = mine.get(k), theirs.get(k)
            if a is None or b is None:
                lines.append("%-12s %-26s only in %s" % (name, k[:26], "ncu" if a is None else "xfpx"))
                ok = False
                continue
            cells = []
            for _, field, metric in PAIRS:
                x, y = a.get(field, 0), b.get(metric)
                if y is None:
                    cells.append("%-24s" % ("%d / ncu -" % x))
                elif x == y:
                    cells.append("%-24s" % ("%d =" % x))
                else:
                    ok = False
                    cells.append("%-24s" % ("%d / %d = %.4f" % (x, y, x / y if y else float("inf"))))
            launches = "%d" % a["launches"] if a["launches"] == b["launches"] else "%d/%d" % (a["launches"], b["launches"])
            if a["launches"] != b["launches"]:
                ok = False
            lines.append("%-12s %-26s %9s  %s" % (name, k[:26], launches, " ".join(cells)))
    lines.append("exact: %s" % ("every kernel" if ok else "NO (see the rows with a ratio or a note)"))
    text = "\n".join(lines) + "\n"
    (out / "compare.txt").write_text(text)
    print(text, end="")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
