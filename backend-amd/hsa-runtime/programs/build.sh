#!/usr/bin/env bash
# Rebuilds the code objects of the HSA programs' kernels from kernels/*.hip:
#   <target>/<name>.co for gfx90a and gfx942 (clang-19, -O2 -g; TOOLS.txt
#   records the compiler version that made the committed ones).
# Compiled inside kernels/ with relative paths and a fixed debug compilation
# directory and cuid, so that the objects do not depend on where the tree lives.
# Usage: backend-amd/hsa-runtime/programs/build.sh [OUT_DIR]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="${1:-$HERE}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
FLAGS=(-x hip -nogpulib -nogpuinc --cuda-device-only --no-gpu-bundle-output -c -O2 -g
       -fdebug-compilation-dir=. -cuid=xfpx -ffp-contract=off)
cd "$HERE/kernels"
for t in gfx90a gfx942; do
  mkdir -p "$OUT/$t"
  for src in *.hip; do
    clang-19 "${FLAGS[@]}" --offload-arch="$t" "$src" -o "$OUT/$t/${src%.hip}.co"
  done
done
