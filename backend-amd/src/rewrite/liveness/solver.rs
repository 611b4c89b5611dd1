//! Fixed points of the liveness problems over a unit's control-flow
//! graph: transfers of the form `(x - kill) | gen`, composed over basic
//! blocks, solved over the blocks and expanded to every instruction.

use super::RegSet;

/// Live-in and live-out sets per instruction.
#[derive(Debug, Clone)]
pub(super) struct Solution {
    pub live_in: Vec<RegSet>,
    pub live_out: Vec<RegSet>,
}

/// An instruction's transfer as `(x - kill) | gen`; over a run of
/// instructions, their composition has the same form.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Transfer {
    pub kill: RegSet,
    pub gen: RegSet,
}

impl Transfer {
    pub fn apply(&self, x: &RegSet) -> RegSet {
        let mut s = *x;
        s.minus(&self.kill);
        s.union(&self.gen);
        s
    }

    /// `next` after `self`.
    fn then(&mut self, next: &Transfer) {
        self.gen.minus(&next.kill);
        self.gen.union(&next.gen);
        self.kill.union(&next.kill);
    }

    /// `self` after `first`.
    fn after(&mut self, first: &Transfer) {
        let mut gen = first.gen;
        gen.minus(&self.kill);
        gen.union(&self.gen);
        self.kill.union(&first.kill);
        self.gen = gen;
    }
}

/// A unit's control-flow graph: successors and predecessors per
/// instruction (flat, indexed by `*_start`), and its basic blocks (runs
/// entered only at their first instruction and left only at their last).
#[derive(Debug, Clone, Default)]
pub(super) struct Graph {
    succ_start: Vec<u32>,
    succ: Vec<u32>,
    pred_start: Vec<u32>,
    pred: Vec<u32>,
    /// The first instruction of each block, then `n`.
    block_start: Vec<u32>,
}

impl Graph {
    /// From each instruction's successors (`succ[succ_start[i]..succ_start[i + 1]]`).
    pub fn new(succ_start: Vec<u32>, succ: Vec<u32>) -> Graph {
        let n = succ_start.len() - 1;
        let mut pred_start = vec![0u32; n + 1];
        for &j in &succ {
            pred_start[j as usize + 1] += 1;
        }
        for i in 0..n {
            pred_start[i + 1] += pred_start[i];
        }
        let mut fill = pred_start.clone();
        let mut pred = vec![0u32; succ.len()];
        for i in 0..n {
            for &j in &succ[succ_start[i] as usize..succ_start[i + 1] as usize] {
                pred[fill[j as usize] as usize] = i as u32;
                fill[j as usize] += 1;
            }
        }
        let mut g = Graph { succ_start, succ, pred_start, pred, block_start: Vec::new() };
        // Instruction i continues the block of i - 1 when i - 1 leads only
        // to i and i is reached only from i - 1.
        for i in 0..n {
            let continues = i > 0 && g.succs(i - 1) == [i as u32] && g.preds(i) == [i as u32 - 1];
            if !continues {
                g.block_start.push(i as u32);
            }
        }
        g.block_start.push(n as u32);
        g
    }

    pub fn succs(&self, i: usize) -> &[u32] {
        &self.succ[self.succ_start[i] as usize..self.succ_start[i + 1] as usize]
    }

    pub fn preds(&self, i: usize) -> &[u32] {
        &self.pred[self.pred_start[i] as usize..self.pred_start[i + 1] as usize]
    }
}

/// Which way a problem flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    /// From an instruction's successors to it: `live_in` is before it.
    Backward,
    /// From its predecessors: `live_in` is after it, `live_out` before.
    Forward,
}

