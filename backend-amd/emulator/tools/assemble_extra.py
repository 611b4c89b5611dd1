#!/usr/bin/env python3
"""Assembles tools/extra.s for one target with llvm-mc and prints the
listing (one instruction per line with its encoding). Lines the target
rejects are dropped. Usage: assemble_extra.py TARGET LLVM_MC > listing"""
import os, re, subprocess, sys

target, mc = sys.argv[1], sys.argv[2]
src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "extra.s")
lines = [l for l in open(src).read().splitlines() if l.strip() and not l.startswith("//")]
while True:
    p = subprocess.run([mc, "-arch=amdgcn", "-mcpu=" + target, "-show-encoding"],
                       input="\n".join(lines) + "\n", capture_output=True, text=True)
    bad = {int(m.group(1)) for m in re.finditer(r"<stdin>:(\d+):\d+: error", p.stderr)}
    if not bad:
        break
    lines = [l for i, l in enumerate(lines, 1) if i not in bad]
for line in p.stdout.splitlines():
    m = re.match(r"\s+(\S.*?)\s*; encoding: \[(.*)\]", line)
    if m:
        words = [int(x, 16) for x in m.group(2).split(",")]
        dwords = ["%08X" % int.from_bytes(bytes(words[i:i + 4]), "little") for i in range(0, len(words), 4)]
        print("%s // %s" % (m.group(1), " ".join(dwords)))
