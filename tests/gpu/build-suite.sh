#!/usr/bin/env bash
# Builds the GPU suite's CUDA programs into OUTDIR (default: .devout/gpu-suite/suite
# at the repository root) with the flags the expected-findings files assume:
# -lineinfo -arch=sm_90 -O3. Compiles from inside src/ so that the line
# tables name files relative to it (fpx_basic.cu, not an absolute path).
# Needs nvcc on PATH (or CUDA_HOME/bin/nvcc).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/.devout/gpu-suite/suite}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

nvcc_bin="$(command -v nvcc || true)"
if [[ -z "$nvcc_bin" && -n "${CUDA_HOME:-}" && -x "$CUDA_HOME/bin/nvcc" ]]; then
    nvcc_bin="$CUDA_HOME/bin/nvcc"
fi
if [[ -z "$nvcc_bin" ]]; then
    echo "build-suite: nvcc not found (put CUDA's bin directory on PATH or set CUDA_HOME)" >&2
    exit 1
fi
cuda_root="$(cd "$(dirname "$nvcc_bin")/.." && pwd)"
# pip-installed CUDA keeps its libraries in lib/, a toolkit in lib64/
libflags=()
for d in "$cuda_root/lib64" "$cuda_root/lib"; do
    [[ -d "$d" ]] && libflags+=("-L$d")
done

flags=(-lineinfo -arch=sm_90 -O3)
cd "$here/src"
pids=()
for src in *.cu; do
    prog="${src%.cu}"
    "$nvcc_bin" "${flags[@]}" "${libflags[@]}" -o "$out/$prog" "$src" &
    pids+=($!)
    # at most two compilers at a time
    if (( ${#pids[@]} >= ${XFPX_BUILD_JOBS:-2} )); then
        wait "${pids[0]}"
        pids=("${pids[@]:1}")
    fi
done
for p in "${pids[@]}"; do wait "$p"; done
cp torch_matmul_nan.py torch_compile_nan.py torch_half_gemm.py "$out/"
echo "build-suite: built $(ls "$out" | wc -l) programs into $out"
