#!/usr/bin/env bash
# The flow tool on the GPU suite against GPU-FPX's analyzer (GPU machine,
# one call): each program runs plain, under `xfpx run --tool flow --sample 1`
# and under GPU-FPX's analyzer (PROPAGATE=1 ENABLE_COMPARE=1, so that it
# prints every state); flow_vs_gpufpx.py compares them kernel by kernel
# (its header says how) and checks that the program's output and exit
# status are unchanged under xfpx. Logs go under $OUT (default
# ./flow-check-out): a tarball of every log and report, results.jsonl and
# table.txt; the table (and each difference) is printed last. The exit
# status is 0 only when every program passes; a missing analyzer is a
# failure (no comparison was made), said in one line first and in the table.
#
#   GPUFPX_ANALYZER=/path/to/analyzer.so bash tests/gpu/flow-check.sh
#
# GPUFPX_ANALYZER names a GPU-FPX analyzer you built yourself from its
# public sources (nothing of it is in this repository). The rest comes from
# .devout/gpu-suite as tests/gpu/prepare.sh leaves it (xfpx, the NVBit
# tool, the suite), built here where missing and possible (nvcc, and NVBit
# in third_party/nvbit or NVBIT_PATH for the tool).
#
#   FLOW_PROGRAMS="fpx_basic fpx_loops"   run only these
#   FLOW_TIMEOUT=300                      seconds per instrumented run
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/flow-check-out}"
mkdir -p "$out"
work="$(mktemp -d)"
logs="$work/flow-check-logs"
mkdir -p "$logs"
results="$out/results.jsonl"
: > "$results"
per_run="${FLOW_TIMEOUT:-300}"
start_all=$SECONDS
ulimit -c 0  # the crash program should not leave a core file

for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [[ -n "$d" && -x "$d/bin/nvdisasm" ]]; then export PATH="$d/bin:$PATH"; break; fi
done
{
    date -u
    nvidia-smi -L 2>&1
    nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>&1
    command -v nvcc && nvcc --version | tail -n 2
    echo "GPUFPX_ANALYZER=${GPUFPX_ANALYZER:-}"
} > "$logs/environment.txt" 2>&1

# --- GPU-FPX's analyzer -----------------------------------------------------
gpufpx=1
if [[ -z "${GPUFPX_ANALYZER:-}" || ! -f "${GPUFPX_ANALYZER:-}" ]]; then
    gpufpx=0
    echo "flow-check: GPU-FPX's analyzer is not available (GPUFPX_ANALYZER='${GPUFPX_ANALYZER:-}'): NO comparison with GPU-FPX is made, and the check fails" \
        | tee -a "$logs/environment.txt"
fi

# --- the tool and the CLI ---------------------------------------------------
xfpx="$root/.devout/gpu-suite/bin/xfpx"
tool="$root/.devout/gpu-suite/bin/libxfpx_nvbit.so"
export NVBIT_PATH="${NVBIT_PATH:-$root/third_party/nvbit}"
if [[ ! -f "$tool" && -x "$xfpx" && -e "$NVBIT_PATH" ]]; then
    echo "flow-check: building the NVBit tool here (xfpx setup nvidia)"
    "$xfpx" setup nvidia --nvbit "$NVBIT_PATH" > "$logs/build-tool.log" 2>&1 || tail -n 1 "$logs/build-tool.log"
fi
ready=1
[[ -x "$xfpx" ]] || { echo "flow-check: no xfpx binary at .devout/gpu-suite/bin/xfpx (run tests/gpu/prepare.sh)" | tee -a "$logs/environment.txt"; ready=0; }
[[ -f "$tool" ]] || { echo "flow-check: no NVBit tool at .devout/gpu-suite/bin/libxfpx_nvbit.so" | tee -a "$logs/environment.txt"; ready=0; }
if [[ $ready == 1 ]]; then export XFPX_NVBIT_TOOL="$tool"; fi

# --- the suite --------------------------------------------------------------
suite="$root/.devout/gpu-suite/suite"
if [[ ! -x "$suite/fpx_basic" ]]; then
    echo "flow-check: building the suite here"
    suite="$work/suite"
    bash "$here/build-suite.sh" "$suite" > "$logs/build-suite.log" 2>&1 || echo "flow-check: suite build failed (see build-suite.log)"
fi

programs="${FLOW_PROGRAMS:-fpx_basic fpx_half fpx_loops fpx_clean ms_threads fpx_crash many_sites}"
for prog in $programs; do
    expected="$here/src/$prog.expected.json"
    mapfile -t cmd < <(python3 -c 'import json,sys; print("\n".join(c.replace("{bin}", sys.argv[2]) for c in json.load(open(sys.argv[1]))["command"]))' "$expected" "$suite")
    echo "flow-check: $prog"
    run_dir="$work/run-$prog"
    mkdir -p "$run_dir"
    # each run in a folder of its own (GPU-FPX reads kernel lists from the current folder)
    (cd "$run_dir" && timeout -k 5 120 "${cmd[@]}" > "$logs/$prog.plain.log" 2>&1; exit $?) 2>/dev/null
    plain_rc=$?
    if [[ $ready == 1 ]]; then
        (cd "$run_dir" && timeout -k 5 "$per_run" "$xfpx" run --vendor auto --tool flow --sample 1 \
            --report "$logs/$prog.flow.json" -- "${cmd[@]}" > "$logs/$prog.flow.log" 2>&1; exit $?) 2>/dev/null
        xfpx_rc=$?
        "$xfpx" report "$logs/$prog.flow.json" > "$logs/$prog.flow.txt" 2>&1
    else
        xfpx_rc=-1
        echo "xfpx not run: tool or CLI missing" > "$logs/$prog.flow.log"
    fi
    analyzer=()
    if [[ $gpufpx == 1 ]]; then
        (cd "$run_dir" && timeout -k 5 "$per_run" env LD_PRELOAD="$GPUFPX_ANALYZER" PROPAGATE=1 ENABLE_COMPARE=1 \
            "${cmd[@]}" > "$logs/$prog.gpufpx.log" 2>&1; exit $?) 2>/dev/null
        analyzer=(--gpufpx "$logs/$prog.gpufpx.log")
    fi
    python3 "$here/flow_vs_gpufpx.py" one --program "$prog" --report "$logs/$prog.flow.json" "${analyzer[@]}" \
        --plain-log "$logs/$prog.plain.log" --xfpx-log "$logs/$prog.flow.log" \
        --plain-rc "$plain_rc" --xfpx-rc "$xfpx_rc" >> "$results"
done

python3 "$here/flow_vs_gpufpx.py" table "$results" > "$out/table.txt"
verdict=$?
cp "$results" "$out/table.txt" "$logs/" 2>/dev/null
tar -C "$work" -czf "$out/flow-check-logs.tar.gz" "$(basename "$logs")"
echo "flow-check: logs in $out/flow-check-logs.tar.gz ($(( SECONDS - start_all ))s in all)"
for prog in $programs; do
    [[ -f "$logs/$prog.flow.txt" ]] && sed -n '/^flows/,/^notes/p' "$logs/$prog.flow.txt" | sed "s/^/$prog: /" | grep -v ': notes:$'
done
cat "$out/table.txt"
exit $verdict
