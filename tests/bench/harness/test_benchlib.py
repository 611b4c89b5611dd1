"""Tests of the benchmark harness without a GPU: parsing of hand-made
sample outputs (suite programs, xfpx reports, GPU-FPX's LOC-EXCEP lines,
`xfpx run --help`), the comparisons and the table, and whole harness runs
over stand-in programs and a stand-in xfpx written by the tests themselves.

Run: python3 -m unittest discover -s tests/bench/harness -p 'test_*.py'
"""

import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchlib  # noqa: E402
import bench  # noqa: E402

SAMPLES = os.path.join(HERE, "samples")


def sample(name):
    with open(os.path.join(SAMPLES, name), encoding="utf-8") as f:
        return f.read()


class ProgramOutputTest(unittest.TestCase):
    def test_reads_the_three_lines(self):
        out = benchlib.parse_program_output(sample("program-output.txt"))
        self.assertEqual(out.name, "gemm")
        self.assertAlmostEqual(out.gpu_ms, 104.25)
        self.assertEqual(out.selfcheck, "PASS")
        self.assertIn("max rel err", out.detail)
        self.assertEqual(out.checksum, "00ff00ff12345678")

    def test_missing_and_failing(self):
        out = benchlib.parse_program_output("error: cudaMalloc failed\n")
        self.assertIsNone(out.selfcheck)
        self.assertIsNone(out.checksum)
        out = benchlib.parse_program_output("SELFCHECK FAIL residual 1e-3\nCHECKSUM 0000000000000001\r\n")
        self.assertEqual(out.selfcheck, "FAIL")
        self.assertEqual(out.detail, "residual 1e-3")
        self.assertEqual(out.checksum, "0000000000000001")

    def test_checksum_must_be_16_hex_digits(self):
        self.assertIsNone(benchlib.parse_program_output("CHECKSUM 12ab\n").checksum)
        self.assertIsNone(benchlib.parse_program_output("CHECKSUM 0123456789ABCDEF\n").checksum)


class GpuFpxTest(unittest.TestCase):
    def test_loc_excep_lines(self):
        found, unparsed = benchlib.parse_gpufpx(sample("gpufpx-output.txt"))
        got = [(f.kernel, f.kind, f.format, f.location) for f in found]
        self.assertEqual(got, [
            ("dot_kernel", "div0", "f32", "/src/app/dot.cu:13"),
            ("dot_kernel", "nan", "f32", "/src/app/dot.cu:13"),
            ("dot_kernel", "nan", "f32", "/src/app/dot.cu:21"),
            ("void ns::step", "sub", "f64", "/src/app/step.cu:40"),
            ("void ns::step", "inf", "f64", "/src/app/step.cu:44"),
            ("void ns::step", "inf", "f64", "/src/app/step.cu:47"),
        ])
        self.assertEqual(len(unparsed), 1)
        self.assertIn("BOGUS", unparsed[0])
        self.assertEqual(benchlib.finding_keys(found), [
            ("dot_kernel", "div0", "f32"), ("dot_kernel", "nan", "f32"),
            ("ns::step", "inf", "f64"), ("ns::step", "sub", "f64")])

    def test_summary_lines_are_not_findings(self):
        found, unparsed = benchlib.parse_gpufpx("Total NaN found:              2\n#GPU-FPX: Instrument all kernels.\n")
        self.assertEqual((found, unparsed), ([], []))


