//! The device functions kernels call, and which kernels reach which. A
//! device function is code outside every kernel: a function symbol, or the
//! target of a direct call that no symbol names. Call edges come from
//! `s_call_b64` (PC-relative) and from `s_swappc_b64`/`s_setpc_b64` whose
//! address pair a `s_getpc_b64` + 64-bit add sequence computes (how LLVM
//! calls and tail-calls functions of the same object); the pair's value is
//! tracked through one straight-line run of code, across the calls in it
//! (what the callee may write is forgotten) and through the lanes of
//! vector registers that unoptimised code spills SGPRs into
//! (`v_writelane_b32`/`v_readlane_b32`, and whole copies between VGPRs and
//! AGPRs while EXEC is all ones), and through the spill slots those
//! registers are stored to and reloaded from around calls (scratch or
//! buffer accesses of one dword at a constant offset from an SGPR, with no
//! vector address). A spill slot is taken to change only by such a store
//! to it: the compiler never takes a spill slot's address, and a callee
//! gets its own frame and restores the frame register. A call whose
//! target stays unknown makes every kernel that can execute it reach
//! every function.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use xfpx_amd_isa::encoding::{field, Encoding, Field};
use xfpx_amd_isa::facts::Access;
use xfpx_amd_isa::operand::{Operand, RegFile, RegRange};
use xfpx_amd_isa::{ControlFlow, Opcode};

use super::units::Decoded;
use super::view::DecodedInstr;
use crate::code_object::CodeObject;

/// At most this many functions are made from call targets no symbol names
/// (a hostile object could otherwise chain targets without end).
const MAX_UNNAMED_FUNCTIONS: usize = 256;

/// A device function of the code object.
#[derive(Debug, Clone)]
pub struct DeviceFunction {
    /// The symbol's name, or `function@<address>` for an unnamed call target.
    pub name: String,
    pub code: Range<u64>,
    /// The decoded code, or why it could not be decoded.
    pub instrs: Result<Decoded, String>,
}

/// One call instruction and its target, when known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallSite {
    pub addr: u64,
    pub target: Option<u64>,
}

/// The device functions and, per kernel of the code object (in its order),
/// the functions the kernel can reach.
#[derive(Debug, Clone, Default)]
pub struct CallGraph {
    pub functions: Vec<DeviceFunction>,
    /// Indices into `functions`, one set per kernel.
    pub reach: Vec<BTreeSet<usize>>,
    /// Per kernel: a call on its paths whose target is unknown (so it
    /// reaches every function), by address.
    pub unresolved: Vec<Option<u64>>,
    /// The calls in each kernel's code and in each function's (empty where
    /// the code could not be decoded).
    pub kernel_calls: Vec<Vec<CallSite>>,
    pub function_calls: Vec<Vec<CallSite>>,
}

/// How an address-arithmetic instruction combines its sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AddressOp {
    /// `d = a + b`, carry out to SCC.
    Add,
    /// `d = a + b + SCC`, carry out to SCC.
    AddCarry,
    /// `d = a - b`, borrow out to SCC.
    Sub,
    /// `d = a - b - SCC`, borrow out to SCC.
    SubBorrow,
    /// `d = a` (32 bits; SCC unchanged).
    Move,
    /// `d[0:1] = a[0:1]` (SCC unchanged).
    Move64,
}

/// The scalar instructions through which a computed call address is followed.
const ADDRESS_ARITHMETIC: &[(Opcode, AddressOp)] = &[
    (Opcode::S_ADD_U32, AddressOp::Add),
    (Opcode::S_ADDC_U32, AddressOp::AddCarry),
    (Opcode::S_SUB_U32, AddressOp::Sub),
    (Opcode::S_SUBB_U32, AddressOp::SubBorrow),
    (Opcode::S_MOV_B32, AddressOp::Move),
    (Opcode::S_MOV_B64, AddressOp::Move64),
];

/// What fills the sources' slots past the instruction's own.
static FILLER: Operand = Operand::Imm(0);

/// Scalar instructions that leave SCC as it is between an add and its carry-in.
const KEEPS_SCC: &[Opcode] =
    &[Opcode::S_MOV_B32, Opcode::S_MOV_B64, Opcode::S_WAITCNT, Opcode::S_NOP, Opcode::S_GETPC_B64];

/// Known 32-bit SGPR values, lanes of vector registers and the last
/// carry, over straight-line code.
#[derive(Debug, Default)]
struct Constants {
    sgprs: BTreeMap<u16, u32>,
    carry: Option<bool>,
    /// (VGPR or AGPR, lane) → value.
    lanes: BTreeMap<(RegFile, u16, u8), u32>,
    /// EXEC is all ones (`s_or_saveexec_b64 s, -1`, `s_mov_b64 exec, -1`):
    /// a whole-register copy copies every lane.
    exec_all: bool,
    /// (spill slot, lane) → value.
    slots: BTreeMap<(SpillSlot, u8), u32>,
}