/// The least fixed point of a problem over the graph, given each
/// instruction's transfer (from the set on the side its flow comes from
/// to the other): solved over basic blocks (their transfers composed),
/// then expanded to every instruction.
pub(super) fn solve(g: &Graph, direction: Direction, transfer: &[Transfer]) -> Solution {
    let n = transfer.len();
    let blocks = g.block_start.len() - 1;
    let span = |b: usize| g.block_start[b] as usize..g.block_start[b + 1] as usize;
    let backward = direction == Direction::Backward;
    let mut block_of = vec![0u32; n];
    let mut composed = vec![Transfer::default(); blocks];
    for (b, t) in composed.iter_mut().enumerate() {
        for i in span(b) {
            block_of[i] = b as u32;
            if backward {
                t.after(&transfer[i]);
            } else {
                t.then(&transfer[i]);
            }
        }
    }
    // A block's flow enters at its last instruction (backward) or its
    // first (forward), from the blocks around that one, and leaves at the
    // other end, to the blocks around that.
    let (from, to) = if backward {
        (Graph::succs as Edges, Graph::preds as Edges)
    } else {
        (Graph::preds as Edges, Graph::succs as Edges)
    };
    let ends = |b: usize| {
        let r = span(b);
        if backward {
            (r.end - 1, r.start)
        } else {
            (r.start, r.end - 1)
        }
    };
    let mut entering = vec![RegSet::default(); blocks];
    let mut leaving = vec![RegSet::default(); blocks];
    // Blocks taken in the order the flow runs: the last first, backward.
    let mut work: Vec<usize> = if backward { (0..blocks).collect() } else { (0..blocks).rev().collect() };
    let mut queued = vec![true; blocks];
    while let Some(b) = work.pop() {
        queued[b] = false;
        let (enter, leave) = ends(b);
        let mut x = RegSet::default();
        for &j in from(g, enter) {
            x.union(&leaving[block_of[j as usize] as usize]);
        }
        entering[b] = x;
        let left = composed[b].apply(&x);
        if left != leaving[b] {
            leaving[b] = left;
            for &k in to(g, leave) {
                let k = block_of[k as usize] as usize;
                if !queued[k] {
                    queued[k] = true;
                    work.push(k);
                }
            }
        }
    }
    let mut live_in = vec![RegSet::default(); n];
    let mut live_out = vec![RegSet::default(); n];
    for (b, &x) in entering.iter().enumerate() {
        let mut x = x;
        let mut step = |i: usize| {
            live_out[i] = x;
            x = transfer[i].apply(&x);
            live_in[i] = x;
        };
        if backward {
            span(b).rev().for_each(&mut step);
        } else {
            span(b).for_each(&mut step);
        }
    }
    Solution { live_in, live_out }
}

/// An instruction's neighbours one way.
type Edges = fn(&Graph, usize) -> &[u32];

#[cfg(test)]
mod tests {
    use super::*;
    use xfpx_amd_isa::operand::RegFile;

    /// Per instruction, until nothing changes: what `solve` must equal.
    fn naive(g: &Graph, direction: Direction, transfer: &[Transfer]) -> Solution {
        let n = transfer.len();
        let from: Edges = if direction == Direction::Backward { Graph::succs } else { Graph::preds };
        let mut s = Solution { live_in: vec![RegSet::default(); n], live_out: vec![RegSet::default(); n] };
        let mut changed = true;
        while changed {
            changed = false;
            for (i, t) in transfer.iter().enumerate() {
                let mut x = RegSet::default();
                from(g, i).iter().for_each(|&j| x.union(&s.live_in[j as usize]));
                let y = t.apply(&x);
                changed |= y != s.live_in[i] || x != s.live_out[i];
                (s.live_out[i], s.live_in[i]) = (x, y);
            }
        }
        s
    }

    #[test]
    fn blocks_solve_as_instructions_do() {
        // 0 -> 1 -> 2 -> {3, 6}; 3 -> 4 -> 5 -> {0, 6}; 6 -> 6, 7; 7 ends:
        // a loop back to the entry, a self loop, a run of three.
        let edges: [&[u32]; 8] = [&[1], &[2], &[3, 6], &[4], &[5], &[0, 6], &[6, 7], &[]];
        let mut succ_start = vec![0];
        let mut succ = Vec::new();
        for e in edges {
            succ.extend_from_slice(e);
            succ_start.push(succ.len() as u32);
        }
        let g = Graph::new(succ_start, succ);
        assert_eq!(g.block_start, [0, 3, 6, 7, 8]);
        let set = |regs: &[u16]| {
            let mut s = RegSet::default();
            regs.iter().for_each(|&r| s.insert(RegFile::Sgpr, r));
            s
        };
        let t = |kill: &[u16], gen: &[u16]| Transfer { kill: set(kill), gen: set(gen) };
        let transfer = [
            t(&[1], &[2]),
            t(&[2], &[3]),
            t(&[], &[1]),
            t(&[3, 4], &[]),
            t(&[], &[4, 5]),
            t(&[5], &[]),
            t(&[6], &[7]),
            t(&[7], &[8]),
        ];
        for direction in [Direction::Backward, Direction::Forward] {
            let (fast, slow) = (solve(&g, direction, &transfer), naive(&g, direction, &transfer));
            assert_eq!((fast.live_in, fast.live_out), (slow.live_in, slow.live_out), "{direction:?}");
        }
    }
}
