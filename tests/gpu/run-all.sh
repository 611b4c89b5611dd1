#!/usr/bin/env bash
# Every GPU check in one call, for a GPU machine with what
# tests/gpu/prepare.sh and tests/bench/build.sh built (in .devout/): the
# grouped checks of guarded instructions (backend-nvidia/tests/gpu-smoke/
# guarded-check.sh), the GPU suite (run-gpu-checks.sh, both modes) and the
# benchmark (tests/bench/run-bench.sh). With GPUFPX_DETECTOR set, both also run
# GPU-FPX's detector and compare findings with it. Everything each part
# writes is packed into $OUT/gpu-run.tar.gz; the tables are printed last.
#
#   GPUFPX_DETECTOR=/path/to/detector.so bash tests/gpu/run-all.sh [bench options]
#
# Environment: INSTALL=1 first installs the tool as README says
# (install-check.sh: `xfpx setup nvidia` from the NVBit tarball); PARALLEL=1
# adds the parallel-job check (ranks-check.sh, RANKS processes); GUARDED=0, SUITE=0, BENCH=0
# skip those parts; options
# after the script name go to run-bench.sh (e.g. --programs gemm --timeout 20).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
out="${OUT:-$root/gpu-run-out}"
mkdir -p "$out"
work="$(mktemp -d)"
status=0
if [[ "${INSTALL:-0}" != 0 ]]; then
    OUT="$work/install" bash "$here/install-check.sh" > "$work/install.log" 2>&1 || status=1
    # The suite's programs, where the rank check finds them too.
    [[ -x "$root/.devout/gpu-suite/suite/fpx_basic" ]] ||
        bash "$here/build-suite.sh" "$root/.devout/gpu-suite/suite" > "$work/build-suite.log" 2>&1 || status=1
fi
if [[ "${GUARDED:-1}" != 0 ]]; then
    OUT="$work/guarded" bash "$root/backend-nvidia/tests/gpu-smoke/guarded-check.sh" > "$work/guarded.log" 2>&1 || status=1
fi
if [[ "${SUITE:-1}" != 0 ]]; then
    OUT="$work/suite" bash "$here/run-gpu-checks.sh" > "$work/suite.log" 2>&1 || status=1
fi
if [[ "${PARALLEL:-0}" != 0 ]]; then
    OUT="$work/ranks" bash "$here/ranks-check.sh" > "$work/ranks.log" 2>&1 || status=1
fi
if [[ "${BENCH:-1}" != 0 ]]; then
    gpufpx=()
    [[ -n "${GPUFPX_DETECTOR:-}" ]] && gpufpx=(--gpufpx "$GPUFPX_DETECTOR")
    OUT="$work/bench" bash "$root/tests/bench/run-bench.sh" "${gpufpx[@]}" "$@" > "$work/bench.log" 2>&1 || status=1
fi
tar -C "$work" -czf "$out/gpu-run.tar.gz" .
for f in install.log guarded.log ranks/ranks-table.txt suite/vs-gpufpx.txt bench/table.txt suite/table.txt; do
    if [[ -f "$work/$f" ]]; then
        echo "== $f"
        cat "$work/$f"
    fi
done
rm -rf "$work"
exit $status
