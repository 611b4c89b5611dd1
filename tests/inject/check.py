#!/usr/bin/env python3
"""Predict a micro-kernel's faulty output from its golden output, the fault
and the SM each block ran on (recorded by the faulty run itself), and compare
bit for bit. Usage: check.py CASE SM GOLDEN.bin FAULTY.bin
Prints one line: `exact`, or `MISMATCH ...`; exit 0 only on `exact`."""
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


def predict(case, sm, golden, faulty):
    """The predicted faulty words, and the blocks the fault sat under."""
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
    return out + smid, on


def main():
    case, sm, golden, faulty = sys.argv[1], int(sys.argv[2]), words(sys.argv[3]), words(sys.argv[4])
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
