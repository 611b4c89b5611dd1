//! `xfpx demo`, README's first command: the bundled demo runs without a
//! GPU and shows a NaN, an overflow and a division by zero.

mod common;

use common::{run, xfpx};
use xfpx_common::report::Report;

#[test]
fn the_demo_shows_its_three_exceptions() {
    let d = tempfile::tempdir().expect("scratch");
    let mut c = xfpx(d.path());
    c.arg("demo");
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let s = &o.stdout;
    assert!(s.starts_with("xfpx demo: "), "{s}");
    for line in [
        "\n  exc_nan: 1 finding at 1 instruction\n",
        ": nan (f32); 1 finding at 1 instruction",
        "  v_mul_f32_e32 v2, v2, v3  nan (f32), first in launch 0",
        "\n  exc_overflow: 2 findings at 2 instructions\n",
        ": inf (f32); 2 findings at 2 instructions",
        "\n  exc_div0: 1 finding at 1 instruction\n",
        "  v_rcp_f32_e32 v2, v2  div0 (f32), first in launch 0",
        "exceptions.hip:10: nan (f32)",
        "exceptions.hip:18: inf (f32)",
        "xfpx_kernel.h:28 (inlined at exceptions.hip:34): div0 (f32)",
    ] {
        assert!(s.contains(line), "`{line}` missing from:\n{s}");
    }
    assert!(std::fs::read_dir(d.path()).expect("list").next().is_none(), "the demo writes no file unless asked");

    let mut c = xfpx(d.path());
    c.args(["demo", "--report", "demo.msgpack", "--format", "json"]);
    let o = run(c);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let printed = Report::from_json(&o.stdout).expect("json");
    let saved = Report::from_msgpack(&std::fs::read(d.path().join("demo.msgpack")).expect("report")).expect("valid");
    assert_eq!(printed, saved);
    assert_eq!(saved.records().count(), 4);
}
