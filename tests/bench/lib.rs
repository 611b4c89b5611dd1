//! The benchmark suite for detection speed: CUDA programs and a PyTorch
//! training step in `src/` (built by `build.sh` into `.devout/bench/`), and
//! the harness `run-bench.sh` (Python, in `harness/`) that runs each program
//! uninstrumented, under every xfpx mode, with the NVIDIA tool loaded but
//! nothing instrumented, and under GPU-FPX when given, and prints slowdowns,
//! self-check agreement and findings side by side. Measured tables live in
//! `RESULTS.md`. This crate holds no code: `cargo test -p xfpx-bench` runs
//! the harness's tests, which need no GPU.
