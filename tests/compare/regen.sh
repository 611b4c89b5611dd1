#!/usr/bin/env bash
# Regenerates the code objects `xfpx compare` is tested on, from denorm.hip:
#   <target>/denorm_keep.co   denormals kept (clang's default)
#   <target>/denorm_flush.co  -fgpu-flush-denormals-to-zero
# for gfx90a and gfx942 (clang-19, -O3 -g, FP contraction off), each with
# llvm-objdump's listing beside it. Deterministic: fixed -cuid, relative
# debug paths. Usage: tests/compare/regen.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
cd "$HERE"
FLAGS=(-x hip -nogpulib -nogpuinc --cuda-device-only --no-gpu-bundle-output -O3 -g
       -fdebug-compilation-dir=. -ffp-contract=off -cuid=xfpx -c)
for t in gfx90a gfx942; do
  mkdir -p "$t"
  clang-19 "${FLAGS[@]}" --offload-arch="$t" denorm.hip -o "$t/denorm_keep.co"
  clang-19 "${FLAGS[@]}" --offload-arch="$t" -fgpu-flush-denormals-to-zero denorm.hip -o "$t/denorm_flush.co"
  for v in keep flush; do
    llvm-objdump-19 -d --mcpu="$t" "$t/denorm_$v.co" | sed 1,2d | grep -v "s_nop 0" > "$t/denorm_$v.objdump"
  done
done
clang-19 --version | head -n1 > TOOLS.txt
