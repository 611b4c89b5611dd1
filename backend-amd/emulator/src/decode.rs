//! Instruction decoding for the emulator: splits a gfx9/CDNA instruction word
//! into its encoding, opcode and length, and names it through the generated
//! [`crate::opcode_table`]. Operand fields are read by the executor from the
//! raw words; this module only knows where an instruction starts and ends.

use crate::opcode_table::OPCODES;
use std::collections::HashMap;
use std::sync::OnceLock;

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
    /// 64-bit encoding are decoded as their own encoding with `vop3` set.
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
    pub opcode: u16,
    pub mnemonic: &'static str,
    /// A VOP1/VOP2/VOPC opcode in the 64-bit VOP3 encoding.
    pub vop3: bool,
    /// Length in bytes (4, 8 or 12).
    pub len: u8,
    /// The raw dwords: [0] and [1] of the encoding, [2] a trailing literal.
    pub words: [u32; 3],
    /// The literal constant, where the instruction carries one.
    pub literal: Option<u32>,
}

/// Why bytes do not decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    Truncated,
    UnknownEncoding(u32),
    UnknownOpcode { encoding: Encoding, opcode: u16, word: u32 },
    /// DPP and SDWA operand forms are not executed.
    UnsupportedForm(&'static str),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Truncated => write!(f, "instruction runs past the end of the code"),
            DecodeError::UnknownEncoding(w) => write!(f, "unknown encoding {w:#010x}"),
            DecodeError::UnknownOpcode { encoding, opcode, word } => {
                write!(f, "unknown {encoding:?} opcode {opcode:#x} ({word:#010x})")
            }
            DecodeError::UnsupportedForm(s) => write!(f, "unsupported operand form {s}"),
        }
    }
}

/// The CDNA generations whose opcode maps the emulator knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    Gfx908,
    Gfx90a,
    /// gfx940, gfx941, gfx942.
    Gfx942,
    Gfx950,
}

impl Target {
    /// From a processor name such as `gfx90a` (feature suffixes ignored).
    pub fn from_name(name: &str) -> Option<Target> {
        Some(match name.split(':').next()? {
            "gfx908" => Target::Gfx908,
            "gfx90a" => Target::Gfx90a,
            "gfx940" | "gfx941" | "gfx942" => Target::Gfx942,
            "gfx950" => Target::Gfx950,
            _ => return None,
        })
    }
    fn bit(self) -> u8 {
        match self {
            Target::Gfx908 => 1,
            Target::Gfx90a => 2,
            Target::Gfx942 => 4,
            Target::Gfx950 => 8,
        }
    }
}

fn table() -> &'static HashMap<(Encoding, u16, u8), &'static str> {
    static TABLE: OnceLock<HashMap<(Encoding, u16, u8), &'static str>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut t = HashMap::new();
        for &(e, o, m, targets) in OPCODES {
            for bit in [1u8, 2, 4, 8] {
                if targets & bit != 0 {
                    t.insert((e, o, bit), m);
                }
            }
        }
        t
    })
}

/// The mnemonic of an (encoding, opcode) on `target`, if the table knows it.
pub fn mnemonic(target: Target, encoding: Encoding, opcode: u16) -> Option<&'static str> {
    table().get(&(encoding, opcode, target.bit())).copied()
}

/// Encoding, opcode, whether promoted to VOP3, and base length of dword 0.
fn classify(w: u32) -> Result<(Encoding, u16, bool, u8), DecodeError> {
    Ok(match w {
        _ if w >> 23 == 0x17F => (Encoding::Sopp, ((w >> 16) & 0x7F) as u16, false, 4),
        _ if w >> 23 == 0x17E => (Encoding::Sopc, ((w >> 16) & 0x7F) as u16, false, 4),
        _ if w >> 23 == 0x17D => (Encoding::Sop1, ((w >> 8) & 0xFF) as u16, false, 4),
        _ if w >> 28 == 0xB => (Encoding::Sopk, ((w >> 23) & 0x1F) as u16, false, 4),
        _ if w >> 30 == 0b10 => (Encoding::Sop2, ((w >> 23) & 0x7F) as u16, false, 4),
        _ if w >> 25 == 0x3F => (Encoding::Vop1, ((w >> 9) & 0xFF) as u16, false, 4),
        _ if w >> 25 == 0x3E => (Encoding::Vopc, ((w >> 17) & 0xFF) as u16, false, 4),
        _ if w >> 31 == 0 => (Encoding::Vop2, ((w >> 25) & 0x3F) as u16, false, 4),
        _ if w >> 23 == 0x1A7 => (Encoding::Vop3p, ((w >> 16) & 0x7F) as u16, false, 8),
        _ => match w >> 26 {
            0x34 => {
                let op = ((w >> 16) & 0x3FF) as u16;
                match op {
                    0..=0xFF => (Encoding::Vopc, op, true, 8),
                    0x100..=0x13F => (Encoding::Vop2, op - 0x100, true, 8),
                    0x140..=0x1BF => (Encoding::Vop1, op - 0x140, true, 8),
                    _ => (Encoding::Vop3, op, false, 8),
                }
            }
            0x30 => (Encoding::Smem, ((w >> 18) & 0xFF) as u16, false, 8),
            0x36 => (Encoding::Ds, ((w >> 17) & 0xFF) as u16, false, 8),
            0x38 => (Encoding::Mubuf, ((w >> 18) & 0x7F) as u16, false, 8),
            0x37 => {
                let enc = match (w >> 14) & 3 {
                    0 => Encoding::Flat,
                    1 => Encoding::Scratch,
                    2 => Encoding::Global,
                    _ => return Err(DecodeError::UnknownEncoding(w)),
                };
                (enc, ((w >> 18) & 0x7F) as u16, false, 8)
            }
            _ => return Err(DecodeError::UnknownEncoding(w)),
        },
    })
}

