//! The tool library stays mapped once loaded (`-z nodelete`): the HSA
//! runtime closes tool libraries at shutdown, while the library's exit
//! handler, threads and thread-local destructors may still run its code.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
