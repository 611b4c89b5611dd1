//! Decoding: from bytes to an [`Instruction`] (length, table row, operands
//! and modifiers). Lengths follow only from the encoding and operand codes;
//! a word whose opcode the table does not list for the target is `Invalid`.

use crate::encoding::{self, field, Encoding, Field};
use crate::modifier::Modifier;
use crate::opcode::Opcode;
use crate::operand::{
    LiteralForm, Operand, OperandSlot, RegFile, RegRange, SpecialReg, SrcMods, DPP_CODE, LITERAL_CODE, SDWA_CODE,
};
use crate::symbolic;
use crate::table::{self, flags, ConstType, GroupScope, ImmStyle, OpcodeRow, Slot, SlotKind};
use crate::target::Target;
use crate::text::Sink;
use std::fmt;

/// Why bytes did not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes than the instruction needs (`needed` bytes).
    Truncated { needed: usize, available: usize },
    /// Not an instruction on this target (the reference disassembler rejects it too).
    Invalid { word: u32 },
    /// An instruction this decoder does not model; its length is unknown to us.
    Unsupported { word: u32 },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Truncated { needed, available } => {
                write!(f, "truncated instruction: needs {needed} bytes, {available} available")
            }
            DecodeError::Invalid { word } => write!(f, "invalid instruction word 0x{word:08x}"),
            DecodeError::Unsupported { word } => write!(f, "unsupported instruction word 0x{word:08x}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// Which extension of a VOP1/VOP2/VOPC instruction is present.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The plain encoding (`_e32`, `_e64` or a native VOP3/VOP3P/memory form).
    Plain,
    /// Data-parallel primitives dword follows.
    Dpp,
    /// Sub-dword addressing dword follows.
    Sdwa,
    /// gfx950 scaled MFMA: `v_mfma_ld_scale_b32` fused with the MFMA after it
    /// (16 bytes; `opcode` and `row` are the MFMA's).
    ScaledMfma,
}

/// gfx950 MFMA opcodes (VOP3P) that fuse with a preceding `v_mfma_ld_scale_b32`
/// when their dword 0 bits [14:11] are 1, and the fused mnemonic.
pub const SCALED_MFMA: &[(u16, &str)] =
    &[(0x2D, "v_mfma_scale_f32_16x16x128_f8f6f4"), (0x2E, "v_mfma_scale_f32_32x32x64_f8f6f4")];

/// A decoded instruction.
#[derive(Debug, Clone)]
pub struct Instruction {
    pub target: Target,
    pub encoding: Encoding,
    pub variant: Variant,
    pub opcode: u16,
    /// Size in bytes: 4, 8, 12 or 16.
    pub length: usize,
    /// The instruction's dwords (unused ones are 0).
    pub words: [u32; 4],
    /// The table's opcode: the typed `base_mnemonic` (of a scaled MFMA, the
    /// MFMA's row, as `row`).
    pub op: Opcode,
    /// The table's mnemonic (VOP1/VOP2/VOPC with `_e32`).
    pub base_mnemonic: &'static str,
    pub operands: Vec<OperandSlot>,
    pub modifiers: Vec<Modifier>,
    /// The instruction's row in the table.
    pub row: &'static OpcodeRow,
}

impl Instruction {
    /// The mnemonic as printed, with the `_dpp`/`_sdwa` suffix of the variant.
    pub fn mnemonic(&self) -> String {
        match self.variant {
            Variant::Plain | Variant::ScaledMfma => self.base_mnemonic.to_string(),
            Variant::Dpp => with_suffix(self.base_mnemonic, "_dpp"),
            Variant::Sdwa => with_suffix(self.base_mnemonic, "_sdwa"),
        }
    }

    /// The IR instruction class.
    pub fn class(&self) -> xfpx_common::InstrClass {
        self.row.class
    }

    /// The instruction's bytes as dwords (exactly `length / 4` of them).
    pub fn dwords(&self) -> &[u32] {
        &self.words[..self.length / 4]
    }
}

