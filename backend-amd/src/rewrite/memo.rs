//! Check probes' code, encoded once per shape. The code of a check (its
//! class tests and records) differs from one site to another only in what
//! its shape names (the compare, the values with their halves, the class
//! masks and lanes tested, the scratch registers) and in the table slots
//! its records write. So it is encoded the first time a shape is seen and
//! copied after, each record's slot written into its literal dword. Its
//! branches are relative and stay within it, so they copy unchanged; the
//! words holding the table's address are recorded again at the copy. A
//! slot small enough to be an inline constant (its byte offset at most 64)
//! shortens the code: such code is neither kept nor copied. The SCC save
//! and restore around every stretch are kept too, for the SCC save last
//! used, and a jump pair's `s_getpc_b64`, `s_setpc_b64` and 64-bit add
//! (whose literal dwords take each jump's offset).

use std::cell::Cell;
use std::collections::HashMap;

use xfpx_amd_isa::Target;
use xfpx_common::hash::FastKeys;

use super::*;

/// Code encoded once and copied: checks by shape, for one target and
/// table address; the SCC save and restore of the SCC save last used.
#[derive(Debug, Default)]
pub struct CodeMemo {
    /// (target, SCC save, whether a pair) the SCC words below were
    /// encoded for, and the save's and restore's words (each read alone:
    /// no copy of the other).
    pub(super) scc: Cell<Option<SccKey>>,
    pub(super) scc_words: [Cell<Words>; 2],
    /// (target, pair) the jump words below were made for, and the words of
    /// its jump instructions made so far (each read alone).
    jump: Cell<Option<(Target, u16)>>,
    jump_words: [Cell<Option<Words>>; 5],
    /// What the kept code was encoded for (another empties the memo).
    made_for: Option<(Target, TableAddress)>,
    by_shape: HashMap<Box<[u32]>, CheckCode, FastKeys>,
    /// The shape being looked up (its buffer reused).
    key: Vec<u32>,
    /// A check's values (the buffer reused, see `check`).
    pub(super) values: Vec<Value>,
    /// The registers a step's probes read (the buffer reused).
    pub(super) reads: Vec<(IsaFile, u16)>,
    /// Why a far site has no way in, by the ways a pass offers (relays,
    /// long jumps): written once.
    pub(super) no_way: Option<((bool, bool), String)>,
}

/// What the SCC save's and restore's words are encoded for: (target,
/// SCC save, whether a pair).
pub(super) type SccKey = (Target, Src, bool);

/// Which of a pair's jump words, each once encoded: its `s_getpc_b64`,
/// `s_setpc_b64`, `s_add_u32`, `s_addc_u32` adding a literal dword to its
/// halves, and `s_addc_u32` adding 0 to its high half (a forward jump's).
#[derive(Debug, Clone, Copy)]
pub(super) enum Jump {
    GetPc,
    SetPc,
    AddLow,
    AddHigh,
    AddHighZero,
}

/// The code of one shape.
#[derive(Debug)]
struct CheckCode {
    /// The registers it was encoded with (the key names them only in part).
    scratch: Scratch,
    words: Box<[u32]>,
    /// Per record, in order: the word of its slot's byte offset.
    slot_words: Box<[u32]>,
    /// The words holding half of the table's address: (word, high).
    table_literals: Box<[(u32, bool)]>,
}

/// Most tests (records) of a check whose code is kept.
const MAX_TESTS: usize = 8;

/// The smallest slot whose byte offset is a literal dword.
const FIRST_LITERAL_SLOT: u32 = 64 / 4 + 1;

/// Where a check's code began, to keep it once lowered.
pub(super) struct CheckStart {
    word: usize,
    table_literals: usize,
}

