//! A hand-written launch with generated inputs and planted special values:
//! the outputs and the report show exactly the planted NaN, infinity and
//! subnormal elements.

use std::path::Path;
use xfpx_amd_emu::{replay, ReplayOptions};
use xfpx_common::fp::ExceptionKind;

#[test]
fn planted_specials_reach_outputs_and_report() {
    let dir = std::env::temp_dir().join(format!("xfpx-emu-gen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let launch = format!(
        r#"{{
  "code_object": "{}/{{target}}/elem_f32.co",
  "kernel": "saxpy",
  "grid": [2], "block": [64],
  "buffers": {{
    "x": {{"elem": "f32", "count": 128, "init": {{"range": {{"start": -64, "step": 1}}}},
          "specials": [{{"index": 3, "value": "nan"}}, {{"index": 9, "value": "inf"}}, {{"index": 100, "value": "subnormal"}}]}},
    "y": {{"elem": "f32", "count": 128, "init": {{"random": {{"seed": 5, "min": 0.25, "max": 0.5}}}},
          "specials": [{{"index": 100, "value": "zero"}}]}},
    "out": {{"elem": "f32", "count": 128}}
  }},
  "args": [{{"buffer": "out"}}, {{"buffer": "x"}}, {{"buffer": "y"}}, {{"f32": 1.0}}, {{"u32": 128}}],
  "outputs": ["out"]
}}"#,
        fixtures.display()
    );
    let path = dir.join("specials.json");
    std::fs::write(&path, launch).expect("write");
    for target in ["gfx90a", "gfx942"] {
        let out = replay(&path, &ReplayOptions { target: Some(target.into()), ..Default::default() }).expect("replays");
        let o: Vec<f32> =
            out.output("out").expect("out").chunks(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert!(o[3].is_nan());
        assert_eq!(o[9], f32::INFINITY);
        assert!(o[100].is_subnormal(), "{}", o[100]);
        let odd: Vec<usize> = (0..128).filter(|&i| !o[i].is_finite() || o[i].is_subnormal()).collect();
        assert_eq!(odd, vec![3, 9, 100]);
        let kinds: Vec<ExceptionKind> = out.report.records().map(|(_, r)| r.kind).collect();
        for k in [ExceptionKind::Nan, ExceptionKind::Inf, ExceptionKind::Sub] {
            assert!(kinds.contains(&k), "{target}: {kinds:?}");
        }
        assert!(!kinds.contains(&ExceptionKind::Div0));
    }
    std::fs::remove_dir_all(&dir).ok();
}
