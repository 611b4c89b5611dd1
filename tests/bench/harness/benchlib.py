"""What the benchmark harness knows about the programs and tools it runs:
the lines a suite program prints, xfpx's JSON report, GPU-FPX's LOC-EXCEP
lines, kernel-name normalisation, statistics and the result table.

Pure functions over text and data: no process is started here except an
optional `c++filt` for demangling, so all of it is tested without a GPU.
"""

import json
import math
import re
import shutil
import subprocess

# ---------------------------------------------------------------------------
# Suite program output

_BENCH_RE = re.compile(r"^BENCH (\S+) gpu_ms=([0-9.eE+-]+)\s*$")
_SELFCHECK_RE = re.compile(r"^SELFCHECK (PASS|FAIL)\b ?(.*)$")
_CHECKSUM_RE = re.compile(r"^CHECKSUM ([0-9a-f]{16})\s*$")


class ProgramOutput:
    """The harness lines of one run of a suite program."""

    def __init__(self, name=None, gpu_ms=None, selfcheck=None, detail="", checksum=None):
        self.name = name
        self.gpu_ms = gpu_ms
        self.selfcheck = selfcheck  # "PASS", "FAIL" or None (not printed)
        self.detail = detail
        self.checksum = checksum

    def to_dict(self):
        return dict(name=self.name, gpu_ms=self.gpu_ms, selfcheck=self.selfcheck, detail=self.detail,
                    checksum=self.checksum)


def parse_program_output(text):
    """Reads the BENCH, SELFCHECK and CHECKSUM lines; the last of each wins."""
    out = ProgramOutput()
    for line in text.splitlines():
        line = line.rstrip("\r")
        m = _BENCH_RE.match(line)
        if m:
            out.name, out.gpu_ms = m.group(1), float(m.group(2))
            continue
        m = _SELFCHECK_RE.match(line)
        if m:
            out.selfcheck, out.detail = m.group(1), m.group(2).strip()
            continue
        m = _CHECKSUM_RE.match(line)
        if m:
            out.checksum = m.group(1)
    return out


# ---------------------------------------------------------------------------
# Findings: (kernel, kind, format) triples, the unit both tools report in

KINDS = ("nan", "inf", "sub", "div0")
FORMATS = ("f16", "f16x2", "bf16", "bf16x2", "f32", "f64")
# Formats GPU-FPX checks; comparisons with it are restricted to these.
GPUFPX_FORMATS = ("f32", "f64")

_GPUFPX_KIND = {"NaN": "nan", "INF": "inf", "SUB": "sub", "DIV0": "div0"}
_GPUFPX_FORMAT = {"FP16": "f16", "FP32": "f32", "FP64": "f64"}

# "#GPU-FPX LOC-EXCEP INFO: in kernel [K], NaN found @ FILE:LINE [FP32]" and
# "#GPU-FPX LOC-EXCEP INFO: Warning: in kernel [K], very small quantity (SUB)
# found @ FILE:LINE [FP64]". Searched anywhere in a line: the program's own
# output may precede it when it printed no newline.
_GPUFPX_RE = re.compile(
    r"#GPU-FPX LOC-EXCEP INFO: (?:Warning: )?in kernel \[(?P<kernel>.*)\], "
    r"(?:very small quantity \((?P<small>\w+)\)|(?P<exc>\w+)) found @ (?P<loc>.*?) \[(?P<fmt>\w+)\]\s*$")


class Finding:
    """One exception class seen in one kernel (with a location if known)."""

    def __init__(self, kernel, kind, fmt, location=None, first_launch=None):
        self.kernel = kernel
        self.kind = kind
        self.format = fmt
        self.location = location
        self.first_launch = first_launch  # xfpx: index of the first launch that raised it

    def key(self):
        return (kernel_key(self.kernel), self.kind, self.format)


def parse_gpufpx(text):
    """GPU-FPX findings from a run's output. Returns (findings, unparsed):
    `unparsed` are LOC-EXCEP lines whose class or format is unknown."""
    findings, unparsed = [], []
    for line in text.splitlines():
        if "#GPU-FPX LOC-EXCEP INFO" not in line:
            continue
        m = _GPUFPX_RE.search(line.rstrip("\r"))
        exc = m and (m.group("small") or m.group("exc"))
        if not m or exc not in _GPUFPX_KIND or m.group("fmt") not in _GPUFPX_FORMAT:
            unparsed.append(line)
            continue
        findings.append(Finding(m.group("kernel"), _GPUFPX_KIND[exc], _GPUFPX_FORMAT[m.group("fmt")],
                                m.group("loc")))
    return findings, unparsed


class ReportError(Exception):
    pass


