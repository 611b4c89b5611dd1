#!/usr/bin/env bash
# Builds the fault-injection micro-kernels (LLVM 19):
#   <target>/micro.co from micro.s for gfx90a and gfx942 (micro.json launches it);
#   <target>/index.co from index.s for gfx908, gfx90a and gfx942 (index.json),
#   with `.set PACKED, 1` where the work-item indices arrive packed in v0.
# Usage: backend-amd/tests/inject/build.sh
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
cd "$HERE"
BUILD="$(mktemp -d)"
trap 'rm -rf "$BUILD"' EXIT
assemble() { # target name prelude-lines...
  local t="$1" name="$2"; shift 2
  mkdir -p "$t"
  { echo ".amdgcn_target \"amdgcn-amd-amdhsa--$t\""; printf '%s\n' "$@"; cat "$name.s"; } > "$BUILD/$name-$t.s"
  clang-19 -target amdgcn-amd-amdhsa -mcpu="$t" -x assembler -c "$BUILD/$name-$t.s" -o "$BUILD/$name-$t.o"
  ld.lld-19 -shared "$BUILD/$name-$t.o" -o "$t/$name.co"
}
for t in gfx90a gfx942; do
  assemble "$t" micro
done
for t in gfx908 gfx90a gfx942; do
  packed=1
  [ "$t" = gfx908 ] && packed=0
  assemble "$t" index ".set PACKED, $packed"
done
