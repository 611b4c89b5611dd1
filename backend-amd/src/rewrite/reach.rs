//! How an anchor reaches its trampoline when the appended code lies beyond
//! `s_branch` reach (±128 KiB) of it. Three schemes, per site:
//! - [`Reach::Direct`]: the anchor's `s_branch` lands on the trampoline;
//! - [`Reach::Relays`]: a chain of `s_branch` relays, 4 bytes each, in
//!   never-executed padding inside `.text` or in relay zones reserved in
//!   the appended code (zone 0 right after `.text`, then one about every
//!   100 KiB of trampolines), each hop within reach of the one before;
//! - [`Reach::Island`]: a long-jump island in padding within reach of the
//!   anchor (SCC saved, `s_getpc_b64` + 64-bit add + `s_setpc_b64`
//!   through the site's jump pair).
//!
//! A first placement uses direct branches and islands only (zones cost
//! room); when it leaves some site out of reach, placement starts over with
//! zones and relays, which bring every anchor within `.text`'s first
//! 128 KiB before its end (and, through relays in padding, further) to any
//! trampoline however much code is appended.

use std::ops::Range;

use serde::Serialize;
use xfpx_amd_isa::{ControlFlow, Opcode};

use super::view::DecodedInstr;

/// Bytes of a long-jump island: save SCC, `s_getpc_b64`, add a 64-bit
/// offset, `s_setpc_b64`.
pub const ISLAND_BYTES: u64 = 28;
/// Bytes of a relay: one `s_branch`.
pub const RELAY_BYTES: u64 = 4;
/// Relays one entry may chain through.
const MAX_HOPS: usize = 64;
/// The largest relay zone, and the relays it holds at most (the rest is islands).
const MAX_ZONE_BYTES: u64 = 24 << 10;
const MAX_ZONE_RELAYS: u64 = 2048;
/// Room left, between zones, for the trampoline being lowered when the
/// next zone is due (a larger trampoline may leave its successors' entries
/// out of reach: they are refused with the reason).
const TRAMPOLINE_ROOM: u64 = 16 << 10;
/// The farthest forward an `s_branch` at `from` reaches: `from + 4 + 4·32767`.
const FORWARD: u64 = 4 + 4 * 32767;
/// The farthest backward: `from + 4 - 4·32768`.
const BACKWARD: u64 = 4 * 32768 - 4;

/// `simm16` of a PC-relative SOPP at `from` reaching `to`, if in reach.
pub fn rel16(from: u64, to: u64) -> Option<u16> {
    let d = (to as i64 - (from as i64 + 4)) / 4;
    i16::try_from(d).ok().map(|v| v as u16)
}

/// How a site's anchor reaches its trampoline (listed per anchor in the dump).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "scheme", rename_all = "snake_case")]
pub enum Reach {
    /// The anchor's `s_branch` lands on the trampoline.
    Direct,
    /// Through `hops` relays (`s_branch` in padding or relay zones).
    Relays { hops: usize },
    /// Through a long-jump island, after `relays` relays.
    Island { relays: usize },
    /// A long jump in place of `instructions` straight-line instructions
    /// (the site's among them), through the site's jump pair.
    LongJump { instructions: usize },
}

impl Reach {
    /// How the listing says it (empty for a direct branch).
    pub fn words(&self) -> String {
        match self {
            Reach::Direct => String::new(),
            Reach::Relays { hops: 1 } => " (through 1 relay)".into(),
            Reach::Relays { hops } => format!(" (through {hops} relays)"),
            Reach::Island { relays: 0 } => " (through an island)".into(),
            Reach::Island { relays: 1 } => " (through 1 relay and an island)".into(),
            Reach::Island { relays } => format!(" (through {relays} relays and an island)"),
            Reach::LongJump { instructions } => format!(" (long jump in place of {instructions} instructions)"),
        }
    }
}

