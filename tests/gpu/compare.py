#!/usr/bin/env python3
"""Compares what xfpx found in one suite program with what the program is
known to raise, and the instrumented run's output with the plain run's.

A finding is the key (kernel, kind, format, file, line) of a record of an
`xfpx-report/1` report; `file` is compared by its base name, and a kernel
name by its part before any `(`. An expected entry names its kernel
exactly (`kernel`) or by a regular expression (`kernel_regex`, matched in
full), and its location exactly, by one of `also_at` (for code inlined
from a header), or not at all (`line: null`). Found keys that match no
expected entry and no `tolerate` entry are extra; expected entries that
match no found key are missing. Comparing classes (`--classes`, fast
mode), a screened finding (`kernels[].screened[]`, found by launch and
buffer) counts as its (kernel, kind, format). An entry with
`first_launch` is missing unless the earliest launch its matching
findings name is that launch (a late NaN must be located at its launch;
a finding whose launch is not known does not do).

    compare.py one --expected E --report R --plain-log P --xfpx-log X
                   --plain-rc N --xfpx-rc N --plain-s T --xfpx-s T
                   [--timed-out] >> results.jsonl
    compare.py skipped --program P --expected E --reason TEXT >> results.jsonl
    compare.py table results.jsonl
    compare.py selftest
"""

import argparse
import json
import re
import sys
from pathlib import Path


def kernel_base(name: str) -> str:
    return name.split("(", 1)[0].strip()


def found_launches(report: dict, classes: bool = False) -> dict:
    """Each found key with the earliest launch a finding of it names
    (None when none is known). With `classes`, keys lose their location
    and screened findings count too."""
    found = {}
    for k in report.get("kernels", []):
        name = kernel_base(k["name"])
        seen = []
        for r in k.get("records", []):
            loc = (r.get("site") or {}).get("location")
            file = Path(loc["file"]).name if loc and not classes else None
            line = loc["line"] if loc and not classes else None
            launch = None if r.get("first_launch_unknown") else r.get("first_launch")
            seen.append(((name, r["kind"], r["format"], file, line), launch))
        for f in k.get("screened", []) if classes else []:
            seen.append(((name, f["kind"], f["format"], None, None), f.get("first_launch")))
        for key, launch in seen:
            known = found.get(key)
            found[key] = launch if known is None else (known if launch is None else min(known, launch))
    return found


def found_keys(report: dict, classes: bool = False):
    return set(found_launches(report, classes))


def wrong_launches(expected: dict, found: dict):
    """Expected entries with `first_launch` whose matching findings name
    another earliest launch: (entry, the launch found)."""
    wrong = []
    for e in expected["findings"]:
        if "first_launch" not in e:
            continue
        matching = [l for k, l in found.items() if entry_matches(e, k)]
        known = [l for l in matching if l is not None]
        first = min(known) if known else None
        if matching and first != e["first_launch"]:
            wrong.append((e, first))
    return wrong


def kernel_matches(entry: dict, kernel: str) -> bool:
    if "kernel_regex" in entry:
        return re.fullmatch(entry["kernel_regex"], kernel) is not None
    return entry["kernel"] == kernel


def entry_matches(entry: dict, key) -> bool:
    kernel, kind, fmt, file, line = key
    if not kernel_matches(entry, kernel) or entry["kind"] != kind or entry["format"] != fmt:
        return False
    if entry.get("line") is None:
        return True
    locs = [(entry["file"], entry["line"])] + [(a["file"], a["line"]) for a in entry.get("also_at", [])]
    return (file, line) in locs


def tolerated(tol: dict, key) -> bool:
    kernel, kind, fmt, _, _ = key
    return kernel_matches(tol, kernel) and tol["kind"] == kind and tol["format"] == fmt


def match(expected: dict, keys):
    """Returns (missing entries, extra keys)."""
    missing = [e for e in expected["findings"] if not any(entry_matches(e, k) for k in keys)]
    extra = sorted(
        (k for k in keys
         if not any(entry_matches(e, k) for e in expected["findings"])
         and not any(tolerated(t, k) for t in expected.get("tolerate", []))),
        key=lambda k: tuple("" if v is None else str(v) for v in k),
    )
    return missing, extra


def checksum_of(log_text: str):
    for line in log_text.splitlines():
        if line.startswith("checksum "):
            return line.split()[1]
    return None


