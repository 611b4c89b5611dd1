//! Hostile code for the call graph: words of the calls fixture's `.text`
//! replaced by random words or by call-shaped ones (`s_call_b64`,
//! `s_swappc_b64`, `s_setpc_b64`, `s_getpc_b64` and 64-bit adds with random
//! operands). The rewrite never panics; when it succeeds, the object parses
//! and every instrumented device function's scratch registers lie within
//! the grown allocation of each kernel said to reach it (a copy made for a
//! kernel at its register budget borrows dead registers as the kernel does).

mod common;

use std::path::Path;

use proptest::prelude::*;
use xfpx_amd::rewrite::{self, KernelState, Mode, RewriteOptions, TableAddress};
use xfpx_amd::CodeObject;

fn calls_fixture(target: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("emulator/fixtures").join(target).join("calls.co");
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A call-shaped word with random operand fields.
fn call_word(kind: u8, a: u16, b: u16) -> u32 {
    let sdst = u32::from(a % 104);
    let ssrc = u32::from(b % 104);
    match kind % 6 {
        // s_call_b64 sdst, simm16
        0 => 0xBA80_0000 | sdst << 16 | u32::from(b),
        // s_swappc_b64 sdst, ssrc
        1 => 0xBE80_1E00 | sdst << 16 | ssrc,
        // s_setpc_b64 ssrc
        2 => 0xBE80_1D00 | ssrc,
        // s_getpc_b64 sdst
        3 => 0xBE80_1C00 | sdst << 16,
        // s_add_u32 sdst, ssrc, inline constant
        4 => 0x8000_0000 | sdst << 16 | (128 + u32::from(b % 64)) << 8 | ssrc,
        // s_addc_u32 sdst, ssrc, inline constant
        _ => 0x8200_0000 | sdst << 16 | (128 + u32::from(b % 64)) << 8 | ssrc,
    }
}

fn check(bytes: &[u8]) -> Result<(), TestCaseError> {
    for mode in [Mode::Detect, Mode::Count] {
        let opts = RewriteOptions { mode, table: TableAddress::Known(0x1000_0000), ..Default::default() };
        match rewrite::rewrite(bytes, &opts) {
            Ok(out) => {
                prop_assert!(CodeObject::parse(&out.bytes).is_ok());
                for f in out.functions.iter().filter(|f| f.state.instrumented()) {
                    let Some((sg, vg)) = f.scratch else {
                        // a copy whose kernel borrows registers at each site
                        prop_assert!(f.copy_of.is_some(), "{}: no scratch registers", f.name);
                        let k = out.kernels.iter().find(|k| f.reached_by.contains(&k.name));
                        let borrowed = k.and_then(|k| k.registers.as_ref()).map(|r| r.borrowed);
                        prop_assert!(borrowed.is_some_and(|b| b.sgprs || b.vgprs), "{}: {borrowed:?}", f.name);
                        continue;
                    };
                    for k in out.kernels.iter().filter(|k| f.reached_by.contains(&k.name)) {
                        prop_assert!(
                            matches!(k.state, KernelState::Instrumented | KernelState::Partial),
                            "{}: {:?}",
                            k.name,
                            k.state
                        );
                        let r = k.registers.as_ref().expect("grown");
                        prop_assert!(r.vgprs_after >= u32::from(vg) + 5, "{}: {:?} < v{}", k.name, r, vg);
                        prop_assert!(r.sgprs_after >= u32::from(sg) + 14, "{}: {:?} < s{}", k.name, r, sg);
                    }
                }
            }
            Err(e) => prop_assert!(!e.to_string().contains('\n')),
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, .. ProptestConfig::default() })]

    #[test]
    fn damaged_calls_never_panic_and_keep_scratch_in_the_callers(
        target in 0usize..2,
        edits in proptest::collection::vec((any::<u32>(), any::<u8>(), any::<u16>(), any::<u16>(), any::<u32>()), 1..12),
    ) {
        let mut bytes = calls_fixture(["gfx90a", "gfx942"][target]);
        let text = {
            let co = CodeObject::parse(&bytes).expect("parses");
            let t = co.elf.section_by_name(".text").expect(".text");
            (t.offset as usize, t.size as usize / 4)
        };
        for (pos, kind, a, b, random) in edits {
            let at = text.0 + 4 * (pos as usize % text.1);
            let word = if kind < 200 { call_word(kind, a, b) } else { random };
            bytes[at..at + 4].copy_from_slice(&word.to_le_bytes());
        }
        check(&bytes)?;
    }
}

/// An `s_swappc_b64` whose target the code does not compute from
/// `s_getpc_b64` (here: the kernel's own call rewritten to use another
/// pair) makes its kernel reach every function; the rewrite still holds.
#[test]
fn an_unknown_call_target_reaches_every_function() {
    let mut bytes = calls_fixture("gfx90a");
    common::call_through_an_unknown_pair(&mut bytes, "call_shared_a");
    let out =
        rewrite::rewrite(&bytes, &RewriteOptions { table: TableAddress::Known(0x1000_0000), ..Default::default() })
            .expect("rewrites");
    for f in &out.functions {
        assert!(f.reached_by.iter().any(|k| k == "call_shared_a"), "{}: {:?}", f.name, f.reached_by);
    }
    check(&bytes).expect("consistent");
}