/// A spill slot: a dword at a constant byte offset from an SGPR (a buffer
/// access's resource, `u16::MAX` for scratch, then the offset register).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct SpillSlot {
    resource: u16,
    base: u16,
    offset: i32,
}

impl SpillSlot {
    /// The slot a scratch or buffer access with no vector address reaches;
    /// None for any other instruction.
    fn of(insn: &xfpx_amd_isa::Instruction) -> Option<SpillSlot> {
        let sources = || insn.reg_reads();
        let sgpr = |r: &RegRange| r.file == RegFile::Sgpr;
        let vectors = sources().filter(|r| !sgpr(r)).count();
        let stores = matches!(insn.op.access(), Some(Access::Store | Access::Atomic));
        // A store's only vector source is its data.
        if vectors != usize::from(stores) {
            return None;
        }
        let words = insn.dwords();
        match insn.encoding {
            Encoding::Scratch => {
                let base = sources().find(|r| sgpr(r) && r.count == 1)?;
                let raw = field(Encoding::Scratch, Field::FlatOffset, words);
                Some(SpillSlot { resource: u16::MAX, base: base.first, offset: ((raw << 19) as i32) >> 19 })
            }
            Encoding::Mubuf => {
                let mut s = sources().filter(sgpr);
                let (resource, base) = (s.next().filter(|r| r.count == 4)?, s.next().filter(|r| r.count == 1)?);
                let offset = field(Encoding::Mubuf, Field::BufOffset, words) as i32;
                Some(SpillSlot { resource: resource.first, base: base.first, offset })
            }
            _ => None,
        }
    }

    /// Whether writing SGPR `r` moves the slot: its offset register. A
    /// buffer's resource is the private segment's, which code copies
    /// between registers (around calls) but never points elsewhere.
    fn based_on(&self, r: u16) -> bool {
        self.base == r
    }
}

/// Registers some code may write: (file, number).
pub type Written = BTreeSet<(RegFile, u16)>;

impl Constants {
    fn clear(&mut self) {
        *self = Constants::default();
    }

    /// After a call: what a device function may write is unknown, and SCC and EXEC too.
    fn forget(&mut self, clobbered: &Written) {
        self.sgprs.retain(|r, _| !clobbered.contains(&(RegFile::Sgpr, *r)));
        self.lanes.retain(|(f, r, _), _| !clobbered.contains(&(*f, *r)));
        self.carry = None;
        self.exec_all = false;
    }

    /// The known lanes of a vector register.
    fn lanes_of(&self, file: RegFile, r: u16) -> Vec<(u8, u32)> {
        self.lanes.range((file, r, 0)..=(file, r, u8::MAX)).map(|(&(_, _, l), &v)| (l, v)).collect()
    }

    /// Steps over the lanes `insn` writes: a lane `v_writelane_b32` sets, a
    /// whole copy while EXEC is all ones; any other write forgets them.
    fn step_lanes(&mut self, insn: &xfpx_amd_isa::Instruction, srcs: &[&Operand]) {
        let vector = |r: &xfpx_amd_isa::operand::RegRange| matches!(r.file, RegFile::Vgpr | RegFile::Agpr);
        // (Found only for the instructions below that set lanes.)
        let dst = || insn.operands.iter().find(|s| s.written).and_then(|s| s.operand.reg()).filter(vector);
        let kept: Option<(RegRange, Vec<(u8, u32)>)> = match (insn.op, srcs) {
            (Opcode::V_WRITELANE_B32, [src, lane]) => dst().zip(self.value(lane)).map(|(d, l)| {
                let l = (l % 64) as u8;
                let mut kept = self.lanes_of(d.file, d.first);
                kept.retain(|(x, _)| *x != l);
                kept.extend(self.value(src).map(|v| (l, v)));
                (d, kept)
            }),
            (Opcode::SCRATCH_LOAD_DWORD | Opcode::BUFFER_LOAD_DWORD, _) if self.exec_all => {
                dst().zip(SpillSlot::of(insn)).map(|(d, slot)| {
                    (d, self.slots.range((slot, 0)..=(slot, u8::MAX)).map(|(&(_, l), &v)| (l, v)).collect())
                })
            }
            (Opcode::V_ACCVGPR_WRITE_B32 | Opcode::V_ACCVGPR_READ_B32 | Opcode::V_MOV_B32_E32, [Operand::Reg(s)])
                if self.exec_all && vector(s) && s.count == 1 && insn.variant == xfpx_amd_isa::Variant::Plain =>
            {
                dst().map(|d| (d, self.lanes_of(s.file, s.first)))
            }
            _ => None,
        };
        self.step_slots(insn);
        if !self.lanes.is_empty() {
            for r in insn.reg_writes().filter(vector) {
                for i in 0..u16::from(r.count) {
                    let x = r.first + i;
                    while let Some((&k, _)) = self.lanes.range((r.file, x, 0)..=(r.file, x, u8::MAX)).next() {
                        self.lanes.remove(&k);
                    }
                }
            }
        }
        if let Some((d, kept)) = kept {
            for (l, v) in kept {
                self.lanes.insert((d.file, d.first, l), v);
            }
        }
        if insn.writes_exec() {
            let all_ones = matches!(srcs, [Operand::InlineInt(-1)]);
            self.exec_all = matches!(insn.op, Opcode::S_OR_SAVEEXEC_B64 | Opcode::S_MOV_B64) && all_ones;
        }
    }

