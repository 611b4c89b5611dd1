//! The vendor-neutral view of a kernel's code: each decoded AMDGPU
//! instruction as an `xfpx_common::view::InstrView` (IR class from the
//! decoder's table, registers written and read, control flow).

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use xfpx_amd_isa::operand::RegFile as IsaFile;
use xfpx_amd_isa::{CmpCond, ControlFlow, Instruction, Opcode, Target};
use xfpx_common::hash::FastKeys;
use xfpx_common::view::{Control, InstrView, KernelView, Operand, RegFile, RegRange, Uses};

/// One decoded instruction of a kernel, with its address.
#[derive(Debug, Clone)]
pub struct DecodedInstr {
    pub addr: u64,
    pub insn: Instruction,
}

fn file(f: IsaFile) -> Option<RegFile> {
    match f {
        IsaFile::Vgpr => Some(RegFile::PerLane),
        IsaFile::Sgpr => Some(RegFile::Uniform),
        IsaFile::Agpr => Some(RegFile::Accumulator),
        IsaFile::Ttmp => None,
    }
}

/// The ISA registers a view operand names, one by one: none for a
/// predicate or an operand that is no register (the inverse of [`file`]).
pub(crate) fn isa_registers(op: &Operand) -> impl Iterator<Item = (IsaFile, u16)> {
    let regs = match op {
        Operand::Reg(r) => match r.file {
            RegFile::PerLane => Some((IsaFile::Vgpr, *r)),
            RegFile::Uniform => Some((IsaFile::Sgpr, *r)),
            RegFile::Accumulator => Some((IsaFile::Agpr, *r)),
            RegFile::Predicate | RegFile::Stack => None,
        },
        _ => None,
    };
    regs.into_iter().flat_map(|(f, r)| (0..u16::from(r.count)).map(move |i| (f, r.first + i)))
}

fn operand(r: xfpx_amd_isa::RegRange) -> Option<Operand> {
    file(r.file).map(|f| Operand::Reg(RegRange::new(f, r.first, r.count)))
}

/// How an instruction at `addr` affects control flow, in the view's terms.
pub fn control(insn: &Instruction, addr: u64) -> Control {
    match insn.control_flow(addr) {
        ControlFlow::Next | ControlFlow::GetPc { .. } => {
            if insn.op == Opcode::S_BARRIER {
                Control::Barrier
            } else {
                Control::None
            }
        }
        ControlFlow::Branch { .. } => Control::Branch,
        ControlFlow::CondBranch { .. } => Control::CondBranch,
        ControlFlow::Call { .. } => Control::Call,
        ControlFlow::Indirect if insn.op == Opcode::S_SWAPPC_B64 => Control::Call,
        ControlFlow::Indirect => Control::Return,
        ControlFlow::End | ControlFlow::Trap => Control::Exit,
    }
}

/// Whether a conversion writes something other than a value of its
/// class's format: the decoder's table names the source format for
/// conversions to integers (`v_cvt_i32_f32` is `f32.conversion`) and for
/// packed or 8-bit float results, whose destinations a check of that
/// format would misread.
pub fn conversion_writes_other_format(op: Opcode) -> bool {
    op.conversion().is_some_and(|c| c.writes_other_format)
}

/// The format a conversion of a floating-point class reads (`v_cvt_f32_f64`
/// reads f64; integers and bytes are no float).
pub fn conversion_source(op: Opcode) -> xfpx_common::view::SourceFormat {
    op.conversion().map_or(xfpx_common::view::SourceFormat::OfClass, |c| c.source)
}

/// The class a view gives an instruction: the decoder's, except for
/// conversions whose destination is not of the class's format
/// ([`conversion_writes_other_format`]; `v_cvt_pkrtz_f16_f32`, whose
/// result is f16x2).
pub fn view_class(insn: &Instruction) -> xfpx_common::InstrClass {
    let class = insn.class();
    // Two f32 rounded toward zero into one register's f16 halves.
    if insn.op == Opcode::V_CVT_PKRTZ_F16_F32 {
        return xfpx_common::InstrClass::Arith {
            format: xfpx_common::FpFormat::F16x2,
            op: xfpx_common::FpOp::Conversion,
        };
    }
    if matches!(class, xfpx_common::InstrClass::Arith { op: xfpx_common::FpOp::Conversion, .. })
        && conversion_writes_other_format(insn.op)
    {
        xfpx_common::InstrClass::Other
    } else {
        class
    }
}

