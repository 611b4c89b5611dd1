//! `xfpx run --capture` on the command line's side, without a GPU: the
//! flags become the run configuration's capture settings, the folder is
//! checked before the program starts, and the parts the program's
//! processes write are assembled into `capture.json` when it has ended
//! (`scripted-event-app --capture-part` writes one as the tool library
//! does). The tool library's own side is tested in
//! `backend-nvidia/tool/tests/capture_interface.rs`.

mod common;

use common::{run, scripted_app, xfpx_without_library, Outcome};
use std::path::Path;
use xfpx_common::capture::Manifest;
use xfpx_common::config::RunConfig;

fn xfpx_run(dir: &Path, flags: &[&str], app: &[&str]) -> Outcome {
    let mut c = xfpx_without_library(dir);
    c.args(["run", "--vendor", "nvidia"]).args(flags).arg("--").arg(scripted_app()).args(app);
    run(c)
}

#[test]
fn the_capture_is_configured_and_assembled() {
    let d = tempfile::tempdir().expect("scratch");
    let o = xfpx_run(
        d.path(),
        &["--capture", "cap", "--capture-max-launches", "3", "--capture-max-bytes", "2M"],
        &["--capture-part", "--save-config", "config.json", "--finish"],
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let config = RunConfig::load(&d.path().join("config.json")).expect("the configuration handed over");
    let c = config.capture.as_ref().expect("capture settings");
    assert_eq!((c.max_launches, c.max_bytes), (3, 2 << 20));
    assert!(c.dir.is_absolute() && c.dir.ends_with("cap"), "{}", c.dir.display());
    let m = Manifest::read(&d.path().join("cap")).expect("capture.json assembled");
    assert_eq!(m.launches.len(), 1);
    assert_eq!(m.not_captured, ["2 launches of k not captured: over --capture-max-launches (1)"]);
    assert!(m.command.iter().any(|a| a.ends_with("scripted-event-app")), "{:?}", m.command);
    assert!(
        o.stderr.contains("xfpx: capture: 1 launch written to ")
            && o.stderr.contains("; 1 note of what was not captured in the report and manifest"),
        "{}",
        o.stderr
    );
    // defaults
    let o = xfpx_run(d.path(), &["--capture", "cap2"], &["--save-config", "config2.json", "--finish"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let config = RunConfig::load(&d.path().join("config2.json")).expect("configuration");
    let c = config.capture.as_ref().expect("capture settings");
    assert_eq!((c.max_launches, c.max_bytes), (64, 1 << 30));
    assert!(o.stderr.contains("xfpx: capture: nothing was captured into "), "{}", o.stderr);
    // without --capture there is none
    let o = xfpx_run(d.path(), &[], &["--save-config", "config3.json", "--finish"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert!(RunConfig::load(&d.path().join("config3.json")).expect("configuration").capture.is_none());
}

#[test]
fn bad_capture_flags_are_refused_before_the_program_starts() {
    let d = tempfile::tempdir().expect("scratch");
    std::fs::create_dir(d.path().join("full")).expect("mkdir");
    std::fs::write(d.path().join("full/keep.txt"), "mine").expect("write");
    std::fs::write(d.path().join("file"), "mine").expect("write");
    let app = ["--say", "the program ran"];
    for (flags, code, want) in [
        (&["--capture", "full"][..], 1, "the capture folder full is not empty: name a new or empty folder"),
        (&["--capture", "file"][..], 1, "the capture folder file is not a folder"),
        (&["--capture", "c1", "--capture-max-bytes", "1T"][..], 1, "invalid --capture-max-bytes `1T`"),
        (&["--capture", "c2", "--capture-max-launches", "0"][..], 1, "invalid --capture-max-launches 0"),
        (&["--capture", "c3", "--tool", "counters"][..], 1, "a capture records launches of the detect tool only"),
    ] {
        let o = xfpx_run(d.path(), flags, &app);
        o.assert_one_line_error(code, want);
        assert!(!o.stdout.contains("the program ran"), "{flags:?}: the program must not start");
    }
    assert_eq!(std::fs::read_to_string(d.path().join("full/keep.txt")).expect("kept"), "mine");
    for never in ["c1", "c2", "c3"] {
        assert!(!d.path().join(never).exists(), "{never}: no folder made for a refused run");
    }
    let o = xfpx_run(d.path(), &["--capture-max-launches", "2"], &app);
    assert_eq!(o.code, Some(2), "usage error: {}", o.stderr);
    assert!(o.stderr.contains("--capture"), "{}", o.stderr);
}
