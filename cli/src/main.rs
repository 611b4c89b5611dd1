//! The `xfpx` command line.
fn main() {
    println!("xfpx {}", env!("CARGO_PKG_VERSION"));
}