def expected_rc(exit_status: dict) -> int:
    """The status a shell (and xfpx) reports for the expected exit."""
    if exit_status["how"] == "signal":
        return 128 + exit_status["signal"]
    return exit_status["code"]


def describe_entry(e: dict) -> str:
    kernel = e.get("kernel") or "/" + e["kernel_regex"] + "/"
    where = f"{e['file']}:{e['line']}" if e.get("line") is not None else "any line"
    return f"{kernel} {e['kind']} {e['format']} {where}"


def describe_key(k) -> str:
    kernel, kind, fmt, file, line = k
    return f"{kernel} {kind} {fmt} {file}:{line}" if file else f"{kernel} {kind} {fmt} (no line)"


def compare_one(args) -> dict:
    expected = json.loads(Path(args.expected).read_text())
    if args.classes:
        # fast mode promises the exception classes of each kernel, not
        # their lines: compare (kernel, kind, format) only
        seen, entries = set(), []
        for e in expected["findings"]:
            e = dict(e, line=None, also_at=[])
            key = (e.get("kernel"), e.get("kernel_regex"), e["kind"], e["format"])
            if key not in seen:
                seen.add(key)
                entries.append(e)
        expected = dict(expected, findings=entries, program=expected["program"] + " (" + args.mode_label + ")")
    result = {
        "program": expected["program"],
        "expected": len(expected["findings"]),
        "found": None,
        "missing": [],
        "extra": [],
        "identical": False,
        "exit_ok": False,
        "plain_s": args.plain_s,
        "xfpx_s": args.xfpx_s,
        "timed_out": args.timed_out,
        "notes": [],
    }
    report = None
    try:
        report = json.loads(Path(args.report).read_text())
        if report.get("schema") != "xfpx-report/1":
            result["notes"].append(f"report schema is {report.get('schema')!r}")
            report = None
    except (OSError, ValueError) as e:
        result["notes"].append(f"no readable report: {e}")
    if report is None:
        result["missing"] = [describe_entry(e) for e in expected["findings"]]
    if report is not None:
        found = found_launches(report, classes=args.classes)
        keys = set(found)
        missing, extra = match(expected, keys)
        for e, first in wrong_launches(expected, found):
            missing.append(e)
            result["notes"].append(f"{describe_entry(e)}: first found at launch {first}, expected {e['first_launch']}")
        result["found"] = len(keys)
        result["missing"] = [describe_entry(e) for e in missing]
        result["extra"] = [describe_key(k) for k in extra]
        rep_exit = report.get("run", {}).get("exit", {})
        want = expected["exit"]
        if {k: v for k, v in rep_exit.items()} != want:
            result["notes"].append(f"report says exit {rep_exit}, expected {want}")
    plain = Path(args.plain_log).read_text(errors="replace") if Path(args.plain_log).exists() else ""
    inst = Path(args.xfpx_log).read_text(errors="replace") if Path(args.xfpx_log).exists() else ""
    a, b = checksum_of(plain), checksum_of(inst)
    result["identical"] = a is not None and a == b
    if a is None:
        result["notes"].append("plain run printed no checksum")
    elif a != b:
        result["notes"].append(f"checksum plain {a} vs xfpx {b}")
    result["self_check"] = "self-check ok" in plain
    if not result["self_check"]:
        result["notes"].append("plain run's self-check did not pass")
    elif "self-check ok" not in inst:
        result["notes"].append("instrumented run's self-check did not pass")
    want_rc = expected_rc(expected["exit"])
    result["exit_ok"] = args.plain_rc == want_rc and args.xfpx_rc == want_rc
    if not result["exit_ok"]:
        result["notes"].append(f"exit status plain {args.plain_rc}, xfpx {args.xfpx_rc}, expected {want_rc}")
    result["pass"] = (
        report is not None
        and not result["missing"]
        and not result["extra"]
        and result["identical"]
        and result["exit_ok"]
        and not args.timed_out
    )
    return result


def skipped(program: str, expected_path: str, reason: str) -> dict:
    expected = json.loads(Path(expected_path).read_text())
    return {
        "program": program, "expected": len(expected["findings"]), "found": None,
        "missing": [describe_entry(e) for e in expected["findings"]], "extra": [],
        "identical": False, "exit_ok": False, "plain_s": 0.0, "xfpx_s": 0.0,
        "timed_out": False, "notes": [f"not run: {reason}"], "pass": False, "skipped": True,
    }


