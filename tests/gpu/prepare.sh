#!/usr/bin/env bash
# Runs on the build machine (no GPU needed): builds everything the GPU
# checks need into the git-ignored .devout/ folder at the repository root:
#   .devout/gpu-suite/bin/xfpx               release CLI
#   .devout/gpu-suite/bin/libxfpx_nvbit.so   NVBit tool (found by xfpx beside itself)
#   .devout/gpu-suite/suite/                 the suite's programs
# Then, on the GPU machine, with .devout/gpu-suite (and third_party/nvbit,
# to build what is missing there) present:
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

tool_script="$root/backend-nvidia/build-tool.sh"
export NVBIT_PATH="${NVBIT_PATH:-$root/third_party/nvbit}"
if [[ ! -f "$tool_script" ]]; then
    echo "prepare: backend-nvidia/build-tool.sh does not exist yet; no NVBit tool built" >&2
    status=1
elif [[ ! -f "$NVBIT_PATH/libnvbit.a" ]]; then
    echo "prepare: NVBit not found in $NVBIT_PATH (libnvbit.a); no NVBit tool built" >&2
    status=1
else
    echo "prepare: building the NVBit tool"
    stamp="$(mktemp)"
    if bash "$tool_script"; then
        lib="$(find "$root/backend-nvidia" "$root/target" -name libxfpx_nvbit.so -newer "$stamp" 2>/dev/null | head -n1)"
        [[ -z "$lib" ]] && lib="$(find "$root/backend-nvidia" "$root/target" -name libxfpx_nvbit.so 2>/dev/null | head -n1)"
        if [[ -n "$lib" ]]; then
            cp "$lib" "$out/bin/libxfpx_nvbit.so"
        else
            echo "prepare: build-tool.sh ran but no libxfpx_nvbit.so was found" >&2
            status=1
        fi
    else
        echo "prepare: build-tool.sh failed" >&2
        status=1
    fi
    rm -f "$stamp"
fi

echo "prepare: building the suite"
bash "$here/build-suite.sh" "$out/suite" || status=1
du -sh "$out" "$NVBIT_PATH" 2>/dev/null
exit $status