fn with_suffix(m: &str, suffix: &str) -> String {
    format!("{}{}", m.strip_suffix("_e32").unwrap_or(m), suffix)
}

impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.render(f)
    }
}

impl Instruction {
    /// The instruction's text, as `Display` writes it, written without a
    /// formatter in between (into room for most instructions at once).
    pub fn text(&self) -> String {
        let mut out = String::with_capacity(64);
        self.write_text(&mut out);
        out
    }

    /// Appends the instruction's text to `out` (which a caller rendering
    /// many instructions reuses, so that no text allocates its own room).
    pub fn write_text(&self, out: &mut String) {
        // Writing into a String cannot fail.
        let _ = self.render(out);
    }

    fn render<S: Sink>(&self, f: &mut S) -> fmt::Result {
        // The mnemonic as `mnemonic()` spells it, written without a copy.
        let m = self.base_mnemonic;
        match self.variant {
            Variant::Plain | Variant::ScaledMfma => f.put(m)?,
            Variant::Dpp | Variant::Sdwa => {
                f.put(m.strip_suffix("_e32").unwrap_or(m))?;
                f.put(if self.variant == Variant::Dpp { "_dpp" } else { "_sdwa" })?;
            }
        }
        for (i, op) in self.operands.iter().enumerate() {
            f.put(if i == 0 { " " } else { ", " })?;
            op.render(f)?;
        }
        for m in &self.modifiers {
            if !matches!(m, Modifier::Comment(_)) {
                f.put_char(' ')?;
            }
            m.render(f)?;
        }
        Ok(())
    }
}

