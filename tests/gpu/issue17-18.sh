#!/usr/bin/env bash
# One GPU call for the counters (17) and fault-injection (18) results, under
# one time budget:
#   0. setup: the NVBit tool (`xfpx setup nvidia`), the apps and the
#      benchmark programs built side by side;
#   1. counters' cost on the benchmark programs, alone on the GPU
#      (tests/apps/counters-detect-gpu.sh cost);
#   2. side by side: the inject micro-kernels against their predictions
#      (tests/inject/run_gpu.sh), the campaigns over four workloads
#      (tests/inject/campaigns-gpu.sh) and the in-field check of the seven
#      apps (tests/apps/counters-detect-gpu.sh detect);
#   3. every part's table, then one short summary table last; logs packed
#      into $OUT/issue17-18-logs.tar.gz.
# Env: XFPX (default target/release/xfpx), NVBIT (the NVBit tarball or
# folder; default third_party/nvbit-Linux-x86_64-1.7.7.1.tar.bz2, else
# third_party/nvbit), OUT (default ./issue17-18-out), ISSUE_BUDGET (seconds
# for everything, default 470), and the parts' own knobs (CAMPAIGN_RUNS,
# CAMPAIGN_JOBS, DETECT_RUNS, LEARN_RUNS, DETECT_JOBS, JOBS, ...).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$PWD/issue17-18-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
export XFPX=${XFPX:-$ROOT/target/release/xfpx}
BUDGET=${ISSUE_BUDGET:-470}
START=$SECONDS
left() { echo $((BUDGET - (SECONDS - START))); }
NVBIT=${NVBIT:-$ROOT/third_party/nvbit-Linux-x86_64-1.7.7.1.tar.bz2}
[ -e "$NVBIT" ] || NVBIT=$ROOT/third_party/nvbit
export APPS=$OUT/bin/apps BENCH=$OUT/bin/bench

echo "== 0. setup ($(date -u +%FT%TZ), budget ${BUDGET}s)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -n1 | tee "$OUT/env.txt"
nvcc --version | tail -n1 | tee -a "$OUT/env.txt"
git -C "$ROOT" log --oneline -1 2>/dev/null | tee -a "$OUT/env.txt"
(timeout 200 "$XFPX" setup nvidia --nvbit "$NVBIT" --arch sm_90 >"$OUT/setup.log" 2>&1; echo "setup exit $?" >>"$OUT/setup.log") &
(timeout 200 "$ROOT/tests/apps/build.sh" "$APPS" >"$OUT/apps-build.log" 2>&1) &
(BENCH_OUT=$BENCH timeout 200 "$ROOT/tests/bench/build.sh" >"$OUT/bench-build.log" 2>&1) &
wait
tail -n1 "$OUT/setup.log"
if ! grep -q "setup exit 0" "$OUT/setup.log"; then
    echo "error: the NVBit tool did not build (setup.log):"; tail -n5 "$OUT/setup.log"; exit 1
fi
echo "setup and builds: $((SECONDS - START))s"

echo "== 1. uninstrumented baselines and counters' cost, alone on the GPU"
OUT=$OUT/campaigns PYTHON=${PYTHON:-python3} "$ROOT/tests/inject/campaigns-gpu.sh" plain 2>&1 | sed 's/^/campaign baseline (s): /'
cost_budget=$(( $(left) / 5 ))
OUT=$OUT/counters COST_BUDGET=$cost_budget "$ROOT/tests/apps/counters-detect-gpu.sh" cost >"$OUT/cost.out" 2>&1
cat "$OUT/cost.out"

echo "== 2. micro-kernels, campaigns and the in-field check, side by side ($(left)s left)"
phase=$(( $(left) - 25 ))
(OUT=$OUT/inject CAMPAIGN=0 JOBS=${JOBS:-3} timeout --kill-after=10 "$phase" "$ROOT/tests/inject/run_gpu.sh" >"$OUT/inject.out" 2>&1) &
(OUT=$OUT/campaigns CAMPAIGN_JOBS=${CAMPAIGN_JOBS:-3} CAMPAIGN_BUDGET=$((phase - 30)) \
    "$ROOT/tests/inject/campaigns-gpu.sh" >"$OUT/campaigns.out" 2>&1) &
(OUT=$OUT/counters DETECT_JOBS=${DETECT_JOBS:-4} DETECT_BUDGET=$((phase - 15)) \
    "$ROOT/tests/apps/counters-detect-gpu.sh" detect >"$OUT/detect.out" 2>&1) &
wait
echo "-- inject micro-kernels"; cat "$OUT/inject.out"
echo "-- campaigns"; cat "$OUT/campaigns.out"
echo "-- in-field check"; cat "$OUT/detect.out"

tar -czf "$OUT/issue17-18-logs.tar.gz" -C "$OUT" --exclude=work --exclude=bin --exclude='issue17-18-logs.tar.gz' . 2>/dev/null
echo "== summary (${SECONDS}s; logs: $OUT/issue17-18-logs.tar.gz)"
python3 "$ROOT/tests/gpu/issue17_18_summary.py" "$OUT" | tee "$OUT/summary.txt"