impl CodeMemo {
    /// The shape of a check into `self.key`.
    fn shape(&mut self, cmp: Opcode, format: FpFormat, vals: &[Value], tests: &Checks, scratch: &Scratch) {
        let k = &mut self.key;
        k.clear();
        k.extend([cmp as u32, format as u32, vals.len() as u32, tests.len() as u32]);
        for v in vals {
            let (tag, n) = match v.src {
                Src::Sgpr(n) => (0, u32::from(n)),
                Src::Vgpr(n) => (1, u32::from(n)),
                Src::Agpr(n) => (2, u32::from(n)),
                Src::Special(r) => (3, r as u32),
                Src::Int(i) => (4, i as u32),
                Src::Literal(l) => (5, l),
                Src::FixedLiteral(l) => (6, l),
            };
            let half = match v.half {
                Half::Whole => 0,
                Half::HighToLow => 1,
                Half::LowToHigh => 2,
                Half::High => 3,
            };
            k.extend([tag | half << 4, n, v.agpr.map_or(u32::MAX, u32::from)]);
        }
        for &(_, (mask, lanes)) in tests {
            let lanes = match lanes {
                Lanes::All => 0,
                Lanes::ZeroDivisor => 1,
                Lanes::NonzeroDivisor => 2,
            };
            k.extend([mask, lanes]);
        }
        // The scratch bases and the site's registers the checks use (the
        // kept code's registers are compared whole).
        k.extend([u32::from(scratch.sgpr), u32::from(scratch.vgpr)]);
        if let Some(s) = &scratch.site {
            let opt = |r: Option<u16>| r.map_or(u32::MAX, u32::from);
            k.extend([u32::from(s.pairs[0]), u32::from(s.pairs[1]), u32::from(s.pairs[2]), opt(s.zero)]);
            k.extend([u32::from(s.tmp), opt(s.third), u32::from(s.vgprs[0]), u32::from(s.vgprs[1]), opt(s.value)]);
        }
    }
}

