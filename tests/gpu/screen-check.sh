#!/usr/bin/env bash
# Launch screening on a GPU machine, one command; a short table printed
# last, the logs and reports in $OUT/screen-check-logs.tar.gz.
#
#   1  the tool library builds from this xfpx (`xfpx setup nvidia
#      --verbose`): when nvcc fails, its errors are printed and the check
#      stops (FAIL).
#   2  the scan kernel alone (tests/gpu/screen/screen_unit.cu) prints what
#      the counting rule's host mirror says it must
#      (tests/gpu/screen/screen_unit.expected, from xfpx-nvidia).
#   3  late_nan, gemm, reduce_scan, stencil3d (tests/bench/src), each run
#      plain, with the default (fast mode, --sample auto, launches screened),
#      with --screen-launches off (sampling alone) and with --sample 1:
#      wall time and the program's own GPU time (its BENCH line), against
#      plain; the program's SELFCHECK and CHECKSUM lines identical to
#      plain's; how many launches were instrumented, screened, unchecked.
#   4  late_nan's NaN (launch 5,000 of relax_step) is reported by the
#      default run with that launch index (a screened finding), and by
#      --sample 1 precisely.
#
#   export PATH=/usr/local/cuda/bin:$PATH
#   XFPX_RELEASE=target/release/xfpx bash tests/gpu/screen-check.sh
#
# Needs: a release xfpx (XFPX_RELEASE, default target/release/xfpx; it
# carries the tool's Rust core and sources), the NVBit tarball
# (NVBIT_TARBALL, default third_party/nvbit-Linux-x86_64-1.7.7.1.tar.bz2),
# nvcc, python3. REPEAT=N runs every configuration N times (default 1)
# and keeps the fastest; PROGRAMS="late_nan gemm" runs only those.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/screen-check-out}"
mkdir -p "$out"
logs="$out/screen-logs"
rm -rf "$logs" && mkdir -p "$logs"
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [[ -n "$d" && -x "$d/bin/nvcc" ]]; then export PATH="$d/bin:$PATH"; break; fi
done
release="${XFPX_RELEASE:-$root/target/release/xfpx}"
tarball="${NVBIT_TARBALL:-$root/third_party/nvbit-Linux-x86_64-1.7.7.1.tar.bz2}"
repeat="${REPEAT:-1}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
pack() { tar -C "$out" -czf "$out/screen-check-logs.tar.gz" screen-logs 2>/dev/null; }
fail() {
    echo "screen-check: FAIL: $*"
    pack
    exit 1
}
for tool in nvcc python3; do
    command -v "$tool" > /dev/null 2>&1 || fail "$tool not found"
done
[[ -x "$release" ]] || fail "no xfpx binary at $release (set XFPX_RELEASE)"
[[ -e "$tarball" ]] || fail "no NVBit tarball or folder at $tarball (set NVBIT_TARBALL)"

# --- 1: the tool library ---------------------------------------------------
bin="$work/bin"
mkdir -p "$bin"
cp "$release" "$bin/xfpx"
xfpx="$bin/xfpx"
if ! "$xfpx" setup nvidia --nvbit "$tarball" --arch "${XFPX_ARCH:-sm_90}" --verbose > "$logs/setup.log" 2>&1; then
    echo "screen-check: the tool library did not build; nvcc said:"
    grep -n -i -B2 -A3 "error" "$logs/setup.log" | head -120
    echo "--- last lines of setup.log ---"
    tail -20 "$logs/setup.log"
    fail "xfpx setup nvidia (full log: screen-logs/setup.log)"
fi
[[ -f "$bin/libxfpx_nvbit.so" ]] || fail "setup reported success but $bin/libxfpx_nvbit.so is missing"

rows=()
row() { rows+=("$(printf '%-12s| %-26s| %s' "$1" "$2" "$3")"); }

# --- 2: the scan kernel alone -------------------------------------------------
if nvcc -arch=sm_90 -O3 -std=c++17 -I"$root/asm-snippets/nvidia" -o "$work/screen_unit" \
    "$root/tests/gpu/screen/screen_unit.cu" > "$logs/screen_unit-build.log" 2>&1; then
    "$work/screen_unit" > "$logs/screen_unit.out" 2> "$logs/screen_unit.err"
    if diff "$root/tests/gpu/screen/screen_unit.expected" "$logs/screen_unit.out" > "$logs/screen_unit.diff"; then
        row "scan kernel" "counts vs host mirror" "PASS: every line as expected"
    else
        row "scan kernel" "counts vs host mirror" "FAIL: $(wc -l < "$logs/screen_unit.diff") diff lines (screen_unit.diff); first: $(grep -m1 '^[<>]' "$logs/screen_unit.diff")"
    fi
else
    echo "screen-check: the scan kernel's check did not build; nvcc said:"
    head -40 "$logs/screen_unit-build.log"
    row "scan kernel" "counts vs host mirror" "FAIL: did not build (screen_unit-build.log)"
fi

