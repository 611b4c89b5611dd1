#!/usr/bin/env bash
# Offline: how the in-field check's false alarms and detections change with
# the region's margin (`xfpx region build --margin F`), on the reports that
# tests/apps/counters-detect-gpu.sh left in its logs (learn-APP-N.json,
# clean-APP-N.json, and the faulty runs wv0-/wv1-/iat-APP.json that
# completed), or that tests/gpu/hwcounters-check.sh left (hardware
# counters: APP/region/learnN.json and checkN.json, no faulty runs). No GPU
# needed: the reports are re-checked with `xfpx report --region`.
#
#   bash tests/apps/counters-margin.sh DETECT_DIR|HWCOUNTERS_DIR [MARGINS...]
#
# Prints one row per margin: fault-free runs flagged (false alarms) and
# faulty runs flagged, over all apps; then the per-app rows.
set -euo pipefail
dir=${1:?usage: counters-margin.sh DETECT_DIR [MARGINS...]}
shift
margins=("${@:-0 0.1 0.25 0.5 1}")
read -r -a margins <<< "${margins[*]}"
xfpx=${XFPX:-$(dirname "$0")/../../target/debug/xfpx}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
apps=$(ls "$dir" | sed -n 's/^learn-\(.*\)-[0-9]*\.json$/\1/p' | sort -u)
# the reports of APP: learning runs, fault-free checks, faulty runs
learning() { if [ -n "$hw" ]; then ls "$dir/$1"/region/learn*.json; else ls "$dir"/learn-"$1"-*.json; fi; }
clean() { if [ -n "$hw" ]; then ls "$dir/$1"/region/check*.json; else ls "$dir"/clean-"$1"-*.json; fi 2>/dev/null || true; }
faulty() { [ -n "$hw" ] || ls "$dir"/wv0-"$1".json "$dir"/wv1-"$1".json "$dir"/iat-"$1".json 2>/dev/null || true; }
hw=""
if [ -z "$apps" ]; then
    apps=$(ls -d "$dir"/*/region 2>/dev/null | xargs -r -n1 dirname | xargs -r -n1 basename | sort -u)
    hw=1
fi
[ -n "$apps" ] || { echo "counters-margin: no learn-APP-N.json or APP/region/learnN.json reports in $dir" >&2; exit 1; }
# flagged REGION REPORT: 1 when a window of REPORT is outside REGION
flagged() {
    local out
    out=$("$xfpx" report "$2" --region "$1" 2>&1) || true
    if grep -q "outside their region" <<< "$out" && ! grep -q " 0 outside their region" <<< "$out"; then echo 1; else echo 0; fi
}
printf '%-8s %-10s %12s %12s\n' margin app "false alarms" "faults flagged"
for m in "${margins[@]}"; do
    tf=0 tc=0 ff=0 fc=0
    rows=()
    for app in $apps; do
        # shellcheck disable=SC2046
        "$xfpx" region build $(learning "$app") --margin "$m" -o "$work/r.json" > /dev/null 2>&1
        f=0 c=0
        for r in $(clean "$app"); do
            [ -s "$r" ] || continue
            c=$((c + 1)); f=$((f + $(flagged "$work/r.json" "$r")))
        done
        g=0 n=0
        for r in $(faulty "$app"); do
            # a faulty run that crashed (DUE) left no counters to check
            [ -s "$r" ] && grep -q '"counters"' "$r" || continue
            n=$((n + 1)); g=$((g + $(flagged "$work/r.json" "$r")))
        done
        rows+=("$(printf '%-8s %-10s %12s %12s' "$m" "$app" "$f/$c" "$g/$n")")
        tf=$((tf + f)) tc=$((tc + c)) ff=$((ff + g)) fc=$((fc + n))
    done
    printf '%-8s %-10s %12s %12s\n' "$m" all "$tf/$tc" "$ff/$fc"
    printf '%s\n' "${rows[@]}"
done