/// Relay zones of one placement pass.
#[derive(Debug, Clone)]
pub struct Zones {
    /// Probe groups still to lower (each may need room in each zone).
    pub remaining: usize,
    /// Address of the last zone reserved.
    pub last: Option<u64>,
    /// Zones' room for relays only, and for islands only.
    pub relay_room: Vec<Range<u64>>,
    pub island_room: Vec<Range<u64>>,
}

impl Zones {
    pub fn new(remaining: usize) -> Zones {
        Zones { remaining, last: None, relay_room: Vec::new(), island_room: Vec::new() }
    }
}

/// A zone: its relay slots, then its islands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneSize {
    pub relays: u64,
    pub islands: u64,
}

impl ZoneSize {
    pub fn bytes(&self) -> u64 {
        self.relays * RELAY_BYTES + self.islands * ISLAND_BYTES
    }
}

/// Free room for islands and relays: never-executed padding inside `.text`
/// (runs of `s_nop 0` right after an instruction that always leaves), and
/// in a pass with relay zones the zones reserved in the appended code.
#[derive(Debug, Clone, Default)]
pub struct IslandPool {
    /// Padding in `.text`, in address order (islands and relays).
    pub free: Vec<Range<u64>>,
    /// Relay zones (None: a pass with direct branches and padding islands only).
    pub zones: Option<Zones>,
    /// Whether a site out of reach may take a long jump in place of a
    /// window of straight-line code around it.
    pub long_jumps: bool,
    /// No island is taken while set (while a site tries the other ways).
    pub hold_islands: bool,
    /// The edits since the pool was last settled, to undo (see [`Self::mark`]).
    edits: Vec<Edit>,
}

/// One edit of the pool's room, as [`IslandPool::rollback`] undoes it.
#[derive(Debug, Clone)]
enum Edit {
    /// Run `i` of a room was `was`.
    Set(Room, usize, Range<u64>),
    /// A run was inserted at `i`.
    Insert(Room, usize),
    /// Run `i`, which was `was`, was removed.
    Remove(Room, usize, Range<u64>),
    /// A zone was reserved (its rooms pushed); the last zone was `was`.
    Zone(Option<u64>),
    /// A group was done; `remaining` was `was`.
    Remaining(usize),
}

/// Which room of the pool a run lies in.
#[derive(Debug, Clone, Copy)]
enum Room {
    /// Padding in `.text`.
    Free,
    /// Zones' relay room.
    Relays,
    /// Zones' island room.
    Islands,
}

/// Where the pool stood, to return to ([`IslandPool::rollback`]).
#[derive(Debug, Clone, Copy)]
pub struct PoolMark {
    edits: usize,
    long_jumps: bool,
    hold_islands: bool,
}

/// The way to a trampoline [`IslandPool::take_entry`] found: the relay
/// slots in hop order, and the island after them, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub relays: Vec<u64>,
    pub island: Option<u64>,
}

/// The runs of `free` (in address order) that may start within `s_branch`
/// reach of `from` or hold a slot within it: every run outside lies wholly
/// out of reach ([`rel16`] truncates, so the bounds are a few bytes wide).
fn padding_within(free: &[Range<u64>], from: u64) -> Range<usize> {
    let first = free.partition_point(|r| r.end.saturating_add(BACKWARD + 3) < from);
    let end = free.partition_point(|r| r.start <= from.saturating_add(FORWARD + 3));
    first..end.max(first)
}

/// Whether `code[i]` is padding as [`IslandPool::from_code`] sees it (an
/// `s_nop 0` in a run of them right after an instruction that always leaves).
pub fn is_padding(code: &[DecodedInstr], i: usize) -> bool {
    let run = code[..=i].iter().rev().take_while(|d| nop0(d)).count();
    run > 0 && i >= run && leaves(&code[i - run])
}

fn nop0(d: &DecodedInstr) -> bool {
    d.insn.op == Opcode::S_NOP && d.insn.words[0] & 0xFFFF == 0
}

