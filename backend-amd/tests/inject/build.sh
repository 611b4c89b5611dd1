#!/usr/bin/env bash
# Builds the fault-injection micro-kernel for gfx90a and gfx942 (LLVM 19):
#   <target>/micro.co from micro.s (micro.json launches it).
# Usage: backend-amd/tests/inject/build.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
cd "$HERE"
BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT
for t in gfx90a gfx942; do
  mkdir -p "$t"
  { echo ".amdgcn_target \"amdgcn-amd-amdhsa--$t\""; cat micro.s; } > "$BUILD/micro-$t.s"
  clang-19 -target amdgcn-amd-amdhsa -mcpu="$t" -x assembler -c "$BUILD/micro-$t.s" -o "$BUILD/micro-$t.o"
  ld.lld-19 -shared "$BUILD/micro-$t.o" -o "$t/micro.co"
done
