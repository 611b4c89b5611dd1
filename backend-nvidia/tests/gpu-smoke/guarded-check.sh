#!/usr/bin/env bash
# On a GPU machine: builds guarded.cu and runs it under `xfpx run` in
# detect mode (one call per check, each at its own instruction) and in
# fast mode (checks of guarded instructions grouped with their guard), and
# compares what each reports per instruction. Fast mode must report the
# same kinds at every instruction as detect mode, the guarded
# multiplication `inf` and never `nan` (the stale NaN of the lanes whose
# guard was false), and must have grouped a guarded check (the dump shows
# it). Exit status 0 when all hold. Output under $OUT (default ./guarded-out).
#
#   XFPX=/path/to/xfpx bash backend-nvidia/tests/gpu-smoke/guarded-check.sh
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="${OUT:-$PWD/guarded-out}"
mkdir -p "$out"
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
xfpx="${XFPX:-$root/.devout/gpu-suite/bin/xfpx}"
nvcc -arch=sm_90 -lineinfo -O2 -o "$out/guarded" "$here/guarded.cu" > "$out/build.log" 2>&1 || { cat "$out/build.log"; exit 1; }
for mode in detect fast; do
    XFPX_NVDISASM_CACHE=0 "$xfpx" run --mode "$mode" --report "$out/$mode.json" --dump "$out/dump-$mode" -- "$out/guarded" \
        > "$out/$mode.log" 2>&1 || { echo "guarded-check: xfpx run --mode $mode failed"; cat "$out/$mode.log"; exit 1; }
done
python3 - "$out" <<'EOF'
import glob, json, re, sys
out = sys.argv[1]
def kinds(mode):
    rep = json.load(open("%s/%s.json" % (out, mode)))
    per = {}
    for k in rep["kernels"]:
        for r in k.get("records", []):
            s = r["site"]
            per.setdefault((s["offset"], s["instr"]), set()).add(r["kind"])
    return per
detect, fast = kinds("detect"), kinds("fast")
ok = True
for key in sorted(set(detect) | set(fast)):
    d, f = sorted(detect.get(key, ())), sorted(fast.get(key, ()))
    print("%#06x %-32s detect %-12s fast %s" % (key[0], key[1], ",".join(d) or "-", ",".join(f) or "-"))
    ok &= d == f
guarded = [k for k in set(detect) | set(fast) if k[1].startswith("@P") and "FMUL" in k[1]]
for key in guarded:
    ks = fast.get(key, set())
    if "nan" in ks or "inf" not in ks:
        print("guarded-check: %s reports %s in fast mode (want inf, no nan)" % (key[1], sorted(ks)))
        ok = False
# a grouped call with a slot whose meta (the constant's high word) has
# the guarded bit (19)
calls = [l for p in glob.glob(out + "/dump-fast/*") for l in open(p) if "values3(preds" in l]
consts = [int(c, 16) for l in calls for c in re.findall(r"0x[0-9a-f]+", l)]
grouped = any((c >> 32) & (1 << 19) for c in consts)
if not guarded or not grouped:
    print("guarded-check: no guarded multiplication was grouped (found %d guarded sites; grouped call %s)"
          % (len(guarded), "present" if grouped else "absent"))
    ok = False
print("guarded-check: %s" % ("PASS" if ok else "FAIL"))
sys.exit(0 if ok else 1)
EOF
