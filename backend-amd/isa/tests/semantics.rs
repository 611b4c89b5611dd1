//! Registers read and written, wait counters, control flow, IR classes and
//! errors of individual instructions (encodings cross-checked with llvm-mc).
#![allow(clippy::unwrap_used)]

use xfpx_amd_isa::{decode, ControlFlow, DecodeError, Encoding, Operand, RegFile, RegRange, SpecialReg, Target};
use xfpx_common::{FpFormat, FpOp, InstrClass};

fn bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn dec(target: Target, words: &[u32]) -> xfpx_amd_isa::Instruction {
    decode(target, &bytes(words)).unwrap_or_else(|e| panic!("{words:08x?}: {e}"))
}

fn v(first: u16, count: u8) -> RegRange {
    RegRange::new(RegFile::Vgpr, first, count)
}

fn s(first: u16, count: u8) -> RegRange {
    RegRange::new(RegFile::Sgpr, first, count)
}

#[test]
fn valu_registers_and_class() {
    let i = dec(Target::Gfx90a, &[0x0202_0702]);
    assert_eq!(i.to_string(), "v_add_f32_e32 v1, v2, v3");
    assert_eq!(i.regs_written(), vec![v(1, 1)]);
    assert_eq!(i.regs_read(), vec![v(2, 1), v(3, 1)]);
    assert_eq!(i.class(), InstrClass::Arith { format: FpFormat::F32, op: FpOp::Add });
    assert_eq!(i.counters(), Default::default());

    // v_fma_f64 v[0:1], v[2:3], v[4:5], v[6:7]
    let i = dec(Target::Gfx942, &[0xD1CC_0000, 0x041A_0902]);
    assert_eq!(i.to_string(), "v_fma_f64 v[0:1], v[2:3], v[4:5], v[6:7]");
    assert_eq!(i.regs_written(), vec![v(0, 2)]);
    assert_eq!(i.regs_read(), vec![v(2, 2), v(4, 2), v(6, 2)]);
    assert_eq!(i.class(), InstrClass::Arith { format: FpFormat::F64, op: FpOp::Fma });
}

#[test]
fn atomics_read_data_and_return_with_glc() {
    // buffer_atomic_add v1, v2, s[4:7], 0 offen glc: returns into v1
    let i = dec(Target::Gfx90a, &[0xE108_5000, 0x8001_0102]);
    assert_eq!(i.to_string(), "buffer_atomic_add v1, v2, s[4:7], 0 offen glc");
    assert_eq!(i.regs_written(), vec![v(1, 1)]);
    assert!(i.regs_read().contains(&v(1, 1)) && i.regs_read().contains(&v(2, 1)));
    // without glc nothing is written
    let i = dec(Target::Gfx90a, &[0xE108_1000, 0x8001_0102]);
    assert!(i.regs_written().is_empty());
    // s_and_saveexec_b64 writes EXEC
    let i = dec(Target::Gfx90a, &[0xBE80_2000 | 2]);
    assert_eq!(i.to_string(), "s_and_saveexec_b64 s[0:1], s[2:3]");
    assert!(i.specials_written().contains(&SpecialReg::Exec));
}

#[test]
fn implicit_vcc_and_exec() {
    // v_cmp_lt_f32_e32 vcc, v1, v2
    let i = dec(Target::Gfx90a, &[0x7C82_0501]);
    assert_eq!(i.to_string(), "v_cmp_lt_f32_e32 vcc, v1, v2");
    assert_eq!(i.specials_written(), vec![SpecialReg::Vcc]);
    assert_eq!(i.class(), InstrClass::Compare { format: FpFormat::F32 });
    // v_cmpx_lt_f32_e32 also writes EXEC
    let i = dec(Target::Gfx90a, &[0x7CA2_0501]);
    assert!(i.specials_written().contains(&SpecialReg::Exec));
    // v_cndmask_b32_e32 v0, v1, v2, vcc reads VCC
    let i = dec(Target::Gfx90a, &[0x0000_0501]);
    assert_eq!(i.to_string(), "v_cndmask_b32_e32 v0, v1, v2, vcc");
    assert_eq!(i.specials_read(), vec![SpecialReg::Vcc]);
    assert!(i.specials_written().is_empty());
}

