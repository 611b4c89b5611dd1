//! The warpgroup-MMA windows against an oracle that walks every path:
//! random functions over MMAs, waits, conditional (of three spellings) and plain branches,
//! arithmetic and exits. Wherever some path from the entry reaches an
//! instruction with a group in flight, the analysis must say so (a call
//! there is never made); and it never panics, nor does planning and
//! lowering such a function.

use proptest::prelude::*;
use std::collections::HashSet;
use xfpx_common::lower::Lowering;
use xfpx_common::probe::When;
use xfpx_common::site::SiteTable;
use xfpx_common::tool::{Detector, Tool};
use xfpx_nvidia::lower::NvbitLowering;
use xfpx_nvidia::sass::warpgroup::InFlight;
use xfpx_nvidia::sass::{build_kernel, parse_listing};

/// One instruction of a random function, by kind and branch target.
fn text(kind: u8, target: usize) -> String {
    let to = target * 16;
    match kind % 11 {
        0 => "HGMMA.64x128x16.F32 R24, gdesc[UR16].tnspA, R24, gsb0".into(),
        1 => "WARPGROUP.DEPBAR.LE gsb0, 0x0".into(),
        2 => "WARPGROUP.DEPBAR.LE gsb0, 0x1".into(),
        3 => format!("BRA !P0, {to:#x}"),
        4 => format!("@P1 BRA {to:#x}"),
        5 => format!("BRA {to:#x}"),
        6 => "@P2 EXIT".into(),
        7 => "FFMA R30, R2, R3, R30".into(),
        8 => "@P0 WARPGROUP.DEPBAR.LE gsb0, 0x0".into(),
        9 => format!("BRA.DIV UR4, {to:#x}"),
        _ => "FADD R31, R2, R3".into(),
    }
}

/// Every (instruction, in flight) state some path from the entry reaches
/// before the instruction runs; a path that leaves `kinds` (a target at
/// or past its end: the function's last `EXIT`) ends there.
fn reachable(kinds: &[(u8, usize)]) -> HashSet<(usize, bool)> {
    let n = kinds.len();
    let mut seen = HashSet::new();
    let mut work = vec![(0usize, false)];
    while let Some((i, flight)) = work.pop() {
        if i >= n || !seen.insert((i, flight)) {
            continue;
        }
        let (kind, target) = kinds[i];
        let after = match kind % 11 {
            0 => true,
            1 => false,
            _ => flight,
        };
        let next: Vec<usize> = match kind % 11 {
            3 | 4 | 9 => vec![i + 1, target],
            5 => vec![target],
            _ => vec![i + 1],
        };
        work.extend(next.into_iter().map(|j| (j, after)));
    }
    seen
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn no_path_reaches_a_window_the_analysis_misses(body in proptest::collection::vec((any::<u8>(), 0usize..64), 1..40)) {
        // the body, then an EXIT every branch may target
        let n = body.len() + 1;
        let kinds: Vec<(u8, usize)> = body.iter().map(|&(k, t)| (k, t % n)).collect();
        let mut listing = String::from("\tFunction : k\n");
        for (i, &(kind, target)) in kinds.iter().enumerate() {
            listing.push_str(&format!("        /*{:04x}*/  {} ;\n", i * 16, text(kind, target)));
        }
        listing.push_str(&format!("        /*{:04x}*/  EXIT ;\n", (n - 1) * 16));
        let functions = parse_listing(&listing).expect("parses");
        let kernel = build_kernel(&functions[0]);
        let windows = InFlight::of(&kernel);
        for (i, flight) in reachable(&kinds) {
            if flight {
                prop_assert!(windows.at(i as u32, When::Before), "instruction {i} is reached in flight:\n{listing}");
            }
        }
        let mut sites = SiteTable::new();
        let plan = Detector::default().plan(&kernel.view, &mut sites);
        if let Ok(mut lowering) = NvbitLowering::new(&kernel, 0x1000) {
            if let Ok(calls) = lowering.lower(&kernel.view, &plan, &sites) {
                for c in &calls {
                    prop_assert!(!windows.at(c.instr, c.when), "a call in a window at {}:\n{listing}", c.instr);
                }
            }
        }
    }
}
