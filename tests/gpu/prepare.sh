#!/usr/bin/env bash
# Runs on the build machine (no GPU needed): builds everything the GPU
# checks need into the git-ignored .devout/ folder at the repository root:
#   .devout/gpu-suite/bin/xfpx               release CLI
#   .devout/gpu-suite/bin/libxfpx_nvbit.so   NVBit tool (found by xfpx beside itself)
#   .devout/gpu-suite/suite/                 the suite's programs
# Then, on the GPU machine, with .devout/gpu-suite (and third_party/nvbit,
# for `xfpx setup nvidia` to build the tool there if it is missing) present:
#   bash tests/gpu/run-gpu-checks.sh
# Needs cargo, nvcc (on PATH or CUDA_HOME=...) and NVBit in third_party/nvbit
# (or NVBIT_PATH=...). Missing pieces are reported, and the rest is built.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
out="$root/.devout/gpu-suite"
mkdir -p "$out/bin" "$out/suite"
if [[ -n "${CUDA_HOME:-}" ]]; then export PATH="$CUDA_HOME/bin:$PATH"; fi
status=0

echo "prepare: building the release xfpx binary"
if cargo build --release -q -p xfpx; then
    cp target/release/xfpx "$out/bin/xfpx"
else
    echo "prepare: cargo build of xfpx failed" >&2
    status=1
fi

export NVBIT_PATH="${NVBIT_PATH:-$root/third_party/nvbit}"
if [[ ! -x "$out/bin/xfpx" ]]; then
    echo "prepare: no xfpx binary; no NVBit tool built" >&2
    status=1
else
    # the release xfpx carries the tool's Rust core; the GPU machine is an H100
    echo "prepare: building the NVBit tool (xfpx setup nvidia)"
    "$out/bin/xfpx" setup nvidia --nvbit "$NVBIT_PATH" --arch "${XFPX_ARCH:-sm_90}" || status=1
fi

echo "prepare: building the suite"
bash "$here/build-suite.sh" "$out/suite" || status=1
du -sh "$out" "$NVBIT_PATH" 2>/dev/null
exit $status
