#!/usr/bin/env python3
"""Runs the benchmark suite under every configuration and prints the table.

Per program: uninstrumented (`base`); `xfpx run` in each detector mode
(`xfpx-<mode>`); xfpx loading the NVIDIA tool with nothing instrumented
(`nvbit-empty`: `--kernels '^$'`); and GPU-FPX's detector (`gpufpx`) when
a path to it is given. Each run is timed around the process, with a
timeout; cheap runs, and every uninstrumented run (the denominator of its
program's ratios), are repeated and the median kept. Self-check and
checksum are compared with the uninstrumented run, findings of each tool
side by side. Results go to OUT: results.json, results.csv, table.txt,
table.md, env.txt and logs.tar.gz (every run's output and report).

See run-bench.sh for the usual way to start it, and `--help`.
"""

import argparse
import csv
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

CUDA_PROGRAMS = ["gemm", "batched_gemm", "stencil3d", "reduce_scan", "ode_chem", "black_scholes", "cfd_flux",
                 "nbody", "spmv", "late_nan"]
PYTHON_PROGRAMS = ["train_mlp"]
ALL_PROGRAMS = CUDA_PROGRAMS + PYTHON_PROGRAMS


def repo_root():
    return os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))


def find_xfpx(explicit):
    if explicit:
        return explicit
    root = repo_root()
    for cand in (os.path.join(root, ".devout", "gpu-suite", "bin", "xfpx"), os.path.join(root, ".devout", "bin", "xfpx"),
                 os.path.join(root, "target", "release", "xfpx")):
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return cand
    return shutil.which("xfpx")


def program_argv(name, bench_dir, python):
    if name in PYTHON_PROGRAMS:
        return [python, os.path.join(bench_dir, name + ".py")]
    return [os.path.join(bench_dir, name)]


# xfpx's cache of NVBit's disassembler calls (backend-nvidia, disasm_cache)
CACHE_ENV = "XFPX_NVDISASM_CACHE"


class Config:
    """One way of running a program: a command prefix and extra environment."""

    def __init__(self, name, prefix=(), env=None, report=False, kind="base", warm=False):
        self.name = name
        self.prefix = list(prefix)
        self.env = dict(env or {})
        self.report = report  # xfpx writes a JSON report we read back
        self.kind = kind  # base | xfpx | nvbit-empty | gpufpx
        # xfpx keeps NVBit's disassembly between runs; every xfpx run starts
        # with an empty cache (the first run of a program), a warm config
        # with the one an untimed earlier run of the same program filled
        self.warm = warm

    def argv(self, program, report_path):
        pre = list(self.prefix)
        if self.report:
            pre += ["--report", report_path]
        if self.kind in ("xfpx", "nvbit-empty"):
            pre += ["--"]
        return pre + program


def build_configs(xfpx, modes, mode_flag, gpufpx, gpufpx_inject, warm_cache=False):
    configs = [Config("base")]
    if xfpx:
        for m in modes:
            pre = [xfpx, "run"] + (["--mode", m] if mode_flag else [])
            configs.append(Config("xfpx-" + m, pre, report=True, kind="xfpx"))
        if warm_cache and modes:
            pre = [xfpx, "run"] + (["--mode", modes[0]] if mode_flag else [])
            configs.append(Config("xfpx-%s-warm" % modes[0], pre, report=True, kind="xfpx", warm=True))
        configs.append(Config("nvbit-empty", [xfpx, "run", "--kernels", "^$"], report=True, kind="nvbit-empty"))
    if gpufpx:
        var = "CUDA_INJECTION64_PATH" if gpufpx_inject == "injection" else "LD_PRELOAD"
        configs.append(Config("gpufpx", env={var: gpufpx}, kind="gpufpx"))
    return configs


def run_once(argv, env, timeout, log_path):
    """Runs argv with a timeout (SIGTERM then SIGKILL to its process group).
    Returns (rc, wall seconds, timed_out); output goes to log_path."""
    with open(log_path, "wb") as log:
        log.write(("$ %s\n" % " ".join(shlex.quote(a) for a in argv)).encode())
        log.flush()
        t0 = time.monotonic()
        try:
            p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        except OSError as e:
            log.write(("error: cannot start: %s\n" % e).encode())
            return None, 0.0, False
        timed_out = False
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            for sig, grace in ((signal.SIGTERM, 5), (signal.SIGKILL, 30)):
                try:
                    os.killpg(p.pid, sig)
                except ProcessLookupError:
                    pass
                try:
                    p.wait(timeout=grace)
                    break
                except subprocess.TimeoutExpired:
                    continue
            rc = p.returncode
        wall = time.monotonic() - t0
    return rc, wall, timed_out