class XfpxReportTest(unittest.TestCase):
    def test_findings_and_stats(self):
        found, stats = benchlib.parse_xfpx_report(sample("xfpx-report.json"))
        self.assertEqual(len(found), 6)
        self.assertEqual(found[0].location, "/src/app/dot.cu:13")
        self.assertIsNone(found[2].location)
        self.assertEqual(stats["kernels"], 3)
        self.assertEqual(stats["instrumented"], 2)
        self.assertEqual(stats["probes"], 52)
        self.assertEqual(stats["mode"], "detect")
        keys = benchlib.finding_keys(found)
        self.assertIn(("ns::step", "nan", "f16x2"), keys)
        self.assertEqual(len(keys), 5)

    def test_rejects_other_schemas_and_garbage(self):
        with self.assertRaises(benchlib.ReportError):
            benchlib.parse_xfpx_report('{"schema": "xfpx-report/2", "kernels": []}')
        with self.assertRaises(benchlib.ReportError):
            benchlib.parse_xfpx_report("{")
        with self.assertRaises(benchlib.ReportError):
            benchlib.parse_xfpx_report("[1, 2]")

    def test_same_findings_as_gpufpx_sample_on_its_formats(self):
        xf, _ = benchlib.parse_xfpx_report(sample("xfpx-report.json"))
        gf, _ = benchlib.parse_gpufpx(sample("gpufpx-output.txt"))
        ok, text, diffs = benchlib.compare_findings(
            "xfpx-detect", benchlib.finding_keys(xf), {"gpufpx": benchlib.finding_keys(gf)})
        self.assertTrue(ok, diffs)
        self.assertEqual(text, "yes (5)")


class RobustnessTest(unittest.TestCase):
    """Tool output is not trusted: damaged reports and garbage lines give a
    ReportError or nothing, never another exception (seeded, reproducible)."""

    def test_damaged_reports(self):
        import random
        rng = random.Random(6)
        good = json.loads(sample("xfpx-report.json"))
        junk = [None, 0, -1, 1.5, "", "x", [], {}, [1], {"a": 1}, True]

        def mutate(node):
            if isinstance(node, dict) and node:
                k = rng.choice(sorted(node))
                if rng.random() < 0.3:
                    del node[k]
                elif rng.random() < 0.5:
                    node[k] = rng.choice(junk)
                else:
                    mutate(node[k])
            elif isinstance(node, list) and node:
                i = rng.randrange(len(node))
                if rng.random() < 0.5:
                    node[i] = rng.choice(junk)
                else:
                    mutate(node[i])

        for _ in range(2000):
            rep = json.loads(json.dumps(good))
            for _ in range(rng.randint(1, 4)):
                mutate(rep)
            try:
                benchlib.parse_xfpx_report(json.dumps(rep))
            except benchlib.ReportError:
                pass
        text = sample("xfpx-report.json")
        for _ in range(500):
            i = rng.randrange(len(text))
            try:
                benchlib.parse_xfpx_report(text[:i] + text[i + 1:])
            except benchlib.ReportError:
                pass

    def test_garbage_lines(self):
        import random
        rng = random.Random(7)
        pieces = ["#GPU-FPX LOC-EXCEP INFO: ", "in kernel [", "], ", "NaN", "very small quantity (SUB)", " found @ ",
                  "[FP32]", "[FP99]", "Warning: ", "SELFCHECK ", "PASS", "CHECKSUM ", "0123456789abcdef", "BENCH ",
                  "gpu_ms=", "1e400", "\r", "\x00", "]", "[", "(", "\u00e9"]
        for _ in range(2000):
            text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
            found, unparsed = benchlib.parse_gpufpx(text)
            for f in found:
                self.assertIn(f.kind, benchlib.KINDS)
                benchlib.kernel_key(f.kernel, use_tool=False)
            benchlib.parse_program_output(text)


class KernelNameTest(unittest.TestCase):
    def test_forms_of_one_kernel_agree(self):
        for use_tool in (False, True):
            key = lambda n: benchlib.kernel_key(n, use_tool=use_tool)
            self.assertEqual(key("_Z10dot_kernelPfS_i"), "dot_kernel")
            self.assertEqual(key("dot_kernel(float*, float*, int)"), "dot_kernel")
            self.assertEqual(key("dot_kernel"), "dot_kernel")
            self.assertEqual(key("_ZN2ns4stepIdEEvPT_i"), "ns::step")
            self.assertEqual(key("void ns::step<double>(double*, int)"), "ns::step")
            self.assertEqual(key("void ns::step"), "ns::step")
            self.assertEqual(key("_ZN12_GLOBAL__N_16kernelEv"), "kernel")
            self.assertEqual(key("(anonymous namespace)::kernel()"), "kernel")

    def test_fallback_demangler_leaves_unknown_forms(self):
        self.assertIsNone(benchlib._demangle_base("not_mangled"))
        self.assertEqual(benchlib.demangle("_Zbad", use_tool=False), "_Zbad")


