#!/usr/bin/env python3
"""Writes the operand layouts of every CDNA1-3 matrix instruction as AMD's
matrix instruction calculator gives them, one entry per line, for the
emulator's layout check (`cargo test -p xfpx-amd-emu --lib -- --ignored
layouts_match_the_calculator` with XFPX_MFMA_LAYOUTS=<this output>).

Usage: mfma_layouts.py CALCULATOR_DIR > layouts.txt
  CALCULATOR_DIR: a checkout of github.com/ROCm/amd_matrix_instruction_calculator
  (its `tabulate` dependency installed).

Output lines:
  inst ARCH NAME M N K BLOCKS IN_BITS OUT_BITS CYCLES SPARSE
  A|B|C|K ARCH NAME BLOCK ROW COL REG LANE BIT_LO BIT_HI
where ROW/COL are (i, k) for A and K, (k, j) for B, (i, j) for C, REG the
first 32-bit register of the element and BIT_LO/BIT_HI its bits (a 64-bit
element: 0 and 63). For sparse A, the 32-bit register holding the pair of
values of the element's group of four is given with bits 0 and 31 (8-bit
data: its 16-bit half).
"""
import re
import sys

sys.path.insert(0, sys.argv[1])
import matrix_calculator as mc  # noqa: E402

REG = re.compile(r"^v(?:(\d+)|\[(\d+):(\d+)\])(?:\.\[(\d+):(\d+)\])?$")


def parse(reg):
    m = REG.match(reg)
    if not m:
        raise SystemExit("unexpected register name " + reg)
    if m.group(1) is not None:
        first = int(m.group(1))
        width = 32
    else:
        first = int(m.group(3))
        width = 32 * (int(m.group(2)) - first + 1)
    if m.group(4) is not None:
        return first, int(m.group(5)), int(m.group(4))
    return first, 0, width - 1


for arch in ("cdna1", "cdna2", "cdna3"):
    for name, info in mc.dict_insts[arch].items():
        calc = mc.InstCalcGfx9(name, info, 64)
        sparse = bool(info.get("sparse", False))
        in_bits = mc.get_data_size(info["in_type"])
        out_bits = mc.get_data_size(info["out_type"])
        m, n, k, blocks = info["m"], info["n"], info["k"], info["blocks"]
        print("inst", arch, name, m, n, k, blocks, in_bits, out_bits, info["cycles"], int(sparse))
        mats = ["a", "b", "c"] + (["k"] if sparse else [])
        for mat in mats:
            for b in range(blocks):
                if mat in ("a", "k"):
                    coords = [(i, kk, i, 0, kk) for i in range(m) for kk in range(k)]
                elif mat == "b":
                    coords = [(kk, j, 0, j, kk) for kk in range(k) for j in range(n)]
                else:
                    coords = [(i, j, i, j, 0) for i in range(m) for j in range(n)]
                for row, col, i, j, kk in coords:
                    _, reg, lanes = calc._get_reg_lanes(mat, i, j, kk, b, 0, 0, 0, 0)
                    first, lo, hi = parse(reg)
                    for lane in lanes:
                        print(mat.upper(), arch, name, b, row, col, first, lane, lo, hi)
