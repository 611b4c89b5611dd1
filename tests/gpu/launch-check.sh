#!/usr/bin/env bash
# Issue 16's launch checks on a GPU machine, one command (about 4 minutes),
# a short table printed last; everything else goes to $OUT.
#
#   A  late_nan's NaN (launch 5,000 of relax_step) is reported with that
#      launch index, under --sample 1 and under the default mode, and the
#      report's "device findings:" note says how findings arrived (ring or
#      final sweep) and which launch serials the device records named.
#   B  NVBit's per-function disassembler runs (`nvdisasm -b SM90 FILE`, FILE
#      the bytes of one `.text.<name>` section) against one run over all of
#      a cubin's functions laid end to end: both outputs are kept as
#      fixtures ($OUT/disasm-capture/) and the batched one, cut by the
#      splitter the prefill uses (backend-nvidia example split_check), is
#      compared byte for byte with each function's own run; and gemm's and
#      late_nan's first run (empty disassembly cache, batched prefill)
#      against their warm run.
#   C  what checking every launch costs on late_nan: plain, default and
#      --sample 1 wall time, and whether the default found the NaN (the
#      default screens the launches it does not instrument: its finding is
#      a screened one, `nan@5000(screened)`).
#   D  launch screening on four programs (tests/gpu/screen-check.sh, its
#      table in $OUT/screen/screen-table.txt); SKIP_SCREEN=1 leaves it out.
#
#   export PATH=/usr/local/cuda/bin:$PATH; bash tests/gpu/launch-check.sh
#
# Needs target/release/xfpx and the NVBit tarball in third_party/ (installs
# the tool as tests/gpu/install-check.sh does when it is not installed).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/launch-check-out}"
mkdir -p "$out"
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [[ -n "$d" && -x "$d/bin/nvcc" ]]; then export PATH="$d/bin:$PATH"; break; fi
done
bin="$root/.devout/gpu-suite/bin"
if [[ ! -f "$bin/libxfpx_nvbit.so" ]]; then
    OUT="$out/install" bash "$here/install-check.sh" > "$out/install.log" 2>&1 ||
        { echo "launch-check: FAIL: the tool did not install (install.log)"; tail -5 "$out/install.log"; exit 1; }
fi
xfpx="$bin/xfpx"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
progs="$work/bench"
mkdir -p "$progs"
for p in late_nan gemm reduce_scan; do
    nvcc -arch=sm_90 -lineinfo -O3 -std=c++17 -I"$root/tests/bench/src" -o "$progs/$p" "$root/tests/bench/src/$p.cu" \
        > "$out/build-$p.log" 2>&1 || { echo "launch-check: FAIL: $p did not build"; tail -5 "$out/build-$p.log"; exit 1; }
done
export XFPX_NVDISASM_CACHE="$work/cache"
rows=()
row() { rows+=("$(printf '%-4s| %-46s| %s' "$1" "$2" "$3")"); }
# wall seconds of a command, its output in $out/$1.log
timed() {
    local name=$1; shift
    local t0 t1
    t0=$(date +%s.%N)
    "$@" > "$out/$name.log" 2>&1
    local code=$?
    t1=$(date +%s.%N)
    python3 -c "print(f'{$t1-$t0:.2f}')"
    return $code
}
# "nan@5000 | device findings: ..." for relax_step's findings in a report
launches_of() {
    python3 - "$1" <<'EOF'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"no report ({e})"); sys.exit()
found = [f"{x['kind']}@{'unknown' if x.get('first_launch_unknown') else x['first_launch']}"
         for k in r["kernels"] if "relax_step" in k["name"] for x in k["records"]]
found += [f"{s['kind']}@{s['first_launch']}(screened)"
          for k in r["kernels"] if "relax_step" in k["name"] for s in k.get("screened", [])]
ks = [k for k in r["kernels"] if "relax_step" in k["name"]]
checked = (f"{ks[0]['instrumented_launches']} instrumented, {ks[0].get('screened_launches', 0)} screened "
           f"of {ks[0]['launches']} launches") if ks else "relax_step not seen"
note = next((n for n in r["run"]["notes"] if n.startswith("device findings")), "no delivery note")
print(f"{' '.join(found) or 'nothing found'} ({checked}) | {note}")
EOF
}

# --- A and C: late_nan ---------------------------------------------------
plain=$(timed late_nan-plain "$progs/late_nan")
s1=$(timed late_nan-sample1 "$xfpx" run --sample 1 --report "$out/late_nan-sample1.json" -- "$progs/late_nan")
def=$(timed late_nan-default "$xfpx" run --report "$out/late_nan-default.json" -- "$progs/late_nan")
a1=$(launches_of "$out/late_nan-sample1.json")
a2=$(launches_of "$out/late_nan-default.json")
verdict() { [[ "$1" == *"nan@5000"* ]] && echo PASS || echo FAIL; }
row A "late_nan --sample 1: $(verdict "$a1")" "${a1}"
row A "late_nan default: $(verdict "$a2")" "${a2}"
ratio() { python3 -c "print(f'{$1/$2:.2f}x')"; }
row C "late_nan wall plain / default / --sample 1" "${plain} s / ${def} s ($(ratio "$def" "$plain")) / ${s1} s ($(ratio "$s1" "$plain"))"