class CompareTest(unittest.TestCase):
    REF = [("k", "nan", "f32"), ("k", "sub", "f16"), ("m", "inf", "f64")]

    def test_gpufpx_compared_on_f32_f64_only(self):
        ok, text, _ = benchlib.compare_findings("xfpx-detect", self.REF,
                                                {"gpufpx": [("k", "nan", "f32"), ("m", "inf", "f64")]})
        self.assertTrue(ok)
        self.assertEqual(text, "yes (3)")

    def test_misses_are_named_both_ways(self):
        ok, text, diffs = benchlib.compare_findings(
            "xfpx-detect", self.REF, {"gpufpx": [("k", "nan", "f32"), ("k", "div0", "f32")],
                                      "xfpx-screen": self.REF[:2]})
        self.assertFalse(ok)
        self.assertIn("xfpx-detect misses 1", text)
        self.assertIn("gpufpx misses 1", text)
        self.assertIn("xfpx-screen misses 1", text)
        by_tool = {d["tool"]: d for d in diffs}
        self.assertEqual(by_tool["gpufpx"]["extra"], [("k", "div0", "f32")])
        self.assertEqual(by_tool["xfpx-screen"]["missing"], [("m", "inf", "f64")])

    def test_single_tool(self):
        self.assertEqual(benchlib.compare_findings("xfpx-detect", [], {}), (True, "- (0)", []))


def run(status="ok", wall=1.0, selfcheck="PASS", checksum="aa" * 8, rc=0):
    return dict(status=status, wall_s=wall, selfcheck=selfcheck, checksum=checksum, rc=rc)


def cell(program, config, runs, status=None):
    c = benchlib.Cell(program, config)
    c.runs = runs
    c.status = status or (runs[-1]["status"] if runs else "not run")
    return c


