#!/usr/bin/env bash
# Runs the GPU suite on a machine with an NVIDIA GPU: every program plain
# and under `xfpx run`, then compares findings with the expected files,
# instrumented output with plain output, and exit statuses; times each run
# and stops hung ones. Logs go under $OUT (default ./gpu-check-out): a
# tarball of all logs plus results.jsonl and table.txt. The table is
# printed last; the exit status is 0 only when every program passes.
#
# Takes prebuilt pieces from .devout/ (see prepare.sh) and builds what is
# missing where it can (the suite and the NVBit tool need nvcc; xfpx
# itself must be prebuilt when there is no Rust toolchain).
#
#   XFPX_GPU_PROGRAMS="fpx_basic fpx_half"  run only these
#   XFPX_GPU_TIMEOUT=120                    seconds per instrumented run
#   XFPX_GPU_BUDGET=480                     stop starting programs after this
#   XFPX_GPU_DUMP=1                         also write `xfpx run --dump` output
#   XFPX_GPU_MODES="detect fast"            modes run (default both): detect is
#                                           compared finding by finding with
#                                           lines, other modes by exception
#                                           classes per kernel
#   GPUFPX_DETECTOR=/path/to/detector.so    also run each program under a
#                                           GPU-FPX detector you built from its
#                                           public sources, and compare its
#                                           classes with xfpx's (vs-gpufpx.py)
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/gpu-check-out}"
mkdir -p "$out"
logs="$(mktemp -d)/gpu-check-logs"
mkdir -p "$logs"
results="$out/results.jsonl"
: > "$results"
start_all=$SECONDS
ulimit -c 0  # the crash program should not leave a core file
budget="${XFPX_GPU_BUDGET:-480}"
per_run="${XFPX_GPU_TIMEOUT:-120}"

# CUDA tools on PATH: NVBit needs nvdisasm at run time.
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [[ -n "$d" && -x "$d/bin/nvdisasm" ]]; then export PATH="$d/bin:$PATH"; break; fi
done
{
    date -u
    nvidia-smi -L 2>&1
    nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1
    command -v nvcc && nvcc --version | tail -n 2
    python3 -c 'import torch; print("torch", torch.__version__)' 2>&1 | tail -n 1
} > "$logs/environment.txt" 2>&1

# --- the tool and the CLI ---------------------------------------------------
xfpx="$root/.devout/gpu-suite/bin/xfpx"
tool="$root/.devout/gpu-suite/bin/libxfpx_nvbit.so"
export NVBIT_PATH="${NVBIT_PATH:-$root/third_party/nvbit}"
if [[ ! -f "$tool" && -x "$xfpx" && -e "$NVBIT_PATH" ]]; then
    echo "run-gpu-checks: building the NVBit tool here (xfpx setup nvidia)"
    "$xfpx" setup nvidia --nvbit "$NVBIT_PATH" > "$logs/build-tool.log" 2>&1 || tail -n 1 "$logs/build-tool.log"
fi
ready=1
[[ -x "$xfpx" ]] || { echo "run-gpu-checks: no xfpx binary at .devout/gpu-suite/bin/xfpx (run tests/gpu/prepare.sh)" | tee -a "$logs/environment.txt"; ready=0; }
[[ -f "$tool" ]] || { echo "run-gpu-checks: no NVBit tool at .devout/gpu-suite/bin/libxfpx_nvbit.so" | tee -a "$logs/environment.txt"; ready=0; }
if [[ $ready == 1 ]]; then export XFPX_NVBIT_TOOL="$tool"; fi

# --- the suite --------------------------------------------------------------
suite="$root/.devout/gpu-suite/suite"
if [[ ! -x "$suite/fpx_basic" ]]; then
    echo "run-gpu-checks: building the suite here"
    suite="$(dirname "$logs")/suite"
    bash "$here/build-suite.sh" "$suite" > "$logs/build-suite.log" 2>&1 || echo "run-gpu-checks: suite build failed (see build-suite.log)"
fi

