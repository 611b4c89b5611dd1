use super::*;
use xfpx_amd_isa::encoding::Field;

fn run(s: &MatrixShape, g: Generation, a: &[[u32; 64]], b: &[[u32; 64]], c: &[[u32; 64]]) -> (Vec<[u32; 64]>, Flags) {
    let ops = Operands { a, b, c, index: None };
    multiply(s, g, &ops, &Controls::default(), FpMode::from_mode(0xF0))
}

#[test]
fn every_slot_is_used_exactly_once() {
    for s in SHAPES {
        let mut seen_a = vec![0u32; 64 * s.a_per_lane()];
        let mut seen_b = vec![0u32; 64 * s.b_per_lane()];
        let mut seen_out = vec![0u32; 64 * s.output_per_lane()];
        for b in 0..s.blocks {
            for r in 0..s.m {
                for k in 0..s.stored_k() {
                    let (l, e) = s.a_slot(b, r, k);
                    assert!(l < 64 && e < s.a_per_lane(), "{}", s.names[0]);
                    seen_a[l * s.a_per_lane() + e] += 1;
                }
                for j in 0..s.n {
                    let (l, e) = s.output_slot(b, r, j);
                    assert!(l < 64 && e < s.output_per_lane(), "{}", s.names[0]);
                    seen_out[l * s.output_per_lane() + e] += 1;
                }
            }
            for k in 0..s.k {
                for j in 0..s.n {
                    let (l, e) = s.b_slot(b, k, j);
                    assert!(l < 64 && e < s.b_per_lane(), "{}", s.names[0]);
                    seen_b[l * s.b_per_lane() + e] += 1;
                }
            }
        }
        assert!(seen_a.iter().all(|&n| n == 1), "{}: A slots", s.names[0]);
        assert!(seen_b.iter().all(|&n| n == 1), "{}: B slots", s.names[0]);
        assert!(seen_out.iter().all(|&n| n == 1), "{}: D slots", s.names[0]);
        if s.sparse {
            // Index bits of distinct groups of a row never overlap, and a
            // set fits in one register.
            let mut seen = std::collections::HashSet::new();
            for i in 0..s.m {
                for g in 0..s.k / 4 {
                    let (l, bit) = s.index_slot(i, g, 0);
                    assert!(bit + 4 <= 32, "{}", s.names[0]);
                    assert!(seen.insert((l, bit)), "{}: index bits", s.names[0]);
                }
            }
        }
    }
}

#[test]
fn register_counts_match_the_decoder() {
    // The decoder's table gives each instruction's operand widths.
    let mut names = 0;
    for s in SHAPES {
        for name in s.names {
            let rows: Vec<_> = xfpx_amd_isa::table::rows().iter().filter(|r| r.op == *name).collect();
            assert!(!rows.is_empty(), "{name} not in the decoder's table");
            for r in rows {
                let w = |f: Field| r.operands.iter().find(|o| o.field == f).map(|o| o.width as usize);
                assert_eq!(w(Field::Vdst), Some(s.output_regs()), "{name}");
                assert_eq!(w(Field::Src0), Some(s.a_regs()), "{name}");
                assert_eq!(w(Field::Src1), Some(s.b_regs()), "{name}");
                let c = if s.sparse { 1 } else { s.output_regs() };
                assert_eq!(w(Field::Src2), Some(c), "{name}");
            }
            names += 1;
        }
    }
    // Every matrix opcode of the decoder is in the table, except the ones
    // whose arithmetic is not public (xf32) or which the emulator does not
    // model (gfx950's f8f6f4 and scaled forms).
    let missing: Vec<_> = xfpx_amd_isa::table::rows()
        .iter()
        .filter(|r| r.op.family() == xfpx_amd_isa::Family::Matrix && shape(r.op).is_none())
        .map(|r| r.op.mnemonic())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        missing,
        [
            "v_mfma_f32_16x16x128_f8f6f4",
            "v_mfma_f32_16x16x8_xf32",
            "v_mfma_f32_32x32x4_xf32",
            "v_mfma_f32_32x32x64_f8f6f4",
            "v_mfma_ld_scale_b32"
        ]
    );
    assert!(names >= 90, "{names}");
}

