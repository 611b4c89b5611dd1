#!/usr/bin/env python3
"""xfpx's flow tool against GPU-FPX's analyzer, kernel by kernel.

    flow_vs_gpufpx.py one --program P --report R.json --gpufpx G.log \
        --plain-log PLAIN.log --xfpx-log XFPX.log --xfpx-rc N --plain-rc N
                                      # one JSON line of results
    flow_vs_gpufpx.py table RESULTS.jsonl   # the table; status 1 on any failure
    flow_vs_gpufpx.py selftest        # the rules on hand-made inputs

What is compared. GPU-FPX's analyzer prints, per (source location, SASS
instruction), the first state it saw there: `APPEAR` (with the kind of the
destination), `PROGAGATION` (with PROPAGATE=1), `DISAPPEAR`, `COMPARE`
(with ENABLE_COMPARE=1, for any exceptional register of a SEL, SETP, CHK,
SET or FMNMX instruction), or, for an instruction whose destination is
also a source, the raw classes of its registers before and after it
(`SHARED REGISTER`). It sees NaN and infinity (subnormals read as values)
in FP32 and FP64 instructions (FADD, FFMA, FMUL, MUFU, FMNMX, FSEL, FSET,
FCHK, FSETP; DADD, DMUL, DFMA, DSETP, 64H), and its register 0 is the
destination. Per kernel (names cut as GPU-FPX cuts them) and instruction
text:

- every state GPU-FPX printed must be one xfpx recorded at an instruction
  of the same text (selects, min/max, compares and checks are `compare`
  for both; an appearance must be of the same kind; a shared-register
  pair needs a record of a kind it shows, in any state);
- every instruction GPU-FPX looks at where xfpx recorded NaN or infinity
  (div0 counts as infinity) must have a line of GPU-FPX (it prints one
  state per instruction, so the state is not compared this way).

Not compared (listed, not failures): `64H` instructions (GPU-FPX reads the
register pair below the one written, which holds no value of the program;
xfpx reads no source there); an appearance where GPU-FPX saw a
propagation at an instruction with a constant-bank operand (xfpx does not
read constant banks; GPU-FPX does); the compiler's register test `FFMA R,
RZ, x, R` (a zero multiplicand: xfpx reads it as a test of a register, not
arithmetic, in every tool; GPU-FPX reports what the addend holds); and a
record of xfpx's at an instruction with a uniform-register operand where
GPU-FPX printed nothing (GPU-FPX reads per-thread registers only).

The program's output (its `checksum` and `self-check` lines, or the
benchmark's `CHECKSUM`/`SELFCHECK` lines) must be the same plain and under
xfpx; output that cannot be compared (no checksum line) fails too.
"""

import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "harness"))
import benchlib  # noqa: E402

_ANA_RE = re.compile(
    r"^#GPU-FPX-ANA (?P<what>SHARED REGISTER|COMPARE|PROGAGATION|APPEAR|DISAPPEAR)\s*:?\s*(?P<head>.*?)"
    r"\s@\s(?P<loc>.*?)\s+Instruction:\s*(?P<sass>.*?)\s*We have (?P<n>\d+) registers in total\.(?P<regs>.*)$"
)
_RUNNING_RE = re.compile(r"Running #GPU-FPX: kernel \[(?P<k>.*)\]")
_REG_RE = re.compile(r"Register (\d+) is (VAL|NaN|INF)\.")
_UNKNOWN_LOC_RE = re.compile(r"unknown_path in \[(?P<k>.*)\]:\d+$")

FP32 = ("FADD", "FADD32I", "FFMA32I", "FFMA", "FMUL", "MUFU", "FMNMX", "FSEL", "FSET", "FCHK", "FSETP")
FP64 = ("DMUL", "DADD", "DFMA", "DSETP", "64H")
COMPARE_WORDS = ("SEL", "SETP", "CHK", "SET", "FMNMX")
KIND = {"NaN": "nan", "INF": "inf"}


def norm_sass(text):
    """An instruction's text without its `;` and repeated spaces."""
    return " ".join(text.strip().rstrip(";").split())


