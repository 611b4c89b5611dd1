#!/usr/bin/env bash
# The counters tool on the GPU, one call (no Rust here; about 4 minutes):
#  1. installs the tool as a user does (`xfpx setup nvidia --nvbit TARBALL`
#     beside a copy of the prebuilt release xfpx, as install-check.sh);
#  2. builds the GPU suite's programs and the seven applications;
#  3. runs each program plain, under `xfpx run --tool counters`, and plain
#     under Nsight Compute (smsp__inst_executed.sum,
#     smsp__thread_inst_executed.sum, smsp__thread_inst_executed_pred_on.sum
#     per launch), checks the instrumented run's stdout equals the plain
#     run's, and compares the counts kernel by kernel, summed over launches
#     (equal expected; the ratio is printed where not);
#  4. region smoke: a region from three fault-free runs (seeds 1-3) of one
#     application, then a fourth run (seed 4) with --region and
#     --fail-on region must exit 0.
# Prints the comparison table and PASS/FAIL last; logs under $OUT/counters.
#
#   XFPX_RELEASE=target/release/xfpx        NVBIT_TARBALL=third_party/nvbit-...tar.bz2
#   COUNTERS_BUDGET_S=200 (programs not started after it are listed as not run)
#   REGION_APP=reduce   WINDOW_BLOCKS=8   NCU=/path/to/ncu
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/.devout/counters-out}/counters"
mkdir -p "$out"
release="${XFPX_RELEASE:-$root/target/release/xfpx}"
tarball="${NVBIT_TARBALL:-$root/third_party/nvbit-Linux-x86_64-1.7.7.1.tar.bz2}"
budget="${COUNTERS_BUDGET_S:-200}"
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [[ -n "$d" && -x "$d/bin/nvcc" ]]; then export PATH="$d/bin:$PATH"; break; fi
done
fail() { echo "counters-check: FAIL: $*"; exit 1; }
[[ -x "$release" && -e "$tarball" ]] || fail "missing $release or $tarball"
ncu_bin="${NCU:-$(command -v ncu || true)}"
[[ -n "$ncu_bin" ]] || fail "ncu not found (put Nsight Compute on PATH or set NCU)"

# 1. the tool, installed beside xfpx
bin="$root/.devout/counters/bin"
rm -rf "$bin" && mkdir -p "$bin"
cp "$release" "$bin/xfpx"
xfpx="$bin/xfpx"
"$xfpx" setup nvidia --nvbit "$tarball" > "$out/setup.log" 2>&1 || { tail -n 20 "$out/setup.log"; fail "xfpx setup nvidia"; }
echo "setup: done in $SECONDS s"

# 2. the programs
suite="$root/.devout/counters/suite"
apps="$root/.devout/counters/apps"
bash "$here/build-suite.sh" "$suite" > "$out/build-suite.log" 2>&1 || { tail -n 20 "$out/build-suite.log"; fail "suite build"; }
bash "$root/tests/apps/build.sh" "$apps" > "$out/build-apps.log" 2>&1 || { tail -n 20 "$out/build-apps.log"; fail "apps build"; }
echo "build: done at $SECONDS s"

# 3. name|program|args: the suite (fpx_crash is left out: it crashes by
# design; ms_threads launches from several host threads and streams)
programs=(
    "fpx_basic|$suite/fpx_basic|" "fpx_loops|$suite/fpx_loops|" "fpx_clean|$suite/fpx_clean|"
    "fpx_half|$suite/fpx_half|" "many_sites|$suite/many_sites|" "ms_threads|$suite/ms_threads|"
)
for a in fft gray matmul reduce sobel sort transpose; do programs+=("$a|$apps/$a|--seed 1"); done
metrics=smsp__inst_executed.sum,smsp__thread_inst_executed.sum,smsp__thread_inst_executed_pred_on.sum
status=0
: > "$out/programs.txt"
for entry in "${programs[@]}"; do
    IFS='|' read -r name prog args <<< "$entry"
    if (( SECONDS > budget )); then
        echo "NOT RUN: $name (time budget of $budget s spent)" | tee -a "$out/programs.txt"
        status=1
        continue
    fi
    d="$out/$name"
    mkdir -p "$d"
    # shellcheck disable=SC2086
    (cd "$d" && "$prog" $args > plain.out 2> plain.err); plain_rc=$?
    # shellcheck disable=SC2086
    (cd "$d" && "$xfpx" run --tool counters --report counters.json -- "$prog" $args > counted.out 2> counted.err)
    counted_rc=$?
    # shellcheck disable=SC2086
    (cd "$d" && "$ncu_bin" --metrics "$metrics" --export ncu --force-overwrite "$prog" $args > ncu.log 2>&1)
    ncu_rc=$?
    "$ncu_bin" --import "$d/ncu.ncu-rep" --csv --page raw --print-units base > "$d/ncu.csv" 2>> "$d/ncu.log"
    same=same
    cmp -s "$d/plain.out" "$d/counted.out" || { same=DIFFERENT; status=1; }
    [[ $plain_rc == "$counted_rc" ]] || { same="$same, exit $plain_rc vs $counted_rc"; status=1; }
    [[ $ncu_rc == 0 ]] || { echo "ncu failed on $name (exit $ncu_rc): $(tail -n 2 "$d/ncu.log")"; status=1; }
    echo "$name: stdout under xfpx $same (exit $counted_rc); ncu exit $ncu_rc; at $SECONDS s" | tee -a "$out/programs.txt"
done

# 4. region smoke
app="${REGION_APP:-reduce}"
wb="${WINDOW_BLOCKS:-8}"
r="$out/region"
mkdir -p "$r"
region_ok=1
for seed in 1 2 3; do
    (cd "$r" && "$xfpx" run --tool counters --window-blocks "$wb" --report "run$seed.json" -- "$apps/$app" --seed "$seed" \
        > "run$seed.out" 2> "run$seed.err") || region_ok=0
done
"$xfpx" region build "$r/run1.json" "$r/run2.json" "$r/run3.json" -o "$r/region.json" > "$r/build.log" 2>&1 || region_ok=0
(cd "$r" && "$xfpx" run --tool counters --window-blocks "$wb" --region region.json --fail-on region \
    --report run4.json -- "$apps/$app" --seed 4 > run4.out 2> run4.err)
rc4=$?
grep "region:" "$r/run4.err"
[[ $rc4 == 0 ]] || region_ok=0
echo "region smoke ($app, windows of $wb blocks): learnt from seeds 1-3, seed 4 exit $rc4 under --fail-on region"
[[ $region_ok == 1 ]] || status=1

python3 "$here/counters_compare.py" "$out" "${programs[@]%%|*}" || status=1
if [[ $status == 0 ]]; then echo "counters-check: PASS"; else echo "counters-check: FAIL"; fi
exit $status