#[test]
fn known_layouts() {
    let s = shape(Opcode::V_MFMA_F32_32X32X1F32).expect("row");
    // Block 1's A row 5 is lane 37; D[1][9][3]: lane 3 (rows 8-11 lie in
    // the lower half), register 16 + 4 + 1; D[0][4][3]: lane 35, register 0.
    assert_eq!(s.a_slot(1, 5, 0), (37, 0));
    assert_eq!(s.output_slot(1, 9, 3), (3, 21));
    assert_eq!(s.output_slot(0, 4, 3), (35, 0));
    let s = shape(Opcode::V_MFMA_F32_16X16X16F16).expect("row");
    // A[2][7]: lane 2 + 16, half 3; D[6][1]: lane 1 + 16, register 2.
    assert_eq!(s.a_slot(0, 2, 7), (18, 3));
    assert_eq!(s.output_slot(0, 6, 1), (17, 2));
    let s = shape(Opcode::V_MFMA_F64_16X16X4F64).expect("row");
    // D[1][0]: lane 16, v[0:1]; D[5][1]: lane 17, v[2:3]; D[14][15]: lane 47, v[6:7].
    assert_eq!(s.output_slot(0, 1, 0), (16, 0));
    assert_eq!(s.output_slot(0, 5, 1), (17, 1));
    assert_eq!(s.output_slot(0, 14, 15), (47, 3));
    // f64 4x4x4 (4 blocks): A[b][i][k] in lane 4b + 16k + i; D[b][i][j] in
    // lane 16i + 4b + j.
    let s = shape(Opcode::V_MFMA_F64_4X4X4F64).expect("row");
    assert_eq!(s.a_slot(2, 1, 3), (8 + 48 + 1, 0));
    assert_eq!(s.output_slot(3, 2, 1), (32 + 12 + 1, 0));
    // f32 4x4x1 (16 blocks): D[b][i][j] in register i of lane 4b + j.
    let s = shape(Opcode::V_MFMA_F32_4X4X1F32).expect("row");
    assert_eq!(s.output_slot(13, 3, 2), (54, 3));
    // Sparse f16 16x16x32: A[2][31] (stored column 15) in lane 50,
    // register 1; its index bits [7:4] of lane 50.
    let s = shape(Opcode::V_SMFMAC_F32_16X16X32_F16).expect("row");
    assert_eq!(s.a_slot(0, 2, 15), (50, 3));
    assert_eq!(s.index_slot(2, 7, 0), (50, 4));
    assert_eq!(s.index_slot(2, 7, 3), (50, 28));
}

#[test]
fn f16_product_accumulates_in_k_order() {
    let s = shape(Opcode::V_MFMA_F32_16X16X16_F16).expect("row");
    // A = all 1.0, B = all 2.0, C = 0.5: every D element is 32.5.
    let one = 0x3C00u32 | 0x3C00 << 16;
    let two = 0x4000u32 | 0x4000 << 16;
    let (d, fl) = run(s, Generation::Gfx940, &[[one; 64]; 2], &[[two; 64]; 2], &[[0.5f32.to_bits(); 64]; 4]);
    assert!(d.iter().all(|r| r.iter().all(|&x| f32::from_bits(x) == 32.5)));
    assert_eq!(fl, 0);
}

#[test]
fn a_nan_input_reaches_one_row_only() {
    let s = shape(Opcode::V_MFMA_F64_16X16X4F64).expect("row");
    let mut a = vec![[0u32; 64]; 2];
    a[0] = [1.0f64.to_bits() as u32; 64];
    a[1] = [(1.0f64.to_bits() >> 32) as u32; 64];
    let (l, _) = s.a_slot(0, 3, 2);
    a[0][l] = f64::NAN.to_bits() as u32;
    a[1][l] = (f64::NAN.to_bits() >> 32) as u32;
    let b = a.clone();
    // A quiet NaN propagates without raising a flag.
    let (d, fl) = run(s, Generation::Gfx90a, &a, &b, &[[0; 64]; 8]);
    assert_eq!(fl, 0);
    for i in 0..16 {
        for j in 0..16 {
            let (l, e) = s.output_slot(0, i, j);
            let v = f64::from_bits(d[2 * e][l] as u64 | (d[2 * e + 1][l] as u64) << 32);
            assert_eq!(v.is_nan(), i == 3 || j == 3, "D[{i}][{j}] = {v}");
        }
    }
}

