#!/usr/bin/env python3
"""Sweep the gfx9/CDNA opcode space through the LLVM disassembler (the oracle).

For every encoding and every opcode value this script builds one or more
instruction words with distinctive field values, places each at its own
32-byte slot in an object file, disassembles the file with llvm-objdump for
each target, and writes one golden file per target:

    tests/golden/<target>.txt    WORDS<TAB>LENGTH<TAB>TEXT

WORDS are the hex dwords fed in, LENGTH is the number of bytes llvm consumed
(0 when llvm cannot decode the first dword) and TEXT is llvm's rendering
(without address or hex columns).

Usage: probe.py [--out DIR] [--targets gfx908,...] [--llvm-suffix -22]
The oracle is llvm-objdump-19 for gfx908/gfx90a/gfx942 and llvm-objdump-22
for gfx950 (the releases the fixture corpus uses).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

TARGETS = ["gfx908", "gfx90a", "gfx942", "gfx950"]
# The oracle per target: the LLVM release that the fixture corpus uses too
# (gfx950 needs LLVM 22).
LLVM_SUFFIX = {"gfx908": "-19", "gfx90a": "-19", "gfx942": "-19", "gfx950": "-22"}
SLOT = 32
NOP = 0xBF800000

V = 0x100  # operand code of v0


def modifier_variants(add, base, vopc, vop1=False):
    """DPP and SDWA words that each set one group of modifier bits."""
    dpp = 20 | 0xE4 << 8 | 0xF << 24 | 0xF << 28
    add(base | 0xFA, dpp | 1 << 20 | 1 << 22)
    add(base | 0xFA, dpp | 1 << 21 | 1 << 23)
    add(base | 0xFA, dpp | 1 << 19)
    add(base | 0xFA, 20 | 0x151 << 8 | 0xF << 24 | 0xF << 28)
    sd = 20 | 6 << 16 | (0 if vop1 else 6 << 24) | (0 if vopc else 6 << 8)
    add(base | 0xF9, sd | 1 << 20)
    add(base | 0xF9, sd | 1 << 21)
    add(base | 0xF9, sd | 1 << 19)
    add(base | 0xF9, sd | 1 << 23)
    if not vop1:
        add(base | 0xF9, sd | 1 << 28)
        add(base | 0xF9, sd | 1 << 29)
        add(base | 0xF9, sd | 1 << 27)
        add(base | 0xF9, sd | 1 << 31)
    add(base | 0xF9, sd | 1 << 13)
    if vopc:
        add(base | 0xF9, sd | 1 << 15 | 12 << 8)
    else:
        add(base | 0xF9, sd | 2 << 14)
        add(base | 0xF9, sd & ~(7 << 8) | 4 << 8 | 1 << 11)
        add(base | 0xF9, sd & ~(7 << 8) | 5 << 8 | 2 << 11)


def sweep():
    """Yield (words,) for every probe case, in a fixed order."""
    cases = []

    def add(*words):
        cases.append(tuple(w & 0xFFFFFFFF for w in words))

    lit = 0x12345678
    # SOP2: [31:30]=10 op[29:23]; ops 0x60.. are SOPK/SOP1/SOPC/SOPP
    for op in range(0x60):
        base = 0x80000000 | op << 23 | 10 << 16
        add(base | 30 << 8 | 20)
        add(base | 0xC1 << 8 | 0xFF, lit)
        add(base | 0xFF << 8 | 0xF2, lit)
        add(base | 106 << 8 | 126)
    # SOPK: [31:28]=1011 op[27:23]
    for op in range(0x1D):
        base = 0xB0000000 | op << 23 | 10 << 16
        add(base | 0x1234, lit)
        add(base | 0x8001, lit)
        add(base | 0x0881, lit)
    # SOP1: [31:23]=0x17D sdst[22:16] op[15:8] ssrc0[7:0]
    for op in range(256):
        base = 0xBE800000 | 10 << 16 | op << 8
        add(base | 20)
        add(base | 0xFF, lit)
        add(base | 0xF0)
        add(base | 106)
    # SOPC: [31:23]=0x17E op[22:16] ssrc1 ssrc0
    for op in range(128):
        base = 0xBF000000 | op << 16
        add(base | 30 << 8 | 20)
        add(base | 0xFF << 8 | 0xC3, lit)
        add(base | 0x05 << 8 | 0xFF, lit)
    # SOPP: [31:23]=0x17F op[22:16] simm16
    for op in range(128):
        base = 0xBF800000 | op << 16
        add(base | 0x0003)
        add(base | 0xC07F)
        add(base | 0x8F71)
        add(base | 0x1822)
        add(base)
    # SMEM: [31:26]=110000
    for op in range(256):
        base = 0xC0000000 | op << 18 | 10 << 6 | 10
        add(base | 1 << 17, 0x40)
        add(base | 1 << 17 | 1 << 16, 0x1FFFF0)
        add(base, 30)
        add(base | 1 << 17 | 1 << 14, 30 << 25 | 0x8)
        add(base | 1 << 14, 0xF2 << 25 | 0x8)
        add(0xC0000000 | op << 18, 0)
        add(0xC0000000 | op << 18 | 1 << 17, 0)
    # VOP2: bit31=0 op[30:25] vdst[24:17] vsrc1[16:9] src0[8:0]
    for op in range(0x3E):
        base = op << 25 | 10 << 17 | 30 << 9
        add(base | V + 20, lit)
        add(base | 20, lit)
        add(base | 0xFF, lit)
        add(base | 0xF8, lit)
        add(base | 0xC1, lit)
        add(base | 0xFA, V + 0 + 20 | 0xB1 << 8 | 0xF << 24 | 0xF << 28)
        add(base | 0xFA, 20 | 0x141 << 8 | 1 << 19 | 0x3 << 24 | 0xA << 28 | 1 << 20 | 1 << 23)
        add(base | 0xF9, 20 | 6 << 8 | 6 << 16 | 6 << 24)
        add(base | 0xF9, 20 | 5 << 8 | 1 << 11 | 1 << 13 | 1 << 16 | 1 << 20 | 2 << 24 | 1 << 29)
        add(base | 0xF9, 20 | 6 << 8 | 6 << 16 | 6 << 24 | 1 << 23 | 1 << 14)
        modifier_variants(add, base, False)
    # VOP1: [31:25]=0x3F vdst[24:17] op[16:9] src0[8:0]
    for op in range(256):
        base = 0x7E000000 | 10 << 17 | op << 9
        add(base | V + 20, lit)
        add(base | 20, lit)
        add(base | 0xFF, lit)
        add(base | 0xF8, lit)
        add(base | 0xF0, lit)
        add(base | 0xC1, lit)
        add(base | 0xFA, 20 | 0xB1 << 8 | 0xF << 24 | 0xF << 28)
        add(base | 0xFA, 20 | 0x130 << 8 | 1 << 19 | 0x3 << 24 | 0xA << 28 | 1 << 20 | 1 << 21)
        add(base | 0xF9, 20 | 6 << 8 | 6 << 16)
        add(base | 0xF9, 20 | 4 << 8 | 2 << 11 | 1 << 19 | 1 << 20 | 1 << 21 | 1 << 15)
        modifier_variants(add, base, False, vop1=True)
    # VOPC: [31:25]=0x3E op[24:17] vsrc1[16:9] src0[8:0]
    for op in range(256):
        base = 0x7C000000 | op << 17 | 30 << 9
        add(base | V + 20, lit)
        add(base | 20, lit)
        add(base | 0xFF, lit)
        add(base | 0xF2, lit)
        add(base | 0xFA, 20 | 0xB1 << 8 | 0xF << 24 | 0xF << 28)
        add(base | 0xF9, 20 | 6 << 16 | 6 << 24)
        add(base | 0xF9, 20 | 12 << 8 | 1 << 15 | 2 << 16 | 1 << 20 | 1 << 23 | 3 << 24 | 1 << 29)
        modifier_variants(add, base, True)
    # VOP3: [31:26]=110100 op[25:16]. LLVM 19 rejects nonzero fields of
    # sources an opcode lacks, so every word is also tried with src2 and with
    # src1+src2 cleared.
    start_vop3 = len(cases)
    for op in range(1024):
        base = 0xD0000000 | op << 16 | 80
        srcs = V + 20 | (V + 40) << 9 | (V + 60) << 18
        add(base, srcs)
        add(base | 0x0C << 8, srcs)
        add(base | 0x5 << 8 | 1 << 15, srcs | 0x3 << 29 | 1 << 27)
        add(base | 0x2 << 8, 20 | 0xF2 << 9 | 0xC1 << 18 | 0x4 << 29 | 2 << 27)
        add(base | 0xA << 11, 0xF8 | (V + 40) << 9 | 106 << 18 | 1 << 29)
        add(base, V + 20 | 40 << 9 | (V + 60) << 18)
        add(base, 20 | 40 << 9 | 60 << 18)
        add(base, V + 20 | 40 << 9 | 0x80 << 18)
        add(0xD0000000 | op << 16 | 80, V + 20 | 40 << 9)
        add(base | 0x0C << 8, V + 20 | (V + 40) << 9 | 60 << 18)
        for b in range(3):
            add(base | 1 << (8 + b), srcs)
            add(base, srcs | 1 << (29 + b))
            add(base | 1 << (11 + b), srcs)
        add(base | 1 << 15, srcs)
        add(base, srcs | 1 << 27)
        add(base | 0x3 << 11, srcs)
        add(base | 0x8 << 11, srcs)
    vop3_words = cases[start_vop3:]
    for w in vop3_words:
        add(w[0], w[1] & ~(0x1FF << 18))
        add(w[0], w[1] & ~(0x3FFFF << 9))
    # VOP3P: [31:23]=0x1A7 op[22:16]
    start_vop3p = len(cases)
    for op in range(128):
        base = 0xD3800000 | op << 16 | 80
        srcs = V + 20 | (V + 40) << 9 | (V + 60) << 18
        add(base | 1 << 14, srcs | 3 << 27)
        add(base, srcs)
        add(base | 1 << 15 | 0x5 << 11 | 0x2 << 8, srcs | 0x1 << 27 | 0x6 << 29)
        add(base | 1 << 15 | 1 << 14, 20 | 0xF2 << 9 | (V + 60) << 18 | 3 << 27)
        add(base | 1 << 15 | 0x3 << 8 | 0x2 << 11, srcs | 0x5 << 29 | 0x2 << 27)
        add(base | 1 << 15 | 1 << 14, srcs | 3 << 27 | 0xF8 << 18)
        add(base | 1 << 14, srcs | 3 << 27 | 0x3 << 29)
        add(base | 1 << 14 | 0x3 << 8, srcs | 3 << 27)
        add(base | 1 << 14 | 0x3 << 11, srcs | 3 << 27)
        add(base | 1 << 14 | 1 << 15, srcs | 3 << 27)
    for w in cases[start_vop3p:]:
        add(w[0], w[1] & ~(0x1FF << 18))
    # gfx950 scaled MFMA: v_mfma_ld_scale_b32 followed by an MFMA
    for op in (0x2D, 0x2E):
        for w0, w1 in ((0, 0x00020702), (0x4000, 0x18020702), (0x0800, 0x00020702), (0x1800, 0x08020702)):
            for w2, w3 in ((0x0802, 0x02021904), (0x0B02, 0x22021904), (0x8802, 0x02021904), (0x0002, 0x02021904)):
                add(0xD3AC0000 | w0, w1, 0xD3800000 | op << 16 | w2, w3)
    for op in (0x2D, 0x2E, 0x40):
        first = 0xD3800000 | 0x2C << 16 | 1 << 14
        add(first | 0x1 << 11, (V + 5) | (V + 6) << 9 | 1 << 27,
            0xD3800000 | op << 16 | 1 << 15 | 80, (V + 20) | (V + 40) << 9 | (V + 60) << 18)
    # DS: [31:26]=110110 op[24:17] gds[16] offset1[15:8] offset0[7:0]
    for op in range(256):
        base = 0xD8000000 | op << 17
        ops = 20 | 30 << 8 | 40 << 16 | 10 << 24
        add(base, ops)
        add(base | 0x10 | 0x20 << 8, ops)
        add(base | 1 << 16 | 0x4, ops)
        add(base | 1 << 25 | 0x8, ops)
        for keep in ((0, 8), (0, 24), (0, 8, 16), (0, 8, 24), (0, 8, 16, 24), (24,), (0,), (8,), ()):
            add(base | 0x4, sum(((ops >> k) & 0xFF) << k for k in keep))
            add(base | 1 << 16 | 0x4, sum(((ops >> k) & 0xFF) << k for k in keep))
    # FLAT/SCRATCH/GLOBAL: [31:26]=110111 op[24:18] slc17 glc16 seg[15:14] lds13 offset[12:0]
    for op in range(128):
        for seg in range(4):
            base = 0xDC000000 | op << 18 | seg << 14
            add(base, 20 | 30 << 8 | 0x7F << 16 | 10 << 24)
            add(base | 0x10 | 1 << 16, 20 | 30 << 8 | 40 << 16 | 10 << 24)
            # The cache bits with saddr 0, the only saddr value the FLAT
            # segment accepts (llvm-mc encodes `flat_* ... glc` so): GLC (sc0)
            # alone, which also selects the returning atomics, then with SLC
            # (nt), then with bit 25 too (sc1 on gfx940+).
            add(base | 0x10 | 1 << 16, 20 | 30 << 8 | 10 << 24)
            add(base | 0x10 | 1 << 16 | 1 << 17, 20 | 30 << 8 | 10 << 24)
            add(base | 0x10 | 1 << 16 | 1 << 17 | 1 << 25, 20 | 30 << 8 | 10 << 24)
            add(base | 0x1FF0 | 1 << 17, 20 | 30 << 8 | 0x7F << 16 | 10 << 24 | 1 << 23)
            add(base | 0x8 | 1 << 13 | 1 << 25, 20 | 30 << 8 | 0x7F << 16 | 10 << 24)
            add(base | 0x18, 20 | 30 << 8 | 10 << 24)
            add(base | 1 << 13, 20 | 30 << 8 | 10 << 24)
            add(base | 1 << 25, 20 | 30 << 8 | 10 << 24)
            add(base, 20 | 30 << 8 | 10 << 24 | 1 << 23)
    # MUBUF: [31:26]=111000 op[24:18] slc17 lds16 glc14 idxen13 offen12 offset[11:0]
    for op in range(128):
        base = 0xE0000000 | op << 18
        add(base | 1 << 12 | 0x10, 20 | 10 << 8 | 6 << 16 | 30 << 24)
        add(base | 0x10, 20 | 10 << 8 | 6 << 16 | 0x80 << 24)
        add(base | 1 << 13 | 1 << 14 | 1 << 17, 20 | 10 << 8 | 6 << 16 | 0xC1 << 24)
        add(base | 3 << 12 | 1 << 16 | 0xFFF, 20 | 10 << 8 | 6 << 16 | 30 << 24 | 1 << 23)
        add(base | 1 << 16, 20 | 10 << 8 | 6 << 16 | 30 << 24)
        add(base | 3 << 12 | 0x20, 20 | 10 << 8 | 6 << 16 | 30 << 24)
        add(base | 1 << 12, 20 | 10 << 8 | 6 << 16 | 30 << 24 | 1 << 23)
        add(base | 1 << 12 | 1 << 15, 20 | 10 << 8 | 6 << 16 | 30 << 24)
        add(base, 0)
        add(base | 1 << 15, 0)
        # cache bits alone, for the opcodes with no address (buffer_wbl2 sc0 sc1)
        add(base | 1 << 14, 0)
        add(base | 1 << 14 | 1 << 15 | 1 << 17, 0)
    # MTBUF: [31:26]=111010 op[18:15] dfmt[22:19] nfmt[25:23]
    for op in range(16):
        base = 0xE8000000 | op << 15
        add(base | 1 << 12 | 0x10 | 4 << 19 | 7 << 23, 20 | 10 << 8 | 6 << 16 | 30 << 24)
        add(base | 1 << 13 | 1 << 14 | 14 << 19 | 4 << 23, 20 | 10 << 8 | 6 << 16 | 0x80 << 24)
        add(base | 1 << 19, 20 | 10 << 8 | 6 << 16 | 30 << 24 | 1 << 23)
        add(base | 7 << 23, 20 | 10 << 8 | 6 << 16 | 30 << 24)
        add(base | 15 << 19 | 6 << 23, 20 | 10 << 8 | 6 << 16 | 30 << 24)
    # MIMG: [31:26]=111100 op[24:18]
    for op in range(128):
        base = 0xF0000000 | op << 18
        add(base | 0xF << 8, 20 | 10 << 8 | 6 << 16 | 3 << 21)
        add(base | 0x1 << 8 | 1 << 12 | 1 << 13 | 1 << 25, 20 | 10 << 8 | 6 << 16 | 3 << 21)
        add(base | 0x3 << 8 | 1 << 14 | 1 << 16 | 1 << 15, 20 | 10 << 8 | 6 << 16 | 3 << 21 | 1 << 31)
    # ds_swizzle_b32 offsets of every pattern kind
    for off in (0x4, 0x401F, 0x1C1F, 0x5C, 0x80E4, 0x8000, 0x0D55, 0xE005, 0x1F, 0x3FF, 0x7FFF, 0xFFFF, 0x1, 0x400):
        add(0xD87A0000 | off, 20 | 10 << 24)
    # Odd (misaligned) register tuples and special registers as bases, for the
    # reference's invalid-operand notes
    for op in range(256):
        add(0x7E000000 | 11 << 17 | op << 9 | V + 21)
        add(0x7C000000 | op << 17 | 31 << 9 | V + 21)
        add(0xC0000000 | op << 18 | 1 << 17 | 10 << 6 | 51, 0x40)
    for op in range(0x3E):
        add(op << 25 | 11 << 17 | 31 << 9 | V + 21, lit)
    for op in range(1024):
        add(0xD0000000 | op << 16 | 81, V + 21 | (V + 41) << 9 | (V + 61) << 18)
        add(0xD0000000 | op << 16 | 81, V + 21 | (V + 41) << 9)
    for op in range(128):
        add(0xE0000000 | op << 18 | 1 << 12, 20 | 11 << 8 | 6 << 16 | 30 << 24)
        add(0xE0000000 | op << 18 | 1 << 12, 20 | 11 << 8 | 6 << 16 | 30 << 24 | 1 << 23)
        for seg in range(3):
            add(0xDC000000 | op << 18 | seg << 14, 20 | 31 << 8 | 0x7F << 16 | 11 << 24)
            add(0xDC000000 | op << 18 | seg << 14, 20 | 31 << 8 | 0x7F << 16 | 11 << 24 | 1 << 23)
    for op in range(16):
        add(0xE8000000 | op << 15 | 1 << 12, 20 | 11 << 8 | 6 << 16 | 30 << 24)
    for op in range(256):
        add(0xD8000000 | op << 17, 20 | 31 << 8 | 41 << 16 | 11 << 24)
        add(0xD8000000 | op << 17 | 1 << 25, 20 | 31 << 8 | 41 << 16 | 11 << 24)
    for op in range(128):
        add(0xD3800000 | op << 16 | 81 | 1 << 14, V + 21 | (V + 41) << 9 | (V + 61) << 18 | 3 << 27)
        add(0xD3800000 | op << 16 | 80 | 1 << 14, V + 21 | (V + 41) << 9 | 126 << 18 | 3 << 27)
    # Symbolic immediates: every hwreg id, every message id
    for i in range(64):
        add(0xB8800000 | 10 << 16 | 31 << 11 | i)
    for i in range(16):
        for opst in (0, 0x10, 0x20, 0x120):
            add(0xBF900000 | opst | i)
    # EXP and VINTRP
    add(0xC400000F | 1 << 11, 20 | 21 << 8 | 22 << 16 | 23 << 24)
    for op in range(4):
        add(0xD4000000 | 10 << 18 | op << 16 | 1 << 8 | 20)
    return cases


def random_cases(count, seed):
    """Random words biased towards the encodings (each case gets 4 dwords so any
    length fits), for differential fuzzing against the oracle."""
    import random
    rng = random.Random(seed)
    prefixes = [  # (bits of prefix, prefix value)
        (9, 0x17F), (9, 0x17E), (9, 0x17D), (4, 0xB), (2, 2), (7, 0x3F), (7, 0x3E), (1, 0),
        (9, 0x1A7), (6, 0x34), (6, 0x30), (6, 0x36), (6, 0x37), (6, 0x38), (6, 0x3A), (6, 0x3C),
    ]
    cases = []
    for _ in range(count):
        nbits, value = rng.choice(prefixes)
        w0 = (value << (32 - nbits)) | rng.getrandbits(32 - nbits)
        rest = [rng.getrandbits(32) for _ in range(3)]
        if rng.random() < 0.5:
            # small register numbers and common operand codes are more realistic
            rest[0] &= rng.choice([0xFFFFFFFF, 0x1FFFF, 0x03FF03FF, 0xE7FFFFFF])
        cases.append(tuple([w0] + rest))
    return cases


def parse_objdump(text):
    """Map slot address -> (length, text) for each instruction at a slot start."""
    out = {}
    line_re = re.compile(r"^\s+(.*?)\s*//\s*([0-9A-Fa-f]+):((?:\s[0-9A-Fa-f]{8})+)")
    for line in text.splitlines():
        m = line_re.match(line)
        if not m:
            continue
        addr = int(m.group(2), 16)
        if addr % SLOT:
            continue
        insn = m.group(1).strip()
        nwords = len(m.group(3).split())
        if insn.startswith(".long"):
            out[addr] = (0, "<unknown>")
        else:
            out[addr] = (4 * nwords, insn)
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def disassemble_slots(target, cases, suffix, tmp):
    """Disassemble `cases` (one per slot); None when the oracle crashes."""
    src = os.path.join(tmp, f"{target}.s")
    obj = os.path.join(tmp, f"{target}.o")
    with open(src, "w") as f:
        f.write(".text\n")
        for words in cases:
            padded = list(words) + [NOP] * (SLOT // 4 - len(words))
            f.write(".long " + ", ".join(f"0x{w:08x}" for w in padded) + "\n")
    run([f"llvm-mc{suffix}", "-triple=amdgcn-amd-amdhsa", f"-mcpu={target}",
         "-filetype=obj", src, "-o", obj])
    res = subprocess.run([f"llvm-objdump{suffix}", "-d", f"--mcpu={target}", obj],
                         capture_output=True, text=True)
    if res.returncode != 0:
        return None
    got = parse_objdump(res.stdout)
    return [got.get(i * SLOT, (None, None)) for i in range(len(cases))]


def disassemble_robust(target, cases, suffix, tmp):
    """Like disassemble_slots, isolating words that crash the oracle (length -1)."""
    got = disassemble_slots(target, cases, suffix, tmp)
    if got is not None:
        return got
    if len(cases) == 1:
        return [(-1, "<oracle crash>")]
    half = len(cases) // 2
    return (disassemble_robust(target, cases[:half], suffix, tmp)
            + disassemble_robust(target, cases[half:], suffix, tmp))


def probe_target(target, cases, suffix, tmp):
    suffix = suffix or LLVM_SUFFIX[target]
    got = disassemble_robust(target, cases, suffix, tmp)
    lines = []
    for i, words in enumerate(cases):
        length, text = got[i]
        if length is None:
            sys.exit(f"probe: no disassembly at slot {i} for {target}")
        hexw = " ".join(f"{w:08x}" for w in words)
        lines.append(f"{hexw}\t{length}\t{text}\n")
    return lines


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "golden"))
    ap.add_argument("--llvm-suffix", default=None, help="one LLVM for all targets (default: per target)")
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--random", type=int, default=0, help="random words instead of the sweep")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--prefix", default="", help="prefix of the output file names")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    cases = random_cases(args.random, args.seed) if args.random else sweep()
    with tempfile.TemporaryDirectory() as tmp:
        for target in args.targets.split(","):
            lines = probe_target(target, cases, args.llvm_suffix, tmp)
            with open(os.path.join(args.out, f"{args.prefix}{target}.txt"), "w") as f:
                how = f"--random {args.random} --seed {args.seed} --prefix {args.prefix}" if args.random else ""
                f.write(f"# oracle: llvm-objdump{args.llvm_suffix or LLVM_SUFFIX[target]} --mcpu={target}; "
                        f"regenerate with tools/probe.py {how}".rstrip() + "\n")
                f.writelines(lines)


if __name__ == "__main__":
    main()
