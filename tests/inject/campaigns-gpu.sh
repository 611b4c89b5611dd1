#!/usr/bin/env bash
# Fault-injection campaigns on an NVIDIA GPU over four workloads, every error
# model: dense GEMM (tests/apps matmul), a reduction (reduce), a stencil
# (sobel, 3x3) and a LeNet-style CNN inference in PyTorch (lenet.py). Each
# workload's campaign draws CAMPAIGN_RUNS faults per model (12 models; SMs
# 0..SMS-1, lanes 0-31, seed 1) and runs them CAMPAIGN_JOBS at a time; the
# four campaigns run side by side. Before them, each program runs
# uninstrumented 3 times alone (the median is the cost baseline). A failed
# self-check exits 0 here (APP_FAIL_STATUS=0) so that a wrong result is an
# SDC (its verdict line differs), not a DUE. Prints, per workload and model,
# Masked/SDC/DUE/not-activated, the median wall of the runs that completed
# against the uninstrumented one (the runs share the GPU and the cores with
# the other campaigns' runs, so it is an upper bound) and runs per hour.
# Env: XFPX (default target/release/xfpx, the NVIDIA tool installed), OUT
# (default ./campaigns-out; a baseline in OUT/plain.tsv is kept), APPS (built apps; default .devout/apps, built
# when missing), CAMPAIGN_RUNS (per model, default 4), CAMPAIGN_JOBS (per
# workload, default 4), CAMPAIGN_BUDGET (seconds for the campaigns, default
# 300; a campaign still running then is stopped and its finished runs
# count), SMS (default: the GPU's SM count, else 132), PYTHON (python3 with
# PyTorch), CAMPAIGN_SERIAL (1: the cost measurement instead: the
# campaigns run one after another, CAMPAIGN_JOBS at a time (set it to 1 for
# a GPU and cores to itself), each after one untimed injection run of
# its workload, so that NVBit's disassembly cache holds the program's
# functions as it does for every run of a campaign but its first).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$PWD/campaigns-out}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
XFPX=${XFPX:-$ROOT/target/release/xfpx}
APPS=${APPS:-$ROOT/.devout/apps}
RUNS=${CAMPAIGN_RUNS:-4}
JOBS=${CAMPAIGN_JOBS:-4}
BUDGET=${CAMPAIGN_BUDGET:-300}
PY=${PYTHON:-python3}
if [ -z "${SMS:-}" ]; then
    SMS=$("$PY" -c "import torch; print(torch.cuda.get_device_properties(0).multi_processor_count)" 2>/dev/null || echo 132)
fi
if [ ! -x "$APPS/matmul" ]; then
    "$ROOT/tests/apps/build.sh" "$APPS" >"$OUT/apps-build.log" 2>&1 || { echo "error: apps did not build (apps-build.log)"; exit 1; }
fi
export APP_FAIL_STATUS=0
WORKLOADS=(matmul reduce sobel lenet)
cmd_of() {
    case $1 in
        matmul) echo "$APPS/matmul --n 256" ;;
        reduce) echo "$APPS/reduce --n 1048576 --blocks 256" ;;
        sobel) echo "$APPS/sobel --width 512 --height 512" ;;
        lenet) echo "$PY $ROOT/tests/inject/lenet.py --batch 256" ;;
    esac
}
timeout_of() { if [ "$1" = lenet ]; then echo 90; else echo 30; fi; }

# the uninstrumented baseline, each program alone (`campaigns-gpu.sh plain`
# measures only that; a later call keeps a baseline already measured)
[ "${1:-}" = plain ] && rm -f "$OUT/plain.tsv"
[ -s "$OUT/plain.tsv" ] || for w in "${WORKLOADS[@]}"; do
    read -r -a cmd <<<"$(cmd_of "$w")"
    times=$(for _ in 1 2 3; do
        s=$(date +%s.%N)
        if "${cmd[@]}" >"$OUT/plain-$w.txt" 2>&1; then
            e=$(date +%s.%N)
            echo "$s $e" | awk '{printf "%.3f\n", $2 - $1}'
        else
            echo "plain $w failed: $(tail -n1 "$OUT/plain-$w.txt")" >&2
        fi
    done | sort -n | sed -n 2p)
    echo "$w ${times:-failed}" >>"$OUT/plain.tsv"
done
if [ "${1:-}" = plain ]; then cat "$OUT/plain.tsv"; exit 0; fi

# the four campaigns side by side (CAMPAIGN_SERIAL=1: one after another,
# each after an untimed warm-up run)
: >"$OUT/walls.tsv"
SERIAL=${CAMPAIGN_SERIAL:-0}
for w in "${WORKLOADS[@]}"; do
    (
        read -r -a cmd <<<"$(cmd_of "$w")"
        if [ "$SERIAL" = 1 ]; then
            (cd "$OUT" && timeout "$(timeout_of "$w")" "$XFPX" run --tool inject --model IAT --sm 0 --dim x --mask 1 \
                --lanes 0 --no-report -- "${cmd[@]}" >"$OUT/warmup-$w.log" 2>&1)
        fi
        s=$SECONDS
        timeout --signal=TERM --kill-after=10 "$BUDGET" "$XFPX" campaign --dir "$OUT/c-$w" --seed 1 \
            --runs $((12 * RUNS)) --sms "0-$((SMS - 1))" --lanes 0-31 --timeout "$(timeout_of "$w")" \
            --jobs "$JOBS" -- "${cmd[@]}" >"$OUT/campaign-$w.log" 2>&1
        echo "exit $?" >>"$OUT/campaign-$w.log"
        echo "$w $((SECONDS - s))" >>"$OUT/walls.tsv"
    ) &
    [ "$SERIAL" = 1 ] && wait
done
wait
"$PY" "$ROOT/tests/inject/campaign_summary.py" "$OUT" "${WORKLOADS[@]}" | tee "$OUT/table.txt"
if [ "$SERIAL" = 1 ]; then at_once="one workload at a time, each after an untimed warm-up run"; else at_once="4 workloads at once"; fi
echo "(N = $RUNS faults per model and workload, seed 1, SMs 0-$((SMS - 1)), lanes 0-31, $JOBS runs at a time per workload, $at_once)" | tee -a "$OUT/table.txt"