fn word_at(bytes: &[u8], i: usize) -> Option<u32> {
    bytes.get(4 * i..4 * i + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Decode the instruction at the start of `bytes`.
pub fn decode(target: Target, bytes: &[u8]) -> Result<Instruction, DecodeError> {
    let w0 = word_at(bytes, 0).ok_or(DecodeError::Truncated { needed: 4, available: bytes.len() })?;
    let enc = encoding::identify(w0).ok_or(DecodeError::Invalid { word: w0 })?;
    let op = encoding::opcode(enc, w0);
    let at = table::position(target, enc, op).ok_or(DecodeError::Invalid { word: w0 })?;
    let row = &table::rows()[at];
    let facts = &row_facts()[at];
    if facts.unsupported {
        return Err(DecodeError::Unsupported { word: w0 });
    }
    if let Some(insn) = scaled_mfma(target, row, bytes)? {
        return Ok(insn);
    }
    let w1 = word_at(bytes, 1).unwrap_or(0);
    let length = instruction_length(target, enc, facts, &[w0, w1])?;
    if bytes.len() < length {
        return Err(DecodeError::Truncated { needed: length, available: bytes.len() });
    }
    let mut words = [0u32; 4];
    for (i, w) in words.iter_mut().enumerate().take(length / 4) {
        *w = word_at(bytes, i).unwrap_or(0);
    }
    let variant = variant_of(enc, w0);
    match variant {
        Variant::Dpp if row.flags & flags::DPP == 0 => return Err(DecodeError::Invalid { word: w0 }),
        Variant::Sdwa if row.flags & flags::SDWA == 0 => return Err(DecodeError::Invalid { word: w0 }),
        _ => {}
    }
    check_modifier_groups(facts, row, enc, variant, &words)?;
    let mut insn = Instruction {
        target,
        encoding: enc,
        variant,
        opcode: op,
        length,
        words,
        op: row.op,
        base_mnemonic: row.mnemonic(),
        operands: Vec::new(),
        modifiers: Vec::new(),
        row,
    };
    crate::render::fill(&mut insn)?;
    check_register_bounds(&insn)?;
    crate::render::drop_unprinted(&mut insn);
    crate::render::mark_invalid_operands(&mut insn);
    Ok(insn)
}

/// Register ranges must lie inside their file (VGPR/AGPR 0..256, SGPR tuples
/// up to s103, TTMP 0..16).
fn check_register_bounds(insn: &Instruction) -> Result<(), DecodeError> {
    let invalid = DecodeError::Invalid { word: insn.words[0] };
    for o in &insn.operands {
        match o.operand {
            // Reserved operand codes name nothing: the reference rejects them.
            Operand::Reserved(_) => return Err(invalid),
            // A 64-bit operand cannot start at the high half of a pair or at M0.
            Operand::Special { reg, count: 2, half } if half == 1 || reg == SpecialReg::M0 => return Err(invalid),
            Operand::Reg(r) => {
                let limit = match r.file {
                    RegFile::Vgpr | RegFile::Agpr => 256,
                    // SGPR tuples reach s[100:103] in the reference's register classes.
                    RegFile::Sgpr => 104,
                    RegFile::Ttmp => 16,
                };
                if r.first as u32 + r.count as u32 > limit {
                    return Err(invalid);
                }
            }
            _ => {}
        }
    }
    // LLVM 22 (the gfx950 reference) has no tuples wider than a pair that
    // start at a special register (VCC, EXEC, M0, ...).
    if insn.target == Target::Gfx950 && insn.operands.len() == insn.row.operands.len() {
        for (o, slot) in insn.operands.iter().zip(insn.row.operands) {
            if matches!(o.operand, Operand::Special { .. }) && slot.width > 2 {
                return Err(DecodeError::Invalid { word: insn.words[0] });
            }
        }
    }
    Ok(())
}

/// The fused 16-byte scaled MFMA starting with `row` (an ld_scale), if present.
fn scaled_mfma(target: Target, row: &'static OpcodeRow, bytes: &[u8]) -> Result<Option<Instruction>, DecodeError> {
    if target != Target::Gfx950 || row.op != Opcode::V_MFMA_LD_SCALE_B32 {
        return Ok(None);
    }
    let (Some(w2), Some(w3)) = (word_at(bytes, 2), word_at(bytes, 3)) else { return Ok(None) };
    if encoding::identify(w2) != Some(Encoding::Vop3p) || (w2 >> 11) & 0xF != 1 {
        return Ok(None);
    }
    let op = encoding::opcode(Encoding::Vop3p, w2);
    let Some(&(_, name)) = SCALED_MFMA.iter().find(|s| s.0 == op) else { return Ok(None) };
    let Some(mfma) = table::lookup(target, Encoding::Vop3p, op) else { return Ok(None) };
    let words = [word_at(bytes, 0).unwrap_or(0), word_at(bytes, 1).unwrap_or(0), w2, w3];
    let mut insn = Instruction {
        target,
        encoding: Encoding::Vop3p,
        variant: Variant::ScaledMfma,
        opcode: op,
        length: 16,
        words,
        op: mfma.op,
        base_mnemonic: name,
        operands: Vec::new(),
        modifiers: Vec::new(),
        row: mfma,
    };
    crate::render::fill(&mut insn)?;
    Ok(Some(insn))
}

/// Reject words that set modifier bits the opcode (`row`, whose facts
/// are `facts`) does not accept.
fn check_modifier_groups(
    facts: &RowFacts,
    row: &OpcodeRow,
    enc: Encoding,
    variant: Variant,
    words: &[u32; 4],
) -> Result<(), DecodeError> {
    let forbidden = &facts.forbidden[variant_index(variant)];
    if words.iter().zip(forbidden).any(|(w, m)| w & m != 0) {
        return Err(DecodeError::Invalid { word: words[0] });
    }
    check_absent_sources(row, enc, variant, words)
}

/// `Plain`, `Dpp` and `Sdwa` as 0, 1 and 2 (a scaled MFMA is checked as `Plain`).
fn variant_index(variant: Variant) -> usize {
    match variant {
        Variant::Plain | Variant::ScaledMfma => 0,
        Variant::Dpp => 1,
        Variant::Sdwa => 2,
    }
}

/// What decoding checks of an opcode's row, worked out once per row of
/// [`table::rows`] (so that a word is checked with a mask per dword).
struct RowFacts {
    /// For each variant ([`variant_index`]), the bits of each dword that
    /// must be clear: those of the modifier groups the opcode does not
    /// accept ([`table::MODIFIER_GROUPS`]; a VOP3b form keeps bits 8-14 of
    /// dword 0 for its scalar destination) and those of the fields its
    /// template leaves out ([`table::UNUSED_FIELDS`]).
    forbidden: [[u32; 4]; 3],
    /// A slot the table does not model, or an encoding this decoder does not.
    unsupported: bool,
    /// The source fields whose literal code means a literal dword follows.
    literal_fields: Vec<Field>,
    /// A trailing constant (madmk/madak, `s_setreg_imm32`) follows.
    constant: bool,
}

fn row_facts() -> &'static [RowFacts] {
    static FACTS: std::sync::OnceLock<Vec<RowFacts>> = std::sync::OnceLock::new();
    FACTS.get_or_init(|| {
        table::rows()
            .iter()
            .map(|row| RowFacts {
                forbidden: row_forbidden_bits(row),
                unsupported: row.operands.iter().any(|s| s.kind == SlotKind::Unknown)
                    || matches!(row.encoding, Encoding::Exp | Encoding::Vintrp),
                literal_fields: literal_fields(row),
                constant: row.operands.iter().any(|s| s.kind == SlotKind::Constant),
            })
            .collect()
    })
}

/// The source fields of `row` whose literal code means a literal dword
/// follows (operand codes there; on VOP3/VOP3P and buffer forms, gfx950 only).
fn literal_fields(row: &OpcodeRow) -> Vec<Field> {
    let coded =
        |f: Field| row.operands.iter().any(|s| s.field == f && matches!(s.kind, SlotKind::Code(_) | SlotKind::Agpr));
    let sources: &[Field] = match row.encoding {
        Encoding::Sop2 | Encoding::Sopc => &[Field::Ssrc0, Field::Ssrc1],
        Encoding::Sop1 => &[Field::Ssrc0],
        e if e.takes_literal() => &[Field::Src0],
        Encoding::Vop3 | Encoding::Vop3p => &[Field::Src0, Field::Src1, Field::Src2],
        Encoding::Mubuf | Encoding::Mtbuf => {
            return if row.operands.iter().any(|s| s.field == Field::Soffset) {
                vec![Field::Soffset]
            } else {
                Vec::new()
            }
        }
        _ => &[],
    };
    sources.iter().copied().filter(|&f| coded(f)).collect()
}

fn row_forbidden_bits(row: &OpcodeRow) -> [[u32; 4]; 3] {
    let enc = row.encoding;
    let mut out = [[0u32; 4]; 3];
    let vop3b = enc == Encoding::Vop3 && row.operands.iter().any(|s| s.field == Field::Sdst);
    for &(flag, _, scope, dw, mask) in modifier_groups_of(enc) {
        if row.flags & flag != 0 {
            continue;
        }
        let variant = match scope {
            GroupScope::Any => Variant::Plain,
            GroupScope::Dpp => Variant::Dpp,
            GroupScope::Sdwa => Variant::Sdwa,
        };
        let mask = if vop3b && dw == 0 { mask & !0x7F00 } else { mask };
        out[variant_index(variant)][dw] |= mask;
    }
    let has = |f: Field| row.operands.iter().any(|s| s.field == f);
    for &(e, tf, f, flag) in table::UNUSED_FIELDS {
        if e == enc && !has(tf) && row.flags & flag == 0 {
            if let Some((dw, lo, width)) = encoding::field_position(enc, f) {
                let mask = if width >= 32 { u32::MAX } else { (1u32 << width) - 1 };
                for variant in &mut out {
                    if let Some(w) = variant.get_mut(dw as usize) {
                        *w |= mask << lo;
                    }
                }
            }
        }
    }
    out
}

/// The modifier groups that apply to encoding `enc`, in table order
/// (sorted out of [`table::MODIFIER_GROUPS`] once).
fn modifier_groups_of(enc: Encoding) -> &'static [table::ModifierGroup] {
    static BY_ENCODING: std::sync::OnceLock<Vec<Vec<table::ModifierGroup>>> = std::sync::OnceLock::new();
    let by = BY_ENCODING.get_or_init(|| {
        let mut by: Vec<Vec<table::ModifierGroup>> = Vec::new();
        for group in table::MODIFIER_GROUPS {
            for &e in group.1 {
                if by.len() <= e as usize {
                    by.resize(e as usize + 1, Vec::new());
                }
                by[e as usize].push(*group);
            }
        }
        by
    });
    by.get(enc as usize).map(Vec::as_slice).unwrap_or(&[])
}

