#!/usr/bin/env bash
# Builds device code objects of the fetched HIP code (fetch.sh) and of the
# project's own fixtures in those styles (fixtures/src) for the measurement:
# every target and variant, one code object per translation unit that
# defines a kernel (the fixtures' library: one object linked from its
# translation units).
#
#   tests/realcode/build.sh [--src DIR] [--out DIR] [--jobs N] [--sets a,b] [--targets t,u] [--variants v,w]
#
# --src DIR   the fetched sets (default third_party/realcode/src)
# --out DIR   where OUT/TARGET/VARIANT/SET/FILE.co go (default
#             third_party/realcode/build); OUT/build.log has one line per
#             compile: `ok` or `skip` with the compiler's first error
# --jobs N    parallel compiles (default: the number of processors)
# --keep      keep objects built before (a resumed build)
# --sets, --targets, --variants: subsets (default: every set of sources.txt
#             plus `fixtures`; gfx908,gfx90a,gfx942,gfx950; O0,O3,fast)
#
# Targets: gfx908, gfx90a, gfx942 with clang-19, gfx950 with clang-22 (a
# target whose compiler is missing is one line and skipped). Variants: -O0,
# -O3, -O3 -ffast-math. HIP headers and device libraries are Debian's ROCm
# 5.2 (libamdhip64-dev, rocm-device-libs): those predate gfx942 and gfx950,
# whose ISA-version library is the gfx940 one (a copy of the library folder
# under OUT adds the two names); gfx950 objects are code object v5 (ROCm 5.2
# has no v6 ABI library) and clang-22 gets the wavefront-size macro the 5.2
# headers expect and links two 5.2 libraries it no longer links itself. A
# translation unit that does not compile is one `skip` line in the log and
# counted, never fatal.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
src="$root/third_party/realcode/src"
out="$root/third_party/realcode/build"
jobs="$(nproc)"
keep="" sets="" targets="gfx908,gfx90a,gfx942,gfx950" variants="O0,O3,fast"
while (($#)); do
  case "$1" in
    --src) src="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --sets) sets="$2"; shift 2 ;;
    --targets) targets="$2"; shift 2 ;;
    --variants) variants="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "error: build.sh: unknown argument $1 (see --help)" >&2; exit 1 ;;
  esac
done
if [[ -z "$sets" ]]; then
  sets="$(awk '!/^#/ && NF && $1 != "+" { printf "%s,", $1 }' "$here/sources.txt")fixtures"
fi
mkdir -p "$out"
out="$(cd "$out" && pwd)"

bitcode=""
for d in /usr/lib/x86_64-linux-gnu/amdgcn/bitcode /usr/lib/amdgcn/bitcode /opt/rocm/amdgcn/bitcode; do
  [[ -f "$d/ocml.bc" ]] && bitcode="$d" && break
done
if [[ -z "$bitcode" || ! -f /usr/include/hip/hip_runtime.h ]]; then
  echo "error: build.sh: needs rocm-device-libs and libamdhip64-dev (ROCm device libraries and HIP headers)" >&2
  exit 1
