//! Every fixture launch on gfx908, gfx90a, gfx942 and gfx950 (where its kernel exists): the emulator's output buffers
//! equal the host build's (bit-exact, or within the stated ULP tolerance of
//! results of approximate instructions), with no hazard reported.

use serde_json::Value;
use std::path::{Path, PathBuf};
use xfpx_amd_emu::launch::{Elem, Launch};
use xfpx_amd_emu::{replay, ReplayOptions};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The launches, those of the MFMA shapes (`launches/matrix/`) included.
fn launches() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = ["launches", "launches/matrix"]
        .iter()
        .flat_map(|d| std::fs::read_dir(fixtures().join(d)).expect("launches dir"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".json") && !p.to_string_lossy().ends_with(".expect.json"))
        .collect();
    v.sort();
    v
}

/// Distance in units in the last place between two values of `elem`.
fn ulps(elem: Elem, a: &[u8], b: &[u8]) -> u64 {
    let ord = |bits: u64, w: u32| -> i64 {
        let sign = 1u64 << (w - 1);
        if bits & sign != 0 {
            -((bits & !sign) as i64)
        } else {
            bits as i64
        }
    };
    let (x, y, w) = match elem {
        Elem::F32 => (
            u32::from_le_bytes(a.try_into().expect("element size")) as u64,
            u32::from_le_bytes(b.try_into().expect("element size")) as u64,
            32,
        ),
        Elem::F64 => (
            u64::from_le_bytes(a.try_into().expect("element size")),
            u64::from_le_bytes(b.try_into().expect("element size")),
            64,
        ),
        Elem::F16 => (
            u16::from_le_bytes(a.try_into().expect("element size")) as u64,
            u16::from_le_bytes(b.try_into().expect("element size")) as u64,
            16,
        ),
        _ => return if a == b { 0 } else { u64::MAX },
    };
    if x == y {
        return 0;
    }
    // NaN payloads and signs are not specified by IEEE 754 (the host makes a
    // negative default NaN, the GPU a positive one): any NaN equals any NaN.
    let nan = |v: u64| match w {
        16 => v & 0x7C00 == 0x7C00 && v & 0x3FF != 0,
        32 => v & 0x7F80_0000 == 0x7F80_0000 && v & 0x7F_FFFF != 0,
        _ => v & 0x7FF0_0000_0000_0000 == 0x7FF0_0000_0000_0000 && v & 0xF_FFFF_FFFF_FFFF != 0,
    };
    if nan(x) && nan(y) {
        return 0;
    }
    ord(x, w).abs_diff(ord(y, w))
}

/// Compares one launch on one target; returns a description of the first
/// mismatch.
pub fn check(launch_path: &Path, target: &str) -> Result<u64, String> {
    let opts = ReplayOptions { target: Some(target.into()), ..Default::default() };
    let out = replay(launch_path, &opts).map_err(|e| e.to_string())?;
    let hazards = out.hazards();
    if !hazards.is_empty() {
        return Err(format!("hazards: {}", hazards.iter().map(|h| h.to_string()).collect::<Vec<_>>().join("; ")));
    }
    let launch = Launch::load(launch_path).map_err(|e| e.0)?;
    let expect_path = launch_path.with_extension("expect.json");
    let expect: Value = serde_json::from_str(&std::fs::read_to_string(&expect_path).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    for (name, spec) in expect["outputs"].as_object().ok_or("bad expect file")? {
        let file = launch_path.parent().expect("launch dir").join(spec["expected"].as_str().ok_or("bad expected")?);
        let want = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let tol = spec["ulp"].as_f64().unwrap_or(0.0) as u64;
        let buf = launch.buffers.iter().find(|b| &b.name == name).ok_or("unknown buffer")?;
        let got = out.output(name).ok_or("output missing")?;
        if got.len() != want.len() {
            return Err(format!("{name}: {} bytes, expected {}", got.len(), want.len()));
        }
        let es = buf.elem.size();
        for i in 0..buf.count {
            let (g, w) = (&got[i * es..(i + 1) * es], &want[i * es..(i + 1) * es]);
            let d = ulps(buf.elem, g, w);
            if d > tol {
                return Err(format!("{name}[{i}]: got {g:02x?}, expected {w:02x?} ({d} ulp apart, tolerance {tol})"));
            }
        }
    }
    Ok(out.stats.instructions)
}

#[test]
fn all_fixtures_match_the_host_reference() {
    let list = launches();
    assert!(list.len() >= 25, "only {} fixture launches", list.len());
    let mut failures = Vec::new();
    let mut passed = 0;
    let targets = ["gfx908", "gfx90a", "gfx942", "gfx950"];
    let mut runs = 0;
    for target in targets {
        for l in &list {
            if !Launch::load(l).expect("launch").runs_on(target) {
                continue;
            }
            runs += 1;
            match check(l, target) {
                Ok(_) => passed += 1,
                Err(e) => failures.push(format!("{target} {}: {e}", l.file_stem().expect("name").to_string_lossy())),
            }
        }
    }
    println!(
        "{passed} of {runs} fixture runs ({} launches on {}, each where its kernel exists) match the host reference",
        list.len(),
        targets.join(", ")
    );
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
