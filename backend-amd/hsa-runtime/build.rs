//! The shared library answers to the real runtime's name: its SONAME is
//! `libhsa-runtime64.so.1`, so programs linked against it (through a
//! `libhsa-runtime64.so` link) ask the loader for that name; and it defines
//! the symbol version `ROCR_1` AMD's library defines, so programs linked
//! against AMD's runtime (whose references carry that version) load it
//! without the dynamic loader's "no version information" warning.

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let map = out.join("rocr.map");
    std::fs::write(&map, "ROCR_1 {\n  global: hsa_*;\n  local: *;\n};\n").expect("write the version script");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsa-runtime64.so.1");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={}", map.display());
    println!("cargo:rerun-if-changed=build.rs");
}