/// Modifier bits of sources the instruction does not have must be clear.
fn check_absent_sources(row: &OpcodeRow, enc: Encoding, variant: Variant, words: &[u32; 4]) -> Result<(), DecodeError> {
    let absent = |bits: u32, first: u32| -> bool {
        let n = row
            .operands
            .iter()
            .filter(|s| matches!(s.field, Field::Src0 | Field::Src1 | Field::Src2 | Field::Vsrc1))
            .count() as u32;
        (first..3).any(|i| i >= n && bits & (1 << i) != 0)
    };
    if enc == Encoding::Ds && row.flags & flags::RGDS != 0 && field(enc, Field::Gds, words) == 0 {
        return Err(DecodeError::Invalid { word: words[0] });
    }
    if enc == Encoding::Mubuf && row.flags & flags::RLDS != 0 && field(enc, Field::BufLds, words) == 0 {
        return Err(DecodeError::Invalid { word: words[0] });
    }
    // A buffer load into LDS cannot also select AGPR data (gfx90a+) or TFE (gfx908).
    if enc == Encoding::Mubuf && field(enc, Field::BufLds, words) != 0 && field(enc, Field::BufAcc, words) != 0 {
        return Err(DecodeError::Invalid { word: words[0] });
    }
    let bad = match (enc, variant) {
        (Encoding::Vop1, Variant::Dpp) => words[1] & 0x00C0_0000 != 0,
        (Encoding::Vop1, Variant::Sdwa) => words[1] & 0xFF00_0000 != 0,
        (Encoding::Vop3p, _) => {
            absent(field(enc, Field::Neg, words), 0)
                || absent(field(enc, Field::Abs, words), 0)
                || absent(field(enc, Field::OpSel, words), 0)
        }
        _ => false,
    };
    if bad {
        return Err(DecodeError::Invalid { word: words[0] });
    }
    Ok(())
}

