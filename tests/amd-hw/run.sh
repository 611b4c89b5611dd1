#!/usr/bin/env bash
# The AMD hardware check of `xfpx run --vendor amd`, for a ROCm machine with
# an MI200 (gfx90a) or MI300 (gfx942) GPU. One command, from the source tree:
#
#   tests/amd-hw/run.sh [OUT_DIR]        # default .devout/amd-hw
#
# It builds xfpx and its HSA tool library (cargo, release; or takes XFPX=path
# of an installed xfpx whose `xfpx setup amd` was run), the HSA programs of
# backend-amd/hsa-runtime/programs (gcc against ROCm's libhsa-runtime64, the
# committed code objects for the GPU) and tests/amd-hw/hip_fpe.hip (hipcc),
# runs each alone and under `xfpx run --vendor amd --sample 1`, and prints,
# per program, the expected findings against the found ones (check.py).
# Exit 0 only when every program behaves the same with and without xfpx and
# xfpx finds exactly the known findings. See tests/amd-hw/README.md.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
OUT="${1:-$ROOT/.devout/amd-hw}"
ROCM="${ROCM_PATH:-/opt/rocm}"
PROGRAMS="$ROOT/backend-amd/hsa-runtime/programs"

die() {
  echo "amd-hw: error: $*" >&2
  exit 1
}
say() { echo "amd-hw: $*"; }

# What the machine needs, each missing piece said in one line.
[ -e /dev/kfd ] || die "/dev/kfd is missing: this check needs the ROCm driver and an AMD GPU"
command -v gcc >/dev/null || die "gcc is missing"
command -v python3 >/dev/null || die "python3 is missing"
[ -f "$ROCM/include/hsa/hsa.h" ] || die "$ROCM/include/hsa/hsa.h is missing (set ROCM_PATH to the ROCm install)"
ls "$ROCM"/lib/libhsa-runtime64.so* >/dev/null 2>&1 || die "$ROCM/lib has no libhsa-runtime64.so (set ROCM_PATH)"
HIPCC="${HIPCC:-$ROCM/bin/hipcc}"
[ -x "$HIPCC" ] || HIPCC="$(command -v hipcc || true)"
[ -n "$HIPCC" ] || die "hipcc is missing (set HIPCC)"
ROCMINFO="$ROCM/bin/rocminfo"
[ -x "$ROCMINFO" ] || ROCMINFO="$(command -v rocminfo || true)"
[ -n "$ROCMINFO" ] || die "rocminfo is missing"
GPU="$("$ROCMINFO" | grep -o -m1 'gfx9[0-9a-f]*' || true)"
case "$GPU" in
  gfx90a | gfx942) ;;
  "") die "rocminfo names no gfx9 GPU" ;;
  *) die "the GPU is $GPU; the programs' code objects are for gfx90a (MI200) and gfx942 (MI300)" ;;
esac

mkdir -p "$OUT"
if [ -n "${XFPX:-}" ]; then
  [ -x "$XFPX" ] || die "XFPX=$XFPX is not an executable"
else
  command -v cargo >/dev/null || die "cargo is missing: install Rust, or give XFPX=path of an xfpx after \`xfpx setup amd\`"
  say "building xfpx and the HSA tool library (cargo build --release)"
  (cd "$ROOT" && cargo build --release --quiet -p xfpx -p xfpx-hsa-tool) || die "cargo build failed"
  XFPX="$ROOT/target/release/xfpx"
fi
say "GPU $GPU; xfpx $("$XFPX" --version); results in $OUT"

# The programs.
for p in vector_add reduce multi fpe unrewritable; do
  gcc -std=c11 -O1 -I"$ROCM/include" -I"$PROGRAMS/src" "$PROGRAMS/src/$p.c" -o "$OUT/$p" \
    -L"$ROCM/lib" -Wl,-rpath,"$ROCM/lib" -lhsa-runtime64 -lm || die "gcc failed on $p.c"
done
"$HIPCC" -O2 -g --offload-arch="$GPU" "$HERE/hip_fpe.hip" -o "$OUT/hip_fpe" || die "hipcc failed on hip_fpe.hip"

# Each program alone, then under xfpx; then expected against found.
failed=0
check() {
  local name="$1" expect="$2"
  shift 2
  set +e
  "$@" >"$OUT/$name.plain.out" 2>"$OUT/$name.plain.err"
  echo $? >"$OUT/$name.plain.rc"
  "$XFPX" run --vendor amd --sample 1 --report "$OUT/$name.json" -- "$@" \
    >"$OUT/$name.xfpx.out" 2>"$OUT/$name.xfpx.err"
  echo $? >"$OUT/$name.xfpx.rc"
  set -e
  echo "== $name"
  python3 "$HERE/check.py" "$OUT" "$name" "$expect" || {
    failed=$((failed + 1))
    echo "  (xfpx's stderr: $OUT/$name.xfpx.err)"
  }
}
check vector_add none "$OUT/vector_add" "$PROGRAMS"
check reduce none "$OUT/reduce" "$PROGRAMS"
check multi none "$OUT/multi" "$PROGRAMS"
check fpe "$PROGRAMS/kernels/fpe.expect.json" "$OUT/fpe" "$PROGRAMS"
check unrewritable skipped "$OUT/unrewritable" "$PROGRAMS"
check hip_fpe "$HERE/hip_fpe.expect.json" "$OUT/hip_fpe"

if [ "$failed" -ne 0 ]; then
  echo "amd-hw: FAILED: $failed of 6 programs (details above; reports and outputs in $OUT)" >&2
  exit 1
fi
say "all 6 programs ok"
