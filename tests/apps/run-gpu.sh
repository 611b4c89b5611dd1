#!/usr/bin/env bash
# GPU machine, one call: builds the applications (build.sh), runs each plain
# APPS_RUNS times (default 3) with seeds 1, 2, ... (self-check: PASS/FAIL),
# then once more (seed 1, default sizes) under Nsight Compute, collecting per
# launch the metrics the counters' exactness check compares with (warp and
# thread instructions executed, predicated-on thread instructions, branch
# targets and divergent ones, launched warps, instruction mix). Writes to
# $OUT/apps/ (OUT defaults to .devout/apps-out):
#   runs.txt               every plain run's verdict line
#   ncu/<app>.ncu-rep      Nsight Compute's report; ncu/<app>.csv its raw page
#   metrics.csv            one row per launch: app, launch, kernel, grid, block, metrics
#   kernels.csv, table.txt the same summed per (app, kernel), and printed last
# A metric this ncu does not know is named in a MISSING METRIC line and left
# out; the others are still collected. NCU=/path/to/ncu overrides the ncu on PATH.
# Exit status: 0 when every self-check passed and ncu ran, 1 otherwise.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/.devout/apps-out}/apps"
bin="$root/.devout/apps"
mkdir -p "$out/ncu"
status=0

if ! "$here/build.sh" "$bin" > "$out/build.log" 2>&1; then
    cat "$out/build.log"
    echo "error: the applications did not build (log: $out/build.log)" >&2
    exit 1
fi
tail -n1 "$out/build.log"

apps=(fft gray matmul reduce sobel sort transpose)
runs="${APPS_RUNS:-3}"
: > "$out/runs.txt"
for app in "${apps[@]}"; do
    for ((seed = 1; seed <= runs; seed++)); do
        start=$(date +%s%N)
        line="$("$bin/$app" --seed "$seed" 2>&1)"
        rc=$?
        ms=$(( ($(date +%s%N) - start) / 1000000 ))
        echo "$line (exit $rc, $ms ms)" | tee -a "$out/runs.txt"
        [[ $rc == 0 ]] || status=1
    done
done

ncu_bin="${NCU:-$(command -v ncu || true)}"
for c in /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do
    [[ -z "$ncu_bin" && -x "$c" ]] && ncu_bin="$c"
done
if [[ -z "$ncu_bin" ]]; then
    echo "error: ncu not found (put Nsight Compute on PATH or set NCU=/path/to/ncu): no metrics collected" >&2
    exit 1
fi
"$ncu_bin" --version | tail -n1

metrics=(
    launch__grid_size launch__block_size launch__thread_count launch__registers_per_thread
    smsp__warps_launched.sum smsp__threads_launched.sum
    smsp__inst_executed.sum smsp__sass_inst_executed.sum
    smsp__thread_inst_executed.sum smsp__sass_thread_inst_executed.sum
    smsp__thread_inst_executed_pred_on.sum smsp__sass_thread_inst_executed_pred_on.sum
    smsp__sass_branch_targets.sum smsp__sass_branch_targets_threads_divergent.sum
    smsp__sass_branch_targets_threads_uniform.sum smsp__sass_inst_executed_op_branch.sum
    smsp__sass_thread_inst_executed_op_fadd_pred_on.sum smsp__sass_thread_inst_executed_op_fmul_pred_on.sum
    smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
    smsp__sass_inst_executed_op_global_ld.sum smsp__sass_inst_executed_op_global_st.sum
    smsp__sass_inst_executed_op_shared_ld.sum smsp__sass_inst_executed_op_shared_st.sum
)
# Which metrics this ncu and GPU know: the full list of names (and base names,
# for an ncu that lists only those). launch__* are launch attributes, not counters.
"$ncu_bin" --query-metrics-mode all --query-metrics > "$out/ncu/known-metrics.txt" 2>&1 || true
"$ncu_bin" --query-metrics >> "$out/ncu/known-metrics.txt" 2>&1 || true
keep=()
if grep -q "smsp__inst_executed" "$out/ncu/known-metrics.txt"; then
    for m in "${metrics[@]}"; do
        if [[ $m == launch__* ]] || grep -qE "(^|[[:space:]])(${m//./\\.}|${m%%.*})([[:space:]]|$)" "$out/ncu/known-metrics.txt"; then
            keep+=("$m")
        else
            echo "MISSING METRIC: $m is not in this ncu's metric list; left out" | tee -a "$out/missing-metrics.txt"
        fi
    done
else
    echo "note: ncu --query-metrics listed nothing usable (see ncu/known-metrics.txt); trying every metric"
    keep=("${metrics[@]}")
fi

for app in "${apps[@]}"; do
    # Up to three tries: a metric ncu rejects is named, dropped, and the run repeated.
    for try in 1 2 3; do
        list="$(IFS=,; echo "${keep[*]}")"
        "$ncu_bin" --metrics "$list" --export "$out/ncu/$app" --force-overwrite \
            "$bin/$app" --seed 1 > "$out/ncu/$app.log" 2>&1
        rc=$?
        bad="$(grep -oE "Failed to find metric [^ ]+|[Mm]etric [^ ]+ (is )?not (found|supported)" "$out/ncu/$app.log" \
               | grep -oE "(launch|smsp|sm)__[A-Za-z0-9_.]+" | sort -u)"
        [[ $rc != 0 && -n "$bad" ]] || break
        for m in $bad; do
            echo "MISSING METRIC: ncu rejected $m; left out" | tee -a "$out/missing-metrics.txt"
            next=()
            for k in "${keep[@]}"; do [[ $k == "$m" ]] || next+=("$k"); done
            keep=("${next[@]}")
        done
    done
    if [[ $rc != 0 ]] || grep -q "ERR_NVGPUCTRPERM" "$out/ncu/$app.log"; then
        tail -n 5 "$out/ncu/$app.log"
        echo "error: ncu failed on $app (exit $rc; log: $out/ncu/$app.log)" >&2
        status=1
        continue
    fi
    "$ncu_bin" --import "$out/ncu/$app.ncu-rep" --csv --page raw --print-units base > "$out/ncu/$app.csv" 2>> "$out/ncu/$app.log"
    grep -E "^(PASS|FAIL)" "$out/ncu/$app.log" | sed "s/^/under ncu: /"
done

python3 "$here/ncu_table.py" "$out" "${apps[@]}" || status=1
exit $status