# --- 3 and 4: the programs ----------------------------------------------------
progs="$work/bench"
mkdir -p "$progs"
read -r -a programs <<< "${PROGRAMS:-late_nan gemm reduce_scan stencil3d}"
for p in "${programs[@]}"; do
    nvcc -arch=sm_90 -lineinfo -O3 -std=c++17 -I"$root/tests/bench/src" -o "$progs/$p" "$root/tests/bench/src/$p.cu" \
        > "$logs/build-$p.log" 2>&1 || fail "$p did not build (build-$p.log): $(tail -3 "$logs/build-$p.log")"
done
export XFPX_NVDISASM_CACHE="$work/cache"

# one run: wall seconds on stdout; output in $logs/NAME.log
timed() {
    local name=$1; shift
    local t0 t1 code
    t0=$(date +%s.%N)
    timeout 600 "$@" > "$logs/$name.log" 2>&1
    code=$?
    t1=$(date +%s.%N)
    echo "exit $code" >> "$logs/$name.log"
    python3 -c "print(f'{$t1-$t0:.3f}')"
}
# the fastest of $repeat runs (the last run's log and report are kept)
best() {
    local name=$1; shift
    local b="" t
    for _ in $(seq "$repeat"); do
        t=$(timed "$name" "$@")
        b=$(python3 -c "print(min(float('$t'), float('${b:-$t}')))")
    done
    echo "$b"
}
gpu_ms() { sed -n 's/^BENCH [^ ]* gpu_ms=\([0-9.]*\).*/\1/p' "$logs/$1.log" | tail -1; }
outputs() { grep -E '^(SELFCHECK|CHECKSUM) ' "$logs/$1.log"; }

# warm NVBit's disassembly cache once per program, so timings compare warm runs
for p in "${programs[@]}"; do
    timed "$p-warmup" "$xfpx" run --sample 1 --report "$logs/$p-warmup.json" -- "$progs/$p" > /dev/null
done

report_py="$here/screen_report.py"

configs=("default:" "screen-off:--screen-launches off" "sample1:--sample 1")
table_rows=()
for p in "${programs[@]}"; do
    plain=$(best "$p-plain" "$progs/$p")
    plain_gpu=$(gpu_ms "$p-plain")
    plain_out=$(outputs "$p-plain")
    table_rows+=("$(printf '%-12s %-11s %8s %7s %10s %7s  %-9s %s' "$p" plain "$plain" "1.00x" "${plain_gpu:-?}" "1.00x" "-" "")")
    for c in "${configs[@]}"; do
        name=${c%%:*}
        flags=${c#*:}
        # shellcheck disable=SC2086
        wall=$(best "$p-$name" "$xfpx" run $flags --report "$logs/$p-$name.json" -- "$progs/$p")
        gpu=$(gpu_ms "$p-$name")
        same=SAME
        [[ "$(outputs "$p-$name")" == "$plain_out" && -n "$plain_out" ]] || same=DIFFERENT
        wr=$(python3 -c "print(f'{$wall/$plain:.2f}x')")
        gr=$(python3 -c "print(f'{float(\"${gpu:-nan}\")/float(\"${plain_gpu:-nan}\"):.2f}x')" 2>/dev/null || echo "?")
        what=$(python3 "$report_py" summary "$logs/$p-$name.json")
        table_rows+=("$(printf '%-12s %-11s %8s %7s %10s %7s  %-9s %s' "$p" "$name" "$wall" "$wr" "${gpu:-?}" "$gr" "$same" "$what")")
        [[ $same == SAME ]] || row "$p" "$name outputs" "FAIL: SELFCHECK/CHECKSUM differ from plain ($p-$name.log)"
    done
done
if [[ " ${programs[*]} " == *" late_nan "* ]]; then
    row "late_nan" "default finds launch 5000" "$(python3 "$report_py" late "$logs/late_nan-default.json" screened)"
    row "late_nan" "--sample 1 finds 5000" "$(python3 "$report_py" late "$logs/late_nan-sample1.json" precise)"
fi
# the other programs raise nothing (tests/bench/RESULTS.md): a screened
# finding there is a false one
for p in "${programs[@]}"; do
    [[ $p == late_nan ]] && continue
    n=$(python3 "$report_py" screened-count "$logs/$p-default.json")
    if [[ $n == 0 ]]; then
        row "$p" "no false screened finding" "PASS: 0 screened findings"
    else
        row "$p" "no false screened finding" "FAIL: $n screened findings in a program that raises nothing"
    fi
done
{
    echo "program      config          wall s   ratio     gpu ms   ratio  outputs   launches and findings"
    printf '%s\n' "${table_rows[@]}"
    echo
    echo "check       | what                      | result"
    echo "------------+---------------------------+-------"
    printf '%s\n' "${rows[@]}"
} | tee "$out/screen-table.txt"
cp "$out/screen-table.txt" "$logs/"
pack
if printf '%s\n' "${rows[@]}" | grep -q "FAIL"; then
    echo "screen-check: FAIL (see the table)"
    exit 1
fi
echo "screen-check: PASS"