    /// Steps over what `insn` writes to spill slots: a dword store of a
    /// register's lanes while EXEC is all ones sets them; any other store
    /// to a slot forgets the slots of its base, one with a vector address
    /// every slot.
    fn step_slots(&mut self, insn: &xfpx_amd_isa::Instruction) {
        if !matches!(insn.op.access(), Some(Access::Store | Access::Atomic)) {
            return;
        }
        if !matches!(insn.encoding, Encoding::Scratch | Encoding::Mubuf | Encoding::Mtbuf) {
            return;
        }
        let Some(slot) = SpillSlot::of(insn) else {
            self.slots.clear();
            return;
        };
        let data = insn.reg_reads().find(|r| matches!(r.file, RegFile::Vgpr | RegFile::Agpr));
        let whole_dword = matches!(insn.op, Opcode::SCRATCH_STORE_DWORD | Opcode::BUFFER_STORE_DWORD);
        let lanes = match data {
            Some(d) if whole_dword && self.exec_all => self.lanes_of(d.file, d.first),
            _ => Vec::new(),
        };
        let same_base = |s: &SpillSlot| s.resource == slot.resource && s.base == slot.base;
        if whole_dword {
            self.slots.retain(|(s, _), _| *s != slot);
        } else {
            self.slots.retain(|(s, _), _| !same_base(s));
        }
        for (l, v) in lanes {
            self.slots.insert((slot, l), v);
        }
    }

    fn value(&self, op: &Operand) -> Option<u32> {
        match op {
            Operand::Reg(r) if r.file == RegFile::Sgpr && r.count == 1 => self.sgprs.get(&r.first).copied(),
            Operand::InlineInt(i) => Some(i32::from(*i) as u32),
            Operand::Literal { value, .. } => Some(*value),
            _ => None,
        }
    }

    fn pair(&self, op: &Operand) -> Option<u64> {
        match op {
            Operand::Reg(r) if r.file == RegFile::Sgpr && r.count == 2 => {
                let lo = self.sgprs.get(&r.first)?;
                let hi = self.sgprs.get(&(r.first + 1))?;
                Some(u64::from(*lo) | u64::from(*hi) << 32)
            }
            Operand::InlineInt(i) => Some(i64::from(*i) as u64),
            _ => None,
        }
    }

    /// Whether stepping over `insn` changes nothing known: a vector
    /// instruction that writes vector registers only while no lane is
    /// known, neither copies lanes nor stores to a spill slot, and leaves
    /// EXEC and SCC alone (most instructions of a kernel).
    fn untouched_by(&self, insn: &xfpx_amd_isa::Instruction) -> bool {
        self.lanes.is_empty()
            && !insn.encoding.is_scalar()
            && !matches!(insn.encoding, Encoding::Scratch | Encoding::Mubuf | Encoding::Mtbuf)
            && !matches!(
                insn.op,
                Opcode::V_WRITELANE_B32
                    | Opcode::V_READLANE_B32
                    | Opcode::V_ACCVGPR_WRITE_B32
                    | Opcode::V_ACCVGPR_READ_B32
                    | Opcode::V_MOV_B32_E32
            )
            && !insn.op.traits().contains(xfpx_amd_isa::Traits::WRITES_EXEC)
            && insn
                .operands
                .iter()
                .filter(|o| o.written)
                .all(|o| matches!(&o.operand, Operand::Reg(r) if matches!(r.file, RegFile::Vgpr | RegFile::Agpr)))
    }

