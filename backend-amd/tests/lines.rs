//! Source lines and kernel names of a code object built with `-g`
//! (`fixtures/gfx942/lines.co`): every instruction address resolves as
//! `llvm-addr2line -i` resolves it (innermost frame, and the outermost one
//! when inlined), against the committed golden `lines.addr2line` and, where
//! `llvm-addr2line-19` is installed, against the tool itself.

mod common;

use std::collections::BTreeMap;
use std::process::Command;
use xfpx_amd::{CodeObject, SourceLines};
use xfpx_common::site::SourceLoc;

/// A frame of llvm-addr2line's LLVM output style: `file:line:column`.
fn frame(text: &str) -> Option<SourceLoc> {
    let mut parts = text.rsplitn(3, ':');
    let column: u32 = parts.next()?.parse().ok()?;
    let line: u32 = parts.next()?.parse().ok()?;
    let file = parts.next()?;
    if file == "??" || line == 0 {
        return None;
    }
    // the reader drops `.` components of paths (`././a.h` is `a.h`)
    let file = file.split('/').filter(|p| *p != "." && !p.is_empty()).collect::<Vec<_>>().join("/");
    Some(SourceLoc { column: (column > 0).then_some(column), ..SourceLoc::new(file, line) })
}

/// Address → frames (innermost first) of `llvm-addr2line --output-style=LLVM -a -i`.
fn parse_golden(text: &str) -> BTreeMap<u64, Vec<SourceLoc>> {
    let mut out = BTreeMap::new();
    for block in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let mut lines = block.lines();
        let addr = lines.next().and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok());
        let addr = addr.unwrap_or_else(|| panic!("golden block without an address: {block:?}"));
        out.insert(addr, lines.filter_map(frame).collect());
    }
    out
}

fn expected(frames: &[SourceLoc]) -> Option<SourceLoc> {
    let inner = frames.first()?.clone();
    Some(match frames.last() {
        Some(outer) if frames.len() > 1 => inner.inlined_into(outer.clone()),
        _ => inner,
    })
}

fn golden_text() -> String {
    common::read_text(&common::fixtures().join("gfx942/lines.addr2line"))
}

#[test]
fn every_instruction_resolves_as_llvm_addr2line_does() {
    let bytes = common::read(&common::fixtures().join("gfx942/lines.co"));
    let co = CodeObject::parse(&bytes).expect("code object");
    let lines = SourceLines::read(&co.elf).expect("debug information").expect("a line table");
    let golden = parse_golden(&golden_text());
    assert!(golden.len() > 100, "golden too small: {} addresses", golden.len());
    let mut located = 0;
    let mut inlined = 0;
    for (&addr, frames) in &golden {
        let want = expected(frames);
        let got = lines.locate(addr);
        assert_eq!(got, want, "address {addr:#x} (llvm-addr2line: {frames:?})");
        located += usize::from(got.is_some());
        inlined += usize::from(got.is_some_and(|g| g.inlined_at.is_some()));
    }
    assert!(located >= 100 && inlined >= 20, "{located} located, {inlined} inlined");
    println!("{} addresses: {located} with a line, {inlined} inlined", golden.len());
}

#[test]
fn a_division_in_an_inlined_helper_names_the_kernel_line() {
    let bytes = common::read(&common::fixtures().join("gfx942/lines.co"));
    let co = CodeObject::parse(&bytes).expect("code object");
    let lines = SourceLines::read(&co.elf).expect("debug information").expect("a line table");
    let k = co.kernel("lines_inlined").expect("kernel");
    // the first v_div_scale_f32 of `ratio` (lines_math.h), inlined through
    // `smooth` into the kernel's line 13
    let div = k.entry + 0x2c;
    let at = lines.locate(div).expect("located");
    assert_eq!(at.to_string(), "lines_math.h:6 (inlined at lines.hip:13)");
    assert_eq!(at.column, Some(67));
    assert_eq!(at.inlined_at.as_deref().and_then(|o| o.column), Some(12));
}

#[test]
fn objects_without_debug_information_have_no_lines() {
    let bytes = common::read(&common::fixtures().join("gfx942/fp32.co"));
    let co = CodeObject::parse(&bytes).expect("code object");
    assert!(SourceLines::read(&co.elf).expect("readable").is_none());
}

