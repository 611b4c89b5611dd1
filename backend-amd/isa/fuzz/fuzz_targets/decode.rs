//! libFuzzer target: walk arbitrary bytes with the decoder on every target.
//! Run with `cargo +nightly fuzz run decode` in `backend-amd/isa/fuzz`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use xfpx_amd_isa::{disassemble, Target};

fuzz_target!(|data: &[u8]| {
    for target in Target::ALL {
        for (_, res) in disassemble(target, data, 0) {
            if let Ok(insn) = res {
                assert!(matches!(insn.length, 4 | 8 | 12 | 16));
                let _ = insn.to_string();
                let _ = (insn.regs_read(), insn.regs_written(), insn.counters(), insn.control_flow(0));
            }
        }
    }
});