/// The operand a class test (`v_cmp_class_*`, `v_cmpx_class_*`) reads as
/// its integer mask of classes (its second source), where it is a register.
fn class_mask(insn: &Instruction) -> Option<xfpx_amd_isa::RegRange> {
    if !insn.op.compare().is_some_and(|c| c.cond == CmpCond::Class && c.unit.is_vector()) {
        return None;
    }
    // the last source: the e32 form lists its `vcc` destination first
    match insn.operands.iter().rfind(|o| !o.written).map(|o| &o.operand) {
        Some(xfpx_amd_isa::operand::Operand::Reg(r)) => Some(*r),
        _ => None,
    }
}

/// The operands an instruction reads, as the view gives them: a class
/// test's mask is no floating-point value (`Other`), so that no tool reads
/// it as one.
fn reads(insn: &Instruction) -> Uses {
    let mut uses: Uses = insn.reg_reads().filter_map(operand).collect();
    let Some(mask) = class_mask(insn) else { return uses };
    // The last of the uses that names the mask's registers.
    let viewed = insn.reg_reads().filter(|r| file(r.file).is_some());
    if let Some((i, _)) = viewed.enumerate().filter(|(_, r)| *r == mask).last() {
        uses[i] = Operand::Other { text: "class mask".into() };
    }
    uses
}

/// The texts of decoded instructions already rendered, by what a text
/// follows from: the target and the instruction's words (a decoded
/// instruction is a function of them). An instruction met again, in this
/// kernel or another one, shares the text rendered the first time (most
/// instructions of a code object repeat one met before).
#[derive(Debug, Default)]
pub struct TextCache {
    texts: HashMap<TextKey, Arc<str>, FastKeys>,
    /// Room the texts are rendered in before they are kept.
    scratch: String,
}

#[derive(Debug, PartialEq, Eq)]
struct TextKey {
    target: Target,
    length: usize,
    words: [u32; 4],
}

impl Hash for TextKey {
    fn hash<H: Hasher>(&self, h: &mut H) {
        // One word, its high bits folded into the low ones the table's
        // buckets are chosen by.
        let [a, b, c, d] = self.words.map(u64::from);
        let x = (a | b << 32).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            ^ (c | d << 32)
            ^ (self.length as u64) << 58
            ^ (self.target as u64) << 61;
        let x = x.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
        h.write_u64(x ^ x >> 29);
    }
}

impl TextCache {
    /// The text of `insn` (a decoded instruction), rendered once.
    pub fn text(&mut self, insn: &Instruction) -> Arc<str> {
        let key = TextKey { target: insn.target, length: insn.length, words: insn.words };
        match self.texts.entry(key) {
            Entry::Occupied(e) => e.get().clone(),
            Entry::Vacant(e) => {
                self.scratch.clear();
                insn.write_text(&mut self.scratch);
                e.insert(self.scratch.as_str().into()).clone()
            }
        }
    }
}

/// Builds the view of a kernel named `name` whose entry is `entry`.
pub fn kernel_view(name: &str, entry: u64, instrs: &[DecodedInstr]) -> KernelView {
    kernel_view_with(name, entry, instrs, &mut TextCache::default())
}

/// [`kernel_view`], taking the instructions' texts from `texts`.
pub fn kernel_view_with(name: &str, entry: u64, instrs: &[DecodedInstr], texts: &mut TextCache) -> KernelView {
    let instrs = instrs
        .iter()
        .map(|d| {
            let class = view_class(&d.insn);
            InstrView {
                offset: d.addr - entry,
                text: texts.text(&d.insn),
                class,
                defs: d.insn.reg_writes().filter_map(operand).collect(),
                uses: reads(&d.insn),
                guarded: false,
                control: control(&d.insn, d.addr),
                flow: xfpx_common::view::ValueFlow::Opaque,
                source_format: match class {
                    xfpx_common::InstrClass::Arith { op: xfpx_common::FpOp::Conversion, .. } => {
                        conversion_source(d.insn.op)
                    }
                    _ => xfpx_common::view::SourceFormat::OfClass,
                },
                location: None,
            }
        })
        .collect();
    KernelView { name: name.to_string(), instrs }
}

