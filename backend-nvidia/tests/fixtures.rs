//! Tests on the SASS listings captured from `fixtures/ops.cu`
//! (`fixtures/capture.sh`): the opcode table against what nvdisasm prints,
//! classification, operands, line tables, lowering, and the golden dump.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use xfpx_common::class::{FpFormat, InstrClass};
use xfpx_common::config::OutputFormat;
use xfpx_common::lower::Lowering;
use xfpx_common::plan::verify;
use xfpx_common::site::SiteTable;
use xfpx_common::tool::{Detector, Tool};
use xfpx_nvidia::abi;
use xfpx_nvidia::dump::{dump_listing, DumpOptions};
use xfpx_nvidia::sass::{build_kernel, opcodes, parse_listing, SassFunction};
use xfpx_nvidia::NvbitLowering;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn nvdisasm() -> Vec<SassFunction> {
    parse_listing(&read("ops.sm_90.nvdisasm.sass")).expect("nvdisasm listing parses")
}

fn function<'a>(fs: &'a [SassFunction], name: &str) -> &'a SassFunction {
    fs.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no function {name}"))
}

/// Opcodes of floating-point families, by name: everything here must be
/// in the table.
fn looks_fp(opcode: &str) -> bool {
    const FAMILIES: &[&str] = &[
        "FADD", "FADD32I", "FMUL", "FMUL32I", "FFMA", "FFMA32I", "FMNMX", "FSEL", "FSET", "FSETP", "FCHK", "FRND",
        "DADD", "DMUL", "DFMA", "DSETP", "DMNMX", "HADD2", "HMUL2", "HFMA2", "HMNMX2", "HSET2", "HSETP2", "MUFU",
        "F2F", "F2FP", "F2I", "I2F", "I2FP", "HMMA",
    ];
    FAMILIES.contains(&opcode)
}

#[test]
fn both_listing_formats_agree() {
    let a = nvdisasm();
    let b = parse_listing(&read("ops.sm_90.cuobjdump.sass")).expect("cuobjdump listing parses");
    let names = |fs: &[SassFunction]| fs.iter().map(|f| f.name.clone()).collect::<BTreeSet<_>>();
    assert_eq!(names(&a), names(&b));
    assert_eq!(a.len(), 8);
    for f in &a {
        let g = function(&b, &f.name);
        assert_eq!(f.instrs.len(), g.instrs.len(), "{}", f.name);
        for (x, y) in f.instrs.iter().zip(&g.instrs) {
            assert_eq!((x.offset, &x.opcode, &x.modifiers), (y.offset, &y.opcode, &y.modifiers), "{}", f.name);
            // branch targets are labels in one and addresses in the other
            if !x.text.contains('`') {
                assert_eq!(x.text, y.text, "{}", f.name);
            }
        }
    }
}

#[test]
fn opcode_table_matches_the_listings() {
    let fs = nvdisasm();
    let mut seen_rows = BTreeSet::new();
    for f in &fs {
        for i in &f.instrs {
            let mods = i.modifier_refs();
            match opcodes::lookup(&i.opcode, &mods) {
                Some(row) => {
                    seen_rows.insert((row.opcode, row.modifier));
                }
                None => assert!(!looks_fp(&i.opcode), "{} is floating point but not in the table", i.text),
            }
        }
    }
    let wrong: Vec<String> = opcodes::OPCODES
        .iter()
        .filter(|row| seen_rows.contains(&(row.opcode, row.modifier)) != row.in_fixtures)
        .map(|row| {
            format!(
                "{}{} (in_fixtures={})",
                row.opcode,
                row.modifier.map(|m| format!(".{m}")).unwrap_or_default(),
                row.in_fixtures
            )
        })
        .collect();
    assert!(wrong.is_empty(), "rows whose in_fixtures mark disagrees with the listings: {wrong:?}");
}

fn classes(name: &str) -> BTreeSet<String> {
    let fs = nvdisasm();
    let k = build_kernel(function(&fs, name));
    k.view.instrs.iter().filter(|i| i.class.is_fp()).map(|i| i.class.label()).collect()
}