#[test]
fn memory_counters_and_data_registers() {
    // global_load_dword v1, v[2:3], off
    let i = dec(Target::Gfx90a, &[0xDC50_8000, 0x017F_0002]);
    assert_eq!(i.to_string(), "global_load_dword v1, v[2:3], off");
    assert!(i.counters().vm && !i.counters().lgkm);
    assert_eq!(i.regs_written(), vec![v(1, 1)]);
    assert_eq!(i.regs_read(), vec![v(2, 2)]);
    // flat_load_dword v1, v[2:3] counts in both vm and lgkm
    let i = dec(Target::Gfx90a, &[0xDC50_0000, 0x0100_0002]);
    assert_eq!(i.to_string(), "flat_load_dword v1, v[2:3]");
    assert!(i.counters().vm && i.counters().lgkm);
    // s_load_dwordx2 s[4:5], s[0:1], 0x10
    let i = dec(Target::Gfx942, &[0xC006_0100, 0x0000_0010]);
    assert_eq!(i.to_string(), "s_load_dwordx2 s[4:5], s[0:1], 0x10");
    assert!(i.counters().lgkm && !i.counters().vm);
    assert_eq!(i.regs_written(), vec![s(4, 2)]);
    // s_store_dword reads its data
    let i = dec(Target::Gfx90a, &[0xC042_0100, 0x0000_0000]);
    assert!(i.regs_written().is_empty());
    // ds_read_b32 v1, v0 offset:4
    let i = dec(Target::Gfx90a, &[0xD86C_0004, 0x0100_0000]);
    assert_eq!(i.to_string(), "ds_read_b32 v1, v0 offset:4");
    assert!(i.counters().lgkm);
    assert_eq!(i.regs_written(), vec![v(1, 1)]);
    assert_eq!(i.encoding, Encoding::Ds);
}

#[test]
fn pc_relative_control_flow() {
    // s_branch 3 at 0x100 -> 0x100 + 4 + 12
    let i = dec(Target::Gfx90a, &[0xBF82_0003]);
    assert_eq!(i.control_flow(0x100), ControlFlow::Branch { target: 0x110 });
    assert!(i.is_pc_relative());
    // s_cbranch_scc0 -1 loops onto itself
    let i = dec(Target::Gfx90a, &[0xBF84_FFFF]);
    assert_eq!(i.to_string(), "s_cbranch_scc0 65535");
    assert_eq!(i.control_flow(0x100), ControlFlow::CondBranch { target: 0x100 });
    // s_getpc_b64 s[4:5] gives the next instruction's address
    let i = dec(Target::Gfx942, &[0xBE84_1C00]);
    assert_eq!(i.to_string(), "s_getpc_b64 s[4:5]");
    assert_eq!(i.control_flow(0x200), ControlFlow::GetPc { value: 0x204 });
    // s_swappc_b64 s[30:31], s[4:5] and s_setpc_b64 are indirect
    let i = dec(Target::Gfx942, &[0xBE9E_1E04]);
    assert_eq!(i.to_string(), "s_swappc_b64 s[30:31], s[4:5]");
    assert_eq!(i.control_flow(0), ControlFlow::Indirect);
    assert!(!i.is_pc_relative());
    assert_eq!(dec(Target::Gfx942, &[0xBF81_0000]).control_flow(0), ControlFlow::End);
    // s_call_b64 s[30:31], 4 (SOPK) is PC-relative
    let i = dec(Target::Gfx90a, &[0xBA9E_0004]);
    assert_eq!(i.control_flow(0x40), ControlFlow::Call { target: 0x40 + 4 + 16 });
}