#[cfg(test)]
mod tests {
    use super::conversion_writes_other_format as other;
    use xfpx_amd_isa::Opcode;

    #[test]
    fn texts_are_rendered_once_per_instruction_and_differ_with_any_word() {
        use xfpx_amd_isa::Target;
        // A VOP3 twice, then with another second word; a literal move, then
        // with another literal; s_nop.
        let words: [u32; 11] = [
            0xD100_0001,
            0x0002_0501,
            0xD100_0001,
            0x0002_0501,
            0xD100_0001,
            0x0002_0502,
            0x7E02_02FF,
            0x3F80_0000,
            0x7E02_02FF,
            0x4000_0000,
            0xBF80_0000,
        ];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        let instrs: Vec<super::DecodedInstr> = xfpx_amd_isa::disassemble(Target::Gfx942, &bytes, 0x100)
            .map(|(addr, r)| super::DecodedInstr { addr, insn: r.expect("decodes") })
            .collect();
        let mut texts = super::TextCache::default();
        let view = super::kernel_view_with("k", 0x100, &instrs, &mut texts);
        let again = super::kernel_view_with("k2", 0x100, &instrs, &mut texts);
        for (i, d) in instrs.iter().enumerate() {
            assert_eq!(&*view.instrs[i].text, d.insn.text(), "{i}");
            assert!(std::sync::Arc::ptr_eq(&view.instrs[i].text, &again.instrs[i].text), "{i} rendered again");
        }
        assert!(std::sync::Arc::ptr_eq(&view.instrs[0].text, &view.instrs[1].text));
        let distinct: std::collections::BTreeSet<&str> = view.instrs.iter().map(|i| &*i.text).collect();
        assert_eq!(distinct.len(), 5, "{distinct:?}");
    }

    #[test]
    fn conversions_to_integers_and_packed_formats_are_recognised() {
        for op in [
            Opcode::V_CVT_I32_F32_E32,
            Opcode::V_CVT_U32_F32_E64,
            Opcode::V_CVT_FLR_I32_F32_E32,
            Opcode::V_CVT_NORM_U16_F16_E32,
            Opcode::V_CVT_PK_F16_F32,
            Opcode::V_CVT_I32_F64_E32,
        ] {
            assert!(other(op), "{op}");
        }
        for op in [
            Opcode::V_CVT_F32_I32_E32,
            Opcode::V_CVT_F16_F32_E32,
            Opcode::V_CVT_F64_F32_E64,
            Opcode::V_CVT_F32_UBYTE0_E32,
            Opcode::V_ADD_F32_E32,
        ] {
            assert!(!other(op), "{op}");
        }
    }

    #[test]
    fn conversions_read_the_format_after_their_destinations() {
        use xfpx_common::view::SourceFormat::{Is, NotFloat, OfClass};
        use xfpx_common::FpFormat::*;
        for (op, reads) in [
            (Opcode::V_CVT_F32_F64_E32, Is(F64)),
            (Opcode::V_CVT_F64_F32_E64, Is(F32)),
            (Opcode::V_CVT_F16_F32_E32, Is(F32)),
            (Opcode::V_CVT_F32_F16_E32, Is(F16)),
            (Opcode::V_CVT_F32_I32_E32, NotFloat),
            (Opcode::V_CVT_F64_U32_E32, NotFloat),
            (Opcode::V_CVT_F32_UBYTE0_E32, NotFloat),
            (Opcode::V_ADD_F32_E32, OfClass),
        ] {
            assert_eq!(super::conversion_source(op), reads, "{op}");
        }
    }
}
