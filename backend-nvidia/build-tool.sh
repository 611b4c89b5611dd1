#!/usr/bin/env bash
# Build the xfpx NVBit tool, libxfpx_nvbit.so, into target/nvbit-tool/
# (or $XFPX_TOOL_OUT).
#
#   NVBIT_PATH=/path/to/nvbit/core ./backend-nvidia/build-tool.sh
#
# Environment: NVBIT_PATH (NVBit's core directory: nvbit.h, libnvbit.a),
# NVCC (default: $CUDA_HOME/bin/nvcc, else nvcc on PATH), CUDA_HOME,
# CARGO (default cargo), XFPX_STATICLIB (use this prebuilt libxfpx_nvbit.a
# instead of running cargo, for machines without a Rust toolchain),
# XFPX_ARCH (default sm_90).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${XFPX_TOOL_OUT:-$root/target/nvbit-tool}"
arch="${XFPX_ARCH:-sm_90}"

nvbit="${NVBIT_PATH:-}"
if [ -z "$nvbit" ] || [ ! -f "$nvbit/nvbit.h" ] || [ ! -f "$nvbit/libnvbit.a" ]; then
    echo "build-tool.sh: NVBit not found: set NVBIT_PATH to NVBit's core directory (with nvbit.h and libnvbit.a; releases: https://github.com/NVlabs/NVBit/releases)" >&2
    exit 2
fi
if [ -n "${NVCC:-}" ]; then
    nvcc="$NVCC"
elif [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then
    nvcc="$CUDA_HOME/bin/nvcc"
else
    nvcc="$(command -v nvcc || true)"
fi
if [ -z "$nvcc" ] || ! "$nvcc" --version >/dev/null 2>&1; then
    echo "build-tool.sh: nvcc not found: set NVCC or CUDA_HOME, or put CUDA's bin directory on PATH" >&2
    exit 2
fi
cudalib=""
for d in "${CUDA_HOME:-}/lib64" "${CUDA_HOME:-}/lib" "$(dirname "$nvcc")/../lib64" "$(dirname "$nvcc")/../lib"; do
    if [ -n "$d" ] && { [ -f "$d/libcudart_static.a" ] || [ -f "$d/libcudart.so" ]; }; then cudalib="$d"; break; fi
done

# the driver library: a development link, CUDA's stub, or the driver's own .so.1
libcuda=""
for f in "$cudalib/libcuda.so" "$cudalib/stubs/libcuda.so" /usr/lib/x86_64-linux-gnu/libcuda.so \
         /usr/lib64/libcuda.so /usr/lib/x86_64-linux-gnu/libcuda.so.1 /usr/lib64/libcuda.so.1; do
    if [ -f "$f" ]; then libcuda="$f"; break; fi
done

if [ -n "${XFPX_STATICLIB:-}" ]; then
    staticlib="$XFPX_STATICLIB"
else
    "${CARGO:-cargo}" build --release -p xfpx-nvbit --manifest-path "$root/Cargo.toml"
    staticlib="$root/target/release/libxfpx_nvbit.a"
fi
[ -f "$staticlib" ] || { echo "build-tool.sh: Rust static library $staticlib is missing" >&2; exit 2; }

mkdir -p "$out/obj"
snip="$root/asm-snippets/nvidia"
shim="$root/backend-nvidia/tool/shim"
"$nvcc" -dc -c -std=c++17 -I"$nvbit" -I"$snip" -I"$shim" -Xptxas -cloning=no -arch="$arch" -O3 -Xcompiler -fPIC \
    "$shim/xfpx_nvbit.cu" -o "$out/obj/xfpx_nvbit.o"
"$nvcc" -I"$nvbit" -I"$snip" -Xptxas -astoolspatch --keep-device-functions -arch="$arch" -Xcompiler -fPIC -c \
    "$snip/xfpx_device.cu" -o "$out/obj/xfpx_device.o"
if [ -z "$libcuda" ]; then
    # No driver library here (a build machine without a GPU): link against
    # a generated stub named libcuda.so.1 that defines the driver functions
    # the tool calls, so the tool still loads the real driver library, by
    # that name, on the GPU machine.
    mkdir -p "$out/stub"
    nm -u --format=posix "$out/obj/xfpx_nvbit.o" "$nvbit/libnvbit.a" 2>/dev/null | awk '{print $1}' |
        grep -E '^cu[A-Z][A-Za-z0-9_]*$' | sort -u | sed 's/.*/void &(void) {}/' > "$out/stub/libcuda_stub.c"
    "${CC:-cc}" -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$out/stub/libcuda.so" "$out/stub/libcuda_stub.c"
    libcuda="$out/stub/libcuda.so"
    echo "build-tool.sh: note: no libcuda here; linked against a stub of $(wc -l < "$out/stub/libcuda_stub.c") driver functions (the driver's libcuda.so.1 is loaded at run time)" >&2
fi
"$nvcc" -arch="$arch" -O3 "$out/obj/xfpx_nvbit.o" "$out/obj/xfpx_device.o" "$staticlib" \
    -L"$nvbit" -lnvbit ${cudalib:+-L"$cudalib"} "$libcuda" -lcudart_static -lpthread -ldl -lm -shared \
    -o "$out/libxfpx_nvbit.so"
echo "build-tool.sh: built $out/libxfpx_nvbit.so"
