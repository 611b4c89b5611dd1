//! The opcode sweep's kernels: one small kernel per floating-point VALU
//! opcode the decoder's table lists for a target, its assembly written from
//! the table's operand template. Each kernel loads 16 input dwords per lane
//! (the register pools below), runs the opcode once on registers of the
//! types its mnemonic names, turns a mask result into 0/1 per lane, and
//! stores 4 output dwords per lane.

use xfpx_amd_isa::encoding::{Encoding, Field};
use xfpx_amd_isa::table::{OpcodeRow, SlotKind};
use xfpx_amd_isa::{CmpCond, CmpUnit, DataType, Family, Opcode, Target};

/// Input dwords per lane (v2..v17) and output dwords per lane (v40..v43).
pub const INPUT_DWORDS: usize = 16;
pub const OUTPUT_DWORDS: usize = 4;

/// The register pools: where each kind of input value lies (first VGPR of
/// sources 0, 1 and 2).
pub const F32: [u16; 3] = [2, 3, 4];
pub const F16X2: [u16; 3] = [5, 6, 7];
pub const INT: [u16; 3] = [8, 9, 10];
/// Masks for `v_cmp_class`.
pub const CLASS_MASK: u16 = 11;
/// f64 pairs v[12:13], v[14:15], v[16:17].
pub const F64: [u16; 3] = [12, 14, 16];
/// Four-dword sources (sparse matrix operands) v[2:5], v[6:9], v[10:13].
pub const WIDE: [u16; 3] = [2, 6, 10];
/// Where results go: v40 up (four dwords stored), matrix accumulators from v64.
pub const OUT: u16 = 40;
pub const MATRIX_ACC: u16 = 64;
/// The SGPR pair a mask result is written to (VOP3 compares, `v_div_scale`).
pub const MASK_SGPRS: u16 = 10;
/// VCC's value in every kernel (read by `v_div_fmas`), low and high dword.
pub const VCC_VALUE: [u32; 2] = [0x5555_5555, 0x3333_3333];

/// A register operand of the kernel: first VGPR and count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Regs {
    pub first: u16,
    pub count: u16,
}

impl Regs {
    fn text(self) -> String {
        if self.count == 1 {
            format!("v{}", self.first)
        } else {
            format!("v[{}:{}]", self.first, self.first + self.count - 1)
        }
    }
}

/// What the kernel stores for its opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Result {
    /// The destination registers (the first dwords of the output).
    Value(Regs),
    /// A lane mask, stored as 0 or 1 per lane in output dword `at`; after
    /// the value registers where the opcode also writes a value.
    Mask { value: Option<Regs>, at: u16 },
}

/// One kernel of the sweep.
#[derive(Debug, Clone)]
pub struct SweepKernel {
    pub name: String,
    pub row: &'static OpcodeRow,
    /// The instruction under test, as written in the assembly.
    pub line: String,
    /// Sources in operand order (0, 1, 2).
    pub sources: Vec<Regs>,
    pub result: Result,
    /// Registers the destination holds before the instruction (an
    /// accumulator such as `v_fmac`'s): copied from this source pool.
    pub dst_init: Option<Regs>,
    /// The SDWA form: which sources it reads from their high half, and
    /// whether its f16 result goes to the high half (the low one kept).
    pub sdwa: Option<SdwaForm>,
}

/// The selects of an SDWA kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SdwaForm {
    pub src_hi: [bool; 2],
    pub dst_hi: bool,
}

impl SweepKernel {
    pub fn op(&self) -> Opcode {
        self.row.op
    }
}

/// The rows of the floating-point VALU opcodes of `target`, in table order.
pub fn fp_rows(target: Target) -> Vec<&'static OpcodeRow> {
    xfpx_amd_isa::table::rows()
        .iter()
        .filter(|r| r.targets & target.mask() != 0 && r.encoding.is_valu() && r.class.is_fp())
        .collect()
}