def gpufpx_looks_at(sass):
    """Whether GPU-FPX's analyzer instruments the instruction (its own rule:
    the opcode words anywhere in the text)."""
    fp32 = any(w in sass for w in FP32) and "64H" not in sass
    return fp32 or any(w in sass for w in FP64)


def is_compare(sass):
    return any(w in sass for w in COMPARE_WORDS)


_REGISTER_TEST_RE = re.compile(r"^FFMA(\.\S+)? R\d+, (RZ, -?R\d+|-?R\d+, RZ), ")
_UNIFORM_RE = re.compile(r"\bUR\d+\b")


def is_register_test(sass):
    """The compiler's register test: an FFMA with RZ as a multiplicand."""
    return bool(_REGISTER_TEST_RE.match(sass))


def reads_uniform_register(sass):
    return bool(_UNIFORM_RE.search(sass))


def parse_analyzer(text):
    """GPU-FPX's lines as (kernel key, instruction, state, kinds, registers)."""
    out, kernel = [], None
    for line in text.splitlines():
        m = _RUNNING_RE.search(line)
        if m:
            kernel = benchlib.kernel_key(m.group("k"))
            continue
        m = _ANA_RE.match(line.strip())
        if not m:
            continue
        u = _UNKNOWN_LOC_RE.search(m.group("loc"))
        k = benchlib.kernel_key(u.group("k")) if u else kernel
        regs = [KIND.get(t) for _, t in sorted((int(i), t) for i, t in _REG_RE.findall(m.group("regs")))]
        what = m.group("what")
        sass = norm_sass(m.group("sass"))
        if what == "APPEAR":
            head = m.group("head").split()
            state, kinds = "appear", {KIND.get(head[0], "?")} if head else set()
        elif what == "PROGAGATION":
            state, kinds = "propagate", {r for r in regs[:1] if r}
        elif what == "DISAPPEAR":
            state, kinds = "disappear", {r for r in regs[1:] if r}
        elif what == "COMPARE":
            state, kinds = "compare", {r for r in regs if r}
        else:
            state, kinds = "shared", {r for r in regs if r}
        out.append({"kernel": k, "sass": sass, "state": state, "kinds": sorted(kinds)})
    return out


def xfpx_facts(report):
    """xfpx's flow records on instructions GPU-FPX looks at, as GPU-FPX
    would name them: (kernel key, instruction, state, kind), NaN and
    infinity only."""
    facts = set()
    for k in (report.get("flow") or {}).get("kernels", []):
        key = benchlib.kernel_key(k["kernel"])
        for r in k.get("records", []):
            sass = norm_sass(r["site"]["instr"])
            kind = {"nan": "nan", "inf": "inf", "div0": "inf"}.get(r["kind"])
            if kind is None or not gpufpx_looks_at(sass):
                continue
            state = "compare" if is_compare(sass) else r["state"]
            facts.add((key, sass, state, kind))
    return facts


