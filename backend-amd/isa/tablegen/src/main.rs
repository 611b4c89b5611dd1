//! Regenerates `src/generated/gfx9.rs` of xfpx-amd-isa from `tables/gfx9.tsv`.
//! Usage: `cargo run -p xfpx-amd-isa-tablegen [ISA_CRATE_DIR]`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    let tsv = match std::fs::read_to_string(dir.join("tables/gfx9.tsv")) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read tables/gfx9.tsv: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = match xfpx_amd_isa_tablegen::generate(&tsv) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::write(dir.join("src/generated/gfx9.rs"), code) {
        eprintln!("error: cannot write src/generated/gfx9.rs: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