class TableTest(unittest.TestCase):
    def test_stats(self):
        self.assertEqual(benchlib.median([3, 1, 2]), 2)
        self.assertEqual(benchlib.median([4, 1, 2, 3]), 2.5)
        self.assertIsNone(benchlib.median([]))
        self.assertAlmostEqual(benchlib.geomean([2, 8]), 4.0)
        self.assertIsNone(benchlib.geomean([None]))

    def test_table_ratios_geomean_and_checks(self):
        cells = {
            "a": {"base": cell("a", "base", [run(wall=1.0), run(wall=1.2), run(wall=0.8)]),
                  "xfpx-detect": cell("a", "xfpx-detect", [run(wall=4.0)]),
                  "nvbit-empty": cell("a", "nvbit-empty", [run(wall=1.1)])},
            "b": {"base": cell("b", "base", [run(wall=2.0)]),
                  "xfpx-detect": cell("b", "xfpx-detect", [run(status="timeout", wall=20.0)]),
                  "nvbit-empty": cell("b", "nvbit-empty", [run(wall=2.0, checksum="bb" * 8)])},
        }
        text = benchlib.render_table(["a", "b"], ["base", "xfpx-detect", "nvbit-empty"], cells,
                                     {"a": "yes (0)"})
        lines = text.splitlines()
        self.assertTrue(lines[0].startswith("program | base s | xfpx-detect x | nvbit-empty x | self-check"))
        row_a = [v.strip() for v in lines[2].split("|")]
        self.assertEqual(row_a, ["a", "1.000", "4.00", "1.10", "ok", "yes (0)", "-"])
        row_b = [v.strip() for v in lines[3].split("|")]
        self.assertEqual(row_b[:4], ["b", "2.000", ">10", "1.00"])
        self.assertEqual(row_b[4], "FAIL nvbit-empty: checksum differs")
        geo = [v.strip() for v in lines[-1].split("|")]
        # detect: sqrt(4 * 10) with a lower bound from the timeout.
        self.assertEqual(geo[2], ">=6.32")
        self.assertEqual(geo[3], "%.2f" % ((1.1 * 1.0) ** 0.5))
        md = benchlib.render_table(["a", "b"], ["base", "xfpx-detect", "nvbit-empty"], cells, {}, markdown=True)
        self.assertTrue(md.startswith("| program | base s |"))
        self.assertEqual(len(md.splitlines()), 5)

    def test_gpu_time_table(self):
        runs = lambda w, g: [dict(run(wall=w), gpu_ms=g)]
        cells = {"a": {"base": cell("a", "base", runs(1.0, 100.0)),
                       "xfpx-detect": cell("a", "xfpx-detect", runs(2.0, 500.0))}}
        text = benchlib.render_table(["a"], ["base", "xfpx-detect"], cells, {}, metric="gpu_ms")
        row = [v.strip() for v in text.splitlines()[2].split("|")]
        self.assertEqual(row[:3], ["a", "100.000", "5.00"])
        self.assertIn("base gpu ms", text.splitlines()[0])
        # A program without a value in a column: the geomean says over how many.
        cells["b"] = {"base": cell("b", "base", runs(1.0, 10.0)),
                      "xfpx-detect": cell("b", "xfpx-detect", [run(status="timeout", wall=9.0)])}
        text = benchlib.render_table(["a", "b"], ["base", "xfpx-detect"], cells, {}, metric="gpu_ms")
        self.assertEqual([v.strip() for v in text.splitlines()[-1].split("|")][2], "5.00 (1/2)")
        text = benchlib.render_table(["a", "b"], ["base", "xfpx-detect"], cells, {})
        # Wall clock: the timeout counts as a lower bound, sqrt(2 * 9).
        self.assertEqual([v.strip() for v in text.splitlines()[-1].split("|")][2], ">=4.24")

    def test_screened_findings_count_at_their_launch(self):
        rep = {"schema": "xfpx-report/1", "run": {}, "kernels": [
            {"name": "relax_step(int, float*)", "records": [],
             "screened": [{"kind": "nan", "format": "f32", "first_launch": 5000}]}]}
        found, stats = benchlib.parse_xfpx_report(json.dumps(rep))
        self.assertEqual(found, [], "a screened finding is no line finding")
        self.assertEqual(stats["screened_first_launches"], [["relax_step", "nan", "f32", 5000]])

    def test_expected_findings_at_their_launch(self):
        found = lambda *fl: dict(run(), first_launches=[list(x) for x in fl])
        at = lambda n: ("relax_step", "nan", "f32", n)
        cells = lambda **runs: {k.replace("_", "-"): cell("late_nan", k, v) for k, v in runs.items()}
        self.assertEqual(benchlib.expected_text("gemm", cells(xfpx_fast=[found()])), "-")
        self.assertEqual(benchlib.expected_text("late_nan", cells(base=[run()])), "-", "no xfpx run")
        self.assertEqual(benchlib.expected_text("late_nan", cells(base=[run()], xfpx_fast=[found(at(5000))])), "ok")
        self.assertEqual(benchlib.expected_text("late_nan", cells(xfpx_fast=[found(at(8191), at(5000))])), "ok",
                         "another format's record may come later")
        self.assertEqual(benchlib.expected_text("late_nan", cells(xfpx_fast=[found()])),
                         "FAIL xfpx-fast: no relax_step nan at launch 5000 (not reported)")
        self.assertEqual(
            benchlib.expected_text("late_nan", cells(xfpx_fast=[found(at(4095))], xfpx_detect=[dict(run())])),
            "FAIL xfpx-fast: no relax_step nan at launch 5000 (first at 4095) (+1)")
        no_report = dict(run(), report_error="no report written")
        self.assertEqual(benchlib.expected_text("late_nan", cells(xfpx_fast=[no_report])),
                         "FAIL xfpx-fast: no report written")
        # a run that did not finish has no report to judge
        self.assertEqual(benchlib.expected_text("late_nan", cells(xfpx_fast=[run(status="timeout")])), "-")
        found_list, _ = benchlib.parse_xfpx_report(sample("xfpx-report.json"))
        self.assertTrue(all(f.first_launch is not None for f in found_list))

    def test_selfcheck_verdicts(self):
        base = cell("p", "base", [run()])
        self.assertEqual(benchlib.selfcheck_text({"base": base, "x": cell("p", "x", [run(selfcheck="FAIL")])}),
                         "FAIL x: selfcheck FAIL")
        self.assertEqual(benchlib.selfcheck_text({"base": base, "x": cell("p", "x", [run(rc=3)])}), "FAIL x: exit 3")
        self.assertEqual(benchlib.selfcheck_text({"base": cell("p", "base", [run(status="crash")])}), "no baseline")
        # Runs that did not finish have no results to check.
        self.assertEqual(benchlib.selfcheck_text({"base": base, "x": cell("p", "x", [run(status="timeout")])}), "ok")