def compare(gpufpx_lines, report):
    """The comparison of one program: matched, only one side, not compared."""
    mine = xfpx_facts(report)
    at = {}  # (kernel, sass) -> xfpx's (state, kind)s there
    for k, s, st, kind in mine:
        at.setdefault((k, s), set()).add((st, kind))
    theirs_at = {}
    for g in gpufpx_lines:
        theirs_at.setdefault((g["kernel"], g["sass"]), []).append(g)
    matched, only_gpufpx, only_xfpx, not_compared = [], [], [], []
    for g in gpufpx_lines:
        here = at.get((g["kernel"], g["sass"]), set())
        label = "%s: %s %s %s" % (g["kernel"], g["sass"], g["state"], ",".join(g["kinds"]) or "-")
        if "64H" in g["sass"]:
            not_compared.append(label + " (GPU-FPX reads the pair below a 64H destination)")
            continue
        if is_register_test(g["sass"]) and not here:
            not_compared.append(label + " (the compiler's register test: a zero multiplicand; no arithmetic for xfpx)")
            continue
        if g["state"] == "shared":
            ok = any(kind in g["kinds"] for _, kind in here) or (not g["kinds"] and here)
        elif g["state"] in ("disappear", "compare", "propagate") and not g["kinds"]:
            ok = any(st == g["state"] for st, _ in here)
        else:
            ok = all((g["state"], kind) in here for kind in g["kinds"])
            cbank = "c[" in g["sass"]
            if not ok and g["state"] == "propagate" and cbank and all(("appear", k) in here for k in g["kinds"]):
                not_compared.append(label + " (xfpx: appear; a constant-bank source xfpx does not read)")
                continue
        (matched if ok else only_gpufpx).append(label)
    for (k, s), facts in sorted(at.items()):
        if "64H" in s:
            continue
        if (k, s) not in theirs_at and reads_uniform_register(s):
            not_compared.append("%s: %s %s (a uniform-register operand: GPU-FPX reads per-thread registers only)" % (
                k, s, ", ".join("%s %s" % f for f in sorted(facts))))
        elif (k, s) not in theirs_at:
            only_xfpx.append("%s: %s %s" % (k, s, ", ".join("%s %s" % f for f in sorted(facts))))
    return {"matched": matched, "only_gpufpx": only_gpufpx, "only_xfpx": only_xfpx, "not_compared": not_compared}


def program_output(text):
    """(self-check, checksum) a program printed: the suite's `self-check ok`
    and `checksum HEX` lines, or the benchmark's `SELFCHECK`/`CHECKSUM`
    lines; the last of each wins. None for either it did not print."""
    bench = benchlib.parse_program_output(text)
    check, checksum = bench.selfcheck, bench.checksum
    for line in text.splitlines():
        line = line.rstrip("\r")
        if line.startswith("checksum "):
            checksum = line.split(None, 1)[1].strip()
        elif line.startswith("self-check "):
            check = line.split(None, 1)[1].strip()
    return check, checksum


def output_same(plain_log, xfpx_log):
    """Whether the program printed the same self-check and checksum under
    xfpx; None when there is nothing to compare (a log or the plain run's
    checksum missing)."""
    read = lambda p: program_output(open(p, errors="replace").read()) if os.path.isfile(p) else None  # noqa: E731
    a, b = read(plain_log), read(xfpx_log)
    if a is None or b is None or a[1] is None:
        return None
    return a == b


def one(args):
    res = {"program": args["--program"], "failures": []}
    fail = res["failures"].append
    try:
        with open(args["--report"]) as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        report = None
        fail("no xfpx report: %s" % e)
    if report is not None:
        flow = report.get("flow") or {}
        res["xfpx_records"] = sum(len(k.get("records", [])) for k in flow.get("kernels", []))
        res["summary"] = {k["kernel"]: k.get("summary", []) for k in flow.get("kernels", []) if k.get("records")}
        if report.get("run", {}).get("mode") != "flow":
            fail("the report is not of the flow tool")
    same = output_same(args["--plain-log"], args["--xfpx-log"])
    res["output_same"] = same
    if same is False:
        fail("the program's output changed under xfpx")
    elif same is None:
        fail("the program's output was not compared (no checksum line)")
    if args["--xfpx-rc"] != args["--plain-rc"]:
        fail("exit status %s under xfpx, %s plain" % (args["--xfpx-rc"], args["--plain-rc"]))
    g = args.get("--gpufpx")
    if not g or not os.path.isfile(g):
        res["gpufpx"] = None
        fail("GPU-FPX's analyzer was not run: no comparison")
    elif report is not None:
        with open(g, errors="replace") as f:
            lines = parse_analyzer(f.read())
        res["gpufpx"] = len(lines)
        res.update(compare(lines, report))
        if res["only_gpufpx"] or res["only_xfpx"]:
            fail("flows differ from GPU-FPX's")
    print(json.dumps(res))
    return 0


