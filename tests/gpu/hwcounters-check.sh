#!/usr/bin/env bash
# Hardware counters (`xfpx run --tool counters --counters hardware`) on the
# GPU, one call (no Rust here; about 5 minutes). Every step prints one line
# when it fails and the script goes on; the table comes last.
#  1. installs the tools as a user does: `xfpx setup nvidia --nvbit TARBALL`
#     beside a copy of the prebuilt release xfpx, which builds
#     libxfpx_cupti.so where it finds CUPTI;
#  2. builds the seven applications (tests/apps) and two benchmark programs
#     of many short launches (tests/bench: late_nan, 10,000 launches;
#     batched_gemm, 600);
#  3. per application (seed 1): plain, under `--counters hardware`, under
#     the instrumented counters and under Nsight Compute (the three metrics,
#     and the branch metrics for the record); the hardware run's stdout must
#     equal the plain run's; hwcounters_compare.py compares per kernel and
#     launch hardware vs Nsight Compute and hardware vs instrumented (equal
#     expected for warp, thread and predicated-on thread instructions);
#  4. wall time: plain and hardware runs, 3 each, of the applications and the
#     benchmark programs; the ratio of the medians (goal: <= 1.05);
#  5. the in-field check per application: a region learnt (`xfpx region
#     build`, default counters) from HW_LEARN_RUNS (10) fault-free hardware
#     runs (seeds 11..), HW_CHECK_RUNS (20) fault-free runs with new inputs
#     (seeds 101..) checked against it with no margin and with the default
#     margin (the first one live, under `--region --fail-on region`; a
#     flagged run is a false positive, failing the check at the default),
#     and the instrumented
#     report checked against the hardware region (refused: mismatched region).
# Logs under $OUT/hwcounters.
#
#   XFPX_RELEASE=target/release/xfpx   NVBIT_TARBALL=third_party/nvbit-Linux-x86_64-1.7.7.1.tar.bz2
#   HW_BUDGET_S=420 (later steps are skipped, and say so, after it)   NCU=/path/to/ncu
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/.devout/hwcounters-out}/hwcounters"
mkdir -p "$out"
release="${XFPX_RELEASE:-$root/target/release/xfpx}"
tarball="${NVBIT_TARBALL:-$root/third_party/nvbit-Linux-x86_64-1.7.7.1.tar.bz2}"
[[ -e "$tarball" ]] || tarball="$root/third_party/nvbit"
budget="${HW_BUDGET_S:-420}"
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [[ -n "$d" && -x "$d/bin/nvcc" ]]; then export PATH="$d/bin:$PATH"; break; fi
done
ncu_bin="${NCU:-$(command -v ncu || true)}"
status=0
fail() { echo "hwcounters-check: FAIL: $*" | tee -a "$out/failures.txt"; status=1; }
over() { (( SECONDS > budget )); }
now() { date +%s.%N; }

echo "== 0. $(date -u +%FT%TZ)" | tee "$out/env.txt"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -n1 | tee -a "$out/env.txt"
nvcc --version 2>&1 | tail -n1 | tee -a "$out/env.txt"
git -C "$root" log --oneline -1 2>/dev/null | tee -a "$out/env.txt"
: > "$out/failures.txt"

# 1. the tools, installed beside xfpx
bin="$root/.devout/hwcounters/bin"
rm -rf "$bin" && mkdir -p "$bin"
xfpx="$bin/xfpx"
cp "$release" "$xfpx" 2>/dev/null || fail "no release xfpx at $release"
if "$xfpx" setup nvidia --nvbit "$tarball" --arch sm_90 > "$out/setup.log" 2>&1; then
    echo "setup: done at $SECONDS s; $(grep -i 'hardware counters' "$out/setup.log" | head -n1)"
else
    fail "xfpx setup nvidia: $(tail -n1 "$out/setup.log")"
fi
[[ -f "$bin/libxfpx_cupti.so" ]] || fail "libxfpx_cupti.so was not installed: $(grep -i 'hardware counters' "$out/setup.log" | head -n1)"

