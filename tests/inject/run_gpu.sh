#!/usr/bin/env bash
# The inject tool on an NVIDIA GPU: builds the micro-kernels, runs each
# error model with `xfpx run --tool inject`, compares the faulty output bit
# for bit with the prediction (tests/inject/check.py) where the model's
# effect follows from the source alone, reports outcome and activations for
# the others, then runs a small `xfpx campaign`. Logs under $OUT (default
# ./inject-out); the last lines are a table.
# Needs: nvcc on PATH, target/release/xfpx, the tool installed
# (`xfpx setup nvidia --nvbit ...`).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$PWD/inject-out}
mkdir -p "$OUT"
XFPX=${XFPX:-$ROOT/target/release/xfpx}
SM=${SM:-5}
W="$OUT/work"
mkdir -p "$W"
cd "$W" || exit 1
nvcc -O3 -arch=sm_90 -o micro "$ROOT/tests/inject/micro.cu" >"$OUT/build.log" 2>&1 || { echo "micro.cu did not build (see build.log)"; cat "$OUT/build.log"; exit 1; }
for k in index fadd select shared; do ./micro $k golden-$k.bin || { echo "golden run of $k failed"; exit 1; }; done
TABLE="$OUT/table.txt"
printf "%-10s %-62s %-6s %-12s %s\n" case fault exit activations check >"$TABLE"
# case kernel check-case fault...
run_case() {
    local name=$1 kernel=$2 check=$3; shift 3
    local rep="$OUT/$name.report.json"
    timeout 120 "$XFPX" run --tool inject "$@" --report "$rep" --dump "$OUT/dump-$name" -- ./micro "$kernel" "faulty-$name.bin" >"$OUT/$name.log" 2>&1
    local rc=$?
    local act
    act=$(python3 -c "import json,sys; i=json.load(open(sys.argv[1])).get('injection') or {}; print(str(i.get('activations','-')) + ('' if i.get('exact', True) else ' (lower bound)'))" "$rep" 2>/dev/null || echo "-")
    local verdict
    case $check in
        due) if [ $rc -ne 0 ] && [ "${act%% *}" != "0" ] && [ "$act" != "-" ]; then verdict="DUE as predicted"; else verdict="MISMATCH: expected a failed run that fired"; fi ;;
        none) verdict=$(python3 "$ROOT/tests/inject/check.py" none "$SM" golden-$kernel.bin faulty-$name.bin 2>&1); [ "$act" = "0" ] || verdict="MISMATCH: activations $act, expected 0" ;;
        -) if [ ! -f "faulty-$name.bin" ]; then verdict="no output (run failed)"; elif cmp -s golden-$kernel.bin "faulty-$name.bin"; then verdict="output = golden (not bit-exact-predicted)"; else verdict="output changed (not bit-exact-predicted)"; fi ;;
        *) if [ $rc -ne 0 ]; then verdict="MISMATCH: run failed (exit $rc)"; else verdict=$(python3 "$ROOT/tests/inject/check.py" "$check" "$SM" golden-$kernel.bin faulty-$name.bin 2>&1); fi ;;
    esac
    printf "%-10s %-62s %-6s %-12s %s\n" "$name" "$*" "$rc" "$act" "$verdict" >>"$TABLE"
}
run_case IAT index iat --model IAT --dim x --mask 1 --lanes 0-3 --sm "$SM"
run_case IAW index iaw --model IAW --dim x --mask 32 --sm "$SM"
run_case IAC index iac --model IAC --dim x --mask 1 --sm "$SM"
run_case IOC-fp fadd ioc --model IOC --unit fp --sm "$SM"
run_case WV select wv --model WV --predicate 0 --sm "$SM"
run_case IMD-data shared imd_data --model IMD --store data --mask 0x10000 --lanes 0-3 --sm "$SM"
run_case IMD-addr shared imd_addr --model IMD --store address --mask 4 --lanes 0-3 --sm "$SM"
run_case IVOC fadd due --model IVOC --sm "$SM"
run_case IVRA fadd due --model IVRA --operand dst --sm "$SM"
run_case unplaced index none --model IAT --dim x --mask 1 --lanes 0-3 --sm 200
run_case IOC-int fadd - --model IOC --unit int --lanes 7 --sm "$SM"
run_case IRA-src fadd - --model IRA --operand src0 --register 2 --lanes 7 --sm "$SM"
run_case IRA-dst fadd - --model IRA --operand dst --register 2 --lanes 7 --sm "$SM"
run_case IIO fadd - --model IIO --mask 0x100 --lanes 7 --sm "$SM"
run_case IMS shared - --model IMS --mask 0x1 --lanes 7 --sm "$SM"
run_case IAL-ign fadd - --model IAL --unit fp --lane-fault ignore --lanes 7 --sm "$SM"
run_case IAL-force select - --model IAL --unit int --lane-fault force --lanes 7 --sm "$SM"
# a small campaign on the fadd workload: 30 runs over 3 models, all SMs
timeout 200 "$XFPX" campaign --dir "$OUT/campaign" --models IAT,WV,IOC --runs 30 --sms 0-131 --lanes 0-31 \
    --output out.bin --jobs 4 -- "$W/micro" fadd out.bin >"$OUT/campaign.log" 2>&1
echo "campaign exit $?" >>"$OUT/campaign.log"
cat "$TABLE"
echo "--- campaign (30 runs, fadd, IAT/WV/IOC):"
tail -n 8 "$OUT/campaign.log"