#[test]
fn classification_per_kernel() {
    let want = |k: &str, labels: &[&str]| {
        let got = classes(k);
        for l in labels {
            assert!(got.contains(*l), "{k}: no {l} in {got:?}");
        }
    };
    want(
        "f32_ops",
        &[
            "f32.add",
            "f32.mul",
            "f32.fma",
            "f32.div",
            "f32.rsqrt",
            "f32.transcendental",
            "f32.minmax",
            "f32.sel",
            "f32.cmp",
        ],
    );
    want("f32_tanh", &["f32.transcendental", "f32.add"]);
    want("f64_ops", &["f64.add", "f64.mul", "f64.fma", "f64.div", "f64.rsqrt", "f64.cmp"]);
    want("half_ops", &["f16x2.add", "f16x2.mul", "f16x2.fma", "f16x2.minmax", "f16x2.cmp"]);
    want("bf16_ops", &["bf16x2.mul", "bf16x2.fma", "bf16x2.minmax", "bf16x2.cmp"]);
    want("conversions", &["f32.conversion", "f64.conversion"]);
    want("mma_f16", &["f32.matrix"]);
    want("more_ops", &["f64.conversion", "f16x2.matrix", "f16x2.conversion", "bf16x2.add", "f16x2.cmp"]);
    assert!(!classes("mma_f16").iter().any(|c| c.starts_with("f64")));
}

#[test]
fn operands_of_captured_instructions() {
    let fs = nvdisasm();
    let k = build_kernel(function(&fs, "f64_ops"));
    let rcp = k.view.instrs.iter().position(|i| i.text.starts_with("MUFU.RCP64H")).expect("RCP64H");
    assert!(k.high_word[rcp]);
    let def = k.view.instrs[rcp].defs[0].reg().expect("register");
    assert_eq!((def.count, def.first % 2), (2, 0));
    for i in k.view.instrs.iter().filter(|i| i.text.starts_with("DFMA") || i.text.starts_with("DADD")) {
        assert!(i.defs[0].reg().is_some_and(|r| r.count == 2 && r.first % 2 == 0), "{}", i.text);
    }
    let k = build_kernel(function(&fs, "mma_f16"));
    let hmma = k.view.instrs.iter().find(|i| i.text.starts_with("HMMA")).expect("HMMA");
    assert_eq!(hmma.class, InstrClass::Matrix { format: FpFormat::F32 });
    assert_eq!(hmma.defs[0].reg().map(|r| r.count), Some(4));
}

#[test]
fn line_table_comes_from_the_listing() {
    let src = read("ops.cu");
    let fadd_line = src.lines().position(|l| l.contains("// FADD")).expect("marker") as u32 + 1;
    let fs = nvdisasm();
    let f = function(&fs, "f32_ops");
    let first_fadd = f.instrs.iter().find(|i| i.opcode == "FADD").expect("FADD");
    let loc = first_fadd.location.as_ref().expect("line info");
    assert_eq!((loc.file.as_str(), loc.line), ("ops.cu", fadd_line));
}

#[test]
fn every_kernel_plans_verifies_and_lowers() {
    let fs = nvdisasm();
    let decl = abi::device_functions().expect("declaration");
    let mut sites = SiteTable::new();
    let mut total_calls = 0;
    for f in &fs {
        let k = build_kernel(f);
        let plan = Detector::default().plan(&k.view, &mut sites);
        verify(&plan, &k.view, &sites).unwrap_or_else(|e| panic!("{}: {e}", f.name));
        let calls = NvbitLowering::new(&k, 0x7000_0000).expect("abi").lower(&k.view, &plan, &sites).expect("lowers");
        assert!(calls.len() >= plan.probes.len(), "{}", f.name);
        for c in &calls {
            let d = decl.iter().find(|d| d.name == c.function).expect("declared");
            assert_eq!(d.params.len(), c.args.len());
            assert!(c.args.iter().zip(&d.params).all(|(a, p)| a.fits(p.kind)));
            assert!(!k.view.instrs[c.instr as usize].control.leaves() || c.when == xfpx_common::probe::When::Before);
        }
        total_calls += calls.len();
    }
    assert!(total_calls > 100, "{total_calls}");
}

