//! Instruction identity for the emulator: which instruction starts at a byte
//! offset, how long it is and what it is called, as the project's gfx9/CDNA
//! decoder (`xfpx-amd-isa`) reads it. This module only maps that decoder's
//! result onto the executor's view (encoding family, VOP3 promotion, SDWA,
//! literal);
//! operand fields are read by the executor from the raw words.

use std::collections::HashMap;
use std::sync::OnceLock;
use xfpx_amd_isa::encoding::Field;
use xfpx_amd_isa::Encoding as IsaEncoding;
pub use xfpx_amd_isa::Target;
use xfpx_amd_isa::{Opcode, Variant};

/// The instruction encodings of gfx9/CDNA that the emulator executes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Encoding {
    Sop1,
    Sop2,
    Sopk,
    Sopc,
    Sopp,
    Smem,
    Vop1,
    Vop2,
    Vopc,
    /// VOP3-only opcodes (VOP3A/VOP3B); VOP1/VOP2/VOPC opcodes promoted to the
    /// 64-bit encoding are reported as their own encoding with `vop3` set.
    Vop3,
    Vop3p,
    Ds,
    /// MUBUF buffer loads and stores (executed for the private segment only).
    Mubuf,
    Flat,
    Global,
    Scratch,
}

/// One decoded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instruction {
    pub encoding: Encoding,
    /// The opcode within `encoding` (for a promoted VOP1/VOP2/VOPC
    /// instruction, the opcode of its 32-bit form).
    pub opcode: u16,
    /// The opcode of the mnemonic stem: every form of a VOP1/VOP2/VOPC
    /// mnemonic (`_e32`, `_e64`, a VOP3-native form of the same name) is its
    /// `_e32` opcode, so that it names what `mnemonic` names.
    pub op: Opcode,
    /// The mnemonic without the `_e32`/`_e64` suffix.
    pub mnemonic: &'static str,
    /// A VOP1/VOP2/VOPC opcode in the 64-bit VOP3 encoding.
    pub vop3: bool,
    /// A VOP1/VOP2/VOPC opcode with the sub-dword addressing (SDWA) dword
    /// in `words[1]` (source 0, selects, modifiers; no literal).
    pub sdwa: bool,
    /// A VOP1/VOP2/VOPC opcode with the data-parallel primitives (DPP)
    /// dword in `words[1]` (source 0, lane control, masks; no literal).
    pub dpp: bool,
    /// 32-bit registers of source 0 (2 for a 64-bit operand).
    pub src0_dwords: u8,
    /// Length in bytes (4, 8 or 12).
    pub len: u8,
    /// The raw dwords: [0] and [1] of the encoding, [2] a trailing literal.
    pub words: [u32; 3],
    /// The literal constant, where the instruction carries one.
    pub literal: Option<u32>,
    /// What it does to EXEC, as the decoder says (`exec_effect`): counted
    /// by [`crate::ExecCounts`].
    pub exec: xfpx_common::counters::MaskEffect,
}

/// Why bytes do not decode to an instruction the emulator executes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// The instruction runs past the end of the available bytes.
    Truncated,
    /// The ISA decoder rejects the bytes (not an instruction on the target,
    /// or one it does not model).
    Isa(xfpx_amd_isa::DecodeError),
    /// A valid instruction in a form or encoding the emulator does not execute
    /// (MTBUF, MIMG, ...).
    UnsupportedForm(&'static str),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Truncated => write!(f, "instruction runs past the end of the code"),
            DecodeError::Isa(e) => write!(f, "{e}"),
            DecodeError::UnsupportedForm(s) => write!(f, "unsupported operand form {s}"),
        }
    }
}

impl std::error::Error for DecodeError {}

/// The executor's encoding of an ISA decoder encoding, or the name of one it
/// does not execute.
fn executed_encoding(e: IsaEncoding) -> Result<Encoding, &'static str> {
    Ok(match e {
        IsaEncoding::Sop1 => Encoding::Sop1,
        IsaEncoding::Sop2 => Encoding::Sop2,
        IsaEncoding::Sopk => Encoding::Sopk,
        IsaEncoding::Sopc => Encoding::Sopc,
        IsaEncoding::Sopp => Encoding::Sopp,
        IsaEncoding::Smem => Encoding::Smem,
        IsaEncoding::Vop1 => Encoding::Vop1,
        IsaEncoding::Vop2 => Encoding::Vop2,
        IsaEncoding::Vopc => Encoding::Vopc,
        IsaEncoding::Vop3 => Encoding::Vop3,
        IsaEncoding::Vop3p => Encoding::Vop3p,
        IsaEncoding::Ds => Encoding::Ds,
        IsaEncoding::Mubuf => Encoding::Mubuf,
        IsaEncoding::Flat => Encoding::Flat,
        IsaEncoding::Global => Encoding::Global,
        IsaEncoding::Scratch => Encoding::Scratch,
        IsaEncoding::Mtbuf => return Err("MTBUF"),
        IsaEncoding::Mimg => return Err("MIMG"),
        IsaEncoding::Exp => return Err("EXP"),
        IsaEncoding::Vintrp => return Err("VINTRP"),
    })
}