# --- B: first run against warm run (batched prefill) ---------------------
# the prefill's note in a report: "N batched disassembler runs, M functions alone"
prefill_of() {
    python3 - "$1" <<'EOF'
import json, re, sys
try:
    notes = json.load(open(sys.argv[1]))["run"]["notes"]
except Exception as e:
    print(f"no report ({e})"); sys.exit()
n = next((n for n in notes if "ahead of their first launch" in n), "")
m = re.search(r"disassembled (\d+) .* in ([0-9.]+ s) \((\d+) batched disassembler runs, (\d+) functions alone", n)
print(f"prefill {m.group(1)} functions in {m.group(2)}: {m.group(3)} batched runs, {m.group(4)} alone" if m else "no prefill note")
EOF
}
for p in gemm late_nan; do
    rm -rf "$XFPX_NVDISASM_CACHE"
    gplain=$(timed "$p-plain" "$progs/$p")
    first=$(timed "$p-first" "$xfpx" run --report "$out/$p-first.json" -- "$progs/$p")
    warm=$(timed "$p-warm" "$xfpx" run --report "$out/$p-warm.json" -- "$progs/$p")
    row B "$p wall plain / first run / warm run" \
        "${gplain} s / ${first} s / ${warm} s (first/warm $(ratio "$first" "$warm")); $(prefill_of "$out/$p-first.json")"
done

# --- B: per-function against batched disassembly ------------------------
cap="$out/disasm-capture"
mkdir -p "$cap"
for p in late_nan gemm reduce_scan; do
    d="$cap/$p"
    mkdir -p "$d"
    (cd "$d" && cuobjdump -xelf sm_90 "$progs/$p" > /dev/null 2>&1)
    cubin=$(ls "$d"/*.cubin 2>/dev/null | head -1)
    if [[ -z "$cubin" ]]; then row B "$p batched disassembly" "SKIPPED: no sm_90 cubin extracted"; continue; fi
    line=$(python3 - "$cubin" "$d" <<'EOF'
import os, re, struct, subprocess, sys, time
cubin, d = sys.argv[1], sys.argv[2]
b = open(cubin, "rb").read()
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
secs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
strtab = secs[shstrndx]
def name(off):
    s = strtab[4] + off
    return b[s:b.index(b"\0", s)].decode()
funcs = [(name(s[0])[6:], b[s[4]:s[4] + s[5]]) for s in secs if name(s[0]).startswith(".text.") and s[5] > 0]
per, t0 = [], time.time()
for i, (n, code) in enumerate(funcs):
    f = os.path.join(d, f"func{i}.bin")
    open(f, "wb").write(code)
    o = subprocess.run(["nvdisasm", "-b", "SM90", f], capture_output=True).stdout
    open(os.path.join(d, f"func{i}.nvdisasm.txt"), "wb").write(o)
    per.append(o.decode(errors="replace"))
t_per = time.time() - t0
whole = b"".join(c for _, c in funcs)
open(os.path.join(d, "all.bin"), "wb").write(whole)
t0 = time.time()
batched = subprocess.run(["nvdisasm", "-b", "SM90", os.path.join(d, "all.bin")], capture_output=True).stdout.decode(errors="replace")
t_all = time.time() - t0
open(os.path.join(d, "all.nvdisasm.txt"), "w").write(batched)
open(os.path.join(d, "functions.txt"), "w").write("".join(f"func{i} {n} {len(c)}\n" for i, (n, c) in enumerate(funcs)))
print(f"nvdisasm {len(funcs)} runs {t_per:.2f} s vs one run {t_all:.2f} s")
EOF
)
    # the example is built where Rust is (the GPU machine has none):
    # cargo build --release -p xfpx-nvidia --example split_check
    cut=$("$root/target/release/examples/split_check" "$d" 2>&1 | tail -1)
    row B "$p: per-function == split" "$cut; $line"
done

# --- D: launch screening (its own table) ------------------------------------
if [[ "${SKIP_SCREEN:-0}" != 1 ]]; then
    if OUT="$out/screen" XFPX_RELEASE="${XFPX_RELEASE:-$xfpx}" bash "$here/screen-check.sh" > "$out/screen-check.log" 2>&1; then
        row D "screen-check.sh" "PASS (screen/screen-table.txt)"
    else
        row D "screen-check.sh" "FAIL: $(tail -1 "$out/screen-check.log")"
    fi
fi

# --- the table -------------------------------------------------------------
{
    echo "part| check                                         | result"
    echo "----+-----------------------------------------------+-------"
    printf '%s\n' "${rows[@]}"
} | tee "$out/launch-table.txt"
