//! Regenerates `src/generated/{gfx9,opcode,operation}.rs` of xfpx-amd-isa from
//! `tables/gfx9.tsv`, `tables/control.tsv` and `tables/family.tsv`.
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
    let control = match std::fs::read_to_string(dir.join("tables/control.tsv")) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read tables/control.tsv: {e}");
            return ExitCode::FAILURE;
        }
    };
    let family = match std::fs::read_to_string(dir.join("tables/family.tsv")) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read tables/family.tsv: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = match xfpx_amd_isa_tablegen::generate(&tsv, &control, &family) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    for (name, text) in [("gfx9.rs", &code.table), ("opcode.rs", &code.opcodes), ("operation.rs", &code.operations)] {
        if let Err(e) = std::fs::write(dir.join("src/generated").join(name), text) {
            eprintln!("error: cannot write src/generated/{name}: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
