//! The shared library answers to the real runtime's name: its SONAME is
//! `libhsa-runtime64.so.1`, so programs linked against it (through a
//! `libhsa-runtime64.so` link) ask the loader for that name.

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhsa-runtime64.so.1");
    println!("cargo:rerun-if-changed=build.rs");
}