/// Whether the instruction never falls through (calls return after it).
fn leaves(d: &DecodedInstr) -> bool {
    matches!(d.insn.control_flow(d.addr), ControlFlow::Branch { .. } | ControlFlow::End | ControlFlow::Indirect)
        && d.insn.op != Opcode::S_SWAPPC_B64
}

impl IslandPool {
    /// The pool of a code object's code (`code` in address order), leaving
    /// out the final run (the code-end padding, which stays as it is).
    pub fn from_code(code: &[DecodedInstr]) -> IslandPool {
        let mut free = Vec::new();
        let mut i = 0;
        while i < code.len() {
            let leaves = leaves(&code[i]);
            i += 1;
            if !leaves {
                continue;
            }
            let start = i;
            while i < code.len() && nop0(&code[i]) {
                i += 1;
            }
            if i > start && i < code.len() {
                free.push(code[start].addr..code[i].addr);
            }
        }
        IslandPool { free, ..Default::default() }
    }

    /// Takes room for one island within `s_branch` reach of `anchor`.
    pub fn take(&mut self, anchor: u64) -> Option<u64> {
        if self.hold_islands {
            return None;
        }
        let within = padding_within(&self.free, anchor);
        let fits = |r: &Range<u64>| r.end - r.start >= ISLAND_BYTES && rel16(anchor, r.start).is_some();
        let found = match self.free[within.clone()].iter().position(fits) {
            Some(i) => Some((Room::Free, within.start + i)),
            None => self.zones.as_ref().and_then(|z| z.island_room.iter().position(fits)).map(|i| (Room::Islands, i)),
        };
        let (room, i) = found?;
        let r = self.room(room)[i].clone();
        self.set(room, i, r.start + ISLAND_BYTES..r.end);
        let at = r.start;
        Some(at)
    }

    /// Takes `bytes` of padding starting exactly at `at`, if free.
    pub fn take_at(&mut self, at: u64, bytes: u64) -> bool {
        let Some(i) = self.free.iter().position(|r| r.start == at && r.end - r.start >= bytes) else { return false };
        self.set(Room::Free, i, at + bytes..self.free[i].end);
        true
    }

    /// Whether relays may be taken (a pass beyond padding islands).
    pub fn relays(&self) -> bool {
        self.long_jumps || self.zones.is_some()
    }

    /// The zone due before a trampoline starting at `here` (None: no zone
    /// is due): the first at once, the next when the trampolines after the
    /// last one would soon run out of its reach.
    pub fn zone_due(&self, here: u64) -> Option<ZoneSize> {
        let z = self.zones.as_ref()?;
        let n = z.remaining as u64;
        let relays = n.min(MAX_ZONE_RELAYS);
        let size = ZoneSize { relays, islands: n.min((MAX_ZONE_BYTES - RELAY_BYTES * relays) / ISLAND_BYTES) };
        // The next zone's relays must stay within reach of the last zone's first one.
        let due = match z.last {
            None => true,
            Some(last) => here + RELAY_BYTES * size.relays + TRAMPOLINE_ROOM > last + FORWARD,
        };
        (due && n > 0).then_some(size)
    }

    /// Records a zone reserved at `at`.
    pub fn zone_reserved(&mut self, at: u64, size: ZoneSize) {
        if let Some(z) = &mut self.zones {
            self.edits.push(Edit::Zone(z.last));
            z.last = Some(at);
            let mid = at + RELAY_BYTES * size.relays;
            z.relay_room.push(at..mid);
            z.island_room.push(mid..at + size.bytes());
        }
    }

    /// One probe group lowered (or refused): zones still to come need room for one less.
    pub fn group_done(&mut self) {
        if let Some(z) = &mut self.zones {
            self.edits.push(Edit::Remaining(z.remaining));
            z.remaining = z.remaining.saturating_sub(1);
        }
    }

