#!/usr/bin/env bash
# Ranks of a parallel job on the GPU machine: starts $RANKS processes of a
# GPU suite program at once, each as `xfpx run --report r.%r.json` with the
# rank set by hand (OMPI_COMM_WORLD_RANK/SIZE, as mpirun would), merges the
# reports with `xfpx report --merge` and checks that every rank wrote its
# report, that the merged report names all ranks, and that each finding of
# the program's expected file was seen on every rank. Where mpirun exists,
# the two MPI forms run too: `mpirun -np N xfpx run --report r.%r.json`
# (merged the same way) and `xfpx run -- mpirun -np N` (one report; with
# each --inject).
# Logs go under $OUT (default ./ranks-check-out); the table is printed last;
# the exit status is 0 only when every check passes.
#
#   RANKS=4                 processes started
#   RANKS_PROGRAM=fpx_basic the suite program (its expected file is checked)
#   XFPX=... RANKS_CMD="..."  another xfpx binary / command line (then only
#                           the rank checks run: no expected file)
#   RANKS_VENDOR=auto       --vendor of xfpx run
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/ranks-check-out}"
mkdir -p "$out"
logs="$(mktemp -d)/ranks-check-logs"
mkdir -p "$logs"
ranks="${RANKS:-4}"
prog="${RANKS_PROGRAM:-fpx_basic}"
per_run="${XFPX_GPU_TIMEOUT:-120}"
vendor="${RANKS_VENDOR:-auto}"
table="$out/ranks-table.txt"
: > "$table"
status=0

for d in "${CUDA_HOME:-}" /usr/local/cuda; do
    if [[ -n "$d" && -x "$d/bin/nvdisasm" ]]; then export PATH="$d/bin:$PATH"; break; fi
done
xfpx="${XFPX:-$root/.devout/gpu-suite/bin/xfpx}"
tool="$root/.devout/gpu-suite/bin/libxfpx_nvbit.so"
if [[ -z "${XFPX_NVBIT_TOOL:-}" && -f "$tool" ]]; then export XFPX_NVBIT_TOOL="$tool"; fi
expected=""
if [[ -n "${RANKS_CMD:-}" ]]; then
    read -r -a cmd <<< "$RANKS_CMD"
else
    expected="$here/src/$prog.expected.json"
    suite="$root/.devout/gpu-suite/suite"
    cmd=("$suite/$prog")
fi

row() { printf '%-34s %-5s %s\n' "$1" "$2" "$3" >> "$table"; [[ "$2" == PASS ]] || status=1; }

if [[ ! -x "$xfpx" || ! -x "${cmd[0]}" ]]; then
    row "prerequisites" FAIL "missing $xfpx or ${cmd[0]} (run tests/gpu/prepare.sh)"
    exit 1
fi
# Launcher variables of the environment this script runs in would name
# other ranks.
unset OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE PMI_RANK PMI_SIZE PMIX_RANK SLURM_PROCID SLURM_NTASKS

# check.py REPORTS_DIR MERGED: per-rank reports, merged ranks, expected findings on every rank.
check() {
    python3 - "$@" "$ranks" "$expected" <<'EOF'
import glob, json, os, sys
folder, merged_path, ranks, expected = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
problems = []
everyone = list(range(ranks))
if folder != "-":
    for r in everyone:
        path = os.path.join(folder, f"r.{r}.json")
        if not os.path.exists(path):
            problems.append(f"no report r.{r}.json")
            continue
        got = sorted({p.get("rank") for p in json.load(open(path)).get("processes", []) if p.get("rank") is not None})
        if got != [r]:
            problems.append(f"r.{r}.json names ranks {got}")
if not os.path.exists(merged_path):
    print("; ".join(problems + [f"no report {os.path.basename(merged_path)}"]))
    sys.exit(1)
m = json.load(open(merged_path))
got = sorted({p.get("rank") for p in m.get("processes", []) if p.get("rank") is not None})
if got != everyone:
    problems.append(f"merged report names ranks {got}, expected {everyone}")
records = [(k["name"], rec) for k in m["kernels"] for rec in k["records"]]
if not records:
    problems.append("no findings at all")
if expected:
    for f in json.load(open(expected))["findings"]:
        seen = [rec for (k, rec) in records if k == f["kernel"] and rec["kind"] == f["kind"] and rec["format"] == f["format"]]
        if not seen:
            problems.append(f"{f['kernel']} {f['kind']} ({f['format']}) not found")
        elif not any(rec.get("ranks") == everyone for rec in seen):
            problems.append(f"{f['kernel']} {f['kind']} seen on ranks {[rec.get('ranks') for rec in seen]}")
else:
    partial = [(k, rec["site"]["offset"], rec.get("ranks")) for (k, rec) in records if rec.get("ranks") != everyone]
    if partial:
        problems.append(f"findings not on every rank: {partial[:3]}")
print("; ".join(problems[:4]) if problems else f"{len(records)} findings, each on ranks 0-{ranks - 1}")
sys.exit(1 if problems else 0)
EOF
}

