#!/usr/bin/env bash
# The README's NVIDIA install, as a new user runs it, on the GPU machine:
# the `xfpx` binary that `cargo install --path cli` builds (built on the
# build machine and carried, as the GPU machine has no Rust toolchain) is
# put in an empty bin folder, then `xfpx setup nvidia --nvbit TARBALL`
# builds and installs the tool library beside it. The GPU suite scripts then
# use that folder (.devout/gpu-suite/bin). Prints the setup's output and
# PASS/FAIL last; logs under $OUT.
#
#   XFPX_RELEASE=target/release/xfpx        the binary `cargo install` built
#   NVBIT_TARBALL=third_party/nvbit-Linux-x86_64-1.7.7.1.tar.bz2
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/install-check-out}"
mkdir -p "$out"
release="${XFPX_RELEASE:-$root/target/release/xfpx}"
tarball="${NVBIT_TARBALL:-$root/third_party/nvbit-Linux-x86_64-1.7.7.1.tar.bz2}"
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [[ -n "$d" && -x "$d/bin/nvcc" ]]; then export PATH="$d/bin:$PATH"; break; fi
done
bin="$root/.devout/gpu-suite/bin"
if [[ ! -x "$release" || ! -f "$tarball" ]]; then
    echo "install-check: FAIL: missing $release or $tarball"
    exit 1
fi
rm -rf "$bin" && mkdir -p "$bin"
cp "$release" "$bin/xfpx"
start=$SECONDS
echo "\$ xfpx setup nvidia --nvbit $(basename "$tarball")"
"$bin/xfpx" setup nvidia --nvbit "$tarball" 2>&1 | tee "$out/setup.log"
code=${PIPESTATUS[0]}
echo "setup: exit $code in $(( SECONDS - start )) s"
ls -la "$bin" | tee -a "$out/setup.log"
if [[ $code == 0 && -f "$bin/libxfpx_nvbit.so" ]]; then
    echo "install-check: PASS"
else
    echo "install-check: FAIL"
    exit 1
fi
