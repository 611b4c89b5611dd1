#!/usr/bin/env bash
# Regenerates the applications' AMD fixtures from ../src/*.cu:
#   <target>/<app>.co       device code object (clang-19, -O3 -g, FP contraction
#                           off), for gfx90a and gfx942
#   <target>/<app>.objdump  llvm-objdump's listing of it
#   launches/<name>.json, launches/<name>.expect.json, data/*.bin
#                           emulator launches, their inputs and expected
#                           outputs (gen.cpp: the applications' host
#                           references, never the emulator)
# Usage: tests/apps/amd/regen.sh [OUT_DIR]   (default: this directory)
# The output is deterministic (fixed -cuid, relative debug paths): a rerun
# with the clang in TOOLS.txt reproduces every file byte for byte.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SRC="$(cd "$HERE/../src" && pwd)"
OUT="${1:-$HERE}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
TARGETS=(gfx90a gfx942)
APPS=(fft gray matmul reduce sobel sort transpose)
DEVICE_FLAGS=(-x hip -nogpulib -nogpuinc --cuda-device-only --no-gpu-bundle-output -O3 -g
              -fdebug-compilation-dir=. -ffp-contract=off -cuid=xfpx -c)
for t in "${TARGETS[@]}"; do
  mkdir -p "$OUT/$t"
  for app in "${APPS[@]}"; do
    # Compiled from src/ with a relative path: the line tables name fft.cu,
    # not where the tree lives.
    (cd "$SRC" && clang-19 "${DEVICE_FLAGS[@]}" --offload-arch="$t" "$app.cu" -o "$OUT/$t/$app.co")
    llvm-objdump-19 -d --mcpu="$t" "$OUT/$t/$app.co" | sed 1,2d > "$OUT/$t/$app.objdump"
  done
done
BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT
clang++-19 -std=c++17 -O1 -ffp-contract=off -fno-fast-math -I "$SRC" "$HERE/gen.cpp" -o "$BUILD/gen"
rm -rf "$OUT/launches" "$OUT/data"
(cd "$OUT" && "$BUILD/gen")
clang-19 --version | head -n1 > "$OUT/TOOLS.txt"