def table(path: str) -> int:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    head = ["program", "self-check", "expected", "found", "missing", "extra", "output identical", "exit",
            "time plain/xfpx", "verdict"]
    body = []
    for r in rows:
        t = f"{r['plain_s']:.1f}s/{r['xfpx_s']:.1f}s" + (" TIMEOUT" if r["timed_out"] else "")
        if r.get("skipped"):
            t = "not run"
        body.append([
            r["program"], "ok" if r.get("self_check") else "NO", str(r["expected"]),
            "-" if r["found"] is None else str(r["found"]),
            str(len(r["missing"])), str(len(r["extra"])), "yes" if r["identical"] else "NO",
            "ok" if r["exit_ok"] else "NO", t, "PASS" if r["pass"] else ("SKIP" if r.get("skipped") else "FAIL"),
        ])
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    fmt = lambda cells: " | ".join(c.ljust(w) for c, w in zip(cells, widths))
    lines = [fmt(head), "-+-".join("-" * w for w in widths)] + [fmt(b) for b in body]
    for r in rows:
        for m in r["missing"]:
            lines.append(f"  {r['program']}: missing {m}")
        for x in r["extra"]:
            lines.append(f"  {r['program']}: extra   {x}")
        for n in r["notes"]:
            lines.append(f"  {r['program']}: note    {n}")
    print("\n".join(lines))
    return 0 if rows and all(r["pass"] for r in rows) else 1