fn variant_of(enc: Encoding, w0: u32) -> Variant {
    if matches!(enc, Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc) {
        match (w0 & 0x1FF) as u16 {
            DPP_CODE => return Variant::Dpp,
            SDWA_CODE => return Variant::Sdwa,
            _ => {}
        }
    }
    Variant::Plain
}

/// Length in bytes of an instruction whose first dwords are `words` and
/// whose row's facts are `facts`.
fn instruction_length(target: Target, enc: Encoding, facts: &RowFacts, words: &[u32]) -> Result<usize, DecodeError> {
    let w0 = words[0];
    let mut len = enc.base_length();
    let literal = facts.literal_fields.iter().any(|&f| field(enc, f, words) as u16 == LITERAL_CODE);
    if enc.takes_literal() {
        let extension = matches!(variant_of(enc, w0), Variant::Dpp | Variant::Sdwa);
        if literal || extension || facts.constant {
            len += 4;
        }
    }
    if enc == Encoding::Sopk && facts.constant {
        len += 4;
    }
    // 64-bit encodings: a literal source (VOP3/VOP3P sources, buffer soffset)
    // exists on gfx950 only; older targets reject the code.
    if literal && matches!(enc, Encoding::Vop3 | Encoding::Vop3p | Encoding::Mubuf | Encoding::Mtbuf) {
        if target != Target::Gfx950 {
            return Err(DecodeError::Invalid { word: w0 });
        }
        len += 4;
    }
    Ok(len)
}

/// Walk a code range, yielding each instruction's address and decode result.
/// After an error the walk resumes 4 bytes further (as the reference
/// disassembler does), so every dword is visited.
pub fn disassemble(target: Target, bytes: &[u8], base_addr: u64) -> Disassembly<'_> {
    Disassembly { target, bytes, offset: 0, base_addr }
}

