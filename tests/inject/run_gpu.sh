#!/usr/bin/env bash
# The inject tool on an NVIDIA GPU: builds the micro-kernels, checks their
# SASS is the committed listing's (micro.sm_90.sass, which the predictions
# follow), runs each error model with `xfpx run --tool inject` (JOBS at a
# time) and compares each outcome with its prediction (check.py): the faulty
# output bit for bit, or a DUE with its reason (the CUDA error the program
# printed); IRA on a destination is reported, not predicted (it reads
# registers no instruction wrote). Logs under $OUT (default ./inject-out);
# the last lines are a table.
# Needs: nvcc and cuobjdump on PATH, $XFPX (default target/release/xfpx)
# with the tool installed (`xfpx setup nvidia --nvbit ...`).
# Env: SM (default 5), JOBS (default 6), RUN_TIMEOUT seconds per run (60),
# CAMPAIGN=0 skips the small campaign at the end.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$PWD/inject-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
XFPX=${XFPX:-$ROOT/target/release/xfpx}
SM=${SM:-5}
JOBS=${JOBS:-6}
RUN_TIMEOUT=${RUN_TIMEOUT:-60}
CHECK="$ROOT/tests/inject/check.py"
W="$OUT/work"
mkdir -p "$W/cases"
cd "$W" || exit 1
nvcc -O3 -arch=sm_90 -o micro "$ROOT/tests/inject/micro.cu" >"$OUT/build.log" 2>&1 || { echo "micro.cu did not build (see build.log)"; cat "$OUT/build.log"; exit 1; }
cuobjdump -sass micro >"$OUT/micro.sass" 2>>"$OUT/build.log"
SASS_LINE=$(python3 "$CHECK" sass "$ROOT/tests/inject/micro.sm_90.sass" "$OUT/micro.sass" 2>&1)
for k in index fadd select shared guarded; do ./micro $k golden-$k.bin || { echo "golden run of $k failed"; exit 1; }; done

# One case: NAME KERNEL CHECK FAULT... ; CHECK is a check.py case, `due:TEXT`
# (the run fails, fired, and its log names TEXT), `due` (fails and fired),
# `none` (never fires, output golden) or `report` (outcome only).
run_case() {
    local name=$1 kernel=$2 check=$3; shift 3
    local rep="$OUT/$name.report.json" log="$OUT/$name.log" faulty="$W/cases/faulty-$name.bin"
    local start=$SECONDS
    timeout "$RUN_TIMEOUT" "$XFPX" run --tool inject "$@" --report "$rep" -- ./micro "$kernel" "$faulty" >"$log" 2>&1
    local rc=$? secs=$((SECONDS - start))
    local act
    act=$(python3 -c "import json,sys; i=json.load(open(sys.argv[1])).get('injection') or {}; print(str(i.get('activations','-')) + ('' if i.get('exact', True) else '(lb)'))" "$rep" 2>/dev/null || echo "-")
    local verdict fired=1
    case $act in 0|-) fired=0 ;; esac
    case $check in
        due:*)
            local want=${check#due:}
            if [ $rc -ne 0 ] && [ $fired = 1 ] && grep -qi -- "$want" "$log"; then verdict="DUE as predicted ($want)"
            else verdict="MISMATCH: expected DUE '$want' (exit $rc; log: $(grep -i 'micro:\|error' "$log" | head -n1))"; fi ;;
        due) if [ $rc -ne 0 ] && [ $fired = 1 ]; then verdict="DUE as predicted (the fault's trap)"; else verdict="MISMATCH: expected a failed run that fired"; fi ;;
        none) verdict=$(python3 "$CHECK" none "$SM" golden-$kernel.bin "$faulty" 2>&1); [ "$act" = "0" ] || verdict="MISMATCH: activations $act, expected 0" ;;
        report)
            if [ $rc -ne 0 ]; then verdict="DUE, not predicted: $(grep -i 'micro:' "$log" | head -n1)"
            elif [ ! -f "$faulty" ]; then verdict="no output, not predicted"
            else verdict="not predicted: $(python3 "$CHECK" changed "$SM" golden-$kernel.bin "$faulty" 2>&1)"; fi ;;
        *) if [ $rc -ne 0 ]; then verdict="MISMATCH: run failed (exit $rc): $(grep -i 'micro:\|error' "$log" | head -n1)"; else verdict=$(python3 "$CHECK" "$check" "$SM" golden-$kernel.bin "$faulty" 2>&1); fi ;;
    esac
    printf "%-10s %-58s %-4s %-8s %-4s %s\n" "$name" "$*" "$rc" "$act" "${secs}s" "$verdict" >"$W/cases/$name.row"
}

CASES=(
    "IAT index iat --model IAT --dim x --mask 1 --lanes 0-3"
    "IAW index iaw --model IAW --dim x --mask 32"
    "IAC index iac --model IAC --dim x --mask 1"
    "IOC-fp fadd ioc --model IOC --unit fp"
    "WV select wv --model WV --predicate 0"
    "IMD-data shared imd_data --model IMD --store data --mask 0x10000 --lanes 0-3"
    "IMD-addr shared imd_addr --model IMD --store address --mask 4 --lanes 0-3"
    "IMS shared due:misaligned --model IMS --mask 0x1 --lanes 7"
    "IRA-src index ira_src --model IRA --operand src0 --register 4 --lanes 7"
    "IIO index iio --model IIO --mask 0x20 --lanes 7"
    "IAL-ign fadd ial_ignore --model IAL --unit fp --lane-fault ignore --lanes 7"
    "IAL-force guarded ial_force --model IAL --unit fp --lane-fault force --lanes 7"
    "IOC-int fadd due:misaligned --model IOC --unit int --lanes 7"
    "IIO-due fadd due:misaligned --model IIO --mask 0x2 --lanes 7"
    "IVOC fadd due --model IVOC"
    "IVRA fadd due --model IVRA --operand dst"
    "IRA-dst fadd report --model IRA --operand dst --register 2 --lanes 7"
    "unplaced index none --model IAT --dim x --mask 1 --lanes 0-3 --sm 200"
)
running=0
for c in "${CASES[@]}"; do
    # shellcheck disable=SC2086
    set -- $c
    name=$1 kernel=$2 check=$3; shift 3
    case " $* " in *" --sm "*) ;; *) set -- "$@" --sm "$SM" ;; esac
    run_case "$name" "$kernel" "$check" "$@" &
    running=$((running + 1))
    if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
done
wait
TABLE="$OUT/table.txt"
{
    echo "micro SASS: $SASS_LINE"
    printf "%-10s %-58s %-4s %-8s %-4s %s\n" case fault exit fired time check
    for c in "${CASES[@]}"; do n=${c%% *}; cat "$W/cases/$n.row" 2>/dev/null || echo "$n: no result"; done
} >"$TABLE"
if [ "${CAMPAIGN:-1}" != 0 ]; then
    # a small campaign on the fadd workload: 30 runs over 3 models, all SMs
    timeout 200 "$XFPX" campaign --dir "$OUT/campaign" --models IAT,WV,IOC --runs 30 --sms 0-131 --lanes 0-31 \
        --output out.bin --jobs 4 -- "$W/micro" fadd out.bin >"$OUT/campaign.log" 2>&1
    echo "campaign exit $?" >>"$OUT/campaign.log"
fi
cat "$TABLE"
if [ "${CAMPAIGN:-1}" != 0 ]; then
    echo "--- campaign (30 runs, fadd, IAT/WV/IOC):"
    tail -n 8 "$OUT/campaign.log"
fi
# exit 1 when a prediction failed
! grep -q "MISMATCH\|no result" "$TABLE"
