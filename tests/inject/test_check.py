#!/usr/bin/env python3
"""Offline test of check.py: golden outputs of the micro-kernels computed
here from micro.cu's definitions, faulty outputs written by hand from each
model's effect on lane 7 (or lanes 0-3) of the blocks on one SM, and
check.py must call each `exact` and a one-word change `MISMATCH`.
Run: python3 tests/inject/test_check.py (prints `N passed, 0 failed`)."""
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCKS, THREADS, N = 264, 32, 264 * 32
SENT = 0xFFFFFFFF
SM = 5
ON = [5, 137]  # the blocks placed on SM 5


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def ab(i):
    return f32(1.5 + 0.25 * (i % 97)), f32(3.0 + 0.125 * (i % 89))


def smid_log():
    return [SM if b in ON else (b % 132 if b % 132 != SM else 6) for b in range(BLOCKS)]


def index_golden():
    out = [SENT] * (BLOCKS * 64)
    for b in range(BLOCKS):
        for t in range(THREADS):
            out[b * 64 + t] = 100000 * b + 7 * t + 1
    log = []
    for b, s in enumerate(smid_log()):
        log += [s, b]
    return out, log


def flat_golden(kernel):
    out = []
    for i in range(N):
        a, c = ab(i)
        if kernel == "fadd":
            out.append(bits(f32(a + c)))
        elif kernel == "shared":
            out.append((3 * i + 7) & 0xFFFFFFFF)
        elif kernel == "guarded":
            out.append(bits(f32(a + c)) if i % 2 == 0 else bits(a))
    return out, smid_log()


def faulty(case):
    """(golden words, faulty words), the fault's effect written out."""
    if case in ("ira_src", "iio"):
        out, log = index_golden()
        bad = list(out)
        for b in ON:
            bad[b * 64 + 7] = SENT
            if case == "ira_src":
                bad[50] = 5000050
            else:
                # lane 7: slot 64b + 47, value (100000 b + 306) ^ 0x20
                bad[64 * b + 47] = ((100000 * b + 306) & 0xFFFFFFFF) ^ 0x20
        return out + log, bad + log
    kernel = {"ial_ignore": "fadd", "ial_force": "guarded"}[case]
    out, log = flat_golden(kernel)
    bad = list(out)
    for b in ON:
        i = b * 32 + 7
        a, c = ab(i)
        bad[i] = {"ial_ignore": i, "ial_force": bits(f32(a + c))}[case]
    return out + log, bad + log


def write(path, ws):
    with open(path, "wb") as f:
        f.write(struct.pack("<%dI" % len(ws), *ws))


def check(case, golden, bad, d):
    g, f = os.path.join(d, "g.bin"), os.path.join(d, "f.bin")
    write(g, golden)
    write(f, bad)
    r = subprocess.run([sys.executable, os.path.join(HERE, "check.py"), case, str(SM), g, f],
                       capture_output=True, text=True)
    return r.returncode, r.stdout.strip()


def main():
    passed = failed = 0
    with tempfile.TemporaryDirectory() as d:
        for case in ("ira_src", "iio", "ial_ignore", "ial_force"):
            golden, bad = faulty(case)
            rc, line = check(case, golden, bad, d)
            ok = rc == 0 and line.startswith("exact (2 blocks on SM 5")
            # one more word changed: the prediction must notice
            worse = list(bad)
            worse[3] ^= 0x4
            rc2, line2 = check(case, golden, worse, d)
            ok = ok and rc2 == 1 and line2.startswith("MISMATCH")
            # the golden output itself is no faulty output
            rc3, _ = check(case, golden, golden[:-len(smid_log()) * (2 if case in ("ira_src", "iio") else 1)]
                           + bad[len(bad) - len(smid_log()) * (2 if case in ("ira_src", "iio") else 1):], d)
            ok = ok and rc3 == 1
            print("%-10s %s | %s" % (case, "ok" if ok else "FAILED", line))
            passed, failed = passed + ok, failed + (not ok)
        listing = os.path.join(HERE, "micro.sm_90.sass")
        r = subprocess.run([sys.executable, os.path.join(HERE, "check.py"), "sass", listing, listing],
                           capture_output=True, text=True)
        ok = r.returncode == 0 and "5 functions" in r.stdout
        print("sass       %s | %s" % ("ok" if ok else "FAILED", r.stdout.strip()))
        passed, failed = passed + ok, failed + (not ok)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