class Harness:
    def __init__(self, args):
        self.args = args
        self.t_start = time.monotonic()
        self.work = tempfile.mkdtemp(prefix="bench-")
        self.logs = os.path.join(self.work, "logs")
        os.makedirs(self.logs)
        self.cells = {}  # program -> config -> Cell
        self.findings = {}  # program -> findings_text
        self.diffs = {}  # program -> list of differences
        self.notes = []

    def remaining(self):
        if not self.args.budget:
            return None
        return self.args.budget - (time.monotonic() - self.t_start)

    def cell(self, program, config):
        return self.cells.setdefault(program, {}).setdefault(config, benchlib.Cell(program, config))

    def run_cell(self, program, argv_program, config, env_base):
        cell = self.cell(program, config.name)
        reps = max(1, self.args.repeats)
        for rep in range(reps):
            left = self.remaining()
            if left is not None and left < 1:
                if not cell.runs:
                    cell.status, cell.reason = "skipped", "time budget spent"
                break
            budget_bound = left is not None and left < self.args.timeout
            timeout = left if budget_bound else self.args.timeout
            tag = "%s.%s.%d" % (program, config.name, rep)
            report = os.path.join(self.logs, tag + ".report.json")
            log = os.path.join(self.logs, tag + ".log")
            env = dict(env_base)
            env.update(config.env)
            argv = config.argv(argv_program, report)
            cold = None
            if config.kind in ("xfpx", "nvbit-empty"):
                if config.warm:
                    cache = os.path.join(self.work, "nvdisasm-cache", program)
                    env[CACHE_ENV] = cache
                    if not os.path.isdir(cache):
                        os.makedirs(cache)
                        print("[%6.1fs] %-14s %-14s filling the disassembly cache ..." %
                              (time.monotonic() - self.t_start, program, config.name), flush=True)
                        run_once(argv, env, timeout, log + ".prime")
                else:
                    cold = tempfile.mkdtemp(prefix="xfpx-nvdisasm-")
                    env[CACHE_ENV] = cold
            print("[%6.1fs] %-14s %-14s run %d ..." % (time.monotonic() - self.t_start, program, config.name, rep),
                  end="", flush=True)
            rc, wall, timed_out = run_once(argv, env, timeout, log)
            if cold:
                shutil.rmtree(cold, ignore_errors=True)
            with open(log, "rb") as f:
                text = f.read().decode("utf-8", "replace")
            out = benchlib.parse_program_output(text)
            run = dict(rep=rep, rc=rc, wall_s=round(wall, 4), log=os.path.basename(log), **out.to_dict())
            # A run counts (its time is used) when it ended by itself and
            # printed its self-check, whatever the verdict; a run that died
            # or failed before its self-check is a crash.
            if timed_out and budget_bound:
                run["status"] = "skipped"  # stopped by the time budget, not by its own timeout
            elif timed_out:
                run["status"] = "timeout"
            elif rc is None or (rc != 0 and out.selfcheck is None):
                run["status"] = "crash"
            else:
                run["status"] = "ok"
            if config.kind in ("xfpx", "nvbit-empty"):
                self.read_report(run, report)
            elif config.kind == "gpufpx":
                found, unparsed = benchlib.parse_gpufpx(text)
                run["findings"] = [list(k) for k in benchlib.finding_keys(found)]
                run["unparsed_gpufpx_lines"] = unparsed[:20]
            cell.runs.append(run)
            print(" %s %.2fs rc=%s selfcheck=%s" % (run["status"], wall, rc, out.selfcheck), flush=True)
            if run["status"] == "skipped" and cell.status == "ok":
                break  # earlier repetitions stand; the budget only cut this one
            if run["status"] != "ok":
                cell.status = run["status"]
                if run["status"] == "skipped":
                    cell.reason = "time budget spent after %.0fs" % wall
                elif timed_out:
                    cell.reason = "timeout after %.0fs" % wall
                else:
                    last = [l for l in text.splitlines() if l.strip()][-1:]
                    cell.reason = "exit %s, no self-check%s" % (rc, (": " + last[0][:200]) if last else "")
                break
            cell.status = "ok"
            if wall > self.args.cheap and config.kind != "base":
                break  # expensive: one run is enough (the base, every ratio's denominator, is always repeated)
        self.save()

    def read_report(self, run, path):
        if not os.path.exists(path):
            run["report_error"] = "no report written"
            return
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            found, stats = benchlib.parse_xfpx_report(text)
        except benchlib.ReportError as e:
            run["report_error"] = str(e)
            return
        run["findings"] = [list(k) for k in benchlib.finding_keys(found)]
        run["first_launches"] = [list(k) for k in benchlib.first_launches(found)] + stats["screened_first_launches"]
        run["report_stats"] = stats

    def compare(self, program, configs):
        """Findings per tool for one program: the union over a cell's runs."""
        per_tool = {}
        for c in configs:
            if c.kind not in ("xfpx", "gpufpx"):
                continue
            cell = self.cells.get(program, {}).get(c.name)
            runs = [r for r in (cell.runs if cell else []) if "findings" in r]
            if runs:
                per_tool[c.name] = sorted({tuple(k) for r in runs for k in r["findings"]})
        ref_name = next((c.name for c in configs if c.kind == "xfpx" and c.name in per_tool), None)
        if ref_name is None:
            ref_name = next(iter(per_tool), None)
        if ref_name is None:
            self.findings[program] = "-"
            return
        others = {k: v for k, v in per_tool.items() if k != ref_name}
        _, text, diffs = benchlib.compare_findings(ref_name, per_tool[ref_name], others)
        counts = ", ".join("%s %d" % (k, len(v)) for k, v in sorted(per_tool.items()))
        self.findings[program] = text
        self.diffs[program] = dict(reference=ref_name, per_tool=per_tool, differences=diffs, counts=counts)

    def save(self):
        out = self.args.out
        os.makedirs(out, exist_ok=True)
        data = dict(
            schema="xfpx-bench/1",
            configs=[c.name for c in self.configs],
            programs=self.programs,
            notes=self.notes,
            elapsed_s=round(time.monotonic() - self.t_start, 1),
            cells=[cell.to_dict() for p in self.programs for cell in self.cells.get(p, {}).values()],
            findings=self.diffs,
            expected={p: benchlib.expected_text(p, self.cells.get(p, {}), [c.name for c in self.configs])
                      for p in self.programs if p in benchlib.EXPECTED},
        )
        with open(os.path.join(out, "results.json"), "w") as f:
            json.dump(data, f, indent=1, default=list)
        with open(os.path.join(out, "results.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["program", "config", "rep", "status", "rc", "wall_s", "selfcheck", "checksum", "gpu_ms",
                        "findings"])
            for p in self.programs:
                for cell in self.cells.get(p, {}).values():
                    for r in cell.runs:
                        f_txt = ";".join("/".join(k) for k in r["findings"]) if "findings" in r else ""
                        w.writerow([p, cell.config, r["rep"], r["status"], r["rc"], r["wall_s"], r.get("selfcheck"),
                                    r.get("checksum"), r.get("gpu_ms"), f_txt])
        names = [c.name for c in self.configs]
        for fname, md in (("table.txt", False), ("table.md", True)):
            with open(os.path.join(out, fname), "w") as f:
                f.write(benchlib.render_table(self.programs, names, self.cells, self.findings, markdown=md))
                f.write("\nSlowdown of the programs' timed sections (BENCH gpu_ms):\n\n")
                f.write(benchlib.render_table(self.programs, names, self.cells, self.findings, markdown=md,
                                              metric="gpu_ms"))

    def pack_logs(self):
        path = os.path.join(self.args.out, "logs.tar.gz")
        with tarfile.open(path, "w:gz") as tar:
            tar.add(self.logs, arcname="logs")
        return path


