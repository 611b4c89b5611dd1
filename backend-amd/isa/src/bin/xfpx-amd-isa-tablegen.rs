//! Regenerates `src/generated/gfx9.rs` from `tables/gfx9.tsv`.
//! Usage: `xfpx-amd-isa-tablegen [CRATE_DIR]` (default: this crate's directory).

#[path = "../../tools/tablegen.rs"]
mod tablegen;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let tsv = match std::fs::read_to_string(dir.join("tables/gfx9.tsv")) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read tables/gfx9.tsv: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = match tablegen::generate(&tsv) {
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