    /// Steps over `d`: learns what address arithmetic computes, forgets
    /// what anything else writes.
    fn step(&mut self, d: &DecodedInstr) {
        let insn = &d.insn;
        if self.untouched_by(insn) {
            return;
        }
        // The first destination, and the sources as far as the patterns
        // below look: one or two of them, or more (a slice of three
        // matches neither).
        let mut first_written = None;
        let mut buf = [&FILLER; 3];
        let mut count = 0;
        for o in &insn.operands {
            if o.written {
                first_written = first_written.or(Some(&o.operand));
            } else if count < buf.len() {
                buf[count] = &o.operand;
                count += 1;
            }
        }
        let dst = first_written.and_then(Operand::reg).filter(|r| r.file == RegFile::Sgpr);
        let srcs = &buf[..count];
        let op = ADDRESS_ARITHMETIC.iter().find(|(m, _)| *m == insn.op).map(|(_, o)| *o);
        let carry_in = self.carry;
        let learned: Option<(Vec<u32>, Option<bool>)> = match (op, dst, srcs) {
            (Some(AddressOp::Move), Some(_), [a]) => self.value(a).map(|v| (vec![v], carry_in)),
            (None, Some(_), [Operand::Reg(v), lane]) if insn.op == Opcode::V_READLANE_B32 => self
                .value(lane)
                .and_then(|l| self.lanes.get(&(v.file, v.first, (l % 64) as u8)))
                .map(|&x| (vec![x], carry_in)),
            (Some(AddressOp::Move64), Some(_), [a]) => {
                self.pair(a).map(|v| (vec![v as u32, (v >> 32) as u32], carry_in))
            }
            (
                Some(o @ (AddressOp::Add | AddressOp::AddCarry | AddressOp::Sub | AddressOp::SubBorrow)),
                Some(_),
                [a, b],
            ) => {
                let (a, b) = (self.value(a), self.value(b));
                let c = match o {
                    AddressOp::AddCarry | AddressOp::SubBorrow => carry_in,
                    _ => Some(false),
                };
                match (a, b, c) {
                    (Some(a), Some(b), Some(c)) => {
                        let (a, b, c) = (u64::from(a), u64::from(b), u64::from(c));
                        let (v, out) = match o {
                            AddressOp::Add | AddressOp::AddCarry => {
                                let s = a + b + c;
                                (s as u32, s >> 32 != 0)
                            }
                            _ => {
                                let s = a.wrapping_sub(b).wrapping_sub(c);
                                (s as u32, a < b + c)
                            }
                        };
                        Some((vec![v], Some(out)))
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        self.step_lanes(insn, srcs);
        for r in insn.reg_writes() {
            if r.file == RegFile::Sgpr {
                for i in 0..u16::from(r.count) {
                    self.sgprs.remove(&(r.first + i));
                }
                if !self.slots.is_empty() {
                    let moved = |s: &SpillSlot| (0..u16::from(r.count)).any(|i| s.based_on(r.first + i));
                    self.slots.retain(|(s, _), _| !moved(s));
                }
            }
        }
        if !KEEPS_SCC.contains(&insn.op) && insn.encoding.is_scalar() {
            self.carry = None;
        }
        if let (Some((values, carry)), Some(d)) = (learned, dst) {
            for (i, v) in values.into_iter().enumerate() {
                self.sgprs.insert(d.first + i as u16, v);
            }
            self.carry = carry;
        }
    }
}

/// The registers some code writes (for device functions: what a call may clobber).
pub fn written_registers<'d>(code: impl IntoIterator<Item = &'d DecodedInstr>) -> Written {
    let mut out = BTreeSet::new();
    for d in code {
        for r in d.insn.reg_writes() {
            out.extend((r.first..r.first + u16::from(r.count)).map(|i| (r.file, i)));
        }
    }
    out
}

/// What a call to an address may write, or None when unknown.
pub type Clobbers<'a> = &'a dyn Fn(u64) -> Option<&'a Written>;

/// The calls in `instrs` (one straight-line pass; what is known is dropped
/// at every branch target, and after a call what `clobbers` says the callee
/// may write, everything when it does not know).
pub fn call_sites(instrs: &[DecodedInstr], clobbers: Clobbers<'_>) -> Vec<CallSite> {
    let flows: Vec<ControlFlow> = instrs.iter().map(|d| d.insn.control_flow(d.addr)).collect();
    let mut labels = Vec::new();
    let mut calls = false;
    for (d, flow) in instrs.iter().zip(&flows) {
        match *flow {
            ControlFlow::Branch { target } | ControlFlow::CondBranch { target } => labels.push(target),
            ControlFlow::Call { .. } => calls = true,
            ControlFlow::Indirect => calls |= matches!(d.insn.op, Opcode::S_SWAPPC_B64 | Opcode::S_SETPC_B64),
            _ => {}
        }
    }
    // Code with no call, tail call or return has no call site to find.
    if !calls {
        return Vec::new();
    }
    // (The code is in address order: the labels are met in theirs.)
    labels.sort_unstable();
    labels.dedup();
    let mut labels = labels.into_iter().peekable();
    let mut known = Constants::default();
    let mut out = Vec::new();
    for (d, flow) in instrs.iter().zip(flows) {
        while labels.next_if(|&l| l < d.addr).is_some() {}
        if labels.next_if_eq(&d.addr).is_some() {
            known.clear();
        }
        let src = || d.insn.operands.iter().find(|s| !s.written).map(|s| &s.operand);
        match flow {
            ControlFlow::Call { target } => {
                out.push(CallSite { addr: d.addr, target: Some(target) });
                known.step(d);
                match clobbers(target) {
                    Some(c) => known.forget(c),
                    None => known.clear(),
                }
            }
            ControlFlow::GetPc { value } => {
                known.step(d);
                if let Some(r) = d.insn.regs_written().into_iter().find(|r| r.file == RegFile::Sgpr) {
                    known.sgprs.insert(r.first, value as u32);
                    known.sgprs.insert(r.first + 1, (value >> 32) as u32);
                }
            }
            ControlFlow::Indirect if d.insn.op == Opcode::S_SWAPPC_B64 => {
                let target = src().and_then(|s| known.pair(s));
                out.push(CallSite { addr: d.addr, target });
                known.step(d);
                // An unknown callee may write anything.
                match target.and_then(clobbers) {
                    Some(c) => known.forget(c),
                    None => known.clear(),
                }
            }
            ControlFlow::Indirect if d.insn.op == Opcode::S_SETPC_B64 => {
                // A known address is a tail call; an unknown one a return.
                if let Some(t) = src().and_then(|s| known.pair(s)) {
                    out.push(CallSite { addr: d.addr, target: Some(t) });
                }
                known.clear();
            }
            _ => known.step(d),
        }
    }
    out
}

/// Decodes a function's code (from the rewrite's one pass over the code).
pub type DecodeFunction<'a> = &'a dyn Fn(&Range<u64>) -> Result<Decoded, String>;

impl CallGraph {
    /// The call graph of `co`; `kernel_code` gives each kernel's decoded
    /// code (None: it could not be decoded, so whether it calls is unknown)
    /// and `decode` the code of each function found.
    /// `clobbered` is what any device function may write ([`written_registers`]
    /// of all code outside the kernels): it stands for every callee while
    /// functions are found; then what each function may write (its own
    /// writes and its callees', a least fixed point) sharpens the targets.
    pub fn build(
        co: &CodeObject<'_>,
        decode: DecodeFunction<'_>,
        kernel_code: &[Option<&[DecodedInstr]>],
        clobbered: &Written,
    ) -> CallGraph {
        let mut functions: Vec<DeviceFunction> = co
            .functions
            .iter()
            .filter(|f| !f.is_kernel && !co.kernels.iter().any(|k| k.code.contains(&f.code.start)))
            .map(|f| DeviceFunction { name: f.name.clone(), code: f.code.clone(), instrs: decode(&f.code) })
            .collect();
        let text_end = |addr: u64| co.elf.section_at_addr(addr).map(|s| s.addr.saturating_add(s.size));
        let in_kernel = |addr: u64| co.kernels.iter().any(|k| k.code.contains(&addr));
        // Calls of each unit: kernels first, then functions (which may grow).
        let coarse = |_: u64| Some(clobbered);
        let kernel_calls: Vec<Option<Vec<CallSite>>> =
            kernel_code.iter().map(|c| c.map(|c| call_sites(c, &coarse))).collect();
        let mut function_calls: Vec<Option<Vec<CallSite>>> = Vec::new();
        let mut unnamed = 0usize;
        let mut i = 0;
        loop {
            // Direct targets no function covers become unnamed functions.
            let mut pending: Vec<u64> = kernel_calls
                .iter()
                .flatten()
                .chain(function_calls.iter().flatten())
                .flatten()
                .filter_map(|c| c.target)
                .filter(|&t| !in_kernel(t) && !functions.iter().any(|f| f.code.contains(&t)))
                .collect();
            pending.sort_unstable();
            pending.dedup();
            for t in pending {
                if unnamed >= MAX_UNNAMED_FUNCTIONS || functions.iter().any(|f| f.code.contains(&t)) {
                    continue;
                }
                let executable = co.elf.section_at_addr(t).is_some_and(|s| s.is_executable());
                let Some(end) = text_end(t).filter(|_| executable) else { continue };
                let next = co
                    .functions
                    .iter()
                    .map(|f| f.code.start)
                    .chain(functions.iter().map(|f| f.code.start))
                    .filter(|&s| s > t)
                    .min()
                    .unwrap_or(end)
                    .min(end);
                let code = t..next;
                functions.push(DeviceFunction { name: format!("function@{t:#x}"), instrs: decode(&code), code });
                unnamed += 1;
            }
            if i == functions.len() {
                break;
            }
            while i < functions.len() {
                function_calls.push(functions[i].instrs.as_ref().ok().map(|c| call_sites(c, &coarse)));
                i += 1;
            }
        }
        let callee = |t: u64| functions.iter().position(|f| f.code.contains(&t));
        // What each function may write (None: anything), from its own writes
        // up through its callees until nothing changes.
        let own: Vec<Option<Written>> =
            functions.iter().map(|f| f.instrs.as_ref().ok().map(|c| written_registers(c.iter()))).collect();
        let mut clobber = own.clone();
        let mut converged = false;
        // The functions whose writes each function's call sites were found
        // with, and which functions' writes changed in the last round: a
        // function none of whose lookups changed finds the same sites again.
        let mut looked_up: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); functions.len()];
        let mut changed: Vec<bool> = vec![true; functions.len()];
        for round in 0..=functions.len() + 1 {
            let calls: Vec<Option<Vec<CallSite>>> = functions
                .iter()
                .enumerate()
                .map(|(f, u)| {
                    if round > 0 && !looked_up[f].iter().any(|&g| changed[g]) {
                        return function_calls[f].clone();
                    }
                    let seen = std::cell::RefCell::new(BTreeSet::new());
                    let lookup = |t: u64| {
                        let g = callee(t)?;
                        seen.borrow_mut().insert(g);
                        clobber[g].as_ref()
                    };
                    let found = u.instrs.as_ref().ok().map(|c| call_sites(c, &lookup));
                    looked_up[f] = seen.into_inner();
                    found
                })
                .collect();
            let next: Vec<Option<Written>> = own
                .iter()
                .zip(&calls)
                .map(|(own, calls)| {
                    let mut set = own.clone()?;
                    for c in calls.as_ref()? {
                        set.extend(clobber[c.target.and_then(callee)?].as_ref()?);
                    }
                    Some(set)
                })
                .collect();
            function_calls = calls;
            if next == clobber {
                converged = true;
                break;
            }
            changed = next.iter().zip(&clobber).map(|(a, b)| a != b).collect();
            clobber = next;
        }
        if !converged {
            // Not settled within the bound: every callee may write anything.
            clobber = vec![None; functions.len()];
            function_calls =
                functions.iter().map(|f| f.instrs.as_ref().ok().map(|c| call_sites(c, &|_| None))).collect();
        }
        let lookup = |t: u64| callee(t).and_then(|g| clobber[g].as_ref());
        let kernel_calls: Vec<Option<Vec<CallSite>>> =
            kernel_code.iter().map(|c| c.map(|c| call_sites(c, &lookup))).collect();
        // Edges: a unit's callees, or None when some call's target is unknown.
        let edges = |calls: &Option<Vec<CallSite>>| -> Result<BTreeSet<usize>, Option<u64>> {
            let Some(calls) = calls else { return Err(None) };
            let mut out = BTreeSet::new();
            for c in calls {
                match c.target.and_then(callee) {
                    Some(f) => {
                        out.insert(f);
                    }
                    None => return Err(Some(c.addr)),
                }
            }
            Ok(out)
        };
        let function_edges: Vec<Result<BTreeSet<usize>, Option<u64>>> = function_calls.iter().map(edges).collect();
        let kernel_edges: Vec<Result<BTreeSet<usize>, Option<u64>>> = kernel_calls.iter().map(edges).collect();
        let mut graph = CallGraph {
            functions,
            reach: Vec::new(),
            unresolved: Vec::new(),
            kernel_calls: kernel_calls.iter().map(|c| c.clone().unwrap_or_default()).collect(),
            function_calls: function_calls.iter().map(|c| c.clone().unwrap_or_default()).collect(),
        };
        for (k, kernel) in kernel_edges.into_iter().enumerate() {
            let mut seen = BTreeSet::new();
            let mut unknown = None;
            let mut work = match kernel {
                Ok(e) => e.into_iter().collect::<Vec<_>>(),
                Err(at) => {
                    unknown = Some(at.unwrap_or_else(|| co.kernels.get(k).map_or(0, |k| k.entry)));
                    Vec::new()
                }
            };
            while let Some(f) = work.pop() {
                if !seen.insert(f) {
                    continue;
                }
                match &function_edges[f] {
                    Ok(e) => work.extend(e.iter().copied()),
                    Err(at) => {
                        unknown.get_or_insert(at.unwrap_or(graph.functions[f].code.start));
                    }
                }
            }
            if unknown.is_some() {
                seen = (0..graph.functions.len()).collect();
            }
            graph.reach.push(seen);
            graph.unresolved.push(unknown);
        }
        graph
    }

    /// The kernels (indices) that can reach function `f`.
    pub fn callers_of(&self, f: usize) -> Vec<usize> {
        self.reach.iter().enumerate().filter(|(_, r)| r.contains(&f)).map(|(k, _)| k).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_amd_isa::Target;

    fn decode_words(target: Target, words: &[u32], base: u64) -> Vec<DecodedInstr> {
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        xfpx_amd_isa::disassemble(target, &bytes, base)
            .map(|(addr, r)| DecodedInstr { addr, insn: r.expect("decodes") })
            .collect()
    }

    #[test]
    fn getpc_and_add_pairs_resolve_swappc_targets() {
        // 0x1000 s_getpc_b64 s[4:5]; s_add_u32 s4, s4, 0xffffffb4;
        // s_addc_u32 s5, s5, -1; s_swappc_b64 s[30:31], s[4:5]
        let code = decode_words(
            Target::Gfx90a,
            &[0xBE84_1C00, 0x8004_FF04, 0xFFFF_FFB4, 0x8205_FF05, 0xFFFF_FFFF, 0xBE9E_1E04],
            0x1000,
        );
        assert_eq!(call_sites(&code, &|_| None), vec![CallSite { addr: 0x1014, target: Some(0x1004 - 0x4c) }]);
    }

    #[test]
    fn a_written_pair_or_a_branch_target_between_makes_the_target_unknown() {
        // s_getpc_b64 s[4:5]; s_add_u32 s4, s4, 8; s_mov_b32 s5, s9 (unknown); s_swappc_b64 s[30:31], s[4:5]
        let code = decode_words(Target::Gfx90a, &[0xBE84_1C00, 0x8004_8804, 0xBE85_0009, 0xBE9E_1E04], 0x1000);
        assert_eq!(call_sites(&code, &|_| None), vec![CallSite { addr: 0x100c, target: None }]);
        // s_getpc_b64 s[4:5]; s_branch +0 (its target is the next instruction); s_swappc_b64
        let code = decode_words(Target::Gfx90a, &[0xBE84_1C00, 0xBF82_0000, 0xBE9E_1E04], 0x1000);
        assert_eq!(call_sites(&code, &|_| None), vec![CallSite { addr: 0x1008, target: None }]);
        // A return (s_setpc_b64 s[30:31] with s[30:31] unknown) is no call.
        let code = decode_words(Target::Gfx90a, &[0xBE80_1D1E], 0x1000);
        assert!(call_sites(&code, &|_| None).is_empty());
    }

    /// Unoptimised code keeps a call's address across an earlier call in
    /// VGPR lanes (`v_writelane_b32`), the VGPR in an AGPR (copied while
    /// EXEC is all ones), and reads it back with `v_readlane_b32`.
    #[test]
    fn an_address_spilled_into_vector_lanes_across_a_call_resolves() {
        let spill_and_call = [
            0xBE90_1C00, // s_getpc_b64 s[16:17]
            0x8010_FF10, // s_add_u32 s16, s16, 0xffffea5c
            0xFFFF_EA5C,
            0x8211_FF11, // s_addc_u32 s17, s17, -1
            0xFFFF_FFFF,
            0xD28A_0004, // v_writelane_b32 v4, s16, 24
            0x0001_3010,
            0xD28A_0004, // v_writelane_b32 v4, s17, 25
            0x0001_3211,
            0xBEA2_21C1, // s_or_saveexec_b64 s[34:35], -1
            0xD3D9_4015, // v_accvgpr_write_b32 a21, v4
            0x1800_0104,
            0xBEFE_0122, // s_mov_b64 exec, s[34:35]
            0xBE9E_1E10, // s_swappc_b64 s[30:31], s[16:17]
        ];
        let reload = [
            0xBEA2_21C1, // s_or_saveexec_b64 s[34:35], -1
            0xD3D8_4002, // v_accvgpr_read_b32 v2, a21
            0x1800_0115,
            0xBEFE_0122, // s_mov_b64 exec, s[34:35]
            0xD289_0010, // v_readlane_b32 s16, v2, 24
            0x0001_3102,
            0xD289_0011, // v_readlane_b32 s17, v2, 25
            0x0001_3302,
            0xBE9E_1E10, // s_swappc_b64 s[30:31], s[16:17]
        ];
        let target = Some(0x1_0004u64 - 0x15A4);
        let words: Vec<u32> = spill_and_call.iter().chain(&reload).copied().collect();
        let code = decode_words(Target::Gfx90a, &words, 0x1_0000);
        let nothing = Written::new();
        let targets = |clobbers: Clobbers<'_>| -> Vec<Option<u64>> {
            call_sites(&code, clobbers).iter().map(|c| c.target).collect()
        };
        assert_eq!(targets(&|_| Some(&nothing)), vec![target, target]);
        // A callee that may write a21 (or anything) loses it.
        let a21 = Written::from([(RegFile::Agpr, 21)]);
        assert_eq!(targets(&|_| Some(&a21)), vec![target, None]);
        assert_eq!(targets(&|_| None), vec![target, None]);
        // Copied while EXEC may miss lanes (no s_or_saveexec_b64 before the
        // copy back: an s_nop in its place), the lanes are not known.
        let mut partial = words.clone();
        partial[spill_and_call.len()] = 0xBF80_0000;
        let code = decode_words(Target::Gfx90a, &partial, 0x1_0000);
        let sites = call_sites(&code, &|_| Some(&nothing));
        assert_eq!(sites.iter().map(|c| c.target).collect::<Vec<_>>(), vec![target, None]);
    }

    #[test]
    fn lanes_spilled_to_a_scratch_or_buffer_slot_across_a_call_resolve() {
        // As above, but the lanes' VGPR goes to a spill slot (s33 + 256)
        // and comes back into another VGPR after the call.
        let head = [0xBE90_1C00, 0x8010_FF10, 0xFFFF_EA5C, 0x8211_FF11, 0xFFFF_FFFF];
        let lanes = [0xD28A_0004, 0x0001_3010, 0xD28A_0004, 0x0001_3211, 0xBEA2_21C1];
        let readback = [0xBEFE_0122, 0xD289_0010, 0x0001_3102, 0xD289_0011, 0x0001_3302, 0xBE9E_1E10];
        let scratch_store = [0xDC70_4100, 0x0021_0400]; // scratch_store_dword off, v4, s33 offset:256
        let scratch_load = [0xDC50_4100, 0x0221_0000]; // scratch_load_dword v2, off, s33 offset:256
        let buffer_store = [0xE070_0100, 0x2100_0400]; // buffer_store_dword v4, off, s[0:3], s33 offset:256
        let buffer_load = [0xE050_0100, 0x2100_0200]; // buffer_load_dword v2, off, s[0:3], s33 offset:256
        let program = |store: &[u32], between: &[u32], load: &[u32]| -> Vec<u32> {
            let mut w: Vec<u32> = head.iter().chain(&lanes).chain(store).copied().collect();
            w.extend([0xBEFE_0122, 0xBE9E_1E10]); // s_mov_b64 exec, s[34:35]; s_swappc_b64 s[30:31], s[16:17]
            w.extend(between);
            w.push(0xBEA2_21C1); // s_or_saveexec_b64 s[34:35], -1
            w.extend(load);
            w.extend(readback);
            w
        };
        let target = Some(0x1_0004u64 - 0x15A4);
        let nothing = Written::new();
        let targets = |t: Target, words: &[u32]| -> Vec<Option<u64>> {
            let code = decode_words(t, words, 0x1_0000);
            call_sites(&code, &|_| Some(&nothing)).iter().map(|c| c.target).collect()
        };
        assert_eq!(targets(Target::Gfx942, &program(&scratch_store, &[], &scratch_load)), vec![target, target]);
        assert_eq!(targets(Target::Gfx90a, &program(&buffer_store, &[], &buffer_load)), vec![target, target]);
        // -O0 code copies the buffer resource s[0:3] around calls: the slot stays.
        let copies = [0xBE94_0100, 0xBE80_0114]; // s_mov_b64 s[20:21], s[0:1]; s_mov_b64 s[0:1], s[20:21]
        assert_eq!(targets(Target::Gfx90a, &program(&buffer_store, &copies, &buffer_load)), vec![target, target]);
        // Another slot, another store to the slot, or a moved frame register: unknown.
        let other_slot = [0xDC50_4104, 0x0221_0000]; // scratch_load_dword v2, off, s33 offset:260
        assert_eq!(targets(Target::Gfx942, &program(&scratch_store, &[], &other_slot)), vec![target, None]);
        let overwrite = [0xDC70_4100, 0x0021_0500]; // scratch_store_dword off, v5, s33 offset:256
        assert_eq!(targets(Target::Gfx942, &program(&scratch_store, &overwrite, &scratch_load)), vec![target, None]);
        let moved = [0x8121_8421]; // s_add_i32 s33, s33, 4
        assert_eq!(targets(Target::Gfx942, &program(&scratch_store, &moved, &scratch_load)), vec![target, None]);
    }

    #[test]
    fn carry_propagates_into_the_high_half() {
        // s_getpc_b64 s[4:5] at 0xfffffff8 (next: 0xfffffffc); s_add_u32 s4, s4, 8; s_addc_u32 s5, s5, 0; s_swappc
        let code = decode_words(Target::Gfx90a, &[0xBE84_1C00, 0x8004_8804, 0x8205_8005, 0xBE9E_1E04], 0x0_FFFF_FFF8);
        assert_eq!(call_sites(&code, &|_| None)[0].target, Some(0x1_0000_0004));
    }
}
