#!/usr/bin/env bash
# Builds the cross-vendor programs' AMD device code, as a HIP user gets it:
# clang-19 -x hip with HIP's headers (Debian's libamdhip64-dev, /usr/include/hip)
# and the ROCm device libraries (Debian's rocm-device-libs: ocml, ockl and
# the oclc control libraries, denormals kept, unsafe math off), -O3 -g,
# FP contraction at HIP's default. Writes, for gfx90a and gfx942:
#   <target>/<program>.co       the code object
#   <target>/<program>.objdump  llvm-objdump's listing of it
# and TOOLS.txt (compiler and device-library versions). Deterministic:
# fixed -cuid, relative debug paths (the line tables name xv_basic.cu, as
# the NVIDIA build's do).
# ROCm 5.2's device libraries predate gfx942: its ISA-version library is
# made here from gfx940's with the version number 9402.
# Usage: tests/xvendor/build-amd.sh [OUT_DIR]   (default: this folder;
#        ROCM_DEVICE_LIBS=DIR names the bitcode folder)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
libs="${ROCM_DEVICE_LIBS:-}"
for d in /usr/lib/x86_64-linux-gnu/amdgcn/bitcode /opt/rocm/amdgcn/bitcode; do
  [[ -z "$libs" && -f "$d/ocml.bc" ]] && libs="$d"
done
if [[ -z "$libs" || ! -f "$libs/ocml.bc" ]]; then
  echo "error: build-amd.sh: no ROCm device libraries (apt-get install rocm-device-libs, or set ROCM_DEVICE_LIBS)" >&2
  exit 1
fi
if [[ ! -f /usr/include/hip/hip_runtime.h ]]; then
  echo "error: build-amd.sh: no HIP headers in /usr/include/hip (apt-get install libamdhip64-dev)" >&2
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/bitcode"
ln -s "$libs"/*.bc "$work/bitcode/"
if [[ ! -e "$work/bitcode/oclc_isa_version_942.bc" ]]; then
  llvm-dis-19 "$libs/oclc_isa_version_940.bc" -o - | sed 's/i32 9400/i32 9402/' |
    llvm-as-19 - -o "$work/bitcode/oclc_isa_version_942.bc"
fi
programs=(xv_basic xv_intrinsics xv_sgemm)
flags=(-x hip --hip-path=/usr --rocm-device-lib-path="$work/bitcode" --cuda-device-only --no-gpu-bundle-output
       -O3 -g -fdebug-compilation-dir=. -cuid=xfpx -c)
for t in gfx90a gfx942; do
  mkdir -p "$out/$t"
  for p in "${programs[@]}"; do
    (cd "$here/src" && clang-19 "${flags[@]}" --offload-arch="$t" "$p.cu" -o "$out/$t/$p.co")
    llvm-objdump-19 -d --mcpu="$t" "$out/$t/$p.co" | sed 1,2d | grep -v "s_nop 0" > "$out/$t/$p.objdump"
  done
done
{
  clang-19 --version | head -n1
  echo "rocm-device-libs $(dpkg-query -W -f='${Version}' rocm-device-libs 2>/dev/null || echo unknown)"
  echo "libamdhip64-dev $(dpkg-query -W -f='${Version}' libamdhip64-dev 2>/dev/null || echo unknown)"
} > "$out/TOOLS.txt"
echo "build-amd: ${#programs[@]} programs for gfx90a and gfx942 in $out"