class HelpTest(unittest.TestCase):
    def test_modes_from_clap_help(self):
        self.assertEqual(benchlib.modes_from_help(sample("xfpx-run-help.txt")), (["screen", "detect"], True))
        self.assertEqual(benchlib.modes_from_help(sample("xfpx-run-help-nomode.txt")), (["detect"], False))
        # clap's long help lists enum values one per line.
        self.assertEqual(benchlib.modes_from_help(sample("xfpx-run-help-long.txt")), (["detect", "screen"], True))
        one_line = "      --mode <MODE>  Mode [default: detect] [possible values: detect, screen, sampled]\n"
        self.assertEqual(benchlib.modes_from_help(one_line), (["detect", "screen", "sampled"], True))


class ChemistryGeneratorTest(unittest.TestCase):
    """The ODE benchmark's self-check relies on every generated reaction
    conserving atoms, and its checksum on the mechanism being fixed."""

    def test_mechanism_conserves_atoms_and_is_reproducible(self):
        sys.path.insert(0, os.path.join(HERE, "..", "src"))
        import random
        import gen_chem
        mass = gen_chem.species_masses()
        rxns = gen_chem.reactions(random.Random(gen_chem.SEED), mass)
        self.assertEqual(len(rxns), gen_chem.N_REACTIONS)
        for kind, lhs, rhs in rxns:
            self.assertEqual(sum(mass[s] for s in lhs), sum(mass[s] for s in rhs), (kind, lhs, rhs))
            self.assertNotEqual(sorted(lhs), sorted(rhs))
        text = gen_chem.generate()
        self.assertEqual(text, gen_chem.generate())
        self.assertEqual(text.count("  k["), gen_chem.N_REACTIONS)
        self.assertIn("__host__ __device__ inline void chem_rhs", text)


# ---------------------------------------------------------------------------
# Whole harness runs over stand-ins

FAKE_PROGRAM = """\
#!/usr/bin/env python3
import os, sys, time
name = os.path.basename(sys.argv[0]).split(".")[0]
if os.environ.get("FAKE_SLEEP_" + name):
    time.sleep(float(os.environ["FAKE_SLEEP_" + name]))
if os.environ.get("LD_PRELOAD", "").endswith("detector.so"):
    print("#GPU-FPX LOC-EXCEP INFO: in kernel [%s_kernel], NaN found @ /x/%s.cu:3 [FP32]" % (name, name))
    print("#GPU-FPX LOC-EXCEP INFO: in kernel [%s_kernel], INF found @ /x/%s.cu:4 [FP64]" % (name, name))
checksum = "1111222233334444"
if os.environ.get("FAKE_CORRUPT") == name:
    checksum = "9999222233334444"
print("BENCH %s gpu_ms=1.0" % name)
print("SELFCHECK PASS fake")
print("CHECKSUM " + checksum)
"""