#[test]
fn golden_dump() {
    let text = read("ops.sm_90.nvdisasm.sass");
    let dump = dump_listing(&text, &DumpOptions { kernel: None, format: OutputFormat::Text, ..DumpOptions::default() })
        .expect("dumps");
    let golden = fixture("ops.sm_90.dump.txt");
    if std::env::var_os("XFPX_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&golden, &dump).expect("bless");
        return;
    }
    let want = std::fs::read_to_string(&golden).expect("golden dump (create it with XFPX_BLESS=1)");
    assert!(want == dump, "dump differs from {}; rerun with XFPX_BLESS=1 after checking the change", golden.display());
}

#[test]
fn fixtures_are_current_when_cuda_is_present() {
    let script = fixture("capture.sh");
    let nvcc_present = std::process::Command::new("sh")
        .args(["-c", "command -v \"${CUDA_HOME:+$CUDA_HOME/bin/}nvcc\""])
        .output()
        .is_ok_and(|o| o.status.success());
    if !nvcc_present {
        eprintln!("note: nvcc not found; skipping the check that the SASS fixtures are current");
        return;
    }
    let out = std::process::Command::new("bash").arg(&script).arg("--check").output().expect("run capture.sh");
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// SASS forms of sm_90 library code (warpgroup MMA, TMA, barriers, uniform
/// datapath) that the captured fixtures lack: all parse, and the classes
/// that matter come out right.
#[test]
fn hopper_library_forms_parse() {
    use xfpx_nvidia::sass::parse_instruction;
    let cases: &[(&str, &str)] = &[
        ("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24, gsb0 ;", "other"),
        ("WARPGROUP.ARRIVE ;", "other"),
        ("UTMALDG.2D [UR8], [UR4], desc[UR10] ;", "other"),
        ("SYNCS.ARRIVE.TRANS64.RED.A1T0 RZ, [UR5+0x18], RZ ;", "other"),
        ("@P0 BRA.U !UP0, `(.L_x_3) ;", "other"),
        ("LDGSTS.E.BYPASS.LTC128B.128 [R3+0x800], desc[UR16][R4.64] ;", "other"),
        ("R2UR UR4, R2 ;", "other"),
        ("ELECT P0, URZ, PT ;", "other"),
        ("DEPBAR.LE SB0, 0x1 ;", "other"),
        ("HMMA.16816.F32.BF16 R4, R8, R12, R4 ;", "f32.matrix"),
        ("HMMA.1688.F32.TF32 R4, R8, R12, R4 ;", "f32.matrix"),
        ("FSETP.NEU.FTZ.AND P0, PT, |R1|, +INF , PT ;", "f32.cmp"),
        ("F2I.FTZ.U32.TRUNC.NTZ R0, R1 ;", "other"),
        ("@!P1 FADD R1, -RZ, |R2| ;", "f32.add"),
        ("MUFU.EX2.F16 R0, R0 ;", "f16.transcendental"),
        ("F2FP.BF16.F32.PACK_AB R0, R1, R2 ;", "bf16x2.conversion"),
        ("FMUL.FTZ R0, R1, c[0x0][0x180] ;", "f32.mul"),
        ("DSETP.MAX.AND P0, P1, R2, R4, PT ;", "f64.cmp"),
    ];
    for (text, class) in cases {
        let ins = parse_instruction(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let k = build_kernel(&SassFunction { name: "k".into(), instrs: vec![ins] });
        assert_eq!(k.view.instrs[0].class.label(), *class, "{text}");
    }
}

/// `nvdisasm -gi` of the same cubin: every instruction's innermost line is
/// the one `nvdisasm -g` gives, and the tensor-core and half-precision
/// code of CUDA's headers names the line of ops.cu it was inlined into.
#[test]
fn inlined_lines_name_the_users_line() {
    let plain = nvdisasm();
    let inlined = parse_listing(&read("ops.sm_90.nvdisasm-gi.sass")).expect("nvdisasm -gi listing parses");
    assert_eq!(plain.len(), inlined.len());
    let (mut compared, mut with_caller) = (0, 0);
    for (p, i) in plain.iter().zip(&inlined) {
        assert_eq!(p.name, i.name);
        assert_eq!(p.instrs.len(), i.instrs.len(), "{}", p.name);
        for (a, b) in p.instrs.iter().zip(&i.instrs) {
            assert_eq!((a.offset, &a.text), (b.offset, &b.text));
            let innermost = b.location.clone().map(|l| xfpx_common::site::SourceLoc { inlined_at: None, ..l });
            assert_eq!(a.location, innermost, "{} +{:#x}", p.name, a.offset);
            compared += 1;
            if let Some(l) = &b.location {
                if l.file.starts_with("<cuda>/include/") {
                    let outer = l.inlined_at.as_deref().unwrap_or_else(|| panic!("{} +{:#x}: {l}", p.name, b.offset));
                    assert_eq!(outer.file, "ops.cu", "{} +{:#x}: {l}", p.name, b.offset);
                    with_caller += 1;
                }
            }
        }
    }
    assert!(compared > 600 && with_caller > 50, "{compared} instructions, {with_caller} from CUDA's headers");
    let mma = function(&inlined, "mma_f16");
    let hmma = mma.instrs.iter().find(|i| i.opcode == "HMMA").expect("an HMMA");
    let at = hmma.location.as_ref().expect("located").to_string();
    assert!(at.starts_with("<cuda>/include/crt/mma.hpp:") && at.ends_with("(inlined at ops.cu:87)"), "{at}");
}

/// The GPU suite's `nvdisasm -gi` listings (CUDA 13.0): half-precision
/// intrinsics of `cuda_fp16.hpp` and `cuda_bf16.hpp`, one of them inlined
/// two deep, name the suite's own line.
#[test]
fn gpu_suite_listing_names_the_users_line() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/gpu/listings/fpx_half.lines.sass");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let fs = parse_listing(&text).expect("parses");
    let f = function(&fs, "fpx_bf16x2_inf");
    let at = |offset: u64| {
        let i = f.instrs.iter().find(|i| i.offset == offset).expect("instruction");
        (i.text.clone(), i.location.as_ref().map(ToString::to_string).unwrap_or_default())
    };
    // two frames of cuda_bf16.hpp (2590 inlined at 2669), then the kernel
    assert_eq!(
        at(0xb0),
        (
            "HFMA2.MMA.BF16_V2 R9, R2, R5, -RZ".into(),
            "<cuda>/include/cuda_bf16.hpp:2590 (inlined at fpx_half.cu:35)".into()
        )
    );
    assert_eq!(at(0xa0).1, "fpx_half.cu:35");
    let from_headers: Vec<_> = fs
        .iter()
        .flat_map(|f| &f.instrs)
        .filter_map(|i| i.location.as_ref())
        .filter(|l| l.file.starts_with("<cuda>/include/"))
        .collect();
    assert!(from_headers.len() >= 18, "{}", from_headers.len());
    assert!(from_headers.iter().all(|l| l.outermost().file == "fpx_half.cu"), "{from_headers:?}");
}

/// The GPU suite's listings with branch targets named by labels (`nvdisasm
/// -gi`), which the parser reads as targets not known, as NVBit's text
/// reads an indirect branch: fast mode thins such kernels over what the
/// graph knows (nothing after such a branch) instead of checking every
/// result; the same kernels with their targets known need none of that.
#[test]
fn kernels_with_branches_of_unknown_target_are_thinned_over_what_is_known() {
    let listing = |name: &str| {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/gpu/listings").join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let dump = |text: &str, mode| dump_listing(text, &DumpOptions { mode, ..DumpOptions::default() }).expect("dumps");
    let calls = |dump: &str| -> usize {
        dump.lines()
            .filter_map(|l| l.strip_prefix("kernel ").and_then(|l| l.split(", ").nth(2)))
            .map(|c| c.trim_end_matches(" calls").parse::<usize>().expect("count"))
            .sum()
    };
    let labelled = listing("fpx_loops.lines.sass");
    let fast = dump(&labelled, xfpx_common::config::Mode::Fast);
    let detect = dump(&labelled, xfpx_common::config::Mode::Detect);
    assert!(fast.contains("checks that repeat an earlier one kept, and checks not grouped"), "{fast}");
    assert!(!fast.contains("every result checked"), "{fast}");
    assert!(calls(&fast) < calls(&detect), "fast {} against detect {}", calls(&fast), calls(&detect));
    let addressed = dump(&listing("fpx_loops.sass"), xfpx_common::config::Mode::Fast);
    assert!(!addressed.contains("checks that repeat an earlier one kept"), "{addressed}");
}
