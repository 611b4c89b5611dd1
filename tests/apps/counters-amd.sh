#!/usr/bin/env bash
# The counters on the emulator (gfx942): the paper's Table I (normalised
# INACT and STACK, min and max over each application's launches) and a
# detection demo (an operational region learnt from fault-free replays of
# reduce_sum with new inputs; a planted change of thread activity is
# flagged, the fault-free replays are not).
# Usage: tests/apps/counters-amd.sh [XFPX]   (default: target/debug/xfpx)
# Prints Markdown; needs python3 (to read the JSON files).
set -euo pipefail
HERE="$(cd "$(dirname "$0")/amd" && pwd)"
X="${1:-$HERE/../../../target/debug/xfpx}"
W="$(mktemp -d)"
trap 'rm -rf "$W"' EXIT
T=gfx942

echo "## Table I (emulator, $T)"
echo
echo "| app | launches | INACT min | INACT max | STACK min | STACK max |"
echo "|---|---|---|---|---|---|"
for app in fft gray matmul reduce sobel sort transpose; do
  mkdir -p "$W/$app"
  n=0; skipped=""
  for l in "$HERE"/launches/"$app"*.json; do
    case "$l" in *.expect.json) continue;; esac
    b=$(basename "$l" .json)
    if "$X" replay --target $T --tool counters --report "$W/$app/$b.json" "$l" >/dev/null 2>"$W/$app/$b.err"; then
      n=$((n+1))
    else
      skipped="$skipped $b"
    fi
  done
  if [ "$n" = 0 ]; then
    why=$(cat "$W/$app/"*.err | sed -n 's/.*kernel "[^"]*": //p' | head -n1)
    echo "| $app | 0 (the emulator cannot run it: $why) | | | | |"
    continue
  fi
  python3 - "$app" "$n" "$skipped" "$W/$app"/*.json <<'PY'
import json, sys
app, n, skipped, files = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4:]
inact, stack = [], []
for f in files:
    r = json.load(open(f))
    s = r["counters"]
    for k in s["kernels"]:
        for l in k["launches"]:
            for w in l["windows"]:
                slots = w["warp_instructions"] * s["warp_size"]
                inact.append(w["inactive_lanes"] / slots if slots else 0.0)
                d = w["divergent_branches"]
                stack.append((d + w["reconvergences"]) / d if d else 0.0)
note = f" (not run:{' '.join(skipped)})" if skipped else ""
print(f"| {app} | {n}{note} | {min(inact):.4f} | {max(inact):.4f} | {min(stack):.4f} | {max(stack):.4f} |")
PY
done

echo
echo "## Detection demo (reduce_sum, $T)"
# reduce_partial with new inputs: the same grid and size, other values
python3 - "$W" "$HERE" <<'PY'
import json, random, struct, sys
w, here = sys.argv[1], sys.argv[2]
base = json.load(open(f"{here}/launches/reduce_partial.json"))
base["code_object"] = f"{here}/{{target}}/reduce.co"
def launch(name, seed, n):
    rnd = random.Random(seed)
    data = struct.pack(f"<{100000}f", *[rnd.uniform(-1.0, 1.0) for _ in range(100000)])
    open(f"{w}/{name}.x.bin", "wb").write(data)
    l = json.loads(json.dumps(base))
    l["buffers"]["x"]["init"] = {"file": f"{w}/{name}.x.bin"}
    l["args"][2] = {"u32": n}
    json.dump(l, open(f"{w}/{name}.json", "w"))
for s in range(1, 6):
    launch(f"learn{s}", s, 100000)      # learning runs
for s in range(11, 31):
    launch(f"fresh{s}", s, 100000)      # fault-free runs with new inputs
launch("planted", 99, 99000)            # planted: size argument 99000, not 100000
PY
for s in 1 2 3 4 5; do
  "$X" replay --target $T --tool counters --report "$W/learn$s.report.json" "$W/learn$s.json" >/dev/null 2>&1
done
"$X" region build "$W"/learn*.report.json -o "$W/region.json" >/dev/null 2>&1
fp=0
for s in $(seq 11 30); do
  if ! "$X" replay --target $T --tool counters --no-report --region "$W/region.json" --fail-on region "$W/fresh$s.json" >/dev/null 2>&1; then
    fp=$((fp+1))
  fi
done
echo
echo "- learnt from 5 fault-free replays (new random inputs, n = 100000)"
echo "- fault-free replays with 20 other inputs flagged: $fp of 20"
set +e
"$X" replay --target $T --tool counters --no-report --region "$W/region.json" --fail-on region "$W/planted.json" 2>&1 | grep "region:" | sed 's/^/    /' 
echo "- planted (size argument 99000 instead of 100000: fewer active lanes in the last grid stride), exit status ${PIPESTATUS[0]}"