def parse_xfpx_report(text):
    """Findings and kernel statistics from an `xfpx-report/1` JSON report."""
    try:
        rep = json.loads(text)
    except ValueError as e:
        raise ReportError("report is not JSON: %s" % e)
    if not isinstance(rep, dict) or rep.get("schema") != "xfpx-report/1":
        raise ReportError("report schema is %r, expected 'xfpx-report/1'"
                          % (rep.get("schema") if isinstance(rep, dict) else None))
    try:
        return _report_contents(rep)
    except (AttributeError, TypeError, ValueError) as e:
        raise ReportError("report has an unexpected shape: %s" % e)


def _report_contents(rep):
    findings = []
    kernels = rep.get("kernels") or []
    if not isinstance(kernels, list):
        raise TypeError("kernels is not a list")
    for k in kernels:
        for r in k.get("records") or []:
            site = r.get("site") or {}
            loc = site.get("location")
            where = "%s:%s" % (loc.get("file"), loc.get("line")) if isinstance(loc, dict) else None
            first = r.get("first_launch")
            findings.append(Finding(k.get("name", "?"), r.get("kind"), r.get("format"), where,
                                    int(first) if isinstance(first, int) else None))
    run = rep.get("run") or {}
    # launch screening's findings (by launch and buffer, no line): they
    # count for EXPECTED findings at their launch, not as line findings
    screened = [Finding(k.get("name", "?"), s.get("kind"), s.get("format"), None, int(s["first_launch"]))
                for k in kernels for s in (k.get("screened") or []) if isinstance(s.get("first_launch"), int)]
    stats = dict(
        kernels=len(kernels),
        instrumented=sum(1 for k in kernels if (k.get("status") or {}).get("state") == "instrumented"),
        probes=sum(int(k.get("probes") or 0) for k in kernels),
        launches=sum(int(k.get("launches") or 0) for k in kernels),
        truncated=bool(run.get("truncated")),
        mode=run.get("mode"),
        notes=list(run.get("notes") or []),
        screened_first_launches=[list(f.key() + (f.first_launch,)) for f in screened],
    )
    return findings, stats


# ---------------------------------------------------------------------------
# Kernel names

_demangle_cache = {}