fi
devlibs="$out/device-libs"
rm -rf "$devlibs"
mkdir -p "$devlibs"
ln -s "$bitcode"/*.bc "$devlibs/"
for isa in 942 950; do
  [[ -e "$devlibs/oclc_isa_version_$isa.bc" ]] || ln -s "$bitcode/oclc_isa_version_940.bc" "$devlibs/oclc_isa_version_$isa.bc"
done

# One compile: TARGET VARIANT SET SOURCE (relative to the set) OUTPUT
# INCLUDES [FLAG...] (the flags of sources.txt's `+` lines).
compile_one() {
  local t="$1" v="$2" set="$3" file="$4" obj="$5" includes="$6"
  shift 6
  local cc=clang-19 flags=("$@") CLANG22_FLAGS
  read -r -a CLANG22_FLAGS <<< "$CLANG22_FLAGS_TEXT"
  [[ "$t" == gfx950 ]] && cc=clang-22 && flags+=("${CLANG22_FLAGS[@]}")
  case "$v" in
    O0) flags+=(-O0) ;;
    O3) flags+=(-O3) ;;
    fast) flags+=(-O3 -ffast-math) ;;
  esac
  local setdir="$SRC/$set" inc=()
  [[ "$set" == fixtures ]] && setdir="$FIXTURES"
  inc+=(-I "$(dirname "$setdir/$file")")
  local i
  for i in ${includes//,/ }; do [[ "$i" == - ]] || inc+=(-I "$setdir/$i"); done
  mkdir -p "$(dirname "$obj")"
  if [[ -n "$KEEP" && -f "$obj" ]]; then echo "ok $t $v $set $file"; return; fi
  local err
  if err="$("$cc" -x hip --offload-arch="$t" --cuda-device-only --no-gpu-bundle-output -c -cuid=xfpx -std=c++17 -w \
      --rocm-path=/usr --rocm-device-lib-path="$DEVLIBS" "${flags[@]}" "${inc[@]}" "$setdir/$file" -o "$obj" 2>&1)"; then
    echo "ok $t $v $set $file"
  else
    rm -f "$obj"
    echo "skip $t $v $set $file: $(grep -m1 -E 'error|fatal' <<< "$err" | cut -c1-200)"
  fi
}
export -f compile_one
# clang-22 with ROCm 5.2's libraries: code object v5, the wavefront-size
# macro, and the two libraries it no longer links itself (hip.bc: the
# 5.2 headers' fences; the denormal-mode constant of the 5.2 ocml).
CLANG22_FLAGS=(-mcode-object-version=5 -D__AMDGCN_WAVEFRONT_SIZE=64
  -Xclang -mlink-builtin-bitcode -Xclang "$devlibs/hip.bc"
  -Xclang -mlink-builtin-bitcode -Xclang "$devlibs/oclc_daz_opt_off.bc")
export CLANG22_FLAGS_TEXT="${CLANG22_FLAGS[*]}"
export SRC="$src" DEVLIBS="$devlibs" KEEP="$keep" FIXTURES="$here/fixtures/src"

# The fixtures' library: its translation units compiled with -fgpu-rdc and
# linked into one code object by one clang call, as a HIP build links a
# library (clang names each unit's cuid by a hash of its path and options).
link_library() {
  local t="$1" v="$2" dir="$3" obj="$4"
  local cc=clang-19 flags=() CLANG22_FLAGS
  read -r -a CLANG22_FLAGS <<< "$CLANG22_FLAGS_TEXT"
  [[ "$t" == gfx950 ]] && cc=clang-22 && flags+=("${CLANG22_FLAGS[@]}")
  case "$v" in O0) flags+=(-O0) ;; O3) flags+=(-O3) ;; fast) flags+=(-O3 -ffast-math) ;; esac
  mkdir -p "$(dirname "$obj")"
  local err name
  name="$(basename "$dir")"
  if err="$(cd "$dir/.." && "$cc" -x hip --offload-arch="$t" --cuda-device-only --no-gpu-bundle-output -fgpu-rdc \
      -fuse-cuid=hash -std=c++17 -w --rocm-path=/usr --rocm-device-lib-path="$DEVLIBS" "${flags[@]}" -I "$name" \
      "$name"/*.hip -o "$obj" 2>&1)"; then
    echo "ok $t $v fixtures $name/ (linked)"
  else
    rm -f "$obj"
    echo "skip $t $v fixtures $name/: $(grep -m1 -E 'error|fatal' <<< "$err" | cut -c1-200)"
  fi
}
export -f link_library

# The work list: one line per compile.
work="$out/work.txt"
: > "$work"
for t in ${targets//,/ }; do
  cc=clang-19; [[ "$t" == gfx950 ]] && cc=clang-22
  if ! command -v "$cc" >/dev/null; then echo "skipped target $t: $cc not found" >&2; continue; fi
  for v in ${variants//,/ }; do
    for set in ${sets//,/ }; do
      if [[ "$set" == fixtures ]]; then
        (cd "$FIXTURES" && grep -l -E '__global__|KERNEL' -- *.hip 2>/dev/null || true) | while read -r f; do
          echo "compile_one $t $v fixtures $f $out/$t/$v/fixtures/${f%.*}.co -"
        done >> "$work"
        for lib in "$FIXTURES"/*/; do
          [[ -d "$lib" ]] || continue
          echo "link_library $t $v ${lib%/} $out/$t/$v/fixtures/$(basename "$lib").co" >> "$work"
        done
        continue
      fi
      line="$(awk -v s="$set" '$1 == s' "$here/sources.txt")"
      if [[ -z "$line" ]]; then echo "error: build.sh: no set $set in sources.txt" >&2; exit 1; fi
      if [[ ! -d "$src/$set" ]]; then echo "skipped set $set: not fetched (tests/realcode/fetch.sh)" >&2; continue; fi
      includes="$(awk '{ print $4 }' <<< "$line")"
      # Translation units: sources that define a kernel and that no other
      # file of their folder includes.
      (cd "$src/$set" && grep -rl --include='*.cu' --include='*.hip' --include='*.cpp' --include='*.cc' '__global__' . || true) |
        sed 's|^\./||' | sort | while read -r f; do
          dir="$(dirname "$f")"
          if grep -q -E "#[[:space:]]*include[[:space:]]*[\"<]([^\">]*/)?$(basename "$f")[\">]" \
              "$src/$set/$dir"/* 2>/dev/null; then
            continue
          fi
          extra=""
          while read -r _ _ fdir fflags; do
            case "$f" in
              "$fdir"/*)
                for fl in $fflags; do
                  case "$fl" in -I*) fl="-I$src/$set/$fdir/${fl#-I}" ;; esac
                  extra+=" $fl"
                done ;;
            esac
          done < <(awk -v s="$set" '$1 == "+" && $2 == s' "$here/sources.txt")
          echo "compile_one $t $v $set $f $out/$t/$v/$set/${f//\//__}.co $includes$extra"
        done >> "$work"
    done
  done
done
echo "build.sh: $(wc -l < "$work") compiles, $jobs at a time" >&2
# shellcheck disable=SC2016 # expanded by the inner shell
xargs -P "$jobs" -L 1 bash -c '"$@"' _ < "$work" > "$out/build.log"
sort -o "$out/build.log" "$out/build.log"
echo "build.sh: $(grep -c '^ok ' "$out/build.log" || true) built, $(grep -c '^skip ' "$out/build.log" || true) skipped (see $out/build.log)" >&2
