//! Regenerates `src/generated/{gfx9,opcode,operation,facts}.rs` of
//! xfpx-amd-isa from the tables under `tables/`.
//! Usage: `cargo run -p xfpx-amd-isa-tablegen [ISA_CRATE_DIR]`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    let code = match xfpx_amd_isa_tablegen::Tables::read(&dir.join("tables"))
        .and_then(|t| xfpx_amd_isa_tablegen::generate(&t))
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    for (name, text) in code.files() {
        if let Err(e) = std::fs::write(dir.join("src/generated").join(name), text) {
            eprintln!("error: cannot write src/generated/{name}: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