# 2. the programs
apps_dir="$root/.devout/hwcounters/apps"
bash "$root/tests/apps/build.sh" "$apps_dir" > "$out/build-apps.log" 2>&1 || fail "apps build: $(tail -n1 "$out/build-apps.log")"
bench_dir="$root/.devout/hwcounters/bench"
mkdir -p "$bench_dir"
for p in late_nan batched_gemm; do
    nvcc -arch=sm_90 -lineinfo -O3 -std=c++17 -I"$root/tests/bench/src" -o "$bench_dir/$p" "$root/tests/bench/src/$p.cu" \
        >> "$out/build-bench.log" 2>&1 || fail "build of $p: $(tail -n1 "$out/build-bench.log")"
done
echo "build: done at $SECONDS s"
apps=(fft gray matmul reduce sobel sort transpose)

# 3. counts: hardware vs Nsight Compute vs instrumented, per kernel and launch
metrics=smsp__inst_executed.sum,smsp__thread_inst_executed.sum,smsp__thread_inst_executed_pred_on.sum
branch=smsp__sass_branch_targets.sum,smsp__sass_branch_targets_threads_divergent.sum
if [[ -n "$ncu_bin" ]]; then
    "$ncu_bin" --query-metrics --chip gh100 2>&1 | grep -iE "inst_executed|branch_targets" > "$out/ncu-metrics.txt" \
        || fail "ncu --query-metrics"
else
    fail "ncu not found (put Nsight Compute on PATH or set NCU): no comparison with it"
fi
for a in "${apps[@]}"; do
    if over; then fail "counts of $a not taken (time budget of $budget s spent)"; continue; fi
    d="$out/$a"
    mkdir -p "$d"
    (cd "$d" && "$apps_dir/$a" --seed 1 > plain.out 2> plain.err) || fail "$a: plain run exit $?"
    (cd "$d" && "$xfpx" run --tool counters --counters hardware --report hw.json -- "$apps_dir/$a" --seed 1 \
        > hw.out 2> hw.err) || fail "$a: hardware run exit $?: $(grep -m1 -E 'error|not available' "$d/hw.err")"
    cmp -s "$d/plain.out" "$d/hw.out" || fail "$a: stdout under --counters hardware differs from the plain run's"
    (cd "$d" && "$xfpx" run --tool counters --report inst.json -- "$apps_dir/$a" --seed 1 > inst.out 2> inst.err) \
        || fail "$a: instrumented run exit $?"
    if [[ -n "$ncu_bin" ]]; then
        (cd "$d" && "$ncu_bin" --metrics "$metrics,$branch" --export ncu --force-overwrite "$apps_dir/$a" --seed 1 \
            > ncu.log 2>&1) || fail "$a: ncu exit $?: $(tail -n1 "$d/ncu.log")"
        "$ncu_bin" --import "$d/ncu.ncu-rep" --csv --page raw --print-units base > "$d/ncu.csv" 2>> "$d/ncu.log" \
            || fail "$a: ncu --import"
    fi
    echo "$a: counted at $SECONDS s"
done
python3 "$here/hwcounters_compare.py" "$out" "${apps[@]}" > "$out/compare.txt" 2>&1 || fail "counts differ (compare.txt)"

# 4. wall time, plain and hardware, 3 runs each (interleaved)
: > "$out/times.txt"
timing() { # name dir program args...
    local name=$1 dir=$2
    shift 2
    mkdir -p "$dir"
    for i in 1 2 3; do
        if over; then fail "timing of $name cut short (time budget of $budget s spent)"; return; fi
        local t0 t1
        t0=$(now); (cd "$dir" && "$@" > "t-plain$i.out" 2> "t-plain$i.err"); t1=$(now)
        echo "$name plain $t0 $t1" >> "$out/times.txt"
        t0=$(now)
        (cd "$dir" && "$xfpx" run --tool counters --counters hardware --report "t-hw$i.json" -- "$@" > "t-hw$i.out" 2> "t-hw$i.err") \
            || fail "$name: timed hardware run $i exit $?"
        t1=$(now)
        echo "$name hardware $t0 $t1" >> "$out/times.txt"
    done
}
for a in "${apps[@]}"; do timing "$a" "$out/$a/time" "$apps_dir/$a" --seed 1; done
for p in late_nan batched_gemm; do timing "$p" "$out/$p" "$bench_dir/$p"; done

