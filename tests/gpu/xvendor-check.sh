#!/usr/bin/env bash
# The cross-vendor suite (tests/xvendor/) on an NVIDIA GPU, one command,
# a short table printed last:
#
#   1. builds xv_basic, xv_intrinsics and xv_sgemm with nvcc (sm_90, -O3,
#      -lineinfo; xv_sgemm with cuBLAS), from inside tests/xvendor/src so
#      that the line tables name xv_basic.cu as the AMD builds' do;
#   2. runs each plain, then under `xfpx run --mode detect --capture`,
#      and checks that its output (every result's bits) is unchanged;
#   3. checks what was captured: every launch of the program's own kernels,
#      and for xv_sgemm the cuBLAS launches too;
#   4. replays each capture with the AMD build on the emulator (`xfpx
#      replay --mode detect --code-object tests/xvendor/gfx90a/P.co`) and
#      compares it with the NVIDIA report (`xfpx compare`): how many lines
#      differ, and how many of those no cause explains.
#
#   export PATH=/usr/local/cuda/bin:$PATH; bash tests/gpu/xvendor-check.sh
#
# Writes to $OUT: xvendor-captures.tar.gz (captures/P/, the capture
# folders, and captures/P.nvidia.json, P.stdout: extract into tests/xvendor/
# and commit, then `cargo test -p xfpx-tests --test xvendor` checks them
# against tests/xvendor/expectations.json) and xvendor-logs.txt (build,
# run, replay and compare output). Needs target/release/xfpx and the NVBit
# tarball in third_party/ (installs the tool as tests/gpu/install-check.sh
# does when it is not installed).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/xvendor-check-out}"
mkdir -p "$out"
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [[ -n "$d" && -x "$d/bin/nvcc" ]]; then export PATH="$d/bin:$PATH"; break; fi
done
log="$out/xvendor-logs.txt"
: > "$log"
say() { echo "== $*" >> "$log"; }
bin="$root/.devout/gpu-suite/bin"
if [[ ! -f "$bin/libxfpx_nvbit.so" ]]; then
    say "install"
    OUT="$out/install" bash "$here/install-check.sh" >> "$log" 2>&1 ||
        { echo "xvendor-check: FAIL: the tool did not install (xvendor-logs.txt)"; tail -5 "$log"; exit 1; }
    rm -rf "$out/install"
fi
xfpx="$bin/xfpx"
suite="$root/tests/xvendor"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/captures" "$work/replay"
programs=(xv_basic xv_intrinsics xv_sgemm)
flags=(-arch=sm_90 -O3 -lineinfo -std=c++17 -I"$root/tests/apps/src" -I"$suite/src")
for p in "${programs[@]}"; do
    extra=()
    [[ $p == xv_sgemm ]] && extra=(-lcublas)
    say "build $p"
    (cd "$suite/src" && nvcc "${flags[@]}" -o "$work/bin/$p" "$p.cu" "${extra[@]}") >> "$log" 2>&1 ||
        { echo "xvendor-check: FAIL: $p did not build (xvendor-logs.txt)"; tail -5 "$log"; exit 1; }
done

# "N launches of K kernels[, L of library kernels]" from a capture manifest
captured() {
    python3 - "$1" <<'EOF'
import json, sys
try:
    m = json.load(open(sys.argv[1] + "/capture.json"))
except Exception as e:
    print(f"no manifest ({e})"); sys.exit()
own = [l for l in m["launches"] if l["kernel"].startswith("_Z") and "xv_" in l["kernel"]]
lib = [l for l in m["launches"] if l not in own]
bad = [l for l in m["launches"] if not l["complete"]]
kernels = {l["kernel"] for l in m["launches"]}
text = f"{len(m['launches'])} launches of {len(kernels)} kernels"
if lib:
    text += f", {len(lib)} of library kernels"
if bad:
    text += f", {len(bad)} incomplete"
if m["not_captured"]:
    text += f", {len(m['not_captured'])} notes of what was not captured"
print(text)
EOF
}
# "D of N lines differ, U unexplained" from a comparison's JSON
differences() {
    python3 - "$1" <<'EOF'
import json, sys
try:
    c = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"no comparison ({e})"); sys.exit()
lines = [l for k in c["kernels"] if k["only_in"] is None for l in k["lines"]]
diff = [l for l in lines if l["only_a"] or l["only_b"]]
unknown = [l for l in diff if "cause unknown" in l["causes"]]
only_a = [k["demangled"] or k["name"] for k in c["kernels"] if k["only_in"] == "a"]
text = f"{len(diff)} of {len(lines)} lines differ, {len(unknown)} unexplained"
if only_a:
    text += f"; {len(only_a)} kernels only on NVIDIA"
print(text)
EOF
}

rows=()
row() { rows+=("$(printf '%-14s| %-10s| %-9s| %-52s| %s' "$1" "$2" "$3" "$4" "$5")"); }
for p in "${programs[@]}"; do
    say "plain $p"
    "$work/bin/$p" > "$work/$p.plain.out" 2>> "$log"
    plain_rc=$?
    cap="$work/captures/$p"
    say "capture $p"
    "$xfpx" run --mode detect --capture "$cap" --capture-max-bytes 64M \
        --report "$work/captures/$p.nvidia.json" -- "$work/bin/$p" > "$work/captures/$p.stdout" 2>> "$log"
    run_rc=$?
    same=FAIL
    if [[ $plain_rc == 0 && $run_rc == 0 ]] && cmp -s "$work/$p.plain.out" "$work/captures/$p.stdout"; then same=PASS; fi
    what=$(captured "$cap")
    got=FAIL
    case $p in
        xv_sgemm) [[ $what == *"of library kernels"* && $what != *incomplete* ]] && got=PASS ;;
        *) [[ $what == "4 launches of 2 kernels"* && $what != *incomplete* ]] && got=PASS ;;
    esac
    say "replay $p"
    "$xfpx" replay --mode detect --code-object "$suite/gfx90a/$p.co" "$cap" --out "$work/replay/$p" \
        --report "$work/replay/$p.amd.json" >> "$log" 2>&1
    say "compare $p"
    "$xfpx" compare "$work/captures/$p.nvidia.json" "$work/replay/$p.amd.json" >> "$log" 2>&1
    "$xfpx" compare --format json "$work/captures/$p.nvidia.json" "$work/replay/$p.amd.json" \
        > "$work/$p.compare.json" 2>> "$log"
    row "$p" "$same" "$got" "$what" "$(differences "$work/$p.compare.json")"
done
tar -czf "$out/xvendor-captures.tar.gz" -C "$work" captures
echo "xvendor-check: captures in $out/xvendor-captures.tar.gz, logs in $log"
printf '%-14s| %-10s| %-9s| %-52s| %s\n' program "output" captured "what was captured" "compare with the AMD replay"
for r in "${rows[@]}"; do echo "$r"; done