def table(path):
    rows, bad = [], False
    with open(path) as f:
        results = [json.loads(l) for l in f if l.strip()]
    head = ("program", "xfpx records", "GPU-FPX lines", "matched", "only GPU-FPX", "only xfpx", "not compared", "output", "verdict")
    for r in results:
        n = lambda k: str(len(r.get(k, []))) if r.get("gpufpx") is not None else "-"  # noqa: E731
        out = {True: "same", False: "CHANGED", None: "?"}[r.get("output_same")]
        verdict = "PASS" if not r["failures"] else "FAIL: " + "; ".join(r["failures"])
        bad |= bool(r["failures"])
        rows.append((r["program"], str(r.get("xfpx_records", "-")), str(r.get("gpufpx") if r.get("gpufpx") is not None else "-"),
                     n("matched"), n("only_gpufpx"), n("only_xfpx"), n("not_compared"), out, verdict))
    widths = [max(len(x[i]) for x in rows + [head]) for i in range(len(head))]
    fmt = lambda r: " | ".join(c.ljust(widths[i]) for i, c in enumerate(r)).rstrip()  # noqa: E731
    print(fmt(head))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(fmt(r))
    for r in results:
        for k in ("only_gpufpx", "only_xfpx", "not_compared"):
            for item in r.get(k, []):
                print("%s %s: %s" % (r["program"], k.replace("_", " "), item))
    if not results:
        print("no program ran")
        bad = True
    return 1 if bad else 0


