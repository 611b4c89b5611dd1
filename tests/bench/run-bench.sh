#!/usr/bin/env bash
# The benchmark harness for the GPU machine: runs every suite program
# uninstrumented, under `xfpx run` in each detector mode, with the NVIDIA
# tool loaded but nothing instrumented, and (when GPUFPX_DETECTOR names a
# locally built GPU-FPX detector.so) under GPU-FPX; prints slowdowns, the
# geomean per configuration, self-check/checksum agreement and the findings
# of each tool side by side. Writes results.json, results.csv, table.txt,
# table.md, env.txt and logs.tar.gz to $OUT (default .devout/bench-results/).
#
#   tests/bench/build.sh                      # once, where nvcc is
#   tests/bench/run-bench.sh                  # on the GPU machine
#   tests/bench/run-bench.sh --dry-run        # show the plan, run nothing
#   GPUFPX_DETECTOR=/path/to/detector.so tests/bench/run-bench.sh --budget 600
#
# Environment: XFPX (the xfpx binary; default .devout/gpu-suite/bin/ as
# tests/gpu/prepare.sh builds it, then .devout/bin/, target/release/, PATH),
# XFPX_MODES (comma-separated; default read from `xfpx run --help`),
# GPUFPX_DETECTOR, GPUFPX_INJECT (preload|injection), NVBIT_VERSION (recorded
# in env.txt), BENCH_SCALE (work multiplier of every program), PYTHON.
# Runs go cheapest configuration first (base, nvbit-empty, xfpx modes,
# gpufpx), so with --budget the detectors are what a short slot loses.
# Options: see `tests/bench/run-bench.sh --help`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-python3}
if ! command -v "$py" >/dev/null 2>&1; then
  echo "error: $py not found (set PYTHON=/path/to/python3)" >&2
  exit 2
fi
exec "$py" "$here/harness/bench.py" "$@"