#[test]
fn sparse_values_land_at_their_indices() {
    // One row of A: group g stores (g+1, 2(g+1)) at positions 1 and 3; B
    // row k is all k (as i8), so D[i][j] = 7 + Σ_g (g+1)(4g+1) + 2(g+1)(4g+3).
    let s = shape(Opcode::V_SMFMAC_I32_16X16X64_I8).expect("row");
    let mut a = vec![[0u32; 64]; s.a_regs()];
    let mut index = [0u32; 64];
    for i in 0..16 {
        for g in 0..16 {
            for (n, v) in [(0, g + 1), (1, 2 * (g + 1))] {
                let (l, e) = s.a_slot(0, i, 2 * g + n);
                a[e / 4][l] |= (v as u32 & 0xFF) << (8 * (e % 4));
            }
            let (l, bit) = s.index_slot(i, g, 1);
            index[l] |= (1 | 3 << 2) << bit;
        }
    }
    let mut b = vec![[0u32; 64]; s.b_regs()];
    for k in 0..64 {
        for j in 0..16 {
            let (l, e) = s.b_slot(0, k, j);
            b[e / 4][l] |= (k as u32) << (8 * (e % 4));
        }
    }
    let c = vec![[7u32; 64]; 4];
    let ops = Operands { a: &a, b: &b, c: &c, index: Some(&index) };
    let ctl = Controls { abid: 1, ..Default::default() };
    assert_eq!(s.check_controls(&ctl), Ok(()));
    let (d, _) = multiply(s, Generation::Gfx940, &ops, &ctl, FpMode::from_mode(0xF0));
    let want: i32 = 7 + (0..16).map(|g| (g + 1) * (4 * g + 1) + 2 * (g + 1) * (4 * g + 3)).sum::<i32>();
    assert!(d.iter().all(|r| r.iter().all(|&x| x as i32 == want)), "{}", d[0][0] as i32);
    // Index set 0 (all zero: both values at position 0) gives another sum.
    let (d, _) = multiply(s, Generation::Gfx940, &ops, &Controls::default(), FpMode::from_mode(0xF0));
    let want0: i32 = 7 + (0..16).map(|g| 3 * (g + 1) * (4 * g)).sum::<i32>();
    assert_eq!(d[2][40] as i32, want0);
}

#[test]
fn broadcast_controls_pick_blocks_and_lanes() {
    // 16x16x1 (4 blocks): A = lane number, B = 1, C = 0, so D[b][i][j] is
    // the lane of A[b'][i] with b' the broadcast block.
    let s = shape(Opcode::V_MFMA_F32_16X16X1F32).expect("row");
    let a = vec![std::array::from_fn::<u32, 64, _>(|l| (l as f32).to_bits())];
    let b = vec![[1.0f32.to_bits(); 64]];
    let c = vec![[0u32; 64]; 16];
    let ops = Operands { a: &a, b: &b, c: &c, index: None };
    let ctl = Controls { cbsz: 1, abid: 1, ..Default::default() };
    assert_eq!(s.check_controls(&ctl), Ok(()));
    let (d, _) = multiply(s, Generation::Gfx90a, &ops, &ctl, FpMode::from_mode(0xF0));
    for (blk, from) in [(0, 1), (1, 1), (2, 3), (3, 3)] {
        let (l, e) = s.output_slot(blk, 5, 2);
        assert_eq!(f32::from_bits(d[e][l]), (5 + 16 * from) as f32, "block {blk}");
    }
    assert!(s.check_controls(&Controls { cbsz: 1, abid: 2, ..Default::default() }).is_err());
    // BLGP 3 rotates B's lanes by 16: B = lane number, A = 1.
    let a = vec![[1.0f32.to_bits(); 64]];
    let b = vec![std::array::from_fn::<u32, 64, _>(|l| (l as f32).to_bits())];
    let ops = Operands { a: &a, b: &b, c: &c, index: None };
    let (d, _) =
        multiply(s, Generation::Gfx90a, &ops, &Controls { blgp: 3, ..Default::default() }, FpMode::from_mode(0xF0));
    let (l, e) = s.output_slot(3, 0, 7);
    assert_eq!(f32::from_bits(d[e][l]), ((48 + 7 + 16) % 64) as f32);
}