    /// The way from an `s_branch` at `from` to `to` through relays and at
    /// most one island, taken from the pool; None (nothing taken) when
    /// there is none within `MAX_HOPS` relays. From each position: `to`
    /// itself when in reach, else a relay that reaches it, else an island,
    /// else the relay slot nearest `to` (nearer than the position).
    pub fn take_entry(&mut self, from: u64, to: u64) -> Option<Entry> {
        if !self.relays() {
            if rel16(from, to).is_some() {
                return Some(Entry { relays: Vec::new(), island: None });
            }
            return self.take(from).map(|i| Entry { relays: Vec::new(), island: Some(i) });
        }
        // The first hop on the pool itself: most sites end there (in reach,
        // an island, or no way), and only a relay chain needs a copy to try.
        if rel16(from, to).is_some() {
            return Some(Entry { relays: Vec::new(), island: None });
        }
        if self.held_out_of_reach(from, to) {
            return None;
        }
        let first = self.nearest_slot(from, to);
        if first.is_none_or(|n| rel16(n, to).is_none()) {
            if let Some(island) = self.take(from) {
                return Some(Entry { relays: Vec::new(), island: Some(island) });
            }
        }
        let first = first?;
        if !self.chain_may_end(to) {
            // (the chain would find no way and give back what it took)
            return None;
        }
        // (what a chain that finds no way took is given back)
        let mark = self.mark();
        self.remove(first);
        let mut relays = Vec::with_capacity(8);
        relays.push(first);
        let mut cur = first;
        let island = loop {
            if rel16(cur, to).is_some() {
                break None;
            }
            if relays.len() == MAX_HOPS {
                self.rollback(&mark);
                return None;
            }
            let next = self.nearest_slot(cur, to);
            if next.is_none_or(|n| rel16(n, to).is_none()) {
                if let Some(island) = self.take(cur) {
                    break Some(island);
                }
            }
            let Some(next) = next else {
                self.rollback(&mark);
                return None;
            };
            self.remove(next);
            relays.push(next);
            cur = next;
        };
        Some(Entry { relays, island })
    }

    /// Whether [`Self::take_entry`] finds no way from `from` to `to`,
    /// known at once: islands are held, `to` is beyond `s_branch` reach
    /// and no relay room lies within reach of `to` (the nearest slot would
    /// not reach it).
    pub fn held_out_of_reach(&self, from: u64, to: u64) -> bool {
        self.hold_islands && self.relays() && rel16(from, to).is_none() && !self.chain_may_end(to)
    }

    /// Whether a chain of relays toward `to` may end: some room for a relay
    /// lies within `s_branch` reach of `to`, or some room for an island is
    /// left (and islands are not held). A chain takes relays only (which
    /// leave no larger room), so where neither holds it finds no way.
    fn chain_may_end(&self, to: u64) -> bool {
        // (bounds a few bytes wider than `rel16`'s)
        let (lo, hi) = (to.saturating_sub(BACKWARD + 8), to.saturating_add(FORWARD + 8));
        let relay_near = |r: &Range<u64>| r.end >= lo + RELAY_BYTES && r.start <= hi;
        let near = self.free.partition_point(|r| r.end < lo + RELAY_BYTES);
        if self.free.get(near).is_some_and(relay_near) {
            return true;
        }
        let island = |r: &Range<u64>| r.end - r.start >= ISLAND_BYTES;
        match &self.zones {
            Some(z) if z.relay_room.iter().any(relay_near) => return true,
            Some(z) if !self.hold_islands && z.island_room.iter().any(island) => return true,
            _ => {}
        }
        !self.hold_islands && self.free.iter().any(island)
    }