/// The width class of a 32-bit source of `op` at position `i`.
fn pool_32(op: Opcode, i: usize) -> u16 {
    if op.compare().is_some_and(|c| c.cond == CmpCond::Class) && i == 1 {
        return CLASS_MASK;
    }
    // ldexp's second source is an integer exponent.
    if matches!(op.stem(), Opcode::V_LDEXP_F32 | Opcode::V_LDEXP_F64 | Opcode::V_LDEXP_F16_E32) && i == 1 {
        return INT[1];
    }
    match op.data_type() {
        Some(DataType::F16 | DataType::Bf16 | DataType::B16) => F16X2[i],
        Some(
            DataType::I8
            | DataType::U8
            | DataType::I16
            | DataType::U16
            | DataType::I24
            | DataType::U24
            | DataType::I32
            | DataType::U32,
        ) => INT[i],
        _ => F32[i],
    }
}

fn source_index(field: Field) -> Option<usize> {
    match field {
        Field::Src0 => Some(0),
        Field::Src1 | Field::Vsrc1 => Some(1),
        Field::Src2 => Some(2),
        _ => None,
    }
}

/// The kernel of one row (`None` for an operand template it cannot write).
pub fn kernel(row: &'static OpcodeRow) -> Option<SweepKernel> {
    let op = row.op;
    let matrix = op.family() == Family::Matrix;
    let mut words = Vec::new();
    let mut sources = Vec::new();
    let mut value = None;
    let mut mask = false;
    for slot in row.operands {
        let width = slot.width as u16;
        let text = match (slot.field, slot.kind) {
            (Field::Vdst, SlotKind::Vgpr) => {
                let r = Regs { first: if width > 4 { MATRIX_ACC } else { OUT }, count: width };
                value = Some(r);
                r.text()
            }
            (Field::Vdst | Field::Sdst, SlotKind::Code(_)) if width == 2 => {
                mask = true;
                format!("s[{}:{}]", MASK_SGPRS, MASK_SGPRS + 1)
            }
            (_, SlotKind::Fixed(t)) => {
                if t == "vcc" && row.encoding == Encoding::Vopc {
                    mask = true;
                }
                t.to_string()
            }
            // 1.5 in the type of the operation.
            (_, SlotKind::Constant) if op.data_type() == Some(DataType::F16) => "0x3e00".to_string(),
            (_, SlotKind::Constant) => "0x3fc00000".to_string(),
            (f, SlotKind::Code(_) | SlotKind::Vgpr) => {
                let i = source_index(f)?;
                let r = match width {
                    1 if matrix && i == 2 => Regs { first: INT[2], count: 1 },
                    1 => Regs { first: pool_32(op, i), count: 1 },
                    2 => Regs { first: F64[i], count: 2 },
                    4 if !(matrix && i == 2) => Regs { first: WIDE[i], count: 4 },
                    n => Regs { first: value.map_or(MATRIX_ACC, |v: Regs| v.first), count: n },
                };
                sources.push(r);
                r.text()
            }
            _ => return None,
        };
        words.push(text);
    }
    let line = format!("{} {}", op.mnemonic(), words.join(", "));
    let result = if mask {
        let at = value.map_or(0, |v| v.count);
        Result::Mask { value, at }
    } else {
        Result::Value(value?)
    };
    // Accumulating opcodes read their destination: start it from a source pool.
    let dst_init = value.filter(|v| v.first == OUT).and_then(|v| match v.count {
        1 => Some(Regs { first: pool_32(op, 2), count: 1 }),
        2 => Some(Regs { first: F64[2], count: 2 }),
        _ => None,
    });
    Some(SweepKernel { name: format!("sweep_{}", op.mnemonic()), row, line, sources, result, dst_init, sdwa: None })
}

