#!/usr/bin/env python3
"""Predict a micro-kernel's faulty output from its golden output, the fault
and the SM each block ran on (recorded by the faulty run itself), and compare
bit for bit. Usage: check.py CASE SM GOLDEN.bin FAULTY.bin
Prints one line: `exact`, or `MISMATCH ...`; exit 0 only on `exact`.
`check.py sass LISTING OTHER` says whether two `cuobjdump -sass` listings
have the same functions and instructions (the predictions below follow the
committed listing, micro.sm_90.sass, from nvcc 13.0 -O3 -arch=sm_90).

Each prediction follows the instructions the model touches in that listing
(`xfpx dump --vendor nvidia --tool inject FAULT micro.sm_90.sass` shows
them; tests/tests/inject_micro.rs checks they are the ones assumed here).
The faults sit on lane 7 of SM `SM` unless said otherwise; lane 7 of a
32-thread block has threadIdx.x = %laneid = 7."""
import re
import struct
import sys

BLOCKS, THREADS = 264, 32
N = BLOCKS * THREADS
SENTINEL = 0xFFFFFFFF


def words(path):
    data = open(path, "rb").read()
    return list(struct.unpack("<%dI" % (len(data) // 4), data))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def inputs(i):
    return f32(1.5 + 0.25 * (i % 97)), f32(3.0 + 0.125 * (i % 89))


def u32(x):
    return x & 0xFFFFFFFF


def index_lane7(case, b):
    """index_kernel, lane 7 of block b under the fault: (slot written, value).

    The kernel (R9 = block, R4 = tid = 7, R0 = laneid = 7, R2:R3 = out):
      HFMA2.MMA R7, -RZ, RZ, 0, 4.17e-07   R7 = 7
      LEA R5, R9, R4, 0x6                  R5 = (R9 << 6) + R4
      IMAD R4, R0, R7, 0x1                 R4 = R0 * R7 + 1
      IMAD.WIDE.U32 R2, R5, 0x4, R2        R2:R3 = out + 4 * R5
      IMAD R5, R9, 0x186a0, R4             R5 = R9 * 100000 + R4
      STG.E [R2.64], R5
    ira_src (src0 reads R4, restored after): LEA reads R4 = 7 for R9, so
      R5 = 7*64 + 7; IMAD reads R4 = 7 for R0 (R4 = 50, as without the
      fault); IMAD.WIDE.U32 reads R4 = 50 for R5: the store goes to slot
      50 (row 0's unused half); the last IMAD reads R4 = 50 for R9:
      50 * 100000 + 50. (The ISETP reads R4 = 7 for R0 = 7: unchanged.)
    iio (mask 0x20, every result of an instruction with an immediate):
      R7 = 7 ^ 0x20; R5 = (64b + 7) ^ 0x20; R4 = (7 * R7 + 1) ^ 0x20; the
      address's low word ^ 0x20 (out is 256-byte aligned: element bit 3);
      R5 = (100000 b + R4) ^ 0x20."""
    if case == "ira_src":
        return 50, 50 * 100000 + 50
    m = 0x20
    r7 = 7 ^ m
    r5 = u32((b << 6) + 7) ^ m
    r4 = u32(7 * r7 + 1) ^ m
    slot = (4 * r5 ^ m) // 4
    return slot, u32(100000 * b + r4) ^ m


def predict(case, sm, golden, faulty):
    """The predicted faulty words, and the blocks the fault sat under."""
    if case in ("ira_src", "iio"):
        out_words = BLOCKS * 64
        log = faulty[out_words:]
        on = {log[2 * k + 1] for k in range(BLOCKS) if log[2 * k] == sm}
        out = list(golden[:out_words])
        for b in on:
            out[b * 64 + 7] = SENTINEL
        for b in on:
            slot, v = index_lane7(case, b)
            out[slot] = v
        return out + log, on
    if case in ("iat", "iaw", "iac", "none"):
        out_words = BLOCKS * 64
        log = faulty[out_words:]
        pairs = [(log[2 * k], log[2 * k + 1]) for k in range(BLOCKS)]
        # IAC: a block on the SM logged its index XOR 1
        on = {(b ^ 1 if case == "iac" and s == sm else b) for s, b in pairs if s == sm}
        out = list(golden[:out_words])
        for b in on:
            for t in range(THREADS):
                v = 100000 * b + 7 * t + 1
                if case == "iat" and t < 4:
                    out[b * 64 + (t ^ 1)] = v
                elif case == "iaw":
                    out[b * 64 + t] = SENTINEL
                    out[b * 64 + 32 + t] = v
        if case == "iac":
            for j in range(BLOCKS):
                written = j not in on or (j ^ 1) in on
                for t in range(THREADS):
                    out[j * 64 + t] = 100000 * j + 7 * t + 1 if written else SENTINEL
        return out + log, on
    smid = faulty[N:]
    on = {b for b in range(BLOCKS) if smid[b] == sm}
    out = list(golden[:N])
    for b in on:
        for t in range(THREADS):
            i = b * THREADS + t
            if case == "ioc":
                a, c = inputs(i)
                out[i] = bits(f32(a * c))
            elif case == "wv":
                out[i] = 3 - golden[i]
            elif case == "imd_data" and t < 4:
                out[i] = golden[i] ^ 0x10000
            elif case == "imd_addr" and t < 4:
                out[i] = golden[b * THREADS + (t ^ 1)]
            elif case == "ial_ignore" and t == 7:
                # FADD R9, R4, R3 dropped: R9 keeps i (LEA R9, R11, R0, 0x5)
                out[i] = i
            elif case == "ial_force" and t == 7:
                # @!P0 FADD R11, R11, R4 runs where P0 (lane & 1) held
                a, c = inputs(i)
                out[i] = bits(f32(a + c))
    return out + smid, on


def sass_lines(path):
    """Each function's instructions in a cuobjdump listing, without
    addresses, encodings or NOP padding."""
    fn, out = None, {}
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.search(r"Function : (\S+)", line)
        if m:
            fn = m.group(1)
            out.setdefault(fn, [])
            continue
        m = re.match(r"\s*/\*[0-9a-f]{4}\*/\s+(.*?)\s*;", line)
        if m and fn:
            text = " ".join(m.group(1).split())
            if text != "NOP":
                out[fn].append(text)
    return out


def sass_same(a, b):
    la, lb = sass_lines(a), sass_lines(b)
    if la and la == lb:
        print("same SASS as the committed listing (%d functions)" % len(la))
        return 0
    bad = sorted(f for f in set(la) | set(lb) if la.get(f) != lb.get(f))
    print("SASS DIFFERS from the committed listing (functions %s): the predictions assume it" % ", ".join(bad))
    return 1


def main():
    if sys.argv[1] == "sass":
        return sass_same(sys.argv[2], sys.argv[3])
    case, sm, golden, faulty = sys.argv[1], int(sys.argv[2]), words(sys.argv[3]), words(sys.argv[4])
    if case == "changed":
        # how many output words (not the SM log) differ from golden
        out_words = BLOCKS * 64 if len(golden) == BLOCKS * 66 else N
        n = sum(1 for k in range(min(out_words, len(faulty))) if golden[k] != faulty[k])
        print("%d output words differ from golden" % n)
        return 0 if n == 0 else 1
    if len(golden) != len(faulty):
        print("MISMATCH: %d words, golden %d" % (len(faulty), len(golden)))
        return 1
    expected, on = predict(case, sm, golden, faulty)
    bad = [k for k in range(len(expected)) if expected[k] != faulty[k]]
    changed = sum(1 for k in range(len(golden)) if golden[k] != faulty[k])
    if bad:
        k = bad[0]
        print("MISMATCH: %d words differ from the prediction (first at %d: %#x, predicted %#x); %d blocks on SM %d"
              % (len(bad), k, faulty[k], expected[k], len(on), sm))
        return 1
    print("exact (%d blocks on SM %d, %d words changed from golden)" % (len(on), sm, changed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