    /// The free 4-byte slot (padding or zone relay room) within reach of an
    /// `s_branch` at `from` that is nearest `to`, if nearer than `from`.
    fn nearest_slot(&self, from: u64, to: u64) -> Option<u64> {
        let lo = from.saturating_sub(BACKWARD);
        let hi = from.saturating_add(FORWARD);
        // The slot of run r nearest `to` within reach, if r has one there.
        let slot = |r: &Range<u64>| {
            if r.end < r.start + RELAY_BYTES || r.end <= lo || r.start > hi {
                return None;
            }
            // the slots of r (4-byte steps from r.start) within reach: first..=last
            let first = r.start + (r.start.max(lo) - r.start).next_multiple_of(RELAY_BYTES);
            let last = (r.end - RELAY_BYTES).min(hi);
            if first > last {
                return None;
            }
            let last = r.start + (last - r.start) / RELAY_BYTES * RELAY_BYTES;
            let p = to.clamp(first, last);
            Some(r.start + (p - r.start) / RELAY_BYTES * RELAY_BYTES)
        };
        let nearer = |p: u64, best: Option<u64>| best.is_none_or(|q| p.abs_diff(to) < q.abs_diff(to));
        // The padding runs are in address order and apart, so their slots
        // rise with them: of the runs ending at or below `to` the last one
        // with a slot is nearest, and after the first slot at or above `to`
        // none is nearer (the first of equally near slots is kept).
        let padding = &self.free[padding_within(&self.free, from)];
        let below = padding.partition_point(|r| r.end <= to);
        let mut best = padding[..below].iter().rev().find_map(slot);
        for p in padding[below..].iter().filter_map(slot) {
            if nearer(p, best) {
                best = Some(p);
            }
            if p >= to {
                break;
            }
        }
        // Zone relay room (in the order it was reserved).
        for p in self.zones.iter().flat_map(|z| &z.relay_room).filter_map(slot) {
            if nearer(p, best) {
                best = Some(p);
            }
        }
        best.filter(|&p| p.abs_diff(to) < from.abs_diff(to))
    }

    /// Where the pool stands now, to return to with [`Self::rollback`]
    /// (until it is settled).
    pub fn mark(&self) -> PoolMark {
        PoolMark { edits: self.edits.len(), long_jumps: self.long_jumps, hold_islands: self.hold_islands }
    }

    /// Returns to where the pool stood at `mark` (its edits since undone,
    /// last first).
    pub fn rollback(&mut self, mark: &PoolMark) {
        assert!(mark.edits <= self.edits.len(), "a pool mark from before the pool was settled");
        while self.edits.len() > mark.edits {
            match self.edits.pop().expect("an edit") {
                Edit::Set(room, i, was) => self.room(room)[i] = was,
                Edit::Insert(room, i) => {
                    self.room(room).remove(i);
                }
                Edit::Remove(room, i, was) => self.room(room).insert(i, was),
                Edit::Zone(was) => {
                    let z = self.zones.as_mut().expect("zones");
                    z.relay_room.pop();
                    z.island_room.pop();
                    z.last = was;
                }
                Edit::Remaining(was) => self.zones.as_mut().expect("zones").remaining = was,
            }
        }
        self.long_jumps = mark.long_jumps;
        self.hold_islands = mark.hold_islands;
    }

    /// Forgets the edits made so far: no mark made before stays usable.
    pub fn settle(&mut self) {
        self.edits.clear();
    }

    /// Adds `room` to the padding (room a long jump frees, see `carved`).
    pub fn insert_free(&mut self, room: Range<u64>) {
        let at = self.free.partition_point(|r| r.start < room.start);
        self.free.insert(at, room);
        self.edits.push(Edit::Insert(Room::Free, at));
    }

    /// Takes every run of padding inside `room` out of the pool.
    pub fn drop_free_within(&mut self, room: &Range<u64>) {
        for i in (0..self.free.len()).rev() {
            let r = &self.free[i];
            if r.start >= room.start && r.end <= room.end {
                let was = self.free.remove(i);
                self.edits.push(Edit::Remove(Room::Free, i, was));
            }
        }
    }

    fn room(&mut self, room: Room) -> &mut Vec<Range<u64>> {
        match room {
            Room::Free => &mut self.free,
            Room::Relays => &mut self.zones.as_mut().expect("zones").relay_room,
            Room::Islands => &mut self.zones.as_mut().expect("zones").island_room,
        }
    }