# Runs the program; its report holds NaN/f32 and Inf/f64 in `<name>_kernel`,
# except under `--kernels '^$'` (nothing instrumented) and in mode `screen`,
# which drops the Inf. Sleeps FAKE_XFPX_DELAY seconds to look slower.
FAKE_XFPX = """\
#!/usr/bin/env python3
import json, os, subprocess, sys, time
args = sys.argv[1:]
if args == ["--version"]:
    print("xfpx 0.0.0-test"); sys.exit(0)
if args[:2] == ["run", "--help"]:
    print("      --mode <MODE>  What to do [possible values: detect, screen]"); sys.exit(0)
assert args[0] == "run"
i, mode, kernels, report = 1, "detect", None, None
while args[i] != "--":
    if args[i] == "--mode": mode = args[i + 1]
    if args[i] == "--kernels": kernels = args[i + 1]
    if args[i] == "--report": report = args[i + 1]
    i += 2
cmd = args[i + 1:]
time.sleep(float(os.environ.get("FAKE_XFPX_DELAY", "0")))
rc = subprocess.call(cmd)
name = os.path.basename(cmd[-1]).split(".")[0]
recs = [] if kernels == "^$" else [("nan", "f32")] + ([] if mode == "screen" else [("inf", "f64")])
kernel = "_Z%d%s_kernelPf" % (len(name) + 7, name)
# late_nan: its NaN is raised by launch 5000 of relax_step; mode screen
# reports it only where it samples again, at launch 8191
first = 0
if name == "late_nan":
    kernel, recs, first = "_Z10relax_stepiPfPKfS_fi", [("nan", "f32")], 8191 if mode == "screen" else 5000
    recs = [] if kernels == "^$" else recs
rep = {"schema": "xfpx-report/1", "tool": {"name": "xfpx", "version": "0"},
       "run": {"mode": mode, "truncated": False, "notes": []},
       "kernels": [{"name": kernel, "status": {"state": "instrumented"},
                    "launches": 1, "probes": 2,
                    "records": [{"kind": k, "format": f, "site": {"id": 1, "location": None}, "first_launch": first}
                                for k, f in recs]}]}
with open(report, "w") as f: json.dump(rep, f)
sys.exit(rc)
"""


def progress(stdout):
    """(program, configuration, repetition) of each progress line, in order."""
    pat = re.compile(r"^\[\s*[0-9.]+s\] (\S+)\s+(\S+)\s+run (\d+)")
    return [m.groups() for m in map(pat.match, stdout.splitlines()) if m]


def table_rows(stdout):
    """The closing table's (wall clock, printed last) rows by program name."""
    lines = stdout.splitlines()
    start = max(i for i, l in enumerate(lines) if l.startswith("program "))
    rows = {}
    for r in lines[start:]:
        if not r.strip():
            break
        if "|" not in r:
            continue  # separator
        rows[r.split("|")[0].strip()] = [v.strip() for v in r.split("|")]
    return rows