/// The SDWA form of a VOP1/VOP2/VOPC row that has one: f16 sources read
/// from their high half (`src*_sel:WORD_1`), an f16 result written to the
/// high half with the low half kept (`dst_sel:WORD_1
/// dst_unused:UNUSED_PRESERVE`), other operands whole. `None` for rows
/// without SDWA, with 64-bit operands, that read their destination, or
/// whose SDWA form selects bytes (8-bit float conversions).
pub fn sdwa_kernel(row: &'static OpcodeRow) -> Option<SweepKernel> {
    use xfpx_amd_isa::table::flags;
    if row.flags & flags::SDWA == 0 || row.operands.iter().any(|s| s.width > 1) {
        return None;
    }
    let op = row.op;
    if matches!(
        op.stem(),
        Opcode::V_MAC_F32_E32
            | Opcode::V_MAC_F16_E32
            | Opcode::V_FMAC_F32_E32
            | Opcode::V_DOT2C_F32_F16_E32
            | Opcode::V_PK_FMAC_F16_E32
            // Their SDWA form selects a byte of an 8-bit float pair.
            | Opcode::V_CVT_F32_FP8_E32
            | Opcode::V_CVT_F32_BF8_E32
    ) {
        return None;
    }
    let mut k = kernel(row)?;
    let is_f16 = |r: &Regs| F16X2.contains(&r.first);
    let src_hi = [k.sources.first().is_some_and(is_f16), k.sources.get(1).is_some_and(is_f16)];
    let dst_hi =
        matches!(k.result, Result::Value(_)) && op.data_type() == Some(DataType::F16) && op.family() != Family::Convert;
    let sel = |hi: bool| if hi { "WORD_1" } else { "DWORD" };
    let mut mods = Vec::new();
    if row.encoding != Encoding::Vopc {
        mods.push(format!("dst_sel:{}", sel(dst_hi)));
        mods.push(format!("dst_unused:{}", if dst_hi { "UNUSED_PRESERVE" } else { "UNUSED_PAD" }));
    }
    mods.push(format!("src0_sel:{}", sel(src_hi[0])));
    if row.encoding != Encoding::Vop1 {
        mods.push(format!("src1_sel:{}", sel(src_hi[1])));
    }
    let mnemonic = op.mnemonic().strip_suffix("_e32").unwrap_or(op.mnemonic());
    let operands = k.line.split_once(' ').map_or("", |(_, o)| o).to_string();
    k.line = format!("{mnemonic}_sdwa {operands} {}", mods.join(" "));
    k.name = format!("sweep_{mnemonic}_sdwa");
    k.sdwa = Some(SdwaForm { src_hi, dst_hi });
    Some(k)
}

/// The assembly of every kernel of `target` (the input of llvm-mc).
pub fn assembly(target: Target, kernels: &[SweepKernel]) -> String {
    let t = target.name();
    let mut s = format!(
        "// The opcode sweep for {t}: one kernel per floating-point VALU opcode of the decoder's table.\n\
         // Generated by backend-amd/tests/opcode_sweep.rs (XFPX_BLESS=1); do not edit.\n\
         \t.amdgcn_target \"amdgcn-amd-amdhsa--{t}\"\n\t.text\n"
    );
    for k in kernels {
        s.push_str(&body(k));
    }
    s.push_str("\t.rodata\n");
    for k in kernels {
        s.push_str(&descriptor(target, &k.name));
    }
    s.push_str(&metadata(target, kernels));
    s
}

