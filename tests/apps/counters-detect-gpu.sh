#!/usr/bin/env bash
# The counters' in-field check on an NVIDIA GPU (Guerrero-Balaguera et al.,
# ICECS'21), and what counting costs.
#
#   counters-detect-gpu.sh [detect|cost|all]     (default all)
#
# detect: for each of the seven applications, learns an operational region
#   (`xfpx region build`, INACT and STACK per window of WINDOW blocks, the
#   default margin) from
#   LEARN_RUNS fault-free counted runs (seeds 1..), then checks DETECT_RUNS
#   fault-free runs with new inputs (seeds 101..) against it (a flagged one
#   is a false positive), and runs with a permanent fault that changes
#   control flow or thread activity, injected in the same counted run
#   (`xfpx run --tool counters --region R --fail-on region --model ...`):
#   WV on P0 and on P1 (the predicate's writes inverted: branches and
#   guards go the other way) and IAT (thread index x of lanes 0-15 XOR 1),
#   all on SM 0, input seed 201. Outcome of a faulty run: flagged (exit 3),
#   missed (exit 0), DUE (the program failed: found without the check),
#   not activated (the fault never fired). DETECT_JOBS runs at a time.
# cost: the benchmark programs (tests/bench, BENCH_SCALE as set) run alone:
#   twice uninstrumented, twice under `xfpx run --tool counters` (every
#   launch counted; the first run disassembles, the second finds the
#   disassembly cached); wall-time ratios and their geomeans; the CHECKSUM
#   line must equal the uninstrumented one.
# Env: XFPX (default target/release/xfpx, with the NVIDIA tool installed),
# OUT (default ./counters-out), APPS (default .devout/apps) and BENCH
# (default .devout/bench), built when missing; LEARN_RUNS (5), DETECT_RUNS
# (20), DETECT_JOBS (8), WINDOW (16), DETECT_BUDGET (seconds for detect,
# default 240), COST_BUDGET (seconds for cost, default 150). Each part
# prints a short table, written to OUT/detect.txt and OUT/cost.txt.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$PWD/counters-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
XFPX=${XFPX:-$ROOT/target/release/xfpx}
APPS=${APPS:-$ROOT/.devout/apps}
BENCH=${BENCH:-$ROOT/.devout/bench}
LEARN=${LEARN_RUNS:-5}
TESTS=${DETECT_RUNS:-20}
JOBS=${DETECT_JOBS:-8}
WINDOW=${WINDOW:-16}
WHAT=${1:-all}
export XFPX WINDOW OUT

# sizes that keep a counted run short and give every SM blocks
app_args() {
    case $1 in
        fft) echo "--log2n 10 --batch 264" ;;
        gray | sobel) echo "--width 512 --height 512" ;;
        matmul) echo "--n 256" ;;
        reduce) echo "--n 1048576 --blocks 264" ;;
        sort) echo "--log2n 18" ;;
        transpose) echo "--width 1024 --height 1024" ;;
    esac
}
APPS_LIST=(fft gray matmul reduce sobel sort transpose)

