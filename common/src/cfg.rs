//! The control-flow graph of one kernel, built from the backend's view
//! of its instructions: basic blocks, their successors, calls of
//! subroutines inside the function (and the registers they may write),
//! branches whose target is not known, and the loops as compilers lay them
//! out. The analyses over it live with the tools that use them
//! ([`crate::observe`], [`crate::count_tool`]).

use crate::view::{Control, KernelView, Operand, RegRange};

/// Where a control transfer goes, as the backend decoded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The instruction with this index in the view.
    Instr(usize),
    /// Out of the function (exit, return).
    Leave,
    /// Not known (indirect branches, unresolved labels).
    Unknown,
}

/// Why a kernel's control flow could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CfgError {
    #[error("instruction {instr} transfers control to an unknown target")]
    UnknownTarget { instr: usize },
    #[error("instruction {instr} branches to instruction {target}, outside the kernel")]
    OutOfRange { instr: usize, target: usize },
}

/// One basic block: instructions `start..end`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub start: usize,
    pub end: usize,
    /// Blocks control may reach next (after a call: the block it returns
    /// to).
    pub succs: Vec<usize>,
    /// Control may leave the function here, or enter a subroutine whose
    /// effect on registers is not known: nothing is observed after.
    pub opaque_exit: bool,
    /// The block ends with a call of a subroutine inside the function:
    /// the registers the subroutine may write.
    pub call_writes: Option<Vec<RegRange>>,
    /// The block ends with a call of a subroutine inside the function:
    /// the subroutine's first block.
    pub callee: Option<usize>,
}

/// The control-flow graph of one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cfg {
    pub blocks: Vec<Block>,
    /// The block of each instruction.
    pub block_of: Vec<usize>,
    /// Blocks that end with a branch whose target is not known (only in a
    /// graph from [`Cfg::build_with_unknown_exits`]): control may go from
    /// there to any instruction of the function, so an instruction's
    /// predecessors are not all known either.
    pub unknown_exits: Vec<usize>,
}

impl Cfg {
    /// Build the graph; `target(i)` is asked for every instruction whose
    /// control is a branch, conditional branch or call. A branch whose
    /// target is not known is an error.
    pub fn build(view: &KernelView, target: impl Fn(usize) -> Target) -> Result<Cfg, CfgError> {
        Self::build_from(view, target, false)
    }

    /// The graph as [`Cfg::build`] makes it, but a branch whose target is
    /// not known (an indirect branch through a jump table) ends its block
    /// as an exit after which nothing is known ([`Block::opaque_exit`]),
    /// and is listed in [`Cfg::unknown_exits`]. Only for analyses that stay
    /// sound when any instruction may also be entered from such a branch:
    /// backward ones over successors; not for counting by flow
    /// conservation.
    pub fn build_with_unknown_exits(view: &KernelView, target: impl Fn(usize) -> Target) -> Result<Cfg, CfgError> {
        Self::build_from(view, target, true)
    }

    fn build_from(view: &KernelView, target: impl Fn(usize) -> Target, lenient: bool) -> Result<Cfg, CfgError> {
        let n = view.instrs.len();
        let mut targets = vec![None; n];
        let mut target_instrs = Vec::new();
        for (i, ins) in view.instrs.iter().enumerate() {
            if matches!(ins.control, Control::Branch | Control::CondBranch | Control::Call) {
                let t = target(i);
                match t {
                    // a call of an unknown target is another function:
                    // nothing is observed across it (see below)
                    Target::Unknown if ins.control == Control::Call => {}
                    Target::Unknown if lenient => {}
                    Target::Unknown => return Err(CfgError::UnknownTarget { instr: i }),
                    Target::Instr(t) if t >= n => return Err(CfgError::OutOfRange { instr: i, target: t }),
                    Target::Instr(t) => target_instrs.push(t),
                    Target::Leave => {}
                }
                targets[i] = Some(t);
            }
        }
        let starts = view.block_starts(&target_instrs);
        let mut block_of = vec![0usize; n];
        for (b, &s) in starts.iter().enumerate() {
            let e = starts.get(b + 1).copied().unwrap_or(n);
            block_of[s..e].fill(b);
        }
        let mut blocks = Vec::with_capacity(starts.len());
        for (b, &start) in starts.iter().enumerate() {
            let end = starts.get(b + 1).copied().unwrap_or(n);
            let last = end - 1;
            let control = view.instrs[last].control;
            let mut succs = Vec::new();
            let mut opaque_exit = false;
            let fall = |succs: &mut Vec<usize>, opaque: &mut bool| {
                if end < n {
                    succs.push(block_of[end]);
                } else {
                    *opaque = true;
                }
            };
            match control {
                Control::Branch => match targets[last] {
                    Some(Target::Instr(t)) => succs.push(block_of[t]),
                    _ => opaque_exit = true,
                },
                Control::CondBranch => {
                    match targets[last] {
                        Some(Target::Instr(t)) => succs.push(block_of[t]),
                        _ => opaque_exit = true,
                    }
                    fall(&mut succs, &mut opaque_exit);
                }
                Control::Call => {
                    // resolved below, once every block exists
                    opaque_exit = true;
                    fall(&mut succs, &mut opaque_exit);
                }
                Control::Return | Control::Exit => opaque_exit = true,
                Control::None | Control::Barrier => fall(&mut succs, &mut opaque_exit),
            }
            succs.sort_unstable();
            succs.dedup();
            blocks.push(Block { start, end, succs, opaque_exit, call_writes: None, callee: None });
        }
        let unknown_exits: Vec<usize> = (0..blocks.len())
            .filter(|&b| {
                let last = blocks[b].end - 1;
                view.instrs[last].control != Control::Call && targets[last] == Some(Target::Unknown)
            })
            .collect();
        // calls of subroutines in the function: the caller's values survive
        // the call except in the registers the subroutine writes
        for b in 0..blocks.len() {
            let last = blocks[b].end - 1;
            if view.instrs[last].control != Control::Call {
                continue;
            }
            if let Some(Target::Instr(t)) = targets[last] {
                blocks[b].callee = Some(block_of[t]);
                if let Some(written) = subroutine_writes(view, &blocks, block_of[t], &unknown_exits) {
                    let returns = blocks[b].end < n;
                    blocks[b].opaque_exit = !returns;
                    blocks[b].call_writes = Some(written);
                }
            }
        }
        Ok(Cfg { blocks, block_of, unknown_exits })
    }
}

