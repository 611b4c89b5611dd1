#!/usr/bin/env bash
# Builds the applications' CUDA programs into OUTDIR (default: .devout/apps at
# the repository root): nvcc -arch=sm_90 -O3 -lineinfo, FP contraction off in
# device and host code (--fmad=false, -ffp-contract=off) so that the results
# equal the host references bit for bit (the kernels write their fused
# multiply-adds explicitly). Compiles from inside src/ so that the line
# tables name fft.cu, not an absolute path. Needs nvcc on PATH (or
# CUDA_HOME/bin/nvcc); APPS_ARCH overrides the target (default sm_90).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${1:-$root/.devout/apps}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

nvcc_bin="$(command -v nvcc || true)"
if [[ -z "$nvcc_bin" && -n "${CUDA_HOME:-}" && -x "$CUDA_HOME/bin/nvcc" ]]; then
    nvcc_bin="$CUDA_HOME/bin/nvcc"
fi
if [[ -z "$nvcc_bin" ]]; then
    echo "error: apps build: nvcc not found (put CUDA's bin directory on PATH or set CUDA_HOME)" >&2
    exit 1
fi
cuda_root="$(cd "$(dirname "$nvcc_bin")/.." && pwd)"
libflags=()
for d in "$cuda_root/lib64" "$cuda_root/lib"; do
    [[ -d "$d" ]] && libflags+=("-L$d")
done

apps=(fft gray matmul reduce sobel sort transpose)
flags=(-arch="${APPS_ARCH:-sm_90}" -O3 -lineinfo -std=c++17 --fmad=false -Xcompiler -ffp-contract=off)
cd "$here/src"
pids=()
for app in "${apps[@]}"; do
    "$nvcc_bin" "${flags[@]}" "${libflags[@]}" -o "$out/$app" "$app.cu" &
    pids+=($!)
    if (( ${#pids[@]} >= ${XFPX_BUILD_JOBS:-4} )); then
        wait "${pids[0]}"
        pids=("${pids[@]:1}")
    fi
done
for p in "${pids[@]}"; do wait "$p"; done
echo "apps build: built ${#apps[@]} programs into $out"