# one counted run: NAME APP SEED [REGION [FAULT...]]; writes OUT/detect/NAME.{json,log,rc}
counted_run() {
    local name=$1 app=$2 seed=$3 region=${4:-}
    shift 3
    [ $# -gt 0 ] && shift
    local d="$OUT/detect" extra=()
    [ -n "$region" ] && extra=(--region "$region" --fail-on region)
    read -r -a args <<<"$(app_args "$app")"
    timeout 120 "$XFPX" run --tool counters --window-blocks "$WINDOW" "${extra[@]}" "$@" --report "$d/$name.json" \
        -- "$APPS/$app" --seed "$seed" "${args[@]}" >"$d/$name.log" 2>&1
    echo $? >"$d/$name.rc"
}

# runs the lines of a job file (each: arguments of counted_run), JOBS at a time
run_jobs() {
    local running=0
    while read -r line; do
        # shellcheck disable=SC2086
        counted_run $line &
        running=$((running + 1))
        if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
    done <"$1"
    wait
}

detect_runs() {
    local d="$OUT/detect"
    mkdir -p "$d"
    [ -x "$APPS/fft" ] || "$ROOT/tests/apps/build.sh" "$APPS" >"$OUT/apps-build.log" 2>&1 || { echo "error: apps did not build"; return 1; }
    : >"$d/learn.jobs"
    for app in "${APPS_LIST[@]}"; do
        for ((s = 1; s <= LEARN; s++)); do echo "learn-$app-$s $app $s" >>"$d/learn.jobs"; done
    done
    run_jobs "$d/learn.jobs"
    : >"$d/check.jobs"
    for app in "${APPS_LIST[@]}"; do
        local reports=()
        for ((s = 1; s <= LEARN; s++)); do [ "$(cat "$d/learn-$app-$s.rc" 2>/dev/null)" = 0 ] && reports+=("$d/learn-$app-$s.json"); done
        if ! "$XFPX" region build "${reports[@]}" -o "$d/region-$app.json" >"$d/region-$app.log" 2>&1; then
            echo "region of $app not built: $(head -n1 "$d/region-$app.log")" >>"$d/errors.txt"
            continue
        fi
        for ((s = 101; s < 101 + TESTS; s++)); do echo "clean-$app-$s $app $s $d/region-$app.json" >>"$d/check.jobs"; done
        echo "wv0-$app $app 201 $d/region-$app.json --model WV --predicate 0 --sm 0" >>"$d/check.jobs"
        echo "wv1-$app $app 201 $d/region-$app.json --model WV --predicate 1 --sm 0" >>"$d/check.jobs"
        echo "iat-$app $app 201 $d/region-$app.json --model IAT --dim x --mask 1 --lanes 0-15 --sm 0" >>"$d/check.jobs"
    done
    run_jobs "$d/check.jobs"
}

cost_runs() {
    local c="$OUT/cost" progs=(gemm batched_gemm stencil3d reduce_scan ode_chem black_scholes cfd_flux nbody spmv)
    mkdir -p "$c"
    [ -x "$BENCH/gemm" ] || BENCH_OUT=$BENCH "$ROOT/tests/bench/build.sh" >"$OUT/bench-build.log" 2>&1 || { echo "error: bench did not build"; return 1; }
    : >"$c/times.tsv"
    for p in "${progs[@]}"; do
        [ -x "$BENCH/$p" ] || { echo "$p missing" >>"$c/times.tsv"; continue; }
        for k in 1 2; do
            for how in plain counters; do
                local s e rc
                s=$(date +%s.%N)
                if [ $how = plain ]; then
                    timeout 120 "$BENCH/$p" >"$c/$p-$how-$k.log" 2>&1
                else
                    timeout 300 "$XFPX" run --tool counters --report "$c/$p-$k.json" -- "$BENCH/$p" >"$c/$p-$how-$k.log" 2>&1
                fi
                rc=$?
                e=$(date +%s.%N)
                echo "$p $how $k $(echo "$s $e" | awk '{printf "%.3f", $2 - $1}') $rc $(grep -m1 '^CHECKSUM' "$c/$p-$how-$k.log" | cut -d' ' -f2)" >>"$c/times.tsv"
            done
        done
    done
}

summary_detect() {
    python3 "$ROOT/tests/apps/detect_summary.py" "$OUT/detect" "$LEARN" "$TESTS" "${APPS_LIST[@]}" | tee "$OUT/detect.txt"
}

summary_cost() {
    python3 "$ROOT/tests/apps/detect_summary.py" --cost "$OUT/cost/times.tsv" | tee "$OUT/cost.txt"
}

# each part's runs under its budget (a run cut short is left out), then its table
case $WHAT in
    _detect) detect_runs ;;
    _cost) cost_runs ;;
    detect) timeout --kill-after=10 "${DETECT_BUDGET:-240}" "$0" _detect; summary_detect ;;
    cost) timeout --kill-after=10 "${COST_BUDGET:-150}" "$0" _cost; summary_cost ;;
    all)
        timeout --kill-after=10 "${COST_BUDGET:-150}" "$0" _cost
        timeout --kill-after=10 "${DETECT_BUDGET:-240}" "$0" _detect
        summary_cost
        summary_detect
        ;;
    *) echo "usage: $0 [detect|cost|all]" >&2; exit 64 ;;
esac