def write_exe(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


class HarnessRunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        d = self.tmp.name
        self.bench_dir = os.path.join(d, "bench")
        os.makedirs(self.bench_dir)
        for p in ("gemm", "spmv", "late_nan"):
            write_exe(os.path.join(self.bench_dir, p), FAKE_PROGRAM)
        write_exe(os.path.join(self.bench_dir, "train_mlp.py"), FAKE_PROGRAM)
        self.xfpx = os.path.join(d, "xfpx")
        write_exe(self.xfpx, FAKE_XFPX)
        self.detector = os.path.join(d, "detector.so")
        open(self.detector, "w").close()  # the stand-in programs only look at LD_PRELOAD's value
        self.out = os.path.join(d, "out")

    def tearDown(self):
        self.tmp.cleanup()

    def harness(self, *extra, env=None):
        argv = [sys.executable, os.path.join(HERE, "bench.py"), "--bench-dir", self.bench_dir, "--xfpx", self.xfpx,
                "--out", self.out, "--programs", "gemm,spmv,train_mlp", "--python", sys.executable] + list(extra)
        e = dict(os.environ)
        e.pop("XFPX_MODES", None)
        e.update(env or {})
        e["LD_PRELOAD"] = ""
        return subprocess.run(argv, capture_output=True, text=True, env=e, timeout=300)

    def results(self):
        with open(os.path.join(self.out, "results.json")) as f:
            return json.load(f)

    def test_full_run_with_gpufpx_and_modes(self):
        p = self.harness("--gpufpx", self.detector, "--repeats", "2",
                         env={"FAKE_XFPX_DELAY": "0.3", "FAKE_CORRUPT": "spmv"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(sorted(os.listdir(self.out)),
                         ["env.txt", "logs.tar.gz", "results.csv", "results.json", "table.md", "table.txt"])
        data = self.results()
        self.assertEqual(data["configs"], ["base", "xfpx-detect", "xfpx-screen", "nvbit-empty", "gpufpx"])
        order = []
        for _, cfg, _ in progress(p.stdout):
            if cfg not in order:
                order.append(cfg)
        self.assertEqual(order, ["base", "nvbit-empty", "xfpx-detect", "xfpx-screen", "gpufpx"])
        rows = table_rows(p.stdout)
        # Two repeats for every cheap cell; xfpx runs at least 0.3 s slower than base.
        for c in data["cells"]:
            self.assertEqual(len(c["runs"]), 2, c)
        self.assertGreater(float(rows["gemm"][2]), 1.0)
        # spmv prints another checksum than gemm, but the same under every
        # configuration: checksums are compared per program, with its base.
        self.assertEqual(rows["gemm"][6], "ok")
        self.assertEqual(rows["spmv"][6], "ok")
        # Mode screen drops the Inf: the findings column must say so.
        self.assertEqual(rows["gemm"][7], "NO: xfpx-screen misses 1")
        f = data["findings"]["gemm"]
        self.assertEqual(f["per_tool"]["gpufpx"], [["gemm_kernel", "inf", "f64"], ["gemm_kernel", "nan", "f32"]])
        self.assertEqual(f["per_tool"]["xfpx-detect"], f["per_tool"]["gpufpx"])
        self.assertIn("geomean", rows)
        self.assertIn("findings gemm: xfpx-screen misses gemm_kernel/inf/f64; xfpx-detect misses nothing", p.stdout)

    def test_the_base_of_an_expensive_program_is_repeated(self):
        # gemm takes longer than --cheap under every configuration: its
        # base (every ratio's denominator) still runs --repeats times, the
        # tools once; spmv stays cheap and is repeated everywhere.
        p = self.harness("--modes", "detect", "--repeats", "3", "--cheap", "0.2", env={"FAKE_SLEEP_gemm": "0.3"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        runs = {(c["program"], c["config"]): len(c["runs"]) for c in self.results()["cells"]}
        self.assertEqual(runs[("gemm", "base")], 3)
        self.assertEqual(runs[("gemm", "xfpx-detect")], 1)
        self.assertEqual(runs[("gemm", "nvbit-empty")], 1)
        self.assertEqual(runs[("spmv", "base")], 3)
        self.assertEqual(runs[("spmv", "xfpx-detect")], 3)

    def test_checksum_change_under_one_tool_fails_the_selfcheck(self):
        # The stand-in corrupts its checksum only when xfpx runs it.
        write_exe(self.xfpx + "-wrap", "#!/bin/sh\nFAKE_CORRUPT=gemm exec %s \"$@\"\n" % self.xfpx)
        p = self.harness("--xfpx", self.xfpx + "-wrap", "--modes", "detect", "--repeats", "1")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        gemm = table_rows(p.stdout)["gemm"]
        self.assertTrue(gemm[4].startswith("FAIL xfpx-detect: checksum differs"), gemm)

    def test_timeout_and_budget(self):
        p = self.harness("--modes", "detect", "--timeout", "2", "--repeats", "1",
                         env={"FAKE_SLEEP_spmv": "30"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        data = self.results()
        spmv = {c["config"]: c for c in data["cells"] if c["program"] == "spmv"}
        self.assertEqual(spmv["base"]["status"], "timeout")
        self.assertLess(spmv["base"]["runs"][0]["wall_s"], 15)
        self.assertIn("no baseline", p.stdout)
        # An 8 s budget: gemm's base run (4 s) completes; its next run (the
        # empty tool, 4 s again) is cut by the budget and counted as skipped,
        # not as a timeout.
        p = self.harness("--modes", "detect", "--budget", "8", "--repeats", "1",
                         env={"FAKE_SLEEP_gemm": "4"})
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        statuses = {(c["program"], c["config"]): c["status"] for c in self.results()["cells"]}
        self.assertEqual(statuses[("gemm", "base")], "ok")
        self.assertEqual(statuses[("gemm", "nvbit-empty")], "skipped")
        self.assertEqual(statuses[("spmv", "xfpx-detect")], "skipped")
        self.assertIn("skip", table_rows(p.stdout)["gemm"][2])
        # Runs go cheapest configuration first: nvbit-empty before the modes.
        order = [cfg for _, cfg, _ in progress(p.stdout)]
        self.assertEqual(order[:2], ["base", "base"])

    def test_dry_run_and_bad_input(self):
        p = self.harness("--dry-run", "--gpufpx", self.detector)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--kernels '^$'", p.stdout)
        self.assertIn("LD_PRELOAD=" + self.detector, p.stdout)
        self.assertIn("--mode screen", p.stdout)
        self.assertFalse(os.path.exists(self.out))
        p = self.harness("--gpufpx", os.path.join(self.tmp.name, "missing.so"))
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertIn("not found", p.stderr)
        p = self.harness("--programs", "nope")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown program", p.stderr)
        os.remove(os.path.join(self.bench_dir, "gemm"))
        p = self.harness()
        self.assertEqual(p.returncode, 2)
        self.assertIn("not built: gemm", p.stderr)

    def test_a_missing_late_finding_fails_the_row(self):
        p = self.harness("--programs", "gemm,late_nan", "--repeats", "1")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        rows = table_rows(p.stdout)
        self.assertEqual(rows["gemm"][-1], "-", "no expectation for gemm")
        self.assertEqual(rows["late_nan"][-1], "FAIL xfpx-screen: no relax_step nan at launch 5000 (first at 8191)")
        self.assertIn("expected finding of late_nan missing: xfpx-screen: no relax_step nan at launch 5000", p.stdout)
        self.assertEqual(self.results()["expected"]["late_nan"], rows["late_nan"][-1])
        run = next(c for c in self.results()["cells"] if c["config"] == "xfpx-detect" and c["program"] == "late_nan")
        self.assertEqual(run["runs"][0]["first_launches"], [["relax_step", "nan", "f32", 5000]])
        p = self.harness("--programs", "late_nan", "--modes", "detect", "--repeats", "1")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(table_rows(p.stdout)["late_nan"][-1], "ok")

    def test_render_saved_results(self):
        p = self.harness("--modes", "detect", "--repeats", "1")
        self.assertEqual(p.returncode, 0, p.stderr)
        r = subprocess.run([sys.executable, os.path.join(HERE, "bench.py"), "--render",
                            os.path.join(self.out, "results.json")], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(self.out, "table.md")) as f:
            self.assertEqual(r.stdout, f.read())


if __name__ == "__main__":
    unittest.main()