#[test]
fn f8_inputs_follow_the_generation_encoding() {
    // 0x40 is 1.0 in E4M3FNUZ but 2.0 in OCP E4M3FN.
    let s = shape(Opcode::V_MFMA_F32_16X16X32_FP8_FP8).expect("row");
    let one = 0x40u32 * 0x0101_0101;
    let (a, b, c) = ([[one; 64]; 2], [[0x3838_3838; 64]; 2], [[0; 64]; 4]);
    let (d940, _) = run(s, Generation::Gfx940, &a, &b, &c);
    let (d950, _) = run(s, Generation::Gfx950, &a, &b, &c);
    // 0x38 is 0.5 (FNUZ) / 1.0 (OCP); 32 products.
    assert_eq!(f32::from_bits(d940[0][0]), 16.0);
    assert_eq!(f32::from_bits(d950[0][0]), 64.0);
}

/// The layouts and pass counts of every CDNA1-3 instruction in the table
/// equal what AMD's matrix instruction calculator gives: run with
/// `XFPX_MFMA_LAYOUTS=<output of tools/mfma_layouts.py>`.
#[test]
#[ignore = "needs the calculator's output (tools/mfma_layouts.py)"]
fn layouts_match_the_calculator() {
    let path = std::env::var("XFPX_MFMA_LAYOUTS").expect("XFPX_MFMA_LAYOUTS");
    let text = std::fs::read_to_string(path).expect("layouts");
    let by_name = |name: &str| {
        Opcode::all().iter().copied().find(|o| o.mnemonic() == name).and_then(shape).map(|s| (s, name.to_string()))
    };
    let (mut checked, mut skipped) = (0usize, std::collections::BTreeSet::new());
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| f[i].parse::<usize>().expect("number");
        let Some((s, name)) = by_name(f[2]) else {
            skipped.insert(f[2].to_string());
            continue;
        };
        let gen = match f[1] {
            "cdna1" => Generation::Gfx908,
            "cdna2" => Generation::Gfx90a,
            _ => Generation::Gfx940,
        };
        if f[0] == "inst" {
            assert_eq!((s.m, s.n, s.k, s.blocks), (num(3), num(4), num(5), num(6)), "{name}");
            assert_eq!((s.a.bits(), s.output.bits()), (num(7), num(8)), "{name}");
            assert_eq!(s.passes(gen) as usize * 4, num(9), "{name} on {gen:?}");
            assert_eq!(s.sparse, num(10) == 1, "{name}");
            continue;
        }
        let (blk, row, col, reg, lane, lo, hi) = (num(3), num(4), num(5), num(6), num(7), num(8), num(9));
        let (want_lane, first_bit, bits) = match f[0] {
            "A" if s.sparse => {
                // The register (8-bit data: its half) of the stored pair.
                let (l, e) = s.a_slot(blk, row, 2 * (col / 4));
                let w = if s.a.bits() == 8 { 16 } else { 32 };
                (l, e * s.a.bits() / w * w, w)
            }
            "A" => {
                let (l, e) = s.a_slot(blk, row, col);
                (l, e * s.a.bits(), s.a.bits())
            }
            "B" => {
                let (l, e) = s.b_slot(blk, row, col);
                (l, e * s.b.bits(), s.b.bits())
            }
            "C" => {
                let (l, e) = s.output_slot(blk, row, col);
                (l, e * s.output.bits(), s.output.bits())
            }
            _ => {
                let (l, bit) = s.index_slot(row, col / 4, 0);
                (l, bit, 4)
            }
        };
        assert_eq!(
            (lane, reg, lo, hi),
            (want_lane, first_bit / 32, first_bit % 32, first_bit % 32 + bits - 1),
            "{line}"
        );
        checked += 1;
    }
    // Only xf32 (not executed) is left out.
    assert_eq!(skipped.into_iter().collect::<Vec<_>>(), ["v_mfma_f32_16x16x8_xf32", "v_mfma_f32_32x32x4_xf32"]);
    println!("{checked} entries equal the calculator's");
}