/// (`_e32` opcode, target mask) to (encoding family, opcode) of a 32-bit
/// VOP1/VOP2/VOPC form.
type E32Forms = HashMap<(Opcode, u8), (Encoding, u16)>;

/// The 32-bit form of each promoted (`_e64`) VOP1/VOP2/VOPC mnemonic, per
/// target mask, read from the ISA decoder's instruction table.
fn e32_forms() -> &'static E32Forms {
    static FORMS: OnceLock<E32Forms> = OnceLock::new();
    FORMS.get_or_init(|| {
        let mut forms = HashMap::new();
        for row in xfpx_amd_isa::table::rows() {
            let family = match row.encoding {
                IsaEncoding::Vop1 => Encoding::Vop1,
                IsaEncoding::Vop2 => Encoding::Vop2,
                IsaEncoding::Vopc => Encoding::Vopc,
                _ => continue,
            };
            for bit in xfpx_amd_isa::Target::ALL.map(xfpx_amd_isa::Target::mask) {
                if row.targets & bit != 0 {
                    forms.insert((row.op, bit), (family, row.opcode));
                }
            }
        }
        forms
    })
}

fn strip_form_suffix(m: &'static str) -> &'static str {
    m.strip_suffix("_e32").or_else(|| m.strip_suffix("_e64")).unwrap_or(m)
}

/// Decodes the instruction at the start of `bytes` for `target`.
pub fn decode(target: Target, bytes: &[u8]) -> Result<Instruction, DecodeError> {
    let insn = xfpx_amd_isa::decode(target, bytes).map_err(|e| match e {
        xfpx_amd_isa::DecodeError::Truncated { .. } => DecodeError::Truncated,
        e => DecodeError::Isa(e),
    })?;
    let dpp = insn.variant == Variant::Dpp;
    let sdwa = match insn.variant {
        Variant::Plain | Variant::Dpp => false,
        // Every SDWA source is one dword; the selects address its bytes (a
        // 64-bit destination, v_cvt_pk_f32_fp8's, is written whole).
        Variant::Sdwa if insn.row.operands.iter().any(|s| s.width > 1 && s.field != Field::Vdst) => {
            return Err(DecodeError::UnsupportedForm("SDWA with a 64-bit operand"))
        }
        Variant::Sdwa => true,
        Variant::ScaledMfma => return Err(DecodeError::UnsupportedForm("scaled MFMA")),
    };
    let mut encoding = executed_encoding(insn.encoding).map_err(DecodeError::UnsupportedForm)?;
    let mut opcode = insn.opcode;
    let mut vop3 = false;
    let mnemonic = strip_form_suffix(insn.base_mnemonic);
    let op = insn.op.stem();
    // An `_e64` form of a VOP1/VOP2/VOPC mnemonic.
    if encoding == Encoding::Vop3 && op != insn.op {
        if let Some(&(family, op32)) = e32_forms().get(&(op, insn.target.mask())) {
            (encoding, opcode, vop3) = (family, op32, true);
        }
    }
    let base = insn.encoding.base_length();
    if insn.length > 12 || insn.length < base {
        return Err(DecodeError::UnsupportedForm("instruction longer than 12 bytes"));
    }
    let mut words = [0u32; 3];
    words[..insn.length / 4].copy_from_slice(&insn.words[..insn.length / 4]);
    let literal = (insn.length > base && !sdwa && !dpp).then(|| words[base / 4]);
    let exec = insn.exec_effect();
    let src0_dwords = insn.row.operands.iter().find(|o| o.field == Field::Src0).map_or(1, |o| o.width);
    Ok(Instruction {
        encoding,
        opcode,
        op,
        mnemonic,
        vop3,
        sdwa,
        dpp,
        src0_dwords,
        len: insn.length as u8,
        words,
        literal,
        exec,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn decodes_known_words() {
        // s_waitcnt lgkmcnt(0)
        let i = decode(Target::Gfx942, &bytes(&[0xBF8CC07F])).expect("decodes");
        assert_eq!((i.encoding, i.mnemonic, i.len, i.literal), (Encoding::Sopp, "s_waitcnt", 4, None));
        // s_and_b32 s3, s3, 0xffff (literal)
        let i = decode(Target::Gfx942, &bytes(&[0x8603FF03, 0xFFFF])).expect("decodes");
        assert_eq!((i.mnemonic, i.len, i.literal), ("s_and_b32", 8, Some(0xFFFF)));
        // v_lshl_add_u64 (VOP3)
        let i = decode(Target::Gfx942, &bytes(&[0xD2080002, 0x04090500])).expect("decodes");
        assert_eq!((i.encoding, i.vop3, i.mnemonic), (Encoding::Vop3, false, "v_lshl_add_u64"));
        // v_mov_b32_e32 v1, v2 and its VOP3 form v_mov_b32_e64 v1, v2: one opcode.
        let i = decode(Target::Gfx90a, &bytes(&[0x7E020302])).expect("decodes");
        assert_eq!((i.encoding, i.opcode, i.vop3, i.mnemonic, i.len), (Encoding::Vop1, 1, false, "v_mov_b32", 4));
        assert_eq!(i.op, Opcode::V_MOV_B32_E32);
        let i = decode(Target::Gfx90a, &bytes(&[0xD1410001, 0x00000102])).expect("decodes");
        assert_eq!((i.encoding, i.opcode, i.vop3, i.mnemonic, i.len), (Encoding::Vop1, 1, true, "v_mov_b32", 8));
        assert_eq!(i.op, Opcode::V_MOV_B32_E32);
        // v_cmp_class_f32_e64 s[0:1], v1, v2: a promoted VOPC.
        let i = decode(Target::Gfx90a, &bytes(&[0xD0100000, 0x00020501])).expect("decodes");
        assert_eq!((i.encoding, i.opcode, i.vop3, i.mnemonic), (Encoding::Vopc, 0x10, true, "v_cmp_class_f32"));
        // A literal missing from the end is an error, not a panic.
        assert_eq!(decode(Target::Gfx942, &bytes(&[0x8603FF03])), Err(DecodeError::Truncated));
        assert_eq!(decode(Target::Gfx942, &[1, 2]), Err(DecodeError::Truncated));
        // Not an instruction at all.
        assert!(matches!(decode(Target::Gfx942, &bytes(&[0xFFFF_FFFF, 0])), Err(DecodeError::Isa(_))));
    }

    #[test]
    fn stem_opcodes_name_the_mnemonic() {
        for op in Opcode::all() {
            let stem = op.stem();
            assert_eq!(strip_form_suffix(stem.mnemonic()), strip_form_suffix(op.mnemonic()), "{op}");
            assert_eq!(stem.stem(), stem);
        }
        assert_eq!(Opcode::V_MUL_LEGACY_F32.stem(), Opcode::V_MUL_LEGACY_F32_E32);
        assert_eq!(Opcode::V_FMA_F32.stem(), Opcode::V_FMA_F32);
    }

    #[test]
    fn dpp_forms_decode_without_a_literal() {
        // v_mov_b32_dpp v0, v1 quad_perm:[0,1,2,3] row_mask:0xf bank_mask:0xf
        let i = decode(Target::Gfx90a, &bytes(&[0x7E0002FA, 0xFF00E401])).expect("decodes");
        assert_eq!((i.dpp, i.sdwa, i.literal, i.len, i.src0_dwords), (true, false, None, 8, 1));
        // v_mov_b64_dpp v[0:1], v[2:3] row_newbcast:1 (gfx942): a 64-bit source.
        let i = decode(Target::Gfx942, &bytes(&[0x7E0070FA, 0xFF015102])).expect("decodes");
        assert_eq!((i.dpp, i.src0_dwords), (true, 2));
    }

    #[test]
    fn returning_flat_atomics_decode() {
        // flat_atomic_add v0, v[2:3], v4 glc (llvm-mc-19, gfx90a; `sc0` on
        // gfx942, same word): the GLC bit (bit 16) selects the returning form,
        // which the ISA decoder now reads itself.
        let words = [0xDD09_0000u32, 0x0000_0402];
        for t in [Target::Gfx908, Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
            let i = decode(t, &bytes(&words)).unwrap_or_else(|e| panic!("{t:?}: {e}"));
            assert_eq!(
                (i.encoding, i.mnemonic, i.len, i.words[0]),
                (Encoding::Flat, "flat_atomic_add", 8, words[0]),
                "{t:?}"
            );
        }
        // flat_load_dword v0, v[2:3] glc decodes as itself; a FLAT word that
        // is invalid without GLC stays invalid with it.
        let i = decode(Target::Gfx90a, &bytes(&[0xDC51_0000, 0x0000_0002])).expect("decodes");
        assert_eq!((i.mnemonic, i.words[0]), ("flat_load_dword", 0xDC51_0000));
        // FLAT opcode 0 (unassigned) with GLC set.
        assert!(matches!(decode(Target::Gfx90a, &bytes(&[0xDC01_0000, 0])), Err(DecodeError::Isa(_))));
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut s = 0x1234_5678_9abc_def0u64;
        for _ in 0..100_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let n = (s % 17) as usize;
            let bytes: Vec<u8> = (0..n).map(|k| (s >> (k * 3)) as u8).collect();
            for t in [Target::Gfx908, Target::Gfx90a, Target::Gfx942, Target::Gfx950] {
                if let Ok(i) = decode(t, &bytes) {
                    assert!(matches!(i.len, 4 | 8 | 12) && i.len as usize <= bytes.len());
                }
            }
        }
    }
}