def _demangle_cxxfilt(name):
    tool = shutil.which("c++filt") or shutil.which("llvm-cxxfilt")
    if not tool:
        return None
    try:
        p = subprocess.run([tool], input=name + "\n", capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    out = p.stdout.strip()
    return out if p.returncode == 0 and out else None


def _demangle_base(name):
    """The (qualified) function name of an Itanium-mangled symbol, without
    parameters or template arguments: enough to compare kernel names when no
    demangler is installed. Returns None for forms it does not cover."""
    m = re.match(r"_Z(N?)", name)
    if not m:
        return None
    i = m.end()
    nested = m.group(1) == "N"
    parts = []
    while i < len(name):
        if nested and name[i] in "KVrL":  # cv-qualifiers, local-name markers
            i += 1
            continue
        d = re.match(r"\d+", name[i:])
        if not d:
            break
        n = int(d.group(0))
        i += len(d.group(0))
        part = name[i:i + n]
        if len(part) != n:
            return None
        parts.append("(anonymous namespace)" if part == "_GLOBAL__N_1" else part)
        i += n
        if not nested:
            break
        # Skip template arguments of this component: we only keep names.
        if i < len(name) and name[i] == "I":
            depth = 0
            while i < len(name):
                if name[i] == "I":
                    depth += 1
                elif name[i] == "E":
                    depth -= 1
                    if depth == 0:
                        i += 1
                        break
                i += 1
        if i < len(name) and name[i] == "E":
            break
    return "::".join(parts) if parts else None


def demangle(name, use_tool=True):
    if not name.startswith("_Z"):
        return name
    if name not in _demangle_cache:
        d = _demangle_cxxfilt(name) if use_tool else None
        _demangle_cache[name] = d or _demangle_base(name) or name
    return _demangle_cache[name]


def kernel_key(name, use_tool=True):
    """A kernel name both tools agree on: demangled, without return type,
    template arguments or parameters, e.g. `void ns::k<float>(float*)` and
    `_ZN2ns1kIfEEvPT_` both give `ns::k`. (GPU-FPX prints names already cut
    at the first `<` or `(`.)"""
    n = demangle(name.strip(), use_tool)
    n = n.replace("(anonymous namespace)::", "")
    cut = [p for p in (n.find("<"), n.find("(")) if p >= 0]
    if cut:
        n = n[:min(cut)]
    n = n.strip()
    return n.split()[-1] if n.split() else n


def first_launches(findings):
    """(kernel key, kind, format, first launch) of each finding that has one."""
    return sorted({f.key() + (f.first_launch,) for f in findings if f.first_launch is not None})


# What some programs are built to raise, which every xfpx mode must report
# with the launch that raised it: (kernel key, kind, first launch from 0).
EXPECTED = {
    "late_nan": [("relax_step", "nan", 5000)],
}


def expected_text(program, cells, order=None):
    """`ok` when every finished xfpx run of `program` reported each of its
    EXPECTED findings at its launch; `FAIL <config>: ...` for the first
    miss; `-` for a program without expectations or xfpx runs."""
    wanted = EXPECTED.get(program)
    if not wanted:
        return "-"
    names = [c for c in (order or []) if c in cells] + [c for c in cells if c not in (order or [])]
    problems, checked = [], 0
    for name in names:
        if not name.startswith("xfpx-"):
            continue
        for r in cells[name].runs:
            if r["status"] != "ok":
                continue
            checked += 1
            if "first_launches" not in r:
                problems.append("%s: %s" % (name, r.get("report_error") or "no report"))
                continue
            for kernel, kind, launch in wanted:
                seen = sorted(l for (k, kd, _, l) in r["first_launches"] if k == kernel and kd == kind)
                if launch not in seen:
                    problems.append("%s: no %s %s at launch %d (%s)" % (
                        name, kernel, kind, launch,
                        "first at %s" % ", ".join(map(str, seen)) if seen else "not reported"))
    if problems:
        return "FAIL " + problems[0] + ("" if len(problems) == 1 else " (+%d)" % (len(problems) - 1))
    return "ok" if checked else "-"


def finding_keys(findings, formats=None):
    return sorted({f.key() for f in findings if formats is None or f.format in formats})


def compare_findings(reference_name, reference, others):
    """Compares tools' findings per (kernel, kind, format).

    `reference` is a list of keys; `others` maps a tool name to its keys.
    GPU-FPX (any name starting with "gpufpx") is compared on f32/f64 only.
    Returns (match, text, differences) where differences lists
    {tool, missing (in reference, not in tool), extra (in tool, not in
    reference)}."""
    ref = set(map(tuple, reference))
    diffs = []
    for tool, keys in sorted(others.items()):
        keys = set(map(tuple, keys))
        r = ref
        if tool.startswith("gpufpx"):
            r = {k for k in ref if k[2] in GPUFPX_FORMATS}
        missing, extra = sorted(r - keys), sorted(keys - r)
        if missing or extra:
            diffs.append(dict(tool=tool, missing=missing, extra=extra))
    if not others:
        return True, "- (%d)" % len(ref), diffs
    if not diffs:
        return True, "yes (%d)" % len(ref), diffs
    parts = []
    for d in diffs:
        if d["extra"]:
            parts.append("%s misses %d" % (reference_name, len(d["extra"])))
        if d["missing"]:
            parts.append("%s misses %d" % (d["tool"], len(d["missing"])))
    return False, "NO: " + ", ".join(parts), diffs


# ---------------------------------------------------------------------------
# Statistics and the table


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    m = len(xs) // 2
    return xs[m] if len(xs) % 2 else 0.5 * (xs[m - 1] + xs[m])


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


class Cell:
    """The outcome of one (program, configuration): its runs and verdict."""

    def __init__(self, program, config):
        self.program = program
        self.config = config
        self.runs = []  # dicts, see Run in bench.py
        self.status = "not run"  # ok | timeout | crash | skipped | unavailable | not run
        self.reason = ""

    def walls(self, metric="wall_s"):
        return [r[metric] for r in self.runs if r["status"] == "ok" and r.get(metric) is not None]

    def median_wall(self, metric="wall_s"):
        """Median over finished runs of `metric`: `wall_s` (the process) or
        `gpu_ms` (the timed section the program reports)."""
        return median(self.walls(metric))

    def to_dict(self):
        return dict(program=self.program, config=self.config, status=self.status, reason=self.reason,
                    median_wall_s=self.median_wall(), median_gpu_ms=self.median_wall("gpu_ms"), runs=self.runs)


def ratio_text(cell, base_s, metric="wall_s"):
    if cell is None:
        return "-"
    if cell.status == "ok" and base_s:
        v = cell.median_wall(metric)
        return "%.2f" % (v / base_s) if v is not None else "-"
    if cell.status == "timeout" and base_s and metric == "wall_s":
        limit = max(r["wall_s"] for r in cell.runs) if cell.runs else None
        return ">%.0f" % (limit / base_s) if limit else "timeout"
    if cell.status == "crash":
        return "crash"
    return {"skipped": "skip", "unavailable": "n/a", "not run": "-"}.get(cell.status, cell.status)


def ratio_value(cell, base_s, metric="wall_s"):
    """(value, is_lower_bound) of a slowdown, or (None, False)."""
    if cell is None or not base_s:
        return None, False
    if cell.status == "ok":
        v = cell.median_wall(metric)
        return (v / base_s if v is not None else None), False
    if cell.status == "timeout" and cell.runs and metric == "wall_s":
        return max(r["wall_s"] for r in cell.runs) / base_s, True
    return None, False


def selfcheck_text(cells, base_config="base", order=None):
    """`ok` when every completed run printed SELFCHECK PASS, exited 0 and
    produced the uninstrumented run's checksum; else the first problem."""
    base = cells.get(base_config)
    base_sum = None
    if base and base.runs:
        base_sum = next((r["checksum"] for r in base.runs if r.get("checksum")), None)
    problems = []
    names = [c for c in (order or []) if c in cells] + [c for c in cells if c not in (order or [])]
    for name, cell in ((n, cells[n]) for n in names):
        for r in cell.runs:
            if r["status"] != "ok":
                continue
            if r.get("selfcheck") != "PASS":
                problems.append("%s: selfcheck %s" % (name, r.get("selfcheck") or "missing"))
            elif r.get("rc") != 0:
                problems.append("%s: exit %s" % (name, r.get("rc")))
            elif base_sum is None or r.get("checksum") != base_sum:
                problems.append("%s: checksum differs" % name)
    if base is None or not base.runs or base.status != "ok":
        return "no baseline"
    if problems:
        return "FAIL " + problems[0] + ("" if len(problems) == 1 else " (+%d)" % (len(problems) - 1))
    return "ok"


def render_table(programs, configs, cells, findings_text, markdown=False, metric="wall_s"):
    """The closing table: program | base s | one slowdown column per
    non-base configuration | self-check | findings match | expected (the
    findings a program is built to raise, at their launch), then the geomean
    row (">=" where a timed-out run makes the value a lower bound).
    metric `gpu_ms` gives the slowdowns of the programs' timed sections."""
    base_col = "base s" if metric == "wall_s" else "base gpu ms"
    header = ["program", base_col] + ["%s x" % c for c in configs if c != "base"] + ["self-check",
                                                                                  "findings match", "expected"]
    rows = []
    per_config = {c: [] for c in configs if c != "base"}
    bounded = {c: False for c in configs if c != "base"}
    for p in programs:
        pc = cells.get(p, {})
        base = pc.get("base")
        base_s = base.median_wall(metric) if base and base.status == "ok" else None
        row = [p, "%.3f" % base_s if base_s else ratio_text(base, None) if base else "-"]
        for c in configs:
            if c == "base":
                continue
            row.append(ratio_text(pc.get(c), base_s, metric))
            v, lower = ratio_value(pc.get(c), base_s, metric)
            if v is not None:
                per_config[c].append(v)
                bounded[c] = bounded[c] or lower
        row.append(selfcheck_text(pc, order=configs))
        row.append(findings_text.get(p, "-"))
        row.append(expected_text(p, pc, order=configs))
        rows.append(row)
    geo = ["geomean", ""]
    for c in configs:
        if c == "base":
            continue
        g = geomean(per_config[c])
        n = len(per_config[c])
        geo.append("-" if g is None else ("%s%.2f%s" % (">=" if bounded[c] else "", g,
                                                        "" if n == len(programs) else " (%d/%d)" % (n, len(programs)))))
    geo += ["", "", ""]
    rows.append(geo)
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    fmt = lambda r: " | ".join(str(v).ljust(widths[i]) for i, v in enumerate(r)).rstrip()
    sep = "-+-".join("-" * w for w in widths)
    return "\n".join([fmt(header), sep] + [fmt(r) for r in rows[:-1]] + [sep, fmt(rows[-1])]) + "\n"


# ---------------------------------------------------------------------------
# xfpx's command line


def modes_from_help(text):
    """The detector modes `xfpx run --help` offers, and whether a `--mode`
    flag exists. clap prints `[possible values: a, b]` after the flag (on
    the same or a following line); without a `--mode` flag the only mode is
    the default, `detect`."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if re.search(r"(^|\s)--mode\b", line):
            listed = None  # clap's long help: "Possible values:" then "- name: text"
            for follow in lines[i:i + 40]:
                m = re.search(r"\[possible values: ([^\]]+)\]", follow)
                if m:
                    return [v.strip() for v in m.group(1).split(",") if v.strip()], True
                if re.match(r"\s*Possible values:\s*$", follow):
                    listed = []
                    continue
                item = re.match(r"\s*- ([A-Za-z0-9_-]+)(:|\s*$)", follow)
                if listed is not None and item:
                    listed.append(item.group(1))
                    continue
                if listed:
                    return listed, True
                if follow is not line and re.match(r"\s*--?[A-Za-z]", follow):
                    break
            return ["detect"], True
    return ["detect"], False
