#!/usr/bin/env python3
"""Writes src/<prog>.expected.json for every CUDA program of the suite from
the `xfpx-expect:` markers in its source, so the expected findings live on
the lines that produce them.

Marker syntax (in a // comment, on the line the finding is reported at):
    xfpx-expect: KIND FORMAT[, KIND FORMAT ...] (optional explanation)
    xfpx-exit: signal N | code N            (anywhere; default: code 0)

A finding may be reported at the line of the user's code or, for code
inlined from a header (cuda_fp16.hpp and friends), at the header line the
instruction carries. Those header locations are taken from the captured
line listing (listings/<prog>.lines.sass) and written as `also_at`.

    gen-expected.py          write the files
    gen-expected.py --check  exit 1 if a committed file differs, or if an
                             expected line holds no instruction of the
                             expected format in the captured listing
"""

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
LISTINGS = HERE / "listings"

KINDS = {"nan", "inf", "sub", "div0"}
FORMATS = {"f16", "f16x2", "bf16", "bf16x2", "f32", "f64"}
KERNEL_RE = re.compile(r'__global__\s+void\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(')
EXPECT_RE = re.compile(r"//.*\bxfpx-expect:\s*([^()]*)")
EXIT_RE = re.compile(r"//.*\bxfpx-exit:\s*(signal|code)\s+(\d+)")
# floating-point SASS opcodes whose results (or compared sources) the detector checks
FP_OPCODE_RE = re.compile(r"^(?:@!?U?P[0-9T]\s+)?((?:F|D|H)(?:ADD|MUL|FMA|SETP|SET|MNMX|SEL|CHK)[A-Z0-9]*(?:\.[A-Z0-9_]+)*|MUFU\.[A-Z0-9]+)(?=\s|$)")
LOC_RE = re.compile(r'//## File "([^"]+)", line (\d+)(?: inlined at "([^"]+)", line (\d+))?')
INSTR_RE = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")
SECTION_RE = re.compile(r"^\s*\.section\s+\.text\.([A-Za-z0-9_$.]+),")


# Which SASS opcodes can yield a value of each format; used only to check
# that an expected finding's line holds a candidate instruction.
FORMAT_OPCODES = {
    "f64": re.compile(r"^(D[A-Z]+|MUFU\.[A-Z]+64H)\b"),
    "f32": re.compile(r"^(F(?:ADD|MUL|FMA|SETP|SET|MNMX|SEL|CHK)[A-Z0-9]*|MUFU\.(?![A-Z]+64H)[A-Z0-9]+)\b"),
    "f16x2": re.compile(r"^H(?:ADD2|MUL2|FMA2|SETP2|SET2|MNMX2)(?![A-Z0-9._]*BF16)"),
    "bf16x2": re.compile(r"^H(?:ADD2|MUL2|FMA2|SETP2|SET2|MNMX2)[A-Z0-9._]*BF16"),
}


class MarkerError(Exception):
    pass


def parse_markers(path: Path):
    kernel = None
    findings = []
    exit_status = {"how": "code", "code": 0}
    for lineno, text in enumerate(path.read_text().splitlines(), start=1):
        if m := KERNEL_RE.search(text):
            kernel = m.group(1)
        if m := EXIT_RE.search(text):
            how, n = m.group(1), int(m.group(2))
            exit_status = {"how": how, how: n}
        m = EXPECT_RE.search(text)
        if not m:
            continue
        if kernel is None:
            raise MarkerError(f"{path.name}:{lineno}: xfpx-expect before any kernel")
        why = ""
        if "(" in text[m.end():]:
            why = text[m.end():].split("(", 1)[1].rsplit(")", 1)[0].strip()
        for item in m.group(1).split(","):
            parts = item.split()
            if len(parts) != 2 or parts[0] not in KINDS or parts[1] not in FORMATS:
                raise MarkerError(f"{path.name}:{lineno}: bad expectation `{item.strip()}`")
            entry = {"kernel": kernel, "kind": parts[0], "format": parts[1], "file": path.name, "line": lineno}
            if why:
                entry["why"] = why
            findings.append(entry)
    return findings, exit_status


