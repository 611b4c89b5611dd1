//! Hostile code: kernels whose instruction words are mutated at random run
//! to completion or stop with a one-line error (unsupported, decode, memory
//! fault, instruction limit) — never a panic.

mod common;

use std::path::Path;
use xfpx_amd_emu::launch::Launch;
use xfpx_amd_emu::replay::{load_code_object, run_launch};
use xfpx_amd_emu::ReplayOptions;

#[test]
fn mutated_kernels_never_panic() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/launches");
    let mut next = common::xorshift(0x2545_F491_4F6C_DD1Du64);
    let (mut ok, mut errors) = (0, 0);
    for name in ["saxpy", "reduce_sum_f32", "collatz", "f32_div", "histogram_lds", "private_array"] {
        let mut launch = Launch::load(&fixtures.join(format!("{name}.json"))).expect("launch");
        launch.grid = [1, 1, 1];
        for target in ["gfx90a", "gfx942"] {
            let opts = ReplayOptions { target: Some(target.into()), ..Default::default() };
            let original = load_code_object(&launch, &opts).expect("object");
            let entry = original.kernel(&launch.kernel).expect("kernel").entry_vaddr as usize;
            for _ in 0..60 {
                let mut object = original.clone();
                for _ in 0..1 + next() % 4 {
                    let at = entry + 4 * (next() % 48) as usize;
                    let r = next();
                    let w = u32::from_le_bytes(object.image[at..at + 4].try_into().expect("word"));
                    // Flip operand bits, keep the encoding (most of the time).
                    let m = if r.is_multiple_of(3) { (r >> 8) as u32 } else { w ^ ((r >> 16) as u32 & 0x01FF_FFFF) };
                    object.image[at..at + 4].copy_from_slice(&m.to_le_bytes());
                }
                match run_launch(&launch, &object, 200_000) {
                    Ok(_) => ok += 1,
                    Err(e) => {
                        assert!(!e.to_string().contains('\n'), "{e}");
                        errors += 1
                    }
                }
            }
        }
    }
    println!("{ok} mutated runs completed, {errors} stopped with an error");
}
