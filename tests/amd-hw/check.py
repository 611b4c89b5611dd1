#!/usr/bin/env python3
"""Compares what `xfpx run --vendor amd` found with what each program is
known to raise, and the program's own behaviour with and without xfpx.

Usage: check.py OUT_DIR PROGRAM EXPECT   (EXPECT: an .expect.json, `none`
for no findings, or `skipped` for a program whose kernels the rewriter
refuses). Reads OUT_DIR/PROGRAM.{plain,xfpx}.{out,rc} and
OUT_DIR/PROGRAM.json (the report); prints one line per expected and found
finding and the verdict; exits 1 on any difference."""
import json
import os
import sys


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def main():
    out, program, expect = sys.argv[1], sys.argv[2], sys.argv[3]
    base = os.path.join(out, program)
    problems = []
    plain_rc, xfpx_rc = read(base + ".plain.rc").strip(), read(base + ".xfpx.rc").strip()
    if plain_rc != "0":
        problems.append(f"the program alone exited with {plain_rc}")
    if xfpx_rc != plain_rc:
        problems.append(f"under xfpx it exited with {xfpx_rc}, alone with {plain_rc}")
    if read(base + ".plain.out") != read(base + ".xfpx.out"):
        problems.append("its output under xfpx differs from its output alone")
    try:
        report = json.loads(read(base + ".json"))
    except (OSError, ValueError) as e:
        print(f"{program}: no report ({e})")
        return 1
    found = set()
    for k in report["kernels"]:
        shown = k.get("demangled") or k["name"]
        for r in k["records"]:
            loc = r["site"].get("location") or {}
            found.add((shown, r["kind"], r["format"], os.path.basename(loc.get("file", "?")), loc.get("line", 0)))
    expected = set()
    if expect not in ("none", "skipped"):
        spec = json.loads(read(expect))
        for f in spec["findings"]:
            expected.add((f["kernel"], f["kind"], f["format"], spec["source"], f["line"]))

    def same(e, f):
        # a C++ kernel is known by its demangled name: `name(args)`
        return (f[0] == e[0] or f[0].startswith(e[0] + "(")) and e[1:] == f[1:]

    for e in sorted(expected):
        hit = any(same(e, f) for f in found)
        print(f"  expected {e[0]} {e[1]} ({e[2]}) at {e[3]}:{e[4]}: {'found' if hit else 'MISSING'}")
        if not hit:
            problems.append(f"missing {e}")
    for f in sorted(found):
        if not any(same(e, f) for e in expected):
            print(f"  found    {f[0]} {f[1]} ({f[2]}) at {f[3]}:{f[4]}: NOT EXPECTED")
            problems.append(f"unexpected {f}")
    statuses = {k["name"]: k["status"]["state"] for k in report["kernels"]}
    if not statuses:
        problems.append("no kernel was seen (did the HSA runtime load the tool? see its stderr)")
    for name, state in statuses.items():
        want = "skipped" if expect == "skipped" else "instrumented"
        if state != want:
            problems.append(f"kernel {name} is {state}, expected {want}")
    if not report["run"].get("attached", True):
        problems.append("the instrumentation never attached")
    for p in problems:
        print(f"  PROBLEM: {p}")
    print(f"{program}: {'ok' if not problems else 'FAILED'} ({len(found)} findings, {len(statuses)} kernels)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
