//! Every instruction the decoder knows (fixture listings and tools/extra.s)
//! has semantics: executed once on a fresh wave it either runs or faults on
//! memory, never stops as unsupported. (Values are validated by the fixture
//! suite, not here.)

use std::path::Path;
use xfpx_amd_emu::decode::{decode, Target};
use xfpx_amd_emu::memory::{GlobalMemory, Lds};
use xfpx_amd_emu::wave::{Env, ExecError, Observations, Wave, PRIVATE_BUFFER_MARK};

#[test]
fn every_decodable_instruction_executes() {
    let mut unsupported = Vec::new();
    let mut ran = 0;
    for target in ["gfx908", "gfx90a", "gfx942", "gfx950"] {
        let isa = Target::from_name(target).expect("target");
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("fixtures/{target}/extra.mc"));
        let listing = std::fs::read_to_string(path).expect("listing");
        for line in listing.lines() {
            let Some((asm, enc)) = line.rsplit_once("//") else { continue };
            let bytes: Vec<u8> =
                enc.split_whitespace().flat_map(|w| u32::from_str_radix(w, 16).expect("hex").to_le_bytes()).collect();
            let inst = decode(isa, &bytes).expect("decodes");
            // IEEE mode, no denormal flushing, DX10_CLAMP clear.
            let mut wave = Wave::new(0x1000, 0xF0 | 1 << 9);
            wave.sgpr[126] = u32::MAX;
            wave.sgpr[127] = u32::MAX;
            // s[0:3] is the private segment buffer; 4 bytes per lane.
            wave.sgpr[3] = PRIVATE_BUFFER_MARK;
            wave.private_size = 64;
            wave.private = vec![0; 64 * 64];
            let mut global = GlobalMemory::new();
            let mut lds = Lds::new(1 << 16);
            let mut obs = Observations::default();
            let mut env = Env { global: &mut global, lds: &mut lds, obs: &mut obs, target: isa };
            match wave.step(&inst, &mut env) {
                Ok(_) | Err(ExecError::MemoryFault { .. }) => ran += 1,
                Err(e) => unsupported.push(format!("{target}: {}: {e}", asm.trim())),
            }
        }
    }
    assert!(
        unsupported.is_empty(),
        "{} instructions without semantics:\n{}",
        unsupported.len(),
        unsupported.join("\n")
    );
    println!("{ran} instructions executed");
}
