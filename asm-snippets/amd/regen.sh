#!/bin/sh
# Assembles every <target>-<name>.s of this folder into <target>-<name>.bin
# (the raw bytes of its .text) with LLVM's assembler. The .s files are the
# trampolines the AMD rewriter emits for chosen corpus kernels, written by
#   XFPX_BLESS=1 cargo test -p xfpx-amd --test rewrite_snippets
# and the tests check that the rewriter's bytes equal the assembler's.
# Usage: regen.sh [OUT_DIR]   (default: in place)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
mc=${LLVM_MC:-llvm-mc-19}
objcopy=${LLVM_OBJCOPY:-llvm-objcopy-19}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in "$here"/*.s; do
    base=$(basename "$s" .s)
    target=${base%%-*}
    "$mc" -triple=amdgcn-amd-amdhsa -mcpu="$target" -filetype=obj -o "$tmp/$base.o" "$s"
    "$objcopy" -O binary --only-section=.text "$tmp/$base.o" "$out/$base.bin"
done