def environment_text(xfpx, python, gpufpx):
    """Hardware and versions, for the dated table."""

    def cmd(argv, timeout=60):
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
            return (p.stdout + p.stderr).strip()
        except (OSError, subprocess.SubprocessError) as e:
            return "unavailable (%s)" % e.__class__.__name__

    lines = ["date: " + time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())]
    lines.append("gpu: " + cmd(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"]))
    nvcc = shutil.which("nvcc")
    lines.append("nvcc: " + (cmd([nvcc, "--version"]).splitlines()[-1] if nvcc else "not on PATH"))
    if xfpx:
        lines.append("xfpx: " + cmd([xfpx, "--version"]))
    lines.append("nvbit: " + os.environ.get("NVBIT_VERSION", "not stated (set NVBIT_VERSION)"))
    lines.append("gpufpx: " + (gpufpx or "not given"))
    torch = cmd([python, "-c", "import sys, torch; print(sys.version.split()[0], 'torch', torch.__version__,"
                               " 'cuda', torch.version.cuda)"], timeout=120)
    lines.append("python: " + (torch.splitlines() or [""])[-1])
    lines.append("uname: " + " ".join(os.uname()))
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dry-run", action="store_true", help="print what would run, run nothing")
    ap.add_argument("--programs", default=",".join(ALL_PROGRAMS), help="comma-separated subset")
    ap.add_argument("--bench-dir", default=os.path.join(repo_root(), ".devout", "bench"))
    ap.add_argument("--xfpx", default=os.environ.get("XFPX"), help="the xfpx binary (default: .devout, PATH)")
    ap.add_argument("--modes", default=os.environ.get("XFPX_MODES"),
                    help="comma-separated xfpx modes (default: read from `xfpx run --help`)")
    ap.add_argument("--gpufpx", default=os.environ.get("GPUFPX_DETECTOR"), help="GPU-FPX's detector.so")
    ap.add_argument("--gpufpx-inject", choices=("preload", "injection"),
                    default=os.environ.get("GPUFPX_INJECT", "preload"),
                    help="load GPU-FPX with LD_PRELOAD or CUDA_INJECTION64_PATH")
    ap.add_argument("--warm-cache", action="store_true",
                    help="also run the first xfpx mode with NVBit's disassembly cached by an earlier run")
    ap.add_argument("--repeats", type=int, default=3, help="runs per cell when cheap (median kept)")
    ap.add_argument("--cheap", type=float, default=10.0,
                    help="repeat only runs faster than this (s); the base is always repeated")
    ap.add_argument("--timeout", type=float, default=300.0, help="per-run timeout (s)")
    ap.add_argument("--budget", type=float, default=None, help="total seconds; later runs are skipped")
    ap.add_argument("--python", default=os.environ.get("PYTHON", sys.executable or "python3"))
    ap.add_argument("--out", default=os.environ.get("OUT") or os.path.join(repo_root(), ".devout", "bench-results"))
    ap.add_argument("--render", metavar="RESULTS_JSON", help="print the table of a saved results.json")
    args = ap.parse_args(argv)

    if args.render:
        return render_saved(args.render)

    programs = [p.strip() for p in args.programs.split(",") if p.strip()]
    unknown = [p for p in programs if p not in ALL_PROGRAMS]
    if unknown:
        print("error: unknown program(s) %s; known: %s" % (", ".join(unknown), ", ".join(ALL_PROGRAMS)),
              file=sys.stderr)
        return 2
    xfpx = find_xfpx(args.xfpx)
    notes = []
    if xfpx and not os.path.exists(xfpx) and not shutil.which(xfpx):
        print("error: xfpx binary %s not found" % xfpx, file=sys.stderr)
        return 2
    if args.gpufpx and not os.path.isfile(args.gpufpx):
        print("error: GPU-FPX detector %s not found" % args.gpufpx, file=sys.stderr)
        return 2
    mode_flag = False
    if args.modes:
        modes = [m.strip() for m in args.modes.split(",") if m.strip()]
        mode_flag = True
    elif xfpx:
        try:
            p = subprocess.run([xfpx, "run", "--help"], capture_output=True, text=True, timeout=60)
            modes, mode_flag = benchlib.modes_from_help(p.stdout + p.stderr)
        except (OSError, subprocess.SubprocessError) as e:
            print("error: `%s run --help` failed: %s" % (xfpx, e), file=sys.stderr)
            return 2
    else:
        modes = []
        notes.append("xfpx not found (give --xfpx or XFPX): only base%s run" % (" and gpufpx" if args.gpufpx else ""))
    configs = build_configs(xfpx, modes, mode_flag, args.gpufpx, args.gpufpx_inject, args.warm_cache)

    env = dict(os.environ)
    cuda_bin = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin")
    if os.path.isdir(cuda_bin) and cuda_bin not in env.get("PATH", "").split(os.pathsep):
        env["PATH"] = env.get("PATH", "") + os.pathsep + cuda_bin  # NVBit runs nvdisasm
    env.setdefault("PYTHONUNBUFFERED", "1")

    missing = [p for p in programs if not os.path.exists(program_argv(p, args.bench_dir, args.python)[-1])]
    if args.dry_run:
        print("dry run: %d programs x %d configurations (repeats %d when under %.0fs, timeout %.0fs)"
              % (len(programs), len(configs), args.repeats, args.cheap, args.timeout))
        print("xfpx: %s; modes: %s%s" % (xfpx or "not found", ",".join(modes) or "-",
                                          "" if mode_flag or not modes else " (no --mode flag: default mode)"))
        for c in configs:
            extra = " ".join("%s=%s" % kv for kv in sorted(c.env.items()))
            for p in programs:
                argv_p = c.argv(program_argv(p, args.bench_dir, args.python), "<logs>/%s.%s.report.json" % (p, c.name))
                print("  %-12s %-13s %s%s" % (p, c.name, (extra + " ") if extra else "",
                                             " ".join(shlex.quote(a) for a in argv_p)))
        for n in notes:
            print("note: " + n)
        if missing:
            print("note: not built yet (run tests/bench/build.sh): " + ", ".join(missing))
        print("results would go to %s" % args.out)
        return 0
    if missing:
        print("error: not built: %s (run tests/bench/build.sh, or give --bench-dir)" % ", ".join(missing),
              file=sys.stderr)
        return 2

    h = Harness(args)
    h.configs, h.programs, h.notes = configs, programs, notes
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "env.txt"), "w") as f:
        f.write(environment_text(xfpx, args.python, args.gpufpx))
    # Configuration-major order, cheapest first (every baseline, then the
    # empty tool, then the detectors), so a spent time budget costs the most
    # expensive configurations, not whole programs or the cheap reference
    # points. The table keeps the order of `configs`.
    cost = {"base": 0, "nvbit-empty": 1, "xfpx": 2, "gpufpx": 3}
    for c in sorted(configs, key=lambda c: cost[c.kind]):
        for p in programs:
            h.run_cell(p, program_argv(p, args.bench_dir, args.python), c, env)
    for p in programs:
        h.compare(p, configs)
    h.save()
    h.pack_logs()
    shutil.rmtree(h.work, ignore_errors=True)
    with open(os.path.join(args.out, "env.txt")) as f:
        print("\n" + f.read())
    for p in programs:
        d = h.diffs.get(p)
        if d and d["differences"]:
            for diff in d["differences"]:
                keys = lambda ks: ", ".join("/".join(k) for k in ks) or "nothing"
                print("findings %s: %s misses %s; %s misses %s" % (
                    p, diff["tool"], keys(diff["missing"]), d["reference"], keys(diff["extra"])))
    for p in programs:
        for c in configs:
            cell = h.cells.get(p, {}).get(c.name)
            if cell and cell.status not in ("ok", "not run"):
                print("%s %s: %s (%s)" % (p, c.name, cell.status, cell.reason))
    for p in programs:
        verdict = benchlib.expected_text(p, h.cells.get(p, {}), [c.name for c in configs])
        if verdict.startswith("FAIL"):
            print("expected finding of %s missing: %s" % (p, verdict[len("FAIL "):]))
    for n in notes:
        print("note: " + n)
    names = [c.name for c in configs]
    print("\nSlowdown of the programs' timed sections (BENCH gpu_ms):\n")
    print(benchlib.render_table(programs, names, h.cells, h.findings, metric="gpu_ms"))
    print("Wall-clock slowdown per configuration (process), median of repeats:\n")
    print(benchlib.render_table(programs, names, h.cells, h.findings))
    return 0


def render_saved(path):
    with open(path) as f:
        data = json.load(f)
    cells = {}
    for c in data["cells"]:
        cell = benchlib.Cell(c["program"], c["config"])
        cell.status, cell.reason, cell.runs = c["status"], c["reason"], c["runs"]
        cells.setdefault(c["program"], {})[c["config"]] = cell
    findings = {}
    for p in data["programs"]:
        d = data.get("findings", {}).get(p)
        if d:
            others = {k: v for k, v in d["per_tool"].items() if k != d["reference"]}
            findings[p] = benchlib.compare_findings(d["reference"], d["per_tool"][d["reference"]], others)[1]
    sys.stdout.write(benchlib.render_table(data["programs"], data["configs"], cells, findings, markdown=True))
    sys.stdout.write("\nSlowdown of the programs' timed sections (BENCH gpu_ms):\n\n")
    sys.stdout.write(benchlib.render_table(data["programs"], data["configs"], cells, findings, markdown=True,
                                           metric="gpu_ms"))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    sys.exit(main())