fn tool(name: &str) -> Option<String> {
    Command::new(name).arg("--version").output().ok().map(|_| name.to_string())
}

#[test]
fn the_golden_is_what_llvm_addr2line_prints() {
    let Some(addr2line) = tool("llvm-addr2line-19") else {
        println!("skipped: llvm-addr2line-19 is not installed; compared with the committed golden only");
        return;
    };
    let golden = golden_text();
    let addrs: Vec<String> = parse_golden(&golden).keys().map(|a| format!("{a:#x}")).collect();
    let out = Command::new(addr2line)
        .args(["--output-style=LLVM", "-a", "-i", "-e"])
        .arg(common::fixtures().join("gfx942/lines.co"))
        .args(&addrs)
        .output()
        .expect("run llvm-addr2line-19");
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), golden, "rerun backend-amd/fixtures/regen.sh");
}

#[test]
fn cxx_kernel_names_demangle_as_cxxfilt_does() {
    let bytes = common::read(&common::fixtures().join("gfx942/lines.co"));
    let co = CodeObject::parse(&bytes).expect("code object");
    let mangled: Vec<&str> = co.kernels.iter().map(|k| k.name.as_str()).filter(|n| n.starts_with("_Z")).collect();
    assert_eq!(mangled.len(), 3, "{mangled:?}");
    let ours: Vec<String> = mangled.iter().map(|n| xfpx_common::names::demangle(n).expect("demangles")).collect();
    assert!(ours.contains(&"void lines_scale<double>(double*, double const*, double)".to_string()), "{ours:?}");
    assert!(ours.contains(&"app::normalized(float*, float const*, int)".to_string()), "{ours:?}");
    let Some(filt) = tool("llvm-cxxfilt-19") else {
        println!("skipped: llvm-cxxfilt-19 is not installed; demangled names not compared with it");
        return;
    };
    let out = Command::new(filt).args(&mangled).output().expect("run llvm-cxxfilt-19");
    let theirs: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    assert_eq!(ours, theirs);
}

#[test]
fn rewritten_sites_carry_their_source_lines() {
    let bytes = common::read(&common::fixtures().join("gfx942/lines.co"));
    let co = CodeObject::parse(&bytes).expect("code object");
    let lines = SourceLines::read(&co.elf).expect("debug information").expect("a line table");
    let out = xfpx_amd::rewrite::rewrite(&bytes, &xfpx_amd::rewrite::RewriteOptions::default()).expect("rewrite");
    assert!(out.notes.is_empty(), "{:?}", out.notes);
    let mut inlined = Vec::new();
    for (_, s) in out.sites.iter() {
        let k = co.kernel(&s.kernel).expect("a kernel's site");
        assert_eq!(s.location, lines.locate(k.entry + s.offset), "{} +{:#x}", s.kernel, s.offset);
        assert!(s.location.is_some(), "{} +{:#x} {} has no line", s.kernel, s.offset, s.instr);
        if s.location.as_ref().is_some_and(|l| l.inlined_at.is_some()) {
            inlined.push(format!("{} {}", s.instr, s.location.as_ref().map(ToString::to_string).unwrap_or_default()));
        }
    }
    assert!(out.sites.len() >= 10, "{} sites", out.sites.len());
    assert!(
        inlined
            .iter()
            .any(|s| s.starts_with("v_div_fixup_f32") && s.ends_with("lines_math.h:6 (inlined at lines.hip:13)")),
        "{inlined:#?}"
    );
}

#[test]
fn rewrite_kernel_filters_match_demangled_names() {
    let bytes = common::read(&common::fixtures().join("gfx942/lines.co"));
    let opts = xfpx_amd::rewrite::RewriteOptions {
        kernels: xfpx_common::config::KernelFilter::new(&["lines_scale<double>".into()], &[]).expect("pattern"),
        ..Default::default()
    };
    let out = xfpx_amd::rewrite::rewrite(&bytes, &opts).expect("rewrite");
    let chosen: Vec<&str> = out
        .kernels
        .iter()
        .filter(|k| k.state != xfpx_amd::rewrite::KernelState::Excluded)
        .map(|k| k.name.as_str())
        .collect();
    assert_eq!(chosen, ["_Z11lines_scaleIdEvPT_PKS0_S0_"]);
}