# 5. the in-field check with hardware counters: a region per application
# learnt from HW_LEARN_RUNS fault-free runs (seeds 11..), the first check
# run live (`--region --fail-on region`, exit 0 expected), every check run
# (HW_CHECK_RUNS fault-free runs with new inputs, seeds 101..) checked
# against the region with no margin (`--margin 0`) and with the default
# margin (a flagged run is a false positive; any at the default fails the
# check), and the
# instrumented report refused by the hardware region (mismatched source)
learn_runs="${HW_LEARN_RUNS:-10}"
check_runs="${HW_CHECK_RUNS:-20}"
: > "$out/region.txt"
for a in "${apps[@]}"; do
    if over; then fail "region check of $a not run (time budget of $budget s spent)"; continue; fi
    r="$out/$a/region"
    mkdir -p "$r"
    learnt=()
    for ((seed = 11; seed < 11 + learn_runs; seed++)); do
        (cd "$r" && "$xfpx" run --tool counters --counters hardware --report "learn$seed.json" -- "$apps_dir/$a" --seed "$seed" \
            > "learn$seed.out" 2> "learn$seed.err") && learnt+=("$r/learn$seed.json") || fail "$a: learning run seed $seed exit $?"
    done
    "$xfpx" region build "${learnt[@]}" --margin 0 -o "$r/region-0.json" > "$r/build-0.log" 2>&1 \
        || fail "$a: region build --margin 0: $(tail -n1 "$r/build-0.log")"
    "$xfpx" region build "${learnt[@]}" -o "$r/region-default.json" > "$r/build-default.log" 2>&1 \
        || fail "$a: region build: $(tail -n1 "$r/build-default.log")"
    live=""
    flagged0=0
    flagged1=0
    checked=0
    for ((seed = 101; seed < 101 + check_runs; seed++)); do
        over && break
        if [[ -z "$live" ]]; then
            (cd "$r" && "$xfpx" run --tool counters --counters hardware --region region-default.json --fail-on region \
                --report "check$seed.json" -- "$apps_dir/$a" --seed "$seed" > "check$seed.out" 2> "check$seed.err")
            live=$?
            [[ $live == 0 || $live == 3 ]] || fail "$a: the live check run (seed $seed) exit $live: $(tail -n1 "$r/check$seed.err")"
        else
            (cd "$r" && "$xfpx" run --tool counters --counters hardware --report "check$seed.json" -- "$apps_dir/$a" --seed "$seed" \
                > "check$seed.out" 2> "check$seed.err") || { fail "$a: check run seed $seed exit $?"; continue; }
        fi
        checked=$((checked + 1))
        "$xfpx" report "$r/check$seed.json" --region "$r/region-0.json" --fail-on region > /dev/null 2> "$r/offline$seed-0.err"
        [[ $? == 3 ]] && flagged0=$((flagged0 + 1))
        "$xfpx" report "$r/check$seed.json" --region "$r/region-default.json" --fail-on region > /dev/null 2> "$r/offline$seed-default.err"
        case $? in
            0) ;;
            3) flagged1=$((flagged1 + 1)); fail "$a: fault-free run seed $seed flagged at the default margin: $(grep -m1 'outside' "$r/offline$seed-default.err")" ;;
            *) fail "$a: xfpx report --region of seed $seed: $(tail -n1 "$r/offline$seed-default.err")" ;;
        esac
    done
    (( checked < check_runs )) && fail "$a: only $checked of $check_runs fault-free runs checked (a run failed, or the time budget of $budget s was spent)"
    "$xfpx" report "$out/$a/inst.json" --region "$r/region-0.json" > "$r/mismatch.out" 2> "$r/mismatch.err"
    mrc=$?
    grep -q "mismatched region" "$r/mismatch.err" || fail "$a: an instrumented report was not refused by the hardware region"
    echo "$a learnt ${#learnt[@]}, live exit ${live:--}, flagged $flagged0/$checked (margin 0), $flagged1/$checked (default) | mismatch exit $mrc" >> "$out/region.txt"
done

python3 "$here/hwcounters_compare.py" --summary "$out" "${apps[@]}" | tee "$out/summary.txt"
if [[ $status == 0 ]]; then echo "hwcounters-check: PASS"; else echo "hwcounters-check: FAIL ($(wc -l < "$out/failures.txt") problems, failures.txt)"; fi
exit $status