# 1. Processes started by this script, the rank set by hand.
mkdir -p "$logs/by-hand"
pids=()
for ((r = 0; r < ranks; r++)); do
    (OMPI_COMM_WORLD_RANK=$r OMPI_COMM_WORLD_SIZE=$ranks timeout -k 5 "$per_run" \
        "$xfpx" run --vendor "$vendor" --report "$logs/by-hand/r.%r.json" -- "${cmd[@]}" \
        > "$logs/by-hand/rank$r.log" 2>&1; exit $?) 2>/dev/null &
    pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
if [[ $failed == 0 ]]; then row "by hand: $ranks processes" PASS "all exited 0"; else row "by hand: $ranks processes" FAIL "$failed exited non-zero"; fi
"$xfpx" report --merge "$logs"/by-hand/r.*.json -o "$logs/by-hand/merged.json" > "$logs/by-hand/merged.txt" 2>&1
detail="$(check "$logs/by-hand" "$logs/by-hand/merged.json" 2>&1)" && row "by hand: merged" PASS "$detail" || row "by hand: merged" FAIL "$detail"

# 2. and 3. Under mpirun, where there is one.
if command -v mpirun > /dev/null 2>&1; then
    mpi=(mpirun -np "$ranks" --oversubscribe)
    [[ $(id -u) == 0 ]] && mpi+=(--allow-run-as-root)
    mkdir -p "$logs/per-rank" "$logs/around"
    (timeout -k 5 "$per_run" "${mpi[@]}" "$xfpx" run --vendor "$vendor" --report "$logs/per-rank/r.%r.json" -- "${cmd[@]}" \
        > "$logs/per-rank/mpirun.log" 2>&1; exit $?) 2>/dev/null
    rc=$?
    "$xfpx" report --merge "$logs"/per-rank/r.*.json -o "$logs/per-rank/merged.json" > "$logs/per-rank/merged.txt" 2>&1
    detail="$(check "$logs/per-rank" "$logs/per-rank/merged.json" 2>&1)" && [[ $rc == 0 ]] \
        && row "mpirun xfpx run --report r.%r" PASS "$detail" || row "mpirun xfpx run --report r.%r" FAIL "rc $rc; $detail"
    # Around the launcher: --inject auto (the default) must find every rank;
    # preload (the library also enters mpirun) is run for the record only:
    # with Open MPI 4.1.6 on the H100 no rank attached that way.
    for inject in auto preload; do
        (timeout -k 5 "$per_run" "$xfpx" run --vendor "$vendor" --inject "$inject" --report "$logs/around/job.$inject.json" \
            -- "${mpi[@]}" "${cmd[@]}" > "$logs/around/xfpx.$inject.log" 2>&1; exit $?) 2>/dev/null
        rc=$?
        if detail="$(check - "$logs/around/job.$inject.json" 2>&1)" && [[ $rc == 0 ]]; then
            row "xfpx run --inject $inject -- mpirun" PASS "$detail"
        elif [[ $inject == preload ]]; then
            printf '%-34s %-5s %s\n' "xfpx run --inject preload -- mpirun" INFO "rc $rc; $detail" >> "$table"
        else
            row "xfpx run --inject $inject -- mpirun" FAIL "rc $rc; $detail"
        fi
    done
else
    echo "SKIP: the mpirun forms (no mpirun on this machine)" >> "$table"
fi

tar -C "$(dirname "$logs")" -czf "$out/ranks-check-logs.tar.gz" "$(basename "$logs")"
echo "ranks-check: logs in $out/ranks-check-logs.tar.gz"
cat "$table"
exit $status
