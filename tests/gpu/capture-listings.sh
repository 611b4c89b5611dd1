#!/usr/bin/env bash
# Captures the SASS of the suite into listings/ for tests that run without
# a GPU: <prog>.sass is `cuobjdump -sass <prog>` as printed, and
# <prog>.lines.sass is `nvdisasm -gi -c` of its sm_90 cubin (SASS with the
# source line of every instruction, inlining included). The CUDA install
# directory is written as <cuda> so the files do not depend on this machine.
# many_sites is cut to three of its kernels (the full listing is tens of
# megabytes); its floating-point instruction count is kept in
# listings/many_sites.fp-count.
#
#   CUDA_HOME=/path/to/cuda bash tests/gpu/capture-listings.sh [BUILD_DIR]
#
# BUILD_DIR defaults to a fresh build by build-suite.sh; LISTINGS_OUT=DIR
# writes elsewhere (the suite's test compares such a capture with listings/).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin_dir="${CUDA_HOME:+$CUDA_HOME/bin}"
if [[ -z "$bin_dir" ]]; then bin_dir="$(dirname "$(command -v nvcc)")"; fi
export PATH="$bin_dir:$PATH"
cuda_root="$(cd "$bin_dir/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
build="${1:-}"
if [[ -z "$build" ]]; then
    build="$work/build"
    bash "$here/build-suite.sh" "$build" >/dev/null
fi
build="$(cd "$build" && pwd)"
out="${LISTINGS_OUT:-$here/listings}"
mkdir -p "$out"

sanitize() { sed -e "s#$cuda_root/bin/\.\./*#<cuda>/#g" -e "s#$cuda_root/#<cuda>/#g" -e "s#$here/src/##g"; }

for exe in "$build"/*; do
    prog="$(basename "$exe")"
    [[ "$prog" == *.py ]] && continue
    funs=()
    if [[ "$prog" == many_sites ]]; then
        funs=(-fun many_00,many_overflow,many_subnormal)
        cuobjdump -sass "$exe" \
            | grep -cE '^\s+/\*[0-9a-f]{4,}\*/\s+(@!?U?P[0-9T] )?\s*(F|D|H)(ADD|MUL|FMA|SETP|MNMX|SEL|CHK)|MUFU' \
            > "$out/many_sites.fp-count"
    fi
    cuobjdump -sass "${funs[@]}" "$exe" 2>/dev/null | sanitize > "$out/$prog.sass"
    (cd "$work" && rm -f ./*.cubin && cuobjdump -xelf all "$exe" >/dev/null)
    cubin="$(ls "$work"/*.sm_90.cubin | head -n1)"
    if [[ "$prog" == many_sites ]]; then
        # keep the same three kernels: split the full listing at .text sections
        nvdisasm -gi -c "$cubin" | sanitize | awk '
            /^\t*\.section\t*\.text\./ { keep = ($0 ~ /\.text\.(many_00|many_overflow|many_subnormal)[,\t ]/) }
            keep' > "$out/$prog.lines.sass"
    else
        nvdisasm -gi -c "$cubin" | sanitize > "$out/$prog.lines.sass"
    fi
done
nvcc --version | tail -n 2 > "$out/TOOLCHAIN"
echo "capture-listings: wrote $(ls "$out" | wc -l) files to $out"