#[test]
fn lengths_with_literals_and_extensions() {
    // v_mov_b32_e32 v1, 0x12345678 (literal) is 8 bytes
    let i = dec(Target::Gfx90a, &[0x7E02_02FF, 0x1234_5678]);
    assert_eq!(i.length, 8);
    assert_eq!(
        i.operands[1].operand,
        Operand::Literal {
            value: 0x1234_5678,
            ty: xfpx_amd_isa::table::ConstType::B32,
            form: xfpx_amd_isa::LiteralForm::AsInline
        }
    );
    // s_setreg_imm32_b32 carries a literal
    assert_eq!(dec(Target::Gfx90a, &[0xBA00_0801, 0x0000_0003]).length, 8);
    // v_madak_f32 always carries its constant
    assert_eq!(dec(Target::Gfx908, &[0x3002_0501, 0x4000_0000]).length, 8);
    // gfx950 scaled MFMA is one 16-byte instruction
    let i = dec(Target::Gfx950, &[0xD3AC_0000, 0x0002_0702, 0xD3AD_0802, 0x0202_1904]);
    assert_eq!(i.length, 16);
    assert_eq!(
        i.to_string(),
        "v_mfma_scale_f32_16x16x128_f8f6f4 v[2:5], v[4:11], v[12:19], 0, v2, v3 op_sel_hi:[0,0,0]"
    );
    assert_eq!(i.class(), InstrClass::Matrix { format: FpFormat::F32 });
}

#[test]
fn errors_are_distinct() {
    assert_eq!(
        decode(Target::Gfx90a, &bytes(&[0x7E02_02FF])).unwrap_err(),
        DecodeError::Truncated { needed: 8, available: 4 }
    );
    assert_eq!(decode(Target::Gfx90a, &[0x00, 0x01]).unwrap_err(), DecodeError::Truncated { needed: 4, available: 2 });
    assert!(matches!(decode(Target::Gfx90a, &bytes(&[0xFFFF_FFFF])), Err(DecodeError::Invalid { .. })));
    // v_accvgpr_mov_b32 does not exist on gfx908
    assert!(matches!(decode(Target::Gfx908, &bytes(&[0x7E02_A501])), Err(DecodeError::Invalid { .. })));
    assert!(decode(Target::Gfx90a, &bytes(&[0x7E02_A501])).is_ok());
    // EXP exists on gfx908 but is not modelled: unsupported, never a guessed length
    assert!(matches!(
        decode(Target::Gfx908, &bytes(&[0xC400_080F, 0x1716_1514])),
        Err(DecodeError::Unsupported { .. })
    ));
    // image_sample on gfx908
    let i = dec(Target::Gfx908, &[0xF080_0F00, 0x0066_0A14]);
    assert_eq!(i.to_string(), "image_sample v[10:13], v20, s[24:31], s[12:15] dmask:0xf");
    assert!(i.counters().vm);
}

#[test]
fn target_names() {
    for t in Target::ALL {
        assert_eq!(t.name().parse::<Target>(), Ok(t));
        assert_eq!(t.to_string(), t.name());
    }
    assert_eq!("gfx90a:xnack+".parse::<Target>(), Ok(Target::Gfx90a));
    assert_eq!("amdgcn-amd-amdhsa--gfx942".parse::<Target>(), Ok(Target::Gfx942));
    let e = "gfx1100".parse::<Target>().unwrap_err();
    assert!(e.to_string().contains("unknown AMDGPU target 'gfx1100'"));
}

#[test]
fn waitcnt_fields() {
    assert_eq!(xfpx_amd_isa::symbolic::waitcnt_fields(0xC07F), (63, 7, 0));
    let i = dec(Target::Gfx90a, &[0xBF8C_0F70]);
    assert_eq!(i.to_string(), "s_waitcnt vmcnt(0)");
}

/// Conversions to an integer write no floating-point value: class `Other`.
/// Conversions to a floating-point format stay `Arith { op: Conversion }`.
#[test]
fn float_to_integer_conversions_are_not_fp_producing() {
    for (word, text) in [
        (0x7E00_1102, "v_cvt_i32_f32_e32 v0, v2"),
        (0x7E00_0F02, "v_cvt_u32_f32_e32 v0, v2"),
        (0x7E00_7702, "v_cvt_u16_f16_e32 v0, v2"),
    ] {
        let i = dec(Target::Gfx90a, &[word]);
        assert_eq!(i.to_string(), text);
        assert_eq!(i.class(), InstrClass::Other, "{text}");
        assert!(!i.class().produces_fp_value());
    }
    let i = dec(Target::Gfx90a, &[0x7E00_0B02]);
    assert_eq!(i.to_string(), "v_cvt_f32_i32_e32 v0, v2");
    assert_eq!(i.class(), InstrClass::Arith { format: FpFormat::F32, op: FpOp::Conversion });
}