def selftest():
    log = "\n".join([
        "#GPU-FPX: Initializing GPU context...",
        "Running #GPU-FPX: kernel [fpx_nan] ...",
        "#GPU-FPX-ANA APPEAR : NaN appear at the destination  @ /unknown_path in [fpx_nan]:0 "
        "Instruction: FMUL R5, R2, R3 ; We have 3 registers in total. Register 0 is NaN. Register 1 is VAL. Register 2 is INF. ",
        "#GPU-FPX-ANA PROGAGATION: Exceptional values are progagated from source to destination  @ /unknown_path in [fpx_nan]:0 "
        "Instruction: FADD R6, R5, 1 ; We have 2 registers in total. Register 0 is NaN. Register 1 is NaN. ",
        "#GPU-FPX-ANA COMPARE: Exceptional value may appear in a comparision or min/max statement @ /unknown_path in [fpx_nan]:0 "
        "Instruction: FMNMX R7, R6, RZ, !PT ; We have 2 registers in total. Register 0 is VAL. Register 1 is NaN. ",
        "#GPU-FPX-ANA SHARED REGISTER: After executing the instruction  @ /unknown_path in [fpx_nan]:0 "
        "Instruction: FFMA R8, R6, R2, R8 ; We have 4 registers in total. Register 0 is NaN. Register 1 is NaN. Register 2 is VAL. Register 3 is NaN. ",
        "#GPU-FPX-ANA APPEAR : INF appear at the destination  @ /unknown_path in [fpx_nan]:0 "
        "Instruction: MUFU.RCP64H R11, R3 ; We have 2 registers in total. Register 0 is INF. Register 1 is VAL. ",
    ])
    lines = parse_analyzer(log)
    assert [l["state"] for l in lines] == ["appear", "propagate", "compare", "shared", "appear"], lines
    assert lines[0] == {"kernel": "fpx_nan", "sass": "FMUL R5, R2, R3", "state": "appear", "kinds": ["nan"]}, lines[0]
    assert lines[2]["kinds"] == ["nan"], lines[2]

    def record(state, kind, sass, cls="f32.add"):
        return {"state": state, "kind": kind, "format": "f32", "class": cls, "occurrences": 1,
                "site": {"id": 0, "offset": 0, "instr": sass + " ;", "location": None}}

    report = {"run": {"mode": "flow"}, "flow": {"kernels": [{"kernel": "fpx_nan(float*)", "records": [
        record("appear", "nan", "FMUL R5, R2, R3"),
        record("propagate", "nan", "FADD R6, R5, 1"),
        record("disappear", "nan", "FMNMX R7, R6, RZ, !PT", "f32.minmax"),
        record("propagate", "nan", "FFMA R8, R6, R2, R8"),
        record("appear", "sub", "FMUL R9, R2, R2"),  # GPU-FPX does not see subnormals
        record("appear", "inf", "MUFU.RCP64H R11, R3", "f64.div"),
    ]}]}}
    c = compare(lines, report)
    assert len(c["matched"]) == 4 and not c["only_gpufpx"] and not c["only_xfpx"], c
    assert len(c["not_compared"]) == 1 and "64H" in c["not_compared"][0], c
    # a state GPU-FPX saw that xfpx did not, and a flow GPU-FPX did not see
    broken = json.loads(json.dumps(report))
    broken["flow"]["kernels"][0]["records"][1]["state"] = "appear"
    broken["flow"]["kernels"][0]["records"].append(record("propagate", "inf", "FADD R12, R12, R4"))
    c = compare(lines, broken)
    assert c["only_gpufpx"] == ["fpx_nan: FADD R6, R5, 1 propagate nan"], c
    assert c["only_xfpx"] == ["fpx_nan: FADD R12, R12, R4 propagate inf"], c
    # a kernel of another name is another kernel
    other = json.loads(json.dumps(report))
    other["flow"]["kernels"][0]["kernel"] = "void other<float>(float*)"
    c = compare(lines, other)
    assert len(c["only_gpufpx"]) == 4 and len(c["only_xfpx"]) == 4, c
    # an appearance xfpx sees where a constant-bank source brought the value
    cb = parse_analyzer(
        "#GPU-FPX-ANA PROGAGATION: x @ /unknown_path in [k]:0 Instruction: FADD R1, R2, c[0x0][0x160] ; "
        "We have 2 registers in total. Register 0 is NaN. Register 1 is VAL. ")
    c = compare(cb, {"flow": {"kernels": [{"kernel": "k", "records": [record("appear", "nan", "FADD R1, R2, c[0x0][0x160]")]}]}})
    assert not c["only_gpufpx"] and len(c["not_compared"]) == 1, c
    # the register test GPU-FPX reports and xfpx reads as a test; a
    # uniform-register operand GPU-FPX cannot read; neither fails
    rt = parse_analyzer(
        "#GPU-FPX-ANA PROGAGATION: x @ /unknown_path in [k]:0 Instruction: FFMA R8, RZ, R5, R3 ; "
        "We have 3 registers in total. Register 0 is NaN. Register 1 is VAL. Register 2 is NaN. ")
    uni = {"flow": {"kernels": [{"kernel": "k", "records": [record("disappear", "nan", "FMNMX R10, R10, UR6, !PT", "f32.minmax")]}]}}
    c = compare(rt, uni)
    assert not c["only_gpufpx"] and not c["only_xfpx"] and len(c["not_compared"]) == 2, c
    # ... but an FFMA with RZ as its addend is arithmetic, and a uniform
    # operand where GPU-FPX printed a line is compared
    assert not is_register_test("FFMA R8, R2, R5, RZ") and is_register_test("FFMA R8, R2, RZ, R3")
    seen = parse_analyzer(
        "#GPU-FPX-ANA COMPARE: x @ /unknown_path in [k]:0 Instruction: FMNMX R10, R10, UR6, !PT ; "
        "We have 1 registers in total. Register 0 is INF. ")
    c = compare(seen, uni)
    assert c["only_gpufpx"] == ["k: FMNMX R10, R10, UR6, !PT compare inf"], c
    # outputs: the suite's lines and the benchmark's; none is no comparison
    assert program_output("checksum 00ff\nself-check ok\n") == ("ok", "00ff")
    assert program_output("SELFCHECK PASS\nCHECKSUM 0123456789abcdef\n") == ("PASS", "0123456789abcdef")
    assert program_output("hello\n") == (None, None)
    print("flow_vs_gpufpx.py selftest: ok")
    return 0


def main(argv):
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    if argv[0] == "selftest":
        return selftest()
    if argv[0] == "table" and len(argv) == 2:
        return table(argv[1])
    if argv[0] == "one":
        args = dict(zip(argv[1::2], argv[2::2]))
        for need in ("--program", "--report", "--plain-log", "--xfpx-log", "--xfpx-rc", "--plain-rc"):
            if need not in args:
                print("flow_vs_gpufpx.py one: missing %s" % need, file=sys.stderr)
                return 2
        return one(args)
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
