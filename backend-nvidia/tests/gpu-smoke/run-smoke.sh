#!/usr/bin/env bash
# Build the NVBit tool and the smoke program on a machine with an NVIDIA
# GPU, run the program plain, with the tool through LD_PRELOAD, through
# CUDA_INJECTION64_PATH and with the event socket, and print expected vs
# found findings. Logs and reports go to $OUT (default ./smoke-out).
#
#   NVBIT_PATH=/path/to/nvbit/core [XFPX=path/to/release/xfpx] \
#       ./backend-nvidia/tests/gpu-smoke/run-smoke.sh
# (without XFPX, build-tool.sh builds xfpx with cargo)
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
out="${OUT:-$PWD/smoke-out}"
mkdir -p "$out"
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH"
{ ldd --version | head -1; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvcc --version | tail -1; } > "$out/machine.txt" 2>&1
cat "$out/machine.txt"

XFPX_TOOL_OUT="$out/tool" "$root/backend-nvidia/build-tool.sh" > "$out/build-tool.log" 2>&1 || { tail -20 "$out/build-tool.log"; exit 1; }
tool="$out/tool/libxfpx_nvbit.so"
nvcc -arch=sm_90 -lineinfo -O2 -o "$out/smoke" "$here/smoke.cu" > "$out/build-smoke.log" 2>&1 || { cat "$out/build-smoke.log"; exit 1; }

config() { # report_path events_socket dump_dir [keep_device_code]
    printf '{"mode":"detect","kinds":15,"kernels":[],"exclude":[],"sample_every":1,"instr_range":null,"max_records":null,"report_path":"%s","events_socket":%s,"dump_dir":%s,"tools":{"keep_device_code":%s}}\n' "$1" "$2" "$3" "${4:-null}"
}

cd "$here"   # relative source paths in the line table: smoke.cu
# the tool itself quiets NVBit's banner (NOBANNER) and warning (ACK_CTX_INIT_LIMITATION)
mkdir -p "$out/cubins"
"$out/smoke" > "$out/plain.stdout" 2> "$out/plain.stderr"; echo "plain exit $?"

config "$out/report-preload.json" null "\"$out/dump\"" "\"$out/cubins\"" > "$out/config-preload.json"
XFPX_CONFIG="$out/config-preload.json" LD_PRELOAD="$tool" "$out/smoke" > "$out/preload.stdout" 2> "$out/preload.stderr"; echo "preload exit $?"

config "$out/report-inject.json" null null > "$out/config-inject.json"
XFPX_CONFIG="$out/config-inject.json" CUDA_INJECTION64_PATH="$tool" "$out/smoke" > "$out/inject.stdout" 2> "$out/inject.stderr"; echo "injection exit $?"

# streaming: a listener records when each event arrives
sock="$out/events.sock"; rm -f "$sock"
python3 "$here/listen.py" "$sock" "$out/events.jsonl" & lp=$!
for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
config "$out/report-stream.json" "\"$sock\"" null > "$out/config-stream.json"
XFPX_CONFIG="$out/config-stream.json" LD_PRELOAD="$tool" "$out/smoke" > "$out/stream.stdout" 2> "$out/stream.stderr"; echo "stream exit $?"
wait $lp

for m in preload inject stream; do
    if cmp -s "$out/plain.stdout" "$out/$m.stdout"; then echo "output $m: identical to plain"; else echo "output $m: DIFFERS"; diff "$out/plain.stdout" "$out/$m.stdout" | head; fi
done
python3 "$here/compare.py" "$here/smoke.cu" "$out"; status=$?
exit $status
