#!/usr/bin/env python3
"""Measures the AMD rewriter's coverage on the code objects build.sh made.

    tests/realcode/measure.py [--build DIR]... [--xfpx PATH] [--jobs N]
                              [--date YYYY-MM-DD] [--out FILE] [--raw FILE]

Every object under each build folder (OUT/TARGET/VARIANT/SET/*.co; default:
every third_party/realcode/build* folder) is rewritten by `xfpx dump --vendor
amd --rewrite detect|screen --format json`. Per corpus (the fetched code, the
project's fixtures, the fixtures' library object on its own), target and
variant the table gives: translation units built and skipped (build logs),
objects whose rewrite failed, kernels by state, FP sites (kernels' own code
and the device functions they reach), sites checked, kernels screened, and
the refused sites by reason (addresses and counts in reasons replaced by N).
The result is a dated markdown table (--out, default standard output);
--raw writes the per-object figures as JSON.
"""

import argparse
import concurrent.futures
import datetime
import glob
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TARGETS = ["gfx908", "gfx90a", "gfx942", "gfx950"]
VARIANTS = ["O0", "O3", "fast"]


def reason_class(reason):
    """A refusal's reason without the addresses and numbers in it."""
    return re.sub(r"\b(0x[0-9a-fA-F]+|[sv]?\d+)\b", "N", reason)


def corpus_of(set_name, obj):
    if set_name != "fixtures":
        return "real code"
    return "fixtures: library" if os.path.basename(obj) == "library.co" else "fixtures"


def units(dump):
    """Kernels, and the device functions some kernel reaches."""
    for k in dump.get("kernels", []):
        yield "kernel", k
    for f in dump.get("functions", []):
        if f.get("reached_by"):
            yield "function", f


def state_name(state):
    return state if isinstance(state, str) else next(iter(state))


def measure(xfpx, obj):
    """Figures of one object, both modes."""
    result = {"object": obj}
    for mode in ("detect", "screen"):
        p = subprocess.run([xfpx, "dump", "--vendor", "amd", "--rewrite", mode, "--format", "json", obj],
                           capture_output=True, text=True)
        if p.returncode != 0:
            result[mode] = {"error": (p.stderr.strip().splitlines() or ["(no message)"])[-1]}
            continue
        dump = json.loads(p.stdout)
        fig = {"kernels": Counter(), "fp_sites": 0, "checked": 0, "refused": Counter(), "instructions": 0,
               "not_screened": []}
        for kind, u in units(dump):
            state = state_name(u["state"])
            fig["instructions"] += u.get("instructions", 0)
            if kind == "kernel":
                fig["kernels"][state] += 1
                if mode == "screen" and state not in ("instrumented", "partial"):
                    why = u["state"].get("skipped", {}).get("reason", state) if isinstance(u["state"], dict) else state
                    fig["not_screened"].append(reason_class(why))
            c = u.get("coverage") or {}
            fig["fp_sites"] += c.get("fp_sites", 0)
            fig["checked"] += c.get("checked", 0)
            for r in c.get("refused", []):
                fig["refused"][reason_class(r["reason"])] += r["sites"]
        result[mode] = fig
    return result


def build_logs(builds):
    """(target, variant, corpus) -> Counter of ok/skip from the build logs."""
    counts = defaultdict(Counter)
    for b in builds:
        for log in glob.glob(os.path.join(b, "build.log")):
            for line in open(log, encoding="utf-8", errors="replace"):
                w = line.split()
                if len(w) < 5 or w[0] not in ("ok", "skip"):
                    continue
                t, v, s = w[1], w[2], w[3]
                corpus = "real code" if s != "fixtures" else (
                    "fixtures: library" if w[4].startswith("library/") else "fixtures")
                counts[(t, v, corpus)][w[0]] += 1
    return counts