programs="${XFPX_GPU_PROGRAMS:-fpx_basic fpx_half fpx_loops fpx_clean ms_threads fpx_crash many_sites torch_matmul_nan torch_compile_nan torch_half_gemm}"
# detect: findings compared with their lines; other modes (fast): the
# exception classes of each kernel
modes="${XFPX_GPU_MODES:-detect fast}"
for mode in $modes; do
for prog in $programs; do
    expected="$here/src/$prog.expected.json"
    if (( SECONDS - start_all > budget )); then
        echo "run-gpu-checks: time budget spent, $prog not run" | tee -a "$logs/environment.txt"
        python3 "$here/compare.py" skipped --program "$prog" --expected "$expected" --reason "time budget spent" >> "$results"
        continue
    fi
    mapfile -t cmd < <(python3 -c 'import json,sys; print("\n".join(c.replace("{bin}", sys.argv[2]) for c in json.load(open(sys.argv[1]))["command"]))' "$expected" "$suite")
    if [[ "$prog" == torch_* ]] && ! python3 -c 'import torch' 2>/dev/null; then
        echo "run-gpu-checks: no PyTorch here, $prog not run" | tee -a "$logs/environment.txt"
        python3 "$here/compare.py" skipped --program "$prog" --expected "$expected" --reason "no PyTorch" >> "$results"
        continue
    fi
    echo "run-gpu-checks: $prog"
    t0=$(date +%s.%N)
    # in a subshell, so that a program's death by signal is not announced here
    # (`; exit $?` keeps the subshell from exec'ing the command itself)
    (timeout -k 5 60 "${cmd[@]}" > "$logs/$prog.plain.log" 2>&1; exit $?) 2>/dev/null
    plain_rc=$?
    t1=$(date +%s.%N)
    timed_out=()
    if [[ $ready == 1 ]]; then
        dump=()
        [[ "${XFPX_GPU_DUMP:-0}" == 1 ]] && dump=(--dump "$logs/$prog.$mode.dump")
        (timeout -k 5 "$per_run" "$xfpx" run --vendor auto --mode "$mode" --report "$logs/$prog.$mode.report.json" "${dump[@]}" \
            -- "${cmd[@]}" > "$logs/$prog.$mode.xfpx.log" 2>&1; exit $?) 2>/dev/null
        xfpx_rc=$?
        [[ $xfpx_rc == 124 || $xfpx_rc == 137 ]] && timed_out=(--timed-out)
    else
        xfpx_rc=-1
        echo "xfpx not run: tool or CLI missing" > "$logs/$prog.$mode.xfpx.log"
    fi
    t2=$(date +%s.%N)
    if [[ -n "${GPUFPX_DETECTOR:-}" && ! -f "$logs/$prog.gpufpx.log" ]]; then
        # env sets the preload for the program only (NVBit clears it for
        # the processes it starts)
        (timeout -k 5 "$per_run" env LD_PRELOAD="$GPUFPX_DETECTOR" "${cmd[@]}" > "$logs/$prog.gpufpx.log" 2>&1; exit $?) 2>/dev/null
    fi
    classes=()
    [[ "$mode" != detect ]] && classes=(--classes --mode-label "$mode")
    python3 "$here/compare.py" one --expected "$expected" --report "$logs/$prog.$mode.report.json" \
        --plain-log "$logs/$prog.plain.log" --xfpx-log "$logs/$prog.$mode.xfpx.log" "${classes[@]}" \
        --plain-rc "$plain_rc" --xfpx-rc "$xfpx_rc" \
        --plain-s "$(awk "BEGIN{print $t1 - $t0}")" --xfpx-s "$(awk "BEGIN{print $t2 - $t1}")" \
        "${timed_out[@]}" >> "$results"
done
done

if [[ -n "${GPUFPX_DETECTOR:-}" ]]; then
    python3 "$here/vs-gpufpx.py" "$logs" $programs > "$out/vs-gpufpx.txt"
    cat "$out/vs-gpufpx.txt"
fi
python3 "$here/compare.py" table "$results" > "$out/table.txt"
verdict=$?
cp "$results" "$out/table.txt" "$logs/" 2>/dev/null
tar -C "$(dirname "$logs")" -czf "$out/gpu-check-logs.tar.gz" "$(basename "$logs")"
echo "run-gpu-checks: logs in $out/gpu-check-logs.tar.gz ($(( SECONDS - start_all ))s in all)"
cat "$out/table.txt"
exit $verdict