def located_instructions(listing: Path):
    """Yields (kernel, opcode with modifiers, locations) for every FP
    instruction of an `nvdisasm -gi` listing; the locations are every
    (file, line) of the instruction's inline chain, innermost first. A group
    of `//## File` annotations applies to the instructions that follow it,
    up to the next group."""
    kernel = None
    group = []
    after_instr = True
    for text in listing.read_text().splitlines():
        if m := SECTION_RE.match(text):
            kernel, group, after_instr = m.group(1), [], True
            continue
        if m := LOC_RE.search(text):
            if after_instr:
                group, after_instr = [], False
            f, l, af, al = m.groups()
            group.append((Path(f).name, int(l)))
            if af is not None:
                group.append((Path(af).name, int(al)))
            continue
        m = INSTR_RE.match(text)
        if not m or kernel is None:
            continue
        after_instr = True
        if group and (op := FP_OPCODE_RE.match(m.group(1))):
            yield kernel, op.group(1), list(group)


def instructions_by_location(listing: Path):
    """(kernel, file, line) -> opcodes of FP instructions whose inline chain
    passes through (file, line)."""
    table = {}
    for kernel, op, locs in located_instructions(listing):
        for loc in locs:
            table.setdefault((kernel,) + loc, set()).add(op)
    return table


def check_against_listing(src: Path, findings) -> list:
    """Problems with expected findings that the captured SASS contradicts."""
    listing = LISTINGS / f"{src.stem}.lines.sass"
    if not listing.exists():
        return [f"{src.name}: no listing {listing.name} (run capture-listings.sh)"]
    at = instructions_by_location(listing)
    problems = []
    for f in findings:
        ops = at.get((f["kernel"], f["file"], f["line"]), set())
        if not any(FORMAT_OPCODES[f["format"]].match(op) for op in ops):
            problems.append(f"{src.name}:{f['line']}: no {f['format']} instruction of {f['kernel']} on this line "
                            f"(found {sorted(ops) or 'none'})")
    return problems


def inlined_locations(listing: Path):
    """(kernel, file, line) -> innermost locations of FP instructions whose
    inline chain passes through (file, line) but which carry another line."""
    table = {}
    if not listing.exists():
        return table
    for kernel, _, locs in located_instructions(listing):
        inner = locs[0]
        for loc in locs[1:]:
            if loc != inner:
                table.setdefault((kernel,) + loc, set()).add(inner)
    return table


def expected_for(src: Path):
    findings, exit_status = parse_markers(src)
    inlined = inlined_locations(LISTINGS / f"{src.stem}.lines.sass")
    for f in findings:
        alts = sorted(inlined.get((f["kernel"], f["file"], f["line"]), ()))
        f["also_at"] = [{"file": a, "line": b} for a, b in alts]
    return {
        "program": src.stem,
        "command": ["{bin}/" + src.stem],
        "exit": exit_status,
        "findings": findings,
        "tolerate": [],
    }


def render(doc) -> str:
    return json.dumps(doc, indent=2) + "\n"


def main(argv) -> int:
    check = "--check" in argv
    stale = []
    try:
        for src in sorted(SRC.glob("*.cu")):
            text = render(expected_for(src))
            out = SRC / f"{src.stem}.expected.json"
            if check:
                for problem in check_against_listing(src, expected_for(src)["findings"]):
                    stale.append(problem)
                if not out.exists() or out.read_text() != text:
                    stale.append(out.name)
            else:
                out.write_text(text)
    except MarkerError as e:
        print(f"gen-expected: {e}", file=sys.stderr)
        return 2
    if stale:
        print("gen-expected: out of date or contradicted by the SASS listings:\n  " + "\n  ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