impl AmdLowering<'_> {
    /// Copies the code of a check of this shape kept before, with the
    /// check's slots (`slots`, made in order, one per test, given the
    /// kernel's shared name) written into it; false (nothing emitted)
    /// where none is kept or a slot is an inline constant.
    pub(super) fn copy_check(
        &mut self,
        cmp: Opcode,
        format: FpFormat,
        vals: &[Value],
        tests: &Checks,
        mut slots: impl FnMut(&mut TableLayout, &str, usize) -> u32,
    ) -> bool {
        let made_for = (self.enc.target, self.table_address);
        if self.memo.made_for != Some(made_for) {
            self.memo.by_shape.clear();
            self.memo.made_for = Some(made_for);
        }
        self.memo.shape(cmp, format, vals, tests, &self.scratch);
        let Some(code) = self.memo.by_shape.get(&self.memo.key[..]) else { return false };
        if code.scratch != self.scratch {
            return false;
        }
        let mut made = [0u32; MAX_TESTS];
        for (k, slot) in made.iter_mut().enumerate().take(code.slot_words.len()) {
            *slot = slots(&mut *self.table, &self.kernel_name, k);
            if *slot < FIRST_LITERAL_SLOT {
                // (lowering the check again finds the slots made)
                return false;
            }
        }
        let start = self.appended.words.len();
        self.appended.words.extend_from_slice(&code.words);
        for (&at, slot) in code.slot_words.iter().zip(made) {
            self.appended.words[start + at as usize] = slot * 4;
        }
        for &(at, high) in code.table_literals.iter() {
            self.appended.table_literals.push(TableLiteral { word: start + at as usize, high });
        }
        true
    }

    /// The words of `which` jump instruction of the pair at `r`, encoded
    /// once per pair (the adds with a literal dword: see [`Self::pair_add`]).
    pub(super) fn jump_words(&self, which: Jump, r: u16) -> Result<Words, RewriteError> {
        let key = (self.enc.target, r);
        let made = &self.memo.jump_words;
        if self.memo.jump.get() != Some(key) {
            made.iter().for_each(|w| w.set(None));
            self.memo.jump.set(Some(key));
        }
        if let Some(w) = made[which as usize].get() {
            return Ok(w);
        }
        let e = self.e();
        let w = match which {
            Jump::GetPc => e.sop1(Opcode::S_GETPC_B64, Some(Src::Sgpr(r)), None)?,
            Jump::SetPc => e.sop1(Opcode::S_SETPC_B64, None, Some(Src::Sgpr(r)))?,
            Jump::AddLow => e.sop2(Opcode::S_ADD_U32, Src::Sgpr(r), Src::Sgpr(r), Src::FixedLiteral(0))?,
            Jump::AddHigh => e.sop2(Opcode::S_ADDC_U32, Src::Sgpr(r + 1), Src::Sgpr(r + 1), Src::FixedLiteral(0))?,
            Jump::AddHighZero => e.sop2(Opcode::S_ADDC_U32, Src::Sgpr(r + 1), Src::Sgpr(r + 1), Src::Literal(0))?,
        };
        made[which as usize].set(Some(w));
        Ok(w)
    }

    /// The instructions of `s[r:r+1] += delta` (`s_add_u32`, `s_addc_u32`;
    /// clobbers SCC), each half a literal dword where it is not an inline
    /// constant (0..=64).
    pub(super) fn pair_add(&self, r: u16, delta: u64) -> Result<[Words; 2], RewriteError> {
        let e = self.e();
        let with_literal = |mut w: Words, v: u32| {
            let last = w.len() - 1;
            w[last] = v;
            w
        };
        let low = match delta as u32 {
            v if v <= 64 => e.sop2(Opcode::S_ADD_U32, Src::Sgpr(r), Src::Sgpr(r), Src::Literal(v))?,
            v => with_literal(self.jump_words(Jump::AddLow, r)?, v),
        };
        let high = match (delta >> 32) as u32 {
            0 => self.jump_words(Jump::AddHighZero, r)?,
            v if v <= 64 => e.sop2(Opcode::S_ADDC_U32, Src::Sgpr(r + 1), Src::Sgpr(r + 1), Src::Literal(v))?,
            v => with_literal(self.jump_words(Jump::AddHigh, r)?, v),
        };
        Ok([low, high])
    }

    /// Where a check's code begins (see [`Self::keep_check`]).
    pub(super) fn check_start(&self) -> CheckStart {
        CheckStart { word: self.appended.words.len(), table_literals: self.appended.table_literals.len() }
    }

    /// Keeps the code lowered since `start` for the shape last looked up
    /// by [`Self::copy_check`], its records' slot literals at `slot_words`
    /// (None where a slot was an inline constant: nothing is kept).
    pub(super) fn keep_check(&mut self, start: CheckStart, slot_words: &[Option<usize>]) {
        if slot_words.len() > MAX_TESTS {
            return;
        }
        let Some(slot_words) = slot_words.iter().map(|w| w.map(|w| (w - start.word) as u32)).collect() else {
            return;
        };
        let table_literals = self.appended.table_literals[start.table_literals..]
            .iter()
            .map(|l| ((l.word - start.word) as u32, l.high))
            .collect();
        let code = CheckCode {
            scratch: self.scratch,
            words: self.appended.words[start.word..].into(),
            slot_words,
            table_literals,
        };
        self.memo.by_shape.insert(self.memo.key[..].into(), code);
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{decode_all, lowered_unit};
    use super::*;
    use crate::rewrite::view::kernel_view;
    use xfpx_common::tool::{Detector, Tool};

    /// 24 checked additions into three registers and `s_endpgm`, lowered
    /// with `memo`: the appended code and the table.
    fn lowered(table_address: TableAddress, memo: &mut CodeMemo) -> (Appended, TableLayout, usize) {
        let target = Target::Gfx90a;
        let e = Encoder { target };
        let mut words = Vec::new();
        for k in 0..24 {
            words.extend(e.vop2(Opcode::V_ADD_F32_E32, 1 + k % 3, Src::Vgpr(4), 5).expect("encodes"));
        }
        words.extend(e.sopp(Opcode::S_ENDPGM, 0).expect("encodes"));
        let instrs = decode_all(target, &words, 0x1000);
        let view = kernel_view("k", 0x1000, &instrs);
        let mut sites = SiteTable::new();
        let plan = Detector::default().plan(&view, &mut sites);
        let (out, appended, table) = lowered_unit(&instrs, &view, &plan, &sites, table_address, memo);
        (appended, table, out.trampolines)
    }

    #[test]
    fn copied_checks_record_into_their_own_slots() {
        let address = 0x100_2345_0000;
        let mut memo = CodeMemo::default();
        let (known, table, trampolines) = lowered(TableAddress::Known(address), &mut memo);
        assert_eq!(trampolines, 24);
        // One kept code per destination register (the first slots are inline constants).
        assert_eq!(memo.by_shape.len(), 3);
        assert!(table.slots.len() > 2 * FIRST_LITERAL_SLOT as usize, "{}", table.slots.len());
        // Each record writes the next slot, in the order the slots were made.
        let code = decode_all(Target::Gfx90a, &known.words, known.base);
        let offsets: Vec<u32> = code
            .iter()
            .filter(|d| d.insn.op == Opcode::V_MOV_B32_E32 && (d.insn.words[0] >> 17 & 0xFF) == 8)
            .map(|d| if d.insn.length == 8 { d.insn.words[1] } else { (d.insn.words[0] & 0x1FF) - 128 })
            .collect();
        let slots: Vec<u32> = (0..table.slots.len() as u32).map(|s| 4 * s).collect();
        assert_eq!(offsets, slots);
        // A patchable table's address goes where a known one is.
        let (mut patchable, _, _) = lowered(TableAddress::Patchable, &mut CodeMemo::default());
        assert_eq!(patchable.table_literals.len(), 2 * table.slots.len());
        patchable.set_table_address(address);
        assert_eq!(patchable.words, known.words);
    }
}