/// Decodes the instruction at the start of `bytes` for `target`.
pub fn decode(target: Target, bytes: &[u8]) -> Result<Instruction, DecodeError> {
    let word = |i: usize| -> Result<u32, DecodeError> {
        let b = bytes.get(4 * i..4 * i + 4).ok_or(DecodeError::Truncated)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let w0 = word(0)?;
    let (encoding, opcode, vop3, base) = classify(w0)?;
    let mnemonic = mnemonic(target, encoding, opcode)
        .ok_or(DecodeError::UnknownOpcode { encoding, opcode, word: w0 })?;
    let mut words = [w0, 0, 0];
    if base == 8 {
        words[1] = word(1)?;
    }
    // Scalar and 32-bit vector encodings take a literal dword when a source
    // field names operand 255.
    let lit_in = |f: u32| f == 255;
    let has_literal = match encoding {
        Encoding::Sop2 => lit_in(w0 & 0xFF) || lit_in((w0 >> 8) & 0xFF),
        Encoding::Sopc => lit_in(w0 & 0xFF) || lit_in((w0 >> 8) & 0xFF),
        Encoding::Sop1 => lit_in(w0 & 0xFF),
        Encoding::Sopk => mnemonic == "s_setreg_imm32_b32",
        Encoding::Vop1 | Encoding::Vop2 | Encoding::Vopc if !vop3 => {
            match w0 & 0x1FF {
                0xF9 => return Err(DecodeError::UnsupportedForm("SDWA")),
                0xFA => return Err(DecodeError::UnsupportedForm("DPP")),
                _ => {}
            }
            lit_in(w0 & 0x1FF)
                || matches!(mnemonic, "v_madmk_f32" | "v_madak_f32" | "v_fmamk_f32" | "v_fmaak_f32")
        }
        _ => false,
    };
    let mut len = base;
    let mut literal = None;
    if has_literal {
        let idx = (base / 4) as usize;
        let l = word(idx)?;
        words[idx] = l;
        literal = Some(l);
        len += 4;
    }
    Ok(Instruction { encoding, opcode, mnemonic, vop3, len, words, literal })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_known_words() {
        // s_waitcnt lgkmcnt(0)
        let i = decode(Target::Gfx942, &0xBF8CC07Fu32.to_le_bytes()).expect("decodes");
        assert_eq!((i.mnemonic, i.len), ("s_waitcnt", 4));
        // s_and_b32 s3, s3, 0xffff (literal)
        let mut b = 0x8603FF03u32.to_le_bytes().to_vec();
        b.extend_from_slice(&0xFFFFu32.to_le_bytes());
        let i = decode(Target::Gfx942, &b).expect("decodes");
        assert_eq!((i.mnemonic, i.len, i.literal), ("s_and_b32", 8, Some(0xFFFF)));
        // v_lshl_add_u64 (VOP3)
        let mut b = 0xD2080002u32.to_le_bytes().to_vec();
        b.extend_from_slice(&0x04090500u32.to_le_bytes());
        assert_eq!(decode(Target::Gfx942, &b).expect("decodes").mnemonic, "v_lshl_add_u64");
        // A literal missing from the end is an error, not a panic.
        assert_eq!(decode(Target::Gfx942, &0x8603FF03u32.to_le_bytes()), Err(DecodeError::Truncated));
        assert_eq!(decode(Target::Gfx942, &[1, 2]), Err(DecodeError::Truncated));
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut s = 0x1234_5678_9abc_def0u64;
        for _ in 0..100_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let n = (s % 13) as usize;
            let bytes: Vec<u8> = (0..n).map(|k| (s >> (k * 5)) as u8).collect();
            let _ = decode(Target::Gfx90a, &bytes);
        }
    }
}