def git(*args):
    try:
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def pct(a, b):
    return f"{100.0 * a / b:.1f}%" if b else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", action="append", help="a build folder of build.sh (repeatable)")
    ap.add_argument("--xfpx", default=None, help="the xfpx binary (default: target/release/xfpx, else target/debug/xfpx)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--out", default=None)
    ap.add_argument("--raw", default=None)
    a = ap.parse_args()
    builds = a.build or sorted(glob.glob(os.path.join(ROOT, "third_party/realcode/build*")))
    xfpx = a.xfpx
    if xfpx is None:
        for cand in ("target/release/xfpx", "target/debug/xfpx"):
            if os.access(os.path.join(ROOT, cand), os.X_OK):
                xfpx = os.path.join(ROOT, cand)
                break
    if not xfpx or not os.access(xfpx, os.X_OK):
        sys.exit("error: measure.py: no xfpx binary (cargo build -p xfpx --release, or --xfpx PATH)")
    objects = []
    for b in builds:
        for t in TARGETS:
            for v in VARIANTS:
                for obj in sorted(glob.glob(os.path.join(b, t, v, "*", "*.co"))):
                    objects.append((t, v, corpus_of(os.path.basename(os.path.dirname(obj)), obj), obj))
    if not objects:
        sys.exit("error: measure.py: no code objects under " + ", ".join(builds) + " (run build.sh first)")
    print(f"measure.py: {len(objects)} objects, {a.jobs} at a time", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        results = list(pool.map(lambda o: measure(xfpx, o[3]), objects))
    rows = defaultdict(lambda: {"objects": 0, "failed": Counter(), "detect": Counter(), "screen": Counter(),
                                "refused": Counter(), "not_screened": []})
    for (t, v, corpus, obj), r in zip(objects, results):
        row = rows[(corpus, t, v)]
        row["objects"] += 1
        for mode in ("detect", "screen"):
            fig = r[mode]
            if "error" in fig:
                row["failed"][f"{mode}: {reason_class(fig['error'])}"] += 1
                continue
            agg = row[mode]
            for s, n in fig["kernels"].items():
                agg["kernels"] += n
                agg[s] += n
            for key in ("fp_sites", "checked", "instructions"):
                agg[key] += fig[key]
            if mode == "detect":
                row["refused"].update(fig["refused"])
            else:
                row["not_screened"].extend(fig["not_screened"])
    logs = build_logs(builds)
    head = git("rev-parse", "--short=12", "HEAD")
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--untracked-files=no") else ""
    out = []
    out.append(f"# Coverage of real HIP code and of the fixtures in its styles: {a.date}\n")
    out.append(f"Measured on commit `{head}`{dirty} with `tests/realcode/measure.py` "
               "(`xfpx dump --vendor amd --rewrite detect|screen --format json` of every object "
               "`tests/realcode/build.sh` made; see `tests/realcode/README.md`).\n")
    out.append("FP sites count the kernels' own code and the device functions they reach; "
               "checked: sites the detect rewrite checks; screened: kernels the screen rewrite "
               "instruments (it checks every site of a kernel it instruments). TUs: translation units "
               "compiled / skipped by the compiler.\n")
    out.append("| corpus | target | variant | TUs built / skipped | objects (rewrite failed) | kernels | "
               "instrumented / partial / skipped | FP sites | checked | screened |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    order = {"real code": 0, "fixtures": 1, "fixtures: library": 2}
    for t, v, corpus in logs:
        rows[(corpus, t, v)]  # a corpus whose every unit failed to build still gets its row
    keys = sorted(rows, key=lambda k: (order[k[0]], TARGETS.index(k[1]), VARIANTS.index(k[2])))
    for key in keys:
        corpus, t, v = key
        row = rows[key]
        d, s = row["detect"], row["screen"]
        built = logs.get((t, v, corpus), Counter())
        failed = sum(n for m, n in row["failed"].items() if m.startswith("detect"))
        out.append(
            f"| {corpus} | {t} | {v} | {built['ok']} / {built['skip']} | {row['objects']} ({failed}) | {d['kernels']} | "
            f"{d['instrumented']} / {d['partial']} / {d['skipped']} | {d['fp_sites']} | "
            f"{d['checked']} ({pct(d['checked'], d['fp_sites'])}) | "
            f"{s['instrumented'] + s['partial']} of {s['kernels']} ({pct(s['instrumented'] + s['partial'], s['kernels'])}) |")
    out.append("\n## Refused sites by reason (detect)\n")
    out.append("| corpus | target | variant | sites | reason |")
    out.append("|---|---|---|---|---|")
    for key in keys:
        for reason, n in sorted(rows[key]["refused"].items(), key=lambda x: -x[1]):
            out.append(f"| {key[0]} | {key[1]} | {key[2]} | {n} | {reason.replace('|', '/')} |")
    unscreened = [(key, why, n) for key in keys for why, n in Counter(rows[key]["not_screened"]).items()]
    if unscreened:
        out.append("\n## Kernels not screened, by reason\n")
        out.append("| corpus | target | variant | kernels | reason |")
        out.append("|---|---|---|---|---|")
        for key, why, n in unscreened:
            out.append(f"| {key[0]} | {key[1]} | {key[2]} | {n} | {why.replace('|', '/')} |")
    failures = [(key, m, n) for key in keys for m, n in rows[key]["failed"].items()]
    if failures:
        out.append("\n## Objects whose rewrite failed\n")
        out.append("| corpus | target | variant | objects | mode: error |")
        out.append("|---|---|---|---|---|")
        for key, m, n in failures:
            out.append(f"| {key[0]} | {key[1]} | {key[2]} | {n} | {m.replace('|', '/')} |")
    missing = [f"{t} {v}" for t in TARGETS for v in VARIANTS
               if not any(k[1] == t and k[2] == v for k in keys)]
    if missing:
        out.append("\nNot measured (no objects built): " + ", ".join(missing) + ".")
    text = "\n".join(out) + "\n"
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    if a.raw:
        with open(a.raw, "w", encoding="utf-8") as f:
            json.dump([{"target": t, "variant": v, "corpus": c, **r} for (t, v, c, _), r in zip(objects, results)],
                      f, indent=1, default=dict)


if __name__ == "__main__":
    main()