/// The blocks reachable from `entry` (a subroutine's first block), each
/// once, depth first.
pub(crate) fn reachable(blocks: &[Block], entry: usize) -> Vec<usize> {
    let mut seen = vec![false; blocks.len()];
    let mut stack = vec![entry];
    let mut out = Vec::new();
    while let Some(b) = stack.pop() {
        if !std::mem::replace(&mut seen[b], true) {
            out.push(b);
            stack.extend(blocks[b].succs.iter().copied());
        }
    }
    out
}

/// Registers written by the subroutine whose first block is `entry`: by
/// every instruction reachable from it before its returns. `None` when it
/// calls further subroutines, leaves in other ways than returning, or
/// reaches a branch of unknown target (one of `unknown`).
fn subroutine_writes(view: &KernelView, blocks: &[Block], entry: usize, unknown: &[usize]) -> Option<Vec<RegRange>> {
    let mut written = Vec::new();
    for b in reachable(blocks, entry) {
        if unknown.contains(&b) {
            return None;
        }
        let block = &blocks[b];
        for ins in &view.instrs[block.start..block.end] {
            if ins.control == Control::Call {
                return None;
            }
            written.extend(ins.defs.iter().filter_map(Operand::reg));
        }
        let last = view.instrs[block.end - 1].control;
        if block.opaque_exit && !matches!(last, Control::Return | Control::Exit | Control::CondBranch) {
            return None;
        }
    }
    Some(written)
}

/// Each block's predecessors.
pub(crate) fn predecessors(cfg: &Cfg) -> Vec<Vec<usize>> {
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); cfg.blocks.len()];
    for (b, block) in cfg.blocks.iter().enumerate() {
        for &s in &block.succs {
            preds[s].push(b);
        }
    }
    preds
}

/// A loop: a header that code branches back to from a block at or after
/// it (a back edge, as compilers lay loops out), and its body, the blocks
/// on a path from the header back to one of those branches. Code laid out
/// between the two that is on no such path is not in the body: the
/// out-of-line path a divergent warp takes (`BRA.DIV`) and then jumps
/// back from, or another loop's exit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Loop {
    pub(crate) body: Vec<bool>,
    pub(crate) size: usize,
}

/// The loops of `cfg`, one per header.
pub(crate) fn loops(cfg: &Cfg) -> Vec<Loop> {
    let n = cfg.blocks.len();
    let preds = predecessors(cfg);
    let mut latches: std::collections::BTreeMap<usize, Vec<usize>> = std::collections::BTreeMap::new();
    for (b, block) in cfg.blocks.iter().enumerate() {
        for &s in block.succs.iter().filter(|&&s| s <= b) {
            latches.entry(s).or_default().push(b);
        }
    }
    // every block reachable from `from` along `next`
    let reach = |from: &[usize], next: &dyn Fn(usize) -> Vec<usize>| {
        let mut seen = vec![false; n];
        let mut work: Vec<usize> = from.to_vec();
        while let Some(b) = work.pop() {
            if !std::mem::replace(&mut seen[b], true) {
                work.extend(next(b));
            }
        }
        seen
    };
    let mut out = Vec::new();
    for (header, ls) in latches {
        let from_header = reach(&[header], &|b| cfg.blocks[b].succs.clone());
        let to_latch = reach(&ls, &|b| preds[b].clone());
        let body: Vec<bool> = (0..n).map(|b| from_header[b] && to_latch[b]).collect();
        // a branch back to a header that does not lead to it again is no loop
        if body[header] {
            out.push(Loop { size: body.iter().filter(|&&x| x).count(), body });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::class::InstrClass;
    use crate::view::InstrView;

    #[test]
    fn unknown_targets_refuse_the_graph() {
        let mut branch = InstrView::new(0x10, "@P0 BRA 0x0", InstrClass::Other);
        branch.control = Control::CondBranch;
        let mut exit = InstrView::new(0x20, "EXIT", InstrClass::Other);
        exit.control = Control::Exit;
        let view =
            KernelView { name: "k".into(), instrs: vec![InstrView::new(0, "NOP", InstrClass::Other), branch, exit] };
        assert_eq!(Cfg::build(&view, |_| Target::Unknown), Err(CfgError::UnknownTarget { instr: 1 }));
        assert!(matches!(Cfg::build(&view, |_| Target::Instr(99)), Err(CfgError::OutOfRange { .. })));
        let cfg = Cfg::build(&view, |_| Target::Instr(0)).expect("graph");
        assert_eq!(cfg.blocks.len(), 2);
        assert_eq!(cfg.blocks[0].succs, vec![0, 1]);
        assert_eq!(loops(&cfg).len(), 1);
        // lenient: the branch of unknown target ends what is known
        let lenient = Cfg::build_with_unknown_exits(&view, |_| Target::Unknown).expect("graph");
        assert_eq!(lenient.unknown_exits, vec![0]);
        assert!(lenient.blocks[0].opaque_exit);
    }
}
