#!/usr/bin/env python3
"""Side by side, per suite program: the exception classes (kernel, kind,
format) GPU-FPX's detector reported and those xfpx reported in each mode,
compared on the formats GPU-FPX checks (f32, f64).

    vs-gpufpx.py LOGS PROGRAM...     # LOGS: run-gpu-checks.sh's log folder

Reads LOGS/<program>.gpufpx.log (GPU-FPX's output) and
LOGS/<program>.<mode>.report.json (xfpx's reports). Prints one line per
program and mode: how many classes GPU-FPX found, and which of them xfpx
missed (`missed`) or found beyond them (`extra`). Exit status 1 when xfpx
misses a class GPU-FPX found in any mode.
"""

import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "harness"))
import benchlib  # noqa: E402


def classes(findings):
    return {k for k in benchlib.finding_keys(findings, benchlib.GPUFPX_FORMATS)}


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    logs, programs = argv[0], argv[1:]
    rows, missed_any = [], False
    for prog in programs:
        g = os.path.join(logs, prog + ".gpufpx.log")
        if not os.path.isfile(g):
            rows.append((prog, "-", "-", "GPU-FPX not run", ""))
            continue
        with open(g, errors="replace") as f:
            ref, unparsed = benchlib.parse_gpufpx(f.read())
        ref = classes(ref)
        note = " (%d lines unparsed)" % len(unparsed) if unparsed else ""
        reports = sorted(glob.glob(os.path.join(logs, prog + ".*.report.json")))
        if not reports:
            rows.append((prog, "-", str(len(ref)) + note, "no xfpx report", ""))
        for rep in reports:
            mode = os.path.basename(rep)[len(prog) + 1:-len(".report.json")]
            try:
                with open(rep) as f:
                    found, _ = benchlib.parse_xfpx_report(f.read())
            except (OSError, benchlib.ReportError) as e:
                rows.append((prog, mode, str(len(ref)), "no report: %s" % e, ""))
                continue
            mine = classes(found)
            missed, extra = sorted(ref - mine), sorted(mine - ref)
            missed_any |= bool(missed)
            fmt = lambda ks: ", ".join("%s %s %s" % k for k in ks) or "none"  # noqa: E731
            rows.append((prog, mode, str(len(ref)) + note, fmt(missed), fmt(extra)))
    head = ("program", "xfpx mode", "GPU-FPX classes", "xfpx missed", "xfpx extra")
    widths = [max(len(r[i]) for r in rows + [head]) for i in range(3)]
    line = lambda r: " | ".join(c.ljust(widths[i]) if i < 3 else c for i, c in enumerate(r))  # noqa: E731
    print(line(head))
    print("-+-".join("-" * w for w in widths) + "-+-" + "-" * 11 + "-+-" + "-" * 10)
    for r in rows:
        print(line(r))
    return 1 if missed_any else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