    /// Run `i` of `room` becomes `to`.
    fn set(&mut self, room: Room, i: usize, to: Range<u64>) {
        let was = std::mem::replace(&mut self.room(room)[i], to);
        self.edits.push(Edit::Set(room, i, was));
    }

    /// Takes the slot at `p` out of the free room.
    fn remove(&mut self, p: u64) {
        let holds = |r: &Range<u64>| r.start <= p && p + RELAY_BYTES <= r.end;
        let rooms = if self.zones.is_some() { &[Room::Free, Room::Relays][..] } else { &[Room::Free][..] };
        for &which in rooms {
            let room = self.room(which);
            // The runs are apart, so one at most holds the slot: where they
            // are in address order too, the first that ends past it.
            let after = room.partition_point(|r| r.end < p + RELAY_BYTES);
            let found = room.get(after).filter(|r| holds(r)).map(|_| after);
            let Some(i) = found.or_else(|| room.iter().position(holds)) else { continue };
            let r = room[i].clone();
            let (before, after) = (r.start..p, p + RELAY_BYTES..r.end);
            match (before.is_empty(), after.is_empty()) {
                (true, true) => {
                    let was = room.remove(i);
                    self.edits.push(Edit::Remove(which, i, was));
                }
                (true, false) => self.set(which, i, after),
                (false, true) => self.set(which, i, before),
                (false, false) => {
                    self.set(which, i, before);
                    self.room(which).insert(i + 1, after);
                    self.edits.push(Edit::Insert(which, i + 1));
                }
            }
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn islands_take_padding_within_reach_only() {
        let mut pool = IslandPool { free: vec![0x1000..0x1040, 0x40000..0x40100], ..Default::default() };
        assert_eq!(pool.take(0x1100), Some(0x1000));
        assert_eq!(pool.take(0x1100), Some(0x1000 + ISLAND_BYTES));
        // 0x1038 leaves 8 bytes: the next island near 0x1100 is out of room.
        assert_eq!(pool.take(0x1100), None);
        assert_eq!(pool.take(0x40200), Some(0x40000));
    }

    /// A pool of padding `free` and a zone of two relays and one island
    /// at 0x3_0000, for `groups` groups, in a pass with long jumps.
    fn pool_with_zone(free: Vec<Range<u64>>, groups: usize) -> IslandPool {
        let mut zones = Zones::new(groups);
        zones.relay_room.push(0x3_0000..0x3_0008);
        zones.island_room.push(0x3_0008..0x3_0008 + ISLAND_BYTES);
        IslandPool { free, zones: Some(zones), long_jumps: true, ..Default::default() }
    }

    #[test]
    fn entries_hop_toward_the_target_then_take_an_island() {
        // Padding (too short for an island) at 0x1_00f0 and 0x2_0000, the
        // zone at 0x3_0000; the trampoline at 0x4_8000.
        let mut pool = pool_with_zone(vec![0x1_00f0..0x1_0100, 0x2_0000..0x2_0008], 3);
        let to = 0x4_8000;
        // From 0x100 (reach up to 0x2_00fc) the nearest slot to the target is 0x2_0004;
        // from there the zone's last relay slot, which reaches the target.
        let e = pool.take_entry(0x100, to).expect("a way");
        assert_eq!(e, Entry { relays: vec![0x2_0004, 0x3_0004], island: None });
        assert!(rel16(0x100, 0x2_0004).is_some() && rel16(0x2_0004, 0x3_0004).is_some());
        assert!(rel16(0x3_0004, to).is_some());
        assert_eq!(pool.free, vec![0x1_00f0..0x1_0100, 0x2_0000..0x2_0004]);
        assert_eq!(pool.take_entry(0x100, to), Some(Entry { relays: vec![0x2_0000, 0x3_0000], island: None }));
        // The zone's relays are taken; a farther trampoline (0x6_0000) is out of reach
        // of the zone, whose island a relay in the first padding reaches.
        let far = 0x6_0000;
        assert_eq!(pool.take_entry(0x100, far), Some(Entry { relays: vec![0x1_00fc], island: Some(0x3_0008) }));
        // Nothing left: no way, and nothing taken.
        let before = pool.free.clone();
        assert_eq!(pool.take_entry(0x100, far), None);
        assert_eq!(pool.free, before);
        // A target in reach needs nothing.
        assert_eq!(pool.take_entry(0x100, 0x200), Some(Entry { relays: vec![], island: None }));
    }

    /// A zone's state: groups remaining, the last zone, its relay and island room.
    type ZoneRoom = (usize, Option<u64>, Vec<Range<u64>>, Vec<Range<u64>>);

    /// The pool's room, as a rollback must give it back.
    fn room_of(pool: &IslandPool) -> (Vec<Range<u64>>, Option<ZoneRoom>) {
        let zones = pool.zones.as_ref().map(|z| (z.remaining, z.last, z.relay_room.clone(), z.island_room.clone()));
        (pool.free.clone(), zones)
    }

    #[test]
    fn a_rollback_gives_back_all_room_taken_since_its_mark() {
        let mut pool = pool_with_zone(vec![0x1_00f0..0x1_0100, 0x2_0000..0x2_0040, 0x2_1000..0x2_1010], 4);
        let before = room_of(&pool);
        let outer = pool.mark();
        // A relay split out of a run's middle, an island, a zone, a group done.
        pool.remove(0x2_0010);
        assert_eq!(pool.take(0x2_0000), Some(0x2_0014));
        let middle = room_of(&pool);
        let inner = pool.mark();
        pool.zone_reserved(0x5_0000, ZoneSize { relays: 2, islands: 1 });
        pool.group_done();
        assert!(pool.take_entry(0x100, 0x4_8000).is_some());
        pool.insert_free(0x2_0800..0x2_0820);
        assert!(pool.take_at(0x2_0800, 8));
        pool.drop_free_within(&(0x2_0800..0x2_0820));
        pool.hold_islands = true;
        assert_ne!(room_of(&pool), middle);
        pool.rollback(&inner);
        assert_eq!(room_of(&pool), middle);
        assert!(!pool.hold_islands);
        pool.rollback(&outer);
        assert_eq!(room_of(&pool), before);
        // A chain of relays that ends with no island takes nothing.
        let mut zones = Zones::new(1);
        zones.relay_room.push(0x2_0000..0x2_0004);
        let mut pool = IslandPool {
            free: std::iter::once(0x1_00f0..0x1_0100).collect(),
            zones: Some(zones),
            long_jumps: true,
            ..Default::default()
        };
        let before = room_of(&pool);
        assert_eq!(pool.take_entry(0x100, 0x40_0000), None);
        assert_eq!(room_of(&pool), before);
    }

    #[test]
    fn zones_are_due_at_once_then_before_reach_runs_out() {
        let mut pool = IslandPool { zones: Some(Zones::new(10)), ..Default::default() };
        let size = ZoneSize { relays: 10, islands: 10 };
        assert_eq!(pool.zone_due(0x1000), Some(size));
        pool.zone_reserved(0x1000, size);
        assert_eq!(pool.zone_due(0x1000 + FORWARD - TRAMPOLINE_ROOM - 40), None);
        let late = 0x1000 + FORWARD - TRAMPOLINE_ROOM - 40 + 4;
        assert_eq!(pool.zone_due(late), Some(size));
        for _ in 0..10 {
            pool.group_done();
        }
        assert_eq!(pool.zone_due(late), None, "no group left to need it");
        let z = pool.zones.expect("zones");
        let rooms: Vec<(u64, u64)> = z.relay_room.iter().chain(&z.island_room).map(|r| (r.start, r.end)).collect();
        assert_eq!(rooms, [(0x1000, 0x1028), (0x1028, 0x1028 + 280)]);
    }
}