fn body(k: &SweepKernel) -> String {
    let n = &k.name;
    let mut b = format!("\t.globl {n}\n\t.p2align 8\n\t.type {n},@function\n{n}:\n");
    let mut line = |l: &str| {
        b.push('\t');
        b.push_str(l);
        b.push('\n');
    };
    line("s_load_dwordx4 s[4:7], s[0:1], 0x0");
    line("v_lshlrev_b32_e32 v1, 6, v0");
    line(&format!("s_mov_b32 vcc_lo, {:#x}", VCC_VALUE[0]));
    line(&format!("s_mov_b32 vcc_hi, {:#x}", VCC_VALUE[1]));
    line("s_waitcnt lgkmcnt(0)");
    for i in 0..4 {
        line(&format!("global_load_dwordx4 v[{}:{}], v1, s[4:5] offset:{}", 2 + 4 * i, 5 + 4 * i, 16 * i));
    }
    line("s_waitcnt vmcnt(0)");
    for r in 0..OUTPUT_DWORDS as u16 {
        line(&format!("v_mov_b32_e32 v{}, 0", OUT + r));
    }
    if let Some(init) = k.dst_init {
        for r in 0..init.count {
            line(&format!("v_mov_b32_e32 v{}, v{}", OUT + r, init.first + r));
        }
    }
    let matrix = k.op().family() == Family::Matrix;
    if let Result::Value(v) | Result::Mask { value: Some(v), .. } = k.result {
        if v.first == MATRIX_ACC {
            for r in 0..v.count {
                line(&format!("v_mov_b32_e32 v{}, 0", MATRIX_ACC + r));
            }
        }
    }
    let exec_saved = k.op().compare().is_some_and(|c| c.unit == CmpUnit::VectorExec);
    if exec_saved {
        line("s_mov_b64 s[20:21], exec");
    }
    line(&k.line);
    if exec_saved {
        line("s_mov_b64 exec, s[20:21]");
    }
    if matrix {
        // Matrix results need wait states before they are read.
        for _ in 0..4 {
            line("s_nop 7");
        }
    }
    match k.result {
        Result::Value(v) if v.first == MATRIX_ACC => {
            for r in 0..OUTPUT_DWORDS as u16 {
                line(&format!("v_mov_b32_e32 v{}, v{}", OUT + r, MATRIX_ACC + r));
            }
        }
        Result::Mask { at, .. } => {
            let src = if k.row.encoding == Encoding::Vopc {
                "vcc".to_string()
            } else {
                format!("s[{}:{}]", MASK_SGPRS, MASK_SGPRS + 1)
            };
            line(&format!("v_cndmask_b32_e64 v{}, 0, 1, {src}", OUT + at));
        }
        Result::Value(_) => {}
    }
    line("v_lshlrev_b32_e32 v1, 4, v0");
    line(&format!("global_store_dwordx4 v1, v[{}:{}], s[6:7]", OUT, OUT + 3));
    line("s_endpgm");
    b.push_str(&format!(".Lend_{n}:\n\t.size {n}, .Lend_{n}-{n}\n"));
    b
}

/// VGPRs every kernel declares: v0..v95 (the matrix accumulators reach
/// v95); on gfx90a+ the AGPRs start at 96.
const VGPRS: u16 = 96;
const SGPRS: u16 = 24;

fn descriptor(target: Target, name: &str) -> String {
    let mut d = format!(
        "\t.p2align 6\n\t.amdhsa_kernel {name}\n\
         \t\t.amdhsa_user_sgpr_kernarg_segment_ptr 1\n\
         \t\t.amdhsa_kernarg_size 16\n\
         \t\t.amdhsa_next_free_vgpr {VGPRS}\n\
         \t\t.amdhsa_next_free_sgpr {SGPRS}\n\
         \t\t.amdhsa_float_denorm_mode_32 3\n\
         \t\t.amdhsa_float_denorm_mode_16_64 3\n"
    );
    if target.is_gfx90a_plus() {
        d.push_str(&format!("\t\t.amdhsa_accum_offset {VGPRS}\n"));
    }
    d.push_str("\t.end_amdhsa_kernel\n");
    d
}

fn metadata(target: Target, kernels: &[SweepKernel]) -> String {
    let mut m = String::from("\t.amdgpu_metadata\n---\namdhsa.kernels:\n");
    for k in kernels {
        m.push_str(&format!(
            "  - .agpr_count: 0\n    .args:\n\
             \x20     - .address_space: global\n        .offset: 0\n        .size: 8\n        .value_kind: global_buffer\n\
             \x20     - .address_space: global\n        .offset: 8\n        .size: 8\n        .value_kind: global_buffer\n\
             \x20   .group_segment_fixed_size: 0\n    .kernarg_segment_align: 8\n    .kernarg_segment_size: 16\n\
             \x20   .max_flat_workgroup_size: 64\n    .name: {0}\n    .private_segment_fixed_size: 0\n\
             \x20   .sgpr_count: {SGPRS}\n    .symbol: {0}.kd\n    .vgpr_count: {VGPRS}\n    .wavefront_size: 64\n",
            k.name
        ));
    }
    m.push_str(&format!(
        "amdhsa.target: amdgcn-amd-amdhsa--{}\namdhsa.version:\n  - 1\n  - 2\n...\n\t.end_amdgpu_metadata\n",
        target.name()
    ));
    m
}