def selftest() -> int:
    """Checks the matching rules on hand-made reports."""
    exp = {
        "program": "t",
        "exit": {"how": "code", "code": 0},
        "findings": [
            {"kernel": "k_nan", "kind": "nan", "format": "f32", "file": "a.cu", "line": 10, "also_at": []},
            {"kernel": "k_half", "kind": "inf", "format": "f16x2", "file": "a.cu", "line": 20,
             "also_at": [{"file": "cuda_fp16.hpp", "line": 2526}]},
            {"kernel_regex": "(?i).*gemm.*", "kind": "nan", "format": "f32", "file": None, "line": None},
        ],
        "tolerate": [{"kernel_regex": "(?i).*gemm.*", "kind": "nan", "format": "f32"}],
    }

    def rec(kind, fmt, file, line):
        loc = {"file": file, "line": line} if file else None
        return {"kind": kind, "format": fmt, "site": {"id": 0, "offset": 0, "instr": "X", "location": loc},
                "first_launch": 0, "occurrences": 1}

    def report(kernels):
        return {"schema": "xfpx-report/1", "kernels": [{"name": n, "records": rs} for n, rs in kernels]}

    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)

    good = report([
        ("k_nan", [rec("nan", "f32", "/build/x/a.cu", 10)]),
        ("k_half", [rec("inf", "f16x2", "<cuda>/include/cuda_fp16.hpp", 2526)]),
        ("sm80_xmma_gemm_f32f32_tn", [rec("nan", "f32", None, None)]),
        ("cutlass_gemm_splitk(float*)", [rec("nan", "f32", None, None)]),
    ])
    m, x = match(exp, found_keys(good))
    check(not m and not x, f"exact match: missing {m} extra {x}")

    wrong_line = report([("k_nan", [rec("nan", "f32", "a.cu", 11)]), ("k_half", [rec("inf", "f16x2", "a.cu", 20)]),
                         ("gemm", [rec("nan", "f32", None, None)])])
    m, x = match(exp, found_keys(wrong_line))
    check(len(m) == 1 and m[0]["kernel"] == "k_nan" and len(x) == 1, "a wrong line is missing + extra")

    wrong_kind = report([("k_nan", [rec("inf", "f32", "a.cu", 10)]), ("k_half", [rec("inf", "f16x2", "a.cu", 20)]),
                         ("gemm", [rec("nan", "f32", None, None)])])
    m, x = match(exp, found_keys(wrong_kind))
    check(len(m) == 1 and len(x) == 1, "a wrong kind is missing + extra")

    wrong_format = report([("k_nan", [rec("nan", "f64", "a.cu", 10)])])
    m, x = match(exp, found_keys(wrong_format))
    check(len(m) == 3 and len(x) == 1, "a wrong format and absent findings are missing")

    no_line = report([("k_nan", [rec("nan", "f32", None, None)])])
    m, x = match(exp, found_keys(no_line))
    check(any(e.get("kernel") == "k_nan" for e in m) and len(x) == 1, "a record without a line does not match a line")

    other_kernel = report([("not_a_library_kernel", [rec("nan", "f32", None, None)])])
    m, x = match(exp, found_keys(other_kernel))
    check(len(x) == 1 and len(m) == 3, "the regex does not match unrelated kernels")

    tolerated_extra = report([("k_nan", [rec("nan", "f32", "a.cu", 10)]), ("k_half", [rec("inf", "f16x2", "a.cu", 20)]),
                              ("gemm_a", [rec("nan", "f32", None, None)]), ("gemm_b", [rec("nan", "f32", None, None)])])
    m, x = match(exp, found_keys(tolerated_extra))
    check(not m and not x, "tolerated library kernels are not extra")

    clean = {"program": "c", "exit": {"how": "code", "code": 0}, "findings": [], "tolerate": []}
    m, x = match(clean, found_keys(report([])))
    check(not m and not x, "a clean program with no findings passes")
    m, x = match(clean, found_keys(good))
    check(len(x) == 4, "every finding of a clean program is extra")

    late = {"program": "l", "exit": {"how": "code", "code": 0}, "tolerate": [],
            "findings": [{"kernel_regex": "triton_.*", "kind": "nan", "format": "f32", "file": None, "line": None,
                          "first_launch": 200}]}
    screened_only = {"schema": "xfpx-report/1", "kernels": [{"name": "triton_poi_fused_0", "records": [],
                     "screened": [{"kind": "nan", "format": "f32", "first_launch": 200}]}]}
    m, x = match(late, found_keys(screened_only, classes=True))
    check(not m and not x, "comparing classes, a screened finding is its kernel's class")
    m, x = match(late, found_keys(screened_only))
    check(len(m) == 1 and not x, "comparing lines, a screened finding is not a record")
    check(not wrong_launches(late, found_launches(screened_only, classes=True)), "the expected launch is found")
    early = report([("triton_poi_fused_0", [dict(rec("nan", "f32", None, None), first_launch=7),
                                            dict(rec("nan", "f32", None, None), first_launch=200)])])
    wrong = wrong_launches(late, found_launches(early, classes=True))
    check(len(wrong) == 1 and wrong[0][1] == 7, "a finding at an earlier launch than expected is wrong")
    unknown = report([("triton_poi_fused_0", [dict(rec("nan", "f32", None, None), first_launch_unknown=True)])])
    wrong = wrong_launches(late, found_launches(unknown))
    check(len(wrong) == 1 and wrong[0][1] is None, "a finding whose launch is not known is not at the expected one")

    check(expected_rc({"how": "signal", "signal": 11}) == 139, "signals map to 128+N")
    check(checksum_of("x\nchecksum 00ff\nself-check ok\n") == "00ff", "checksum line is read")
    check(checksum_of("nothing") is None, "absent checksum is None")

    for f in failures:
        print("selftest FAILED:", f, file=sys.stderr)
    if not failures:
        print("selftest ok")
    return 1 if failures else 0


def main(argv) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    one = sub.add_parser("one")
    one.add_argument("--expected", required=True)
    one.add_argument("--report", required=True)
    one.add_argument("--plain-log", required=True)
    one.add_argument("--xfpx-log", required=True)
    one.add_argument("--plain-rc", type=int, required=True)
    one.add_argument("--xfpx-rc", type=int, required=True)
    one.add_argument("--plain-s", type=float, default=0.0)
    one.add_argument("--xfpx-s", type=float, default=0.0)
    one.add_argument("--timed-out", action="store_true")
    one.add_argument("--classes", action="store_true",
                     help="compare (kernel, kind, format) only, not lines (fast mode)")
    one.add_argument("--mode-label", default="fast")
    sk = sub.add_parser("skipped")
    sk.add_argument("--program", required=True)
    sk.add_argument("--expected", required=True)
    sk.add_argument("--reason", required=True)
    t = sub.add_parser("table")
    t.add_argument("results")
    sub.add_parser("selftest")
    args = p.parse_args(argv)
    if args.cmd == "one":
        print(json.dumps(compare_one(args)))
        return 0
    if args.cmd == "skipped":
        print(json.dumps(skipped(args.program, args.expected, args.reason)))
        return 0
    if args.cmd == "table":
        return table(args.results)
    return selftest()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
