//! End-to-end tests of the `xfpx` command line live in `tests/`; GPU programs with known findings in `gpu/`.
