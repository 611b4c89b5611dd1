//! The flow tool's device functions as they ran on an H100
//! (`tests/gpu-smoke/flow_device.cu`, output committed as
//! `tests/gpu-smoke/flow-device.h100.txt`: 400 warps of chosen lane values,
//! inactive lanes and lanes whose guard was off, through `xfpx_flow` and
//! `xfpx_flow_hold`/`xfpx_flow_held`) recorded, for every warp, exactly
//! what the rules of `xfpx_common::flow` say: the warp executions of each
//! (state, kind), the classes the lanes met, the kinds seen per format and
//! one record per new (key, kind).

use xfpx_common::flow::{lane_word, CATEGORIES};
use xfpx_common::FpFormat;

/// What the device left in the entry of one (site, state).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Entry {
    seen: u32,
    classes: u32,
    counts: [u64; 4],
}

struct Case {
    meta: u32,
    active: u32,
    guard: u32,
    lanes: Vec<[u32; 8]>,
    entries: [Entry; 4],
}

fn hex(t: &str) -> u32 {
    u32::from_str_radix(t, 16).unwrap_or_else(|e| panic!("{t}: {e}"))
}

fn parse(text: &str) -> (u32, Vec<Case>) {
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().expect("header").split_whitespace().collect();
    let records: u32 = head[4].parse().expect("records");
    let mut cases = Vec::new();
    while let Some(l) = lines.next() {
        let w: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(w[0], "case", "{l}");
        let mut c = Case {
            meta: hex(w[5]),
            active: hex(w[7]),
            guard: hex(w[9]),
            lanes: Vec::new(),
            entries: [Entry::default(); 4],
        };
        for _ in 0..32 {
            let w: Vec<&str> = lines.next().expect("lane").split_whitespace().collect();
            let mut v = [0u32; 8];
            for (i, t) in w[2..10].iter().enumerate() {
                v[i] = hex(t);
            }
            c.lanes.push(v);
        }
        for st in 0..4 {
            let w: Vec<&str> = lines.next().expect("key").split_whitespace().collect();
            assert_eq!(w[1].parse::<usize>().expect("state"), st);
            let counts = [7, 8, 9, 10].map(|i| w[i].parse::<u64>().expect("count"));
            c.entries[st] = Entry { seen: hex(w[3]), classes: hex(w[5]), counts };
        }
        cases.push(c);
    }
    (records, cases)
}

/// The entries the rules give for one case.
fn expected(c: &Case) -> [Entry; 4] {
    let format = |code: u32| FpFormat::from_code(code as u8).expect("format code");
    let (rf, sf) = (format(c.meta & 0xff), format((c.meta >> 8) & 0xff));
    let n = ((c.meta >> 16) & 3) as usize;
    let has_result = c.meta & (1 << 18) != 0;
    let division = c.meta & (1 << 19) != 0;
    let pair = |lo: u32, hi: u32, f: FpFormat| {
        if f == FpFormat::F64 {
            u64::from(lo) | u64::from(hi) << 32
        } else {
            u64::from(lo)
        }
    };
    let words: Vec<u16> = (0..32)
        .filter(|l| c.active & c.guard & (1 << l) != 0)
        .map(|l| {
            let v = &c.lanes[l];
            let sources: Vec<u64> = (0..n).map(|k| pair(v[2 + 2 * k], v[3 + 2 * k], sf)).collect();
            let result = has_result.then(|| pair(v[0], v[1], rf));
            lane_word(sf, &sources, rf, result, division)
        })
        .collect();
    let mut out = [Entry::default(); 4];
    for cat in CATEGORIES {
        let lanes: Vec<u16> = words.iter().copied().filter(|w| w & cat.mask == cat.want).collect();
        if lanes.is_empty() {
            continue;
        }
        let e = &mut out[cat.state.code() as usize];
        let kind = cat.kind.code() as usize;
        e.counts[kind] += 1;
        let byte = lanes.iter().fold(0u32, |a, w| a | u32::from(w & 31) | u32::from((w >> 8) & 3) << 5);
        e.classes |= byte << (8 * kind);
        e.seen |= u32::from(cat.kind.bit()) << (4 * u32::from(rf.code()));
    }
    out
}

#[test]
fn the_device_records_what_the_rules_say() {
    let text = include_str!("gpu-smoke/flow-device.h100.txt");
    let (records, cases) = parse(text);
    assert_eq!(cases.len(), 400);
    let mut seen_bits = 0;
    let mut with_flows = 0;
    for (i, c) in cases.iter().enumerate() {
        let want = expected(c);
        assert_eq!(c.entries, want, "case {i} (meta {:#x}, active {:#x}, guard {:#x})", c.meta, c.active, c.guard);
        seen_bits += c.entries.iter().map(|e| e.seen.count_ones()).sum::<u32>();
        with_flows += usize::from(c.entries.iter().any(|e| e.seen != 0));
    }
    // one record per new (key, kind)
    assert_eq!(records, seen_bits);
    // the cases exercise the rules: most warps have flows, of every state
    assert!(with_flows > 300, "{with_flows}");
    for st in 0..4 {
        assert!(cases.iter().any(|c| c.entries[st].seen != 0), "no case has state {st}");
    }
}