/// Iterator returned by [`disassemble`].
#[derive(Debug, Clone)]
pub struct Disassembly<'a> {
    target: Target,
    bytes: &'a [u8],
    offset: usize,
    base_addr: u64,
}

impl Disassembly<'_> {
    /// Where the next instruction starts: a byte offset into the bytes
    /// walked (their length once the walk is over).
    pub fn offset(&self) -> usize {
        self.offset
    }
}

impl Iterator for Disassembly<'_> {
    type Item = (u64, Result<Instruction, DecodeError>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.offset >= self.bytes.len() {
            return None;
        }
        let addr = self.base_addr + self.offset as u64;
        let res = decode(self.target, &self.bytes[self.offset..]);
        let step = match &res {
            Ok(i) => i.length,
            Err(DecodeError::Truncated { .. }) => self.bytes.len() - self.offset,
            Err(_) => 4,
        };
        self.offset += step;
        Some((addr, res))
    }
}

/// Value of a field of the instruction (for the renderers).
pub(crate) fn fv(insn: &Instruction, f: Field) -> u32 {
    field(insn.encoding, f, &insn.words)
}

/// Render one template slot as an operand.
pub(crate) fn slot_operand(insn: &Instruction, slot: &Slot) -> Result<Operand, DecodeError> {
    let value = fv(insn, slot.field);
    let base = insn.encoding.base_length();
    let literal = if insn.length > base { Some(insn.words[base / 4]) } else { None };
    Ok(match slot.kind {
        SlotKind::Code(ty) => match Operand::from_code(value as u16, slot.width, ty, literal) {
            Operand::Literal { value, ty, .. } => {
                let form = if insn.target == Target::Gfx950 { LiteralForm::Lit } else { LiteralForm::AsInline };
                Operand::Literal { value, ty, form }
            }
            other => other,
        },
        SlotKind::Vgpr => Operand::Reg(RegRange::new(RegFile::Vgpr, value as u16, slot.width)),
        SlotKind::Agpr if matches!(slot.field, Field::Src0 | Field::Src1 | Field::Src2) => {
            if value >= 256 {
                Operand::Reg(RegRange::new(RegFile::Agpr, (value - 256) as u16, slot.width))
            } else {
                Operand::from_code(value as u16, slot.width, ConstType::B32, literal)
            }
        }
        SlotKind::Agpr => Operand::Reg(RegRange::new(RegFile::Agpr, value as u16, slot.width)),
        SlotKind::Fixed(s) => Operand::Fixed(s),
        SlotKind::Imm(style) => match style {
            ImmStyle::Udec => Operand::Label(value as u16 as i16),
            ImmStyle::Hex => Operand::Imm(value as u16),
            ImmStyle::Hwreg => Operand::Symbolic(symbolic::hwreg(value as u16, insn.target)),
            ImmStyle::Sendmsg => Operand::Symbolic(symbolic::sendmsg(value as u16)),
            ImmStyle::Waitcnt => Operand::Symbolic(symbolic::waitcnt(value as u16)),
            ImmStyle::GprIdx => Operand::Symbolic(symbolic::gpr_idx(value as u16)),
        },
        SlotKind::Constant => {
            let k = insn.words[1];
            let ty = if slot.width == 1 { ConstType::F16 } else { ConstType::B32 };
            let form = if insn.target == Target::Gfx950 { LiteralForm::Lit } else { LiteralForm::AsInline };
            Operand::Literal { value: k, ty, form }
        }
        SlotKind::SmemOffset => return Err(DecodeError::Unsupported { word: insn.words[0] }),
        SlotKind::Number => Operand::Symbolic(value.to_string()),
        SlotKind::Unknown => return Err(DecodeError::Unsupported { word: insn.words[0] }),
    })
}

pub(crate) fn plain(operand: Operand) -> OperandSlot {
    OperandSlot { operand, mods: SrcMods::default(), written: false, invalid: None }
}
