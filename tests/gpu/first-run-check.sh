#!/usr/bin/env bash
# A program's first run under xfpx against a later one (disassembly
# cached), on a GPU machine: each configuration runs the same command with
# the disassembly cache in a folder of its own, emptied for a first run;
# a short table printed last, the logs in $OUT/first-run-logs.
#
#   XFPX=<xfpx with its NVIDIA tool set up> OUT=<folder> bash tests/gpu/first-run-check.sh
#
# Configurations, in this order, each against plain (uninstrumented) in
# the same call: `first` (empty cache; a kernel whose disassembly is not
# cached runs screened while it is disassembled in the background),
# `warm` (the cache `first` left), and, with BASELINE=1, `first-wait`
# (empty cache, XFPX_BACKGROUND_DISASSEMBLY=0: NVBit disassembles each
# kernel at its first launch, as before). For each: whole-process wall
# time, the program's timed GPU section (its BENCH gpu_ms line), whether
# its CHECKSUM equals plain's, and xfpx's notes on preparation and on the
# launches that waited. PROGRAMS names the commands (default: the PyTorch
# training step of tests/bench/src/train_mlp.py). REPEATS=N (default 1)
# runs the whole sequence N times: the table shows medians, and a line per
# program gives the first run's wall and GPU time against the warm run's
# of the same repeat (median over the repeats): a plain PyTorch run alone
# moved between 8.8 and 14.7 s from one call to the next on an H200.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/first-run-out}"
logs="$out/first-run-logs"
rm -rf "$logs" && mkdir -p "$logs"
xfpx="${XFPX:?set XFPX to an xfpx binary whose NVIDIA tool is set up}"
[[ -x "$xfpx" ]] || { echo "first-run-check: FAIL: no xfpx at $xfpx"; exit 1; }
programs="${PROGRAMS:-pytorch}"
configs="first warm"
[[ "${BASELINE:-0}" == 1 ]] && configs="$configs first-wait"

command_of() {
    case "$1" in
    pytorch) echo "python3 $root/tests/bench/src/train_mlp.py" ;;
    *) echo "$1" ;;
    esac
}

repeats="${REPEATS:-1}"

# run NAME CONFIG CACHE -- COMMAND...: wall seconds on stdout; output in
# the log of repeat $rep
run() {
    local name="$1" config="$2" cache="$3"
    shift 4
    local log="$logs/$name.$config.$rep.log"
    local t0 t1
    t0=$(date +%s.%N)
    XDG_CACHE_HOME="$cache" "$@" > "$log" 2>&1
    echo "exit $?" >> "$log"
    t1=$(date +%s.%N)
    python3 -c "print(f'{$t1 - $t0:.2f}')"
}

# file_name PROGRAM: PROGRAM as a file name (a path's slashes made _)
file_name() {
    local n=${1//\//_}
    echo "${n#_}"
}

field() { # field LOG KEY: the value after KEY= on the program's BENCH line
    grep -m1 '^BENCH' "$1" | tr ' ' '\n' | grep "^$2=" | cut -d= -f2
}

median() { python3 -c 'import statistics, sys; v = [float(x) for x in sys.argv[1:] if x != "-"]; print(f"{statistics.median(v):.2f}" if v else "-")' "$@"; }
ratio_of() { python3 -c "print(f'{$1 / $2:.2f}')" 2> /dev/null || echo -; }

rows=()
summary=()
for p in $programs; do
    cmd=$(command_of "$p")
    n=$(file_name "$p")
    declare -A walls=() gpus=() same=() waited=()
    firsts=() gfirsts=()
    for ((rep = 1; rep <= repeats; rep++)); do
        walls[plain]+=" $(run "$n" plain "$out/cache-plain" -- $cmd)"
        plain_gpu=$(field "$logs/$n.plain.$rep.log" gpu_ms)
        gpus[plain]+=" ${plain_gpu:--}"
        plain_sum=$(grep -m1 '^CHECKSUM' "$logs/$n.plain.$rep.log")
        declare -A this_wall=() this_gpu=()
        for c in $configs; do
            cache="$out/cache-$n"
            env_extra=()
            case "$c" in
            first) rm -rf "$cache" && mkdir -p "$cache" ;;
            warm) ;;
            first-wait)
                cache="$out/cache-$n-wait"
                rm -rf "$cache" && mkdir -p "$cache"
                env_extra=(XFPX_BACKGROUND_DISASSEMBLY=0)
                ;;
            esac
            wall=$(run "$n" "$c" "$cache" -- env "${env_extra[@]}" "$xfpx" run -- $cmd)
            log="$logs/$n.$c.$rep.log"
            gpu=$(field "$log" gpu_ms)
            sum=$(grep -m1 '^CHECKSUM' "$log")
            walls[$c]+=" $wall"
            gpus[$c]+=" ${gpu:--}"
            this_wall[$c]=$wall
            this_gpu[$c]=${gpu:--}
            [[ -n "$plain_sum" && "$sum" == "$plain_sum" ]] || same[$c]=DIFF
            waited[$c]=$(grep -o '[0-9]* launch[es]* of [0-9]* kernels\? ran screened' "$log" | head -1)
        done
        if [[ -n "${this_wall[first]:-}" && -n "${this_wall[warm]:-}" ]]; then
            firsts+=("$(ratio_of "${this_wall[first]}" "${this_wall[warm]}")")
            gfirsts+=("$(ratio_of "${this_gpu[first]}" "${this_gpu[warm]}")")
        fi
        unset this_wall this_gpu
    done
    plain_wall=$(median ${walls[plain]})
    plain_gpu=$(median ${gpus[plain]})
    rows+=("$(printf '%-10s %-11s %8s %6s %10s %6s  %s' "$p" plain "$plain_wall" 1.00 "$plain_gpu" 1.00 -)")
    for c in $configs; do
        wall=$(median ${walls[$c]})
        gpu=$(median ${gpus[$c]})
        rows+=("$(printf '%-10s %-11s %8s %6s %10s %6s  %s; %s' "$p" "$c" "$wall" "$(ratio_of "$wall" "$plain_wall")" "$gpu" \
            "$(ratio_of "$gpu" "$plain_gpu")" "${same[$c]:-SAME}" "${waited[$c]:-no launch waited}")")
    done
    ((${#firsts[@]})) && summary+=("$p: first run against the warm run of the same repeat, median of $repeats: wall $(median "${firsts[@]}") (each: ${firsts[*]}), GPU section $(median "${gfirsts[@]}") (each: ${gfirsts[*]})")
    unset walls gpus same waited
done
echo
echo "program    config          wall s  ratio     gpu ms  ratio  outputs; launches that waited for their disassembly (medians of $repeats)"
printf '%s\n' "${rows[@]}"
((${#summary[@]})) && printf '%s\n' "${summary[@]}"
for p in $programs; do
    for c in $configs; do
        echo "--- $p $c (repeat 1): xfpx's notes on preparation"
        grep -i -E 'preparing instrumented code|disassembl|ran screened' "$logs/$(file_name "$p").$c.1.log" | cut -c1-400 | head -8
    done
done
