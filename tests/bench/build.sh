#!/usr/bin/env bash
# Builds the benchmark suite into .devout/bench/ at the repository root (or
# $BENCH_OUT): one binary per CUDA program, the generated chemistry
# mechanism, and the PyTorch script. Needs nvcc (CUDA 12.3 or newer);
# NVCC=/path/to/nvcc overrides the one on PATH, BENCH_ARCH the target
# (default sm_90). Rebuilds only what is older than its sources.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${BENCH_OUT:-$root/.devout/bench}
arch=${BENCH_ARCH:-sm_90}
nvcc=${NVCC:-nvcc}
if ! command -v "$nvcc" >/dev/null 2>&1; then
  echo "error: nvcc not found (put it on PATH or set NVCC=/path/to/nvcc)" >&2
  exit 2
fi
nvcc=$(command -v "$nvcc")
cuda=$(cd "$(dirname "$nvcc")/.." && pwd)
libs=()
for d in "$cuda/lib64" "$cuda/lib"; do [ -d "$d" ] && libs+=("-L$d"); done

mkdir -p "$out/gen"
src=$here/src
if [ ! -e "$out/gen/chem_mech.cuh" ] || [ "$src/gen_chem.py" -nt "$out/gen/chem_mech.cuh" ]; then
  python3 "$src/gen_chem.py" "$out/gen/chem_mech.cuh"
fi

programs=(gemm batched_gemm stencil3d reduce_scan ode_chem black_scholes cfd_flux nbody spmv late_nan)
for p in "${programs[@]}"; do
  bin=$out/$p
  if [ -e "$bin" ] && [ "$bin" -nt "$src/$p.cu" ] && [ "$bin" -nt "$src/bench_common.cuh" ] \
     && { [ "$p" != ode_chem ] || [ "$bin" -nt "$out/gen/chem_mech.cuh" ]; }; then
    continue
  fi
  echo "nvcc $p"
  "$nvcc" -arch="$arch" -lineinfo -O3 -std=c++17 -I"$src" -I"$out/gen" "${libs[@]}" -o "$bin" "$src/$p.cu"
done
cp "$src/train_mlp.py" "$out/train_mlp.py"
echo "built ${#programs[@]} programs and train_mlp.py into $out"
