#!/usr/bin/env bash
# Rebuild the demo's code object from the emulator's `exceptions` fixture
# source (backend-amd/emulator/fixtures/src/exceptions.hip), as that
# fixture is built (clang-19, gfx942, the same flags: the same code) plus a
# line table, so that `xfpx demo` shows file:line for its findings.
#
#   cli/demo/regen.sh [OUT_DIR]     (default: this directory)
#
# -gline-tables-only rather than -g: clang 19.1.7 crashes on this source
# with -g (in "SI Form memory clauses"); the line table and the inlining
# records it writes are what xfpx reads. The source is compiled from its
# own directory with a relative compilation directory, so the output does
# not depend on where the tree lives.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here}"
out="$(cd "$out" && pwd)"
src="$here/../../backend-amd/emulator/fixtures/src"
cd "$src"
clang-19 -x hip -nogpulib -nogpuinc --cuda-device-only -O3 -cuid=xfpx -c -ffp-contract=off --no-gpu-bundle-output \
  --offload-arch=gfx942 -gline-tables-only -fdebug-compilation-dir=. exceptions.hip -o "$out/exceptions.gfx942.co"
echo "regen: $out/exceptions.gfx942.co"
