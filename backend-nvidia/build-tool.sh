#!/usr/bin/env bash
# Build the xfpx NVBit tool, libxfpx_nvbit.so, into target/nvbit-tool/
# (or $XFPX_TOOL_OUT), from the source tree. A thin wrapper over
# `xfpx setup nvidia`, which holds the build steps and the checks:
#
#   NVBIT_PATH=/path/to/nvbit/core ./backend-nvidia/build-tool.sh
#
# Environment: NVBIT_PATH (NVBit 1.7.7.1: its core directory, or the
# release tarball), XFPX_ARCH (GPU targets, e.g. sm_90 or sm_90,sm_80;
# default: this machine's GPUs), XFPX (an xfpx binary to run instead of
# building one with cargo; a release build carries the tool's Rust core),
# XFPX_STATICLIB (a prebuilt libxfpx_nvbit.a to link; without it and
# without XFPX, cargo builds one), CARGO (default cargo); nvcc is found
# through NVCC, CUDA_HOME or PATH.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${XFPX_TOOL_OUT:-$root/target/nvbit-tool}"

if [ -z "${NVBIT_PATH:-}" ]; then
    echo "build-tool.sh: NVBit not found: set NVBIT_PATH to NVBit 1.7.7.1's core directory or release tarball (https://github.com/NVlabs/NVBit/releases)" >&2
    exit 2
fi
if [ -n "${XFPX:-}" ]; then
    xfpx="$XFPX"
else
    cargo="${CARGO:-cargo}"
    if ! command -v "$cargo" >/dev/null 2>&1; then
        echo "build-tool.sh: cargo not found: set XFPX to an xfpx binary (a release build carries the tool's Rust core)" >&2
        exit 2
    fi
    "$cargo" build -q -p xfpx --manifest-path "$root/Cargo.toml"
    xfpx="$root/target/debug/xfpx"
    if [ -z "${XFPX_STATICLIB:-}" ]; then
        "$cargo" build -q --release --lib -p xfpx-nvbit --manifest-path "$root/Cargo.toml"
        export XFPX_STATICLIB="$root/target/release/libxfpx_nvbit.a"
    fi
fi
mkdir -p "$out"
exec "$xfpx" setup nvidia --nvbit "$NVBIT_PATH" --dest "$out" ${XFPX_ARCH:+--arch "$XFPX_ARCH"}
