//! Fat binaries and the disassembly ahead of NVBit, against the captured
//! fixtures (`fixtures/capture.sh`): every function the fat binary reader
//! finds has exactly the code `cuobjdump -sass` printed for it, and a
//! prefill (batched, or through the cache's wrapper) answers NVBit's later
//! call for the same bytes with that call's own answer, without running
//! the disassembler again.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use xfpx_nvidia::disasm_cache::DisasmCache;
use xfpx_nvidia::fatbin::{self, EntryKind};
use xfpx_nvidia::prefill;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

fn fatbin_fixture() -> Vec<u8> {
    std::fs::read(fixture("ops.sm_90.fatbin")).expect("fatbin fixture")
}

/// Each function's code as `cuobjdump -sass` printed it: the two 64-bit
/// words of every instruction, little-endian.
fn cuobjdump_code() -> BTreeMap<String, Vec<u8>> {
    let text = std::fs::read_to_string(fixture("ops.sm_90.cuobjdump.sass")).expect("listing");
    let mut out: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(name) = line.trim().strip_prefix("Function : ") {
            current = Some(name.trim().to_string());
            continue;
        }
        let Some(name) = &current else { continue };
        // the encoding is the last /* 0x... */ comment of the line
        if let Some(start) = line.rfind("/* 0x") {
            let hex = line[start + 5..].trim_end().trim_end_matches("*/").trim();
            let word = u64::from_str_radix(hex, 16).expect("encoding word");
            out.entry(name.clone()).or_default().extend_from_slice(&word.to_le_bytes());
        }
    }
    out
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("xfpx-prefill-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

/// A host ELF object whose `.nv_fatbin` section holds `fatbin`, as nvcc's
/// host objects and the executables linked from them carry it.
fn host_elf(fatbin: &[u8]) -> Vec<u8> {
    use object::write::{Object, StandardSection};
    let mut obj = Object::new(object::BinaryFormat::Elf, object::Architecture::X86_64, object::Endianness::Little);
    let text = obj.section_id(StandardSection::Text);
    obj.append_section_data(text, &[0xc3], 1);
    let fb = obj.add_section(Vec::new(), b".nv_fatbin".to_vec(), object::SectionKind::ReadOnlyData);
    obj.append_section_data(fb, fatbin, 8);
    obj.write().expect("write ELF")
}

#[test]
fn the_fat_binary_holds_the_code_cuobjdump_printed() {
    let fb = fatbin_fixture();
    let entries = fatbin::entries(&fb).expect("entries");
    let kinds: Vec<_> = entries.iter().map(|e| (e.kind, e.target)).collect();
    assert_eq!(kinds, vec![(EntryKind::Cubin, 90), (EntryKind::Ptx, 90)]);
    // nvcc 13 compresses the PTX with zstd: inflated, it is PTX text
    let ptx = entries[1].contents().expect("PTX inflates");
    let ptx = String::from_utf8_lossy(&ptx);
    assert!(ptx.contains(".target sm_90") && ptx.contains(".entry f32_ops"), "PTX: {}", &ptx[..ptx.len().min(200)]);
    let (functions, unreadable) = fatbin::functions_for_target(&fb, 90).expect("functions");
    assert_eq!(unreadable, 0);
    let found: BTreeMap<String, Vec<u8>> = functions.into_iter().map(|f| (f.name, f.code)).collect();
    let oracle = cuobjdump_code();
    assert_eq!(found.keys().collect::<Vec<_>>(), oracle.keys().collect::<Vec<_>>(), "the same functions");
    for (name, code) in &oracle {
        assert!(found[name] == *code, "{name}: code differs from cuobjdump's encodings");
    }
    assert!(fatbin::functions_for_target(&fb, 80).expect("no sm_80").0.is_empty());
}

#[test]
fn a_host_file_gives_its_fat_binary_and_a_plan() {
    let fb = fatbin_fixture();
    let elf = host_elf(&fb);
    assert_eq!(fatbin::host_fatbin(&elf).expect("ELF"), Some(&fb[..]));
    assert_eq!(prefill::sole_target(&elf), Some(90));
    let all = prefill::plan(&elf, 90, |_| true, 100).expect("plan");
    assert_eq!(all.functions.len(), 8);
    assert_eq!((all.left_out, all.unreadable), (0, 0));
    // the kernel filter and the limit
    let f32_only = prefill::plan(&elf, 90, |n| n.starts_with("f32"), 100).expect("plan");
    let names: Vec<_> = f32_only.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["f32_tanh", "f32_ops"]);
    assert_eq!(f32_only.left_out, 6);
    assert_eq!(prefill::plan(&elf, 90, |_| true, 3).expect("plan").functions.len(), 3);
    // the same cubin twice (two containers): each function once
    let mut twice = fb.clone();
    twice.extend_from_slice(&fb);
    let p = prefill::plan(&host_elf(&twice), 90, |_| true, 100).expect("plan");
    assert_eq!((p.functions.len(), p.left_out), (8, 8));
    // a host file without device code
    let plain = host_elf(&[]);
    assert!(prefill::plan(&plain, 90, |_| true, 100).expect("plan").functions.is_empty());
    assert_eq!(prefill::sole_target(&plain), None);
}

/// A stand-in disassembler shaped like `nvdisasm -b`: marks each run,
/// takes `delay` seconds, prints a header of its options and one line per
/// 16-byte instruction, its address comment and its bytes (as `OP <hex>`,
/// or `BRA 0x0`, a branch to the start of the listing, when `op` says so).
fn fake_disassembler_with(dir: &Path, delay: &str, op: &str) -> (PathBuf, PathBuf) {
    let marks = dir.join("marks");
    let real = dir.join("nvdisasm");
    let print = if op == "BRA" { "BRA 0x0" } else { "OP %s" };
    std::fs::write(
        &real,
        format!(
            "#!/bin/sh\necho run >> '{}'\nsleep {delay}\nprintf '\\t.header %s %s\\n' \"$1\" \"$2\"\n\
             od -An -v -tx1 -w16 \"$3\" | awk '{{ s = $0; gsub(/ /, \"\", s); \
             printf \"        /*%04x*/                   {print} ;\\n\", (NR - 1) * 16, s }}'\n",
            marks.display()
        ),
    )
    .expect("write");
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    (real, marks)
}

fn fake_disassembler(dir: &Path, delay: &str) -> (PathBuf, PathBuf) {
    fake_disassembler_with(dir, delay, "OP")
}

/// The stand-in's output for `code` alone.
fn alone(real: &Path, dir: &Path, code: &[u8]) -> String {
    let file = dir.join("alone");
    std::fs::write(&file, code).expect("write");
    let out = Command::new(real).args(["-b", "SM90"]).arg(&file).output().expect("runs");
    String::from_utf8(out.stdout).expect("text")
}

fn runs(marks: &Path) -> usize {
    std::fs::read_to_string(marks).map_or(0, |t| t.lines().count())
}

/// NVBit's call: the function's bytes in a file of its own, `-b SM90`.
fn nvbit_call(wrapper: &Path, dir: &Path, code: &[u8]) -> String {
    let file = dir.join(format!("nvbit_code_{}", code.len()));
    std::fs::write(&file, code).expect("write");
    let out = Command::new(wrapper).args(prefill::nvbit_disassembler_args(90)).arg(&file).output().expect("runs");
    assert!(out.status.success());
    String::from_utf8(out.stdout).expect("text")
}

#[test]
fn a_prefill_answers_nvbits_later_calls() {
    let dir = temp("answers");
    let (real, marks) = fake_disassembler(&dir, "0");
    let cache = DisasmCache { dir: dir.join("cache"), real: real.clone() };
    let wrapper = cache.write_wrapper().expect("wrapper");
    let plan = prefill::plan(&host_elf(&fatbin_fixture()), 90, |_| true, 100).expect("plan");
    let out = prefill::run(&cache, &wrapper, &plan, 4, &dir.join("scratch"), &prefill::PROGRESS);
    assert_eq!((out.disassembled, out.failed, out.batches, out.alone), (8, 0, 1, 0), "{out:?}");
    assert_eq!(runs(&marks), 1, "one disassembler run for the 8 functions");
    assert!(!dir.join("scratch").exists(), "the scratch folder is removed");
    let expected: Vec<String> = plan.functions.iter().map(|f| alone(&real, &dir, &f.code)).collect();
    let before = runs(&marks);
    for (f, expected) in plan.functions.iter().zip(&expected) {
        assert_eq!(&nvbit_call(&wrapper, &dir, &f.code), expected, "{}: the function's own listing", f.name);
    }
    assert_eq!(runs(&marks), before, "every NVBit call came from the cache");
    // bytes the prefill did not see still reach the disassembler
    nvbit_call(&wrapper, &dir, &[7u8; 32]);
    assert_eq!(runs(&marks), before + 1);
    // a second prefill finds everything cached
    let again = prefill::run(&cache, &wrapper, &plan, 4, &dir.join("scratch"), &prefill::PROGRESS);
    assert_eq!((again.disassembled, again.batches, again.alone), (8, 0, 0), "{again:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Functions the cut refuses (here: branches leaving their function) are
/// disassembled alone, and still answered exactly.
#[test]
fn functions_the_cut_refuses_are_disassembled_alone() {
    let dir = temp("refused");
    let (real, marks) = fake_disassembler_with(&dir, "0", "BRA");
    let cache = DisasmCache { dir: dir.join("cache"), real: real.clone() };
    let wrapper = cache.write_wrapper().expect("wrapper");
    let plan = prefill::plan(&host_elf(&fatbin_fixture()), 90, |_| true, 100).expect("plan");
    let out = prefill::run(&cache, &wrapper, &plan, 2, &dir.join("scratch"), &prefill::PROGRESS);
    // the first function's branches stay inside it; the others' do not
    assert_eq!((out.disassembled, out.failed, out.batches, out.alone), (8, 0, 1, 7), "{out:?}");
    assert_eq!(runs(&marks), 8);
    for f in &plan.functions {
        let expected = alone(&real, &dir, &f.code);
        assert_eq!(nvbit_call(&wrapper, &dir, &f.code), expected, "{}", f.name);
    }
    assert_eq!(runs(&marks), 8 + 8, "the calls came from the cache (and `alone` ran 8 times)");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_call_for_bytes_in_flight_waits_for_that_run() {
    let dir = temp("inflight");
    let (real, marks) = fake_disassembler(&dir, "1");
    let cache = DisasmCache { dir: dir.join("cache"), real };
    let wrapper = cache.write_wrapper().expect("wrapper");
    // one function alone (through the wrapper), then all of them (batched)
    for (wanted, expected_runs) in [("f64_ops", 1), ("", 2)] {
        let plan =
            prefill::plan(&host_elf(&fatbin_fixture()), 90, |n| wanted.is_empty() || n == wanted, 100).expect("plan");
        let code = plan.functions.last().expect("a function").code.clone();
        let (c, w, d) = (cache.clone(), wrapper.clone(), dir.clone());
        let prefill =
            std::thread::spawn(move || prefill::run(&c, &w, &plan, 1, &d.join("scratch"), &prefill::PROGRESS));
        // NVBit asks while the prefill's disassembler is still running
        std::thread::sleep(std::time::Duration::from_millis(300));
        let text = nvbit_call(&wrapper, &dir, &code);
        let out = prefill.join().expect("prefill");
        assert_eq!(out.failed, 0, "{out:?}");
        assert!(text.starts_with("\t.header -b SM90\n") && text.contains("/*0000*/"), "{text}");
        assert_eq!(runs(&marks), expected_runs, "one disassembler run for the prefill and NVBit's call");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_stale_busy_mark_does_not_block_calls() {
    let dir = temp("stale");
    let (real, marks) = fake_disassembler(&dir, "0");
    let cache = dir.join("cache");
    let wrapper = DisasmCache { dir: cache.clone(), real }.write_wrapper().expect("wrapper");
    // a call that was killed left its mark for these bytes two minutes ago
    let first = nvbit_call(&wrapper, &dir, &[1u8; 16]);
    let key = std::fs::read_dir(&cache)
        .expect("cache")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.len() == 64)
        .expect("an entry");
    std::fs::remove_file(cache.join(&key)).expect("forget the answer");
    let busy = cache.join(format!(".{key}.busy"));
    std::fs::create_dir(&busy).expect("mark");
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(120);
    std::fs::File::open(&busy).and_then(|f| f.set_modified(old)).expect("age the mark");
    let t0 = std::time::Instant::now();
    assert_eq!(nvbit_call(&wrapper, &dir, &[1u8; 16]), first);
    assert!(t0.elapsed().as_secs() < 10, "the stale mark was not waited on");
    assert_eq!(runs(&marks), 2);
    assert!(!busy.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A host file on disk whose fat binary is `containers` copies of the
/// fixture's, 8 bytes of zero padding between them (as the linker pads).
fn library_file(dir: &Path, name: &str, containers: usize) -> PathBuf {
    let fb = fatbin_fixture();
    let mut section = Vec::new();
    for _ in 0..containers {
        section.extend_from_slice(&fb);
        section.extend_from_slice(&[0u8; 8]);
    }
    let path = dir.join(name);
    std::fs::write(&path, host_elf(&section)).expect("write library");
    path
}

#[test]
fn libraries_are_read_container_by_container_within_the_limits() {
    use std::collections::HashSet;
    let dir = temp("libraries");
    let fb_len = fatbin_fixture().len() as u64;
    let a = library_file(&dir, "liba.so", 2);
    let b = library_file(&dir, "libb.so", 1);
    let none = dir.join("plain.so");
    std::fs::write(&none, host_elf(&[])).expect("write");
    let files = [none, a.clone(), b.clone()];
    let limits = prefill::PrefillLimits::DEFAULT;
    // everything: the 8 functions once; the copies are repeats
    let p = prefill::libraries::plan(&files, 90, |_| true, &limits, 100, &mut HashSet::new());
    assert_eq!((p.functions.len(), p.functions_left_out, p.libraries), (8, 16, 2));
    assert_eq!((p.bytes_left_out, p.libraries_left_out, p.unreadable), (0, 0, 0));
    // code the program already planned is not planned again
    let mut seen: HashSet<Vec<u8>> = p.functions[..3].iter().map(|f| f.code.clone()).collect();
    let q = prefill::libraries::plan(&files, 90, |_| true, &limits, 100, &mut seen);
    assert_eq!(q.functions.len(), 5);
    // the function limit stops the reading: what is left is counted
    let q = prefill::libraries::plan(&files, 90, |_| true, &limits, 2, &mut HashSet::new());
    assert_eq!(q.functions.len(), 2);
    assert!(q.bytes_left_out >= fb_len, "the second copy and libb were not read: {}", q.bytes_left_out);
    // one library's byte limit: only the first container of liba is read
    let one = prefill::PrefillLimits { library_fatbin_bytes: fb_len + 8, ..limits };
    let q = prefill::libraries::plan(std::slice::from_ref(&a), 90, |_| true, &one, 100, &mut HashSet::new());
    assert_eq!((q.functions.len(), q.functions_left_out), (8, 0));
    assert_eq!(q.bytes_left_out, fb_len + 8, "the second container");
    // a limit on libraries: the ones after it are counted, not read
    let first = prefill::PrefillLimits { libraries: 1, ..limits };
    let q = prefill::libraries::plan(&[a, b], 90, |_| true, &first, 100, &mut HashSet::new());
    assert_eq!((q.libraries, q.libraries_left_out), (1, 1));
    assert_eq!(q.bytes_left_out, fb_len + 8);
    // another target: nothing
    let q = prefill::libraries::plan(&files, 80, |_| true, &limits, 100, &mut HashSet::new());
    assert!(q.functions.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

static TARGET_90: prefill::DeviceTarget = prefill::DeviceTarget::new();

/// A prefill of everything in `sources` within the default limits, for
/// an sm_90 device.
fn prefill_everything(sources: &prefill::Sources<'_>, cache: &DisasmCache, wrapper: &Path) -> Option<String> {
    prefill::prefill_files(sources, cache, wrapper, &prefill::PrefillLimits::DEFAULT, &TARGET_90, |_| true, |_, _| {})
}

#[test]
fn a_program_without_device_code_prefills_its_libraries() {
    let dir = temp("programlibs");
    let (real, marks) = fake_disassembler(&dir, "0");
    let cache = DisasmCache { dir: dir.join("cache"), real };
    let wrapper = cache.write_wrapper().expect("wrapper");
    // a program without device code (a Python interpreter), one library
    let exe = dir.join("python");
    std::fs::write(&exe, host_elf(&[])).expect("write");
    let lib = library_file(&dir, "libtorch_cuda.so", 1);
    TARGET_90.tell(90);
    let libraries = [lib];
    let sources = prefill::Sources { exe: &exe, libraries: prefill::Libraries::Listed(&libraries) };
    let line = prefill_everything(&sources, &cache, &wrapper).expect("a line");
    assert!(
        line.contains("disassembled 8 sm_90 functions")
            && line.contains("(1 batched disassembler runs, 0 functions alone;")
            && line.contains("0 of the program, 8 of 1 libraries"),
        "{line}"
    );
    assert_eq!(runs(&marks), 1);
    let plan = prefill::plan(&host_elf(&fatbin_fixture()), 90, |_| true, 100).expect("plan");
    for f in &plan.functions {
        nvbit_call(&wrapper, &dir, &f.code);
    }
    assert_eq!(runs(&marks), 1, "NVBit's calls for the library's functions came from the cache");
    // nothing anywhere: no line
    let sources = prefill::Sources { exe: &exe, libraries: prefill::Libraries::Listed(&[]) };
    assert_eq!(prefill_everything(&sources, &cache, &wrapper), None);
    // the libraries mapped into this test process: none with device code
    let sources = prefill::Sources { exe: &exe, libraries: prefill::Libraries::Mapped };
    assert_eq!(prefill_everything(&sources, &cache, &wrapper), None);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn concurrent_prefills_share_one_cache_safely() {
    // several ranks of a parallel job on one node prefill the same code
    let dir = temp("ranks");
    let (real, marks) = fake_disassembler(&dir, "0.05");
    let cache = dir.join("cache");
    let disasm = DisasmCache { dir: cache.clone(), real: real.clone() };
    let wrapper = disasm.write_wrapper().expect("wrapper");
    let plan = prefill::plan(&host_elf(&fatbin_fixture()), 90, |_| true, 100).expect("plan");
    let outcomes: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|rank| {
                let (c, w, p, d) = (&disasm, &wrapper, &plan, &dir);
                s.spawn(move || prefill::run(c, w, p, 4, &d.join(format!("scratch-{rank}")), &prefill::PROGRESS))
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("rank")).collect()
    });
    assert!(outcomes.iter().all(|o| (o.disassembled, o.failed) == (8, 0)), "{outcomes:?}");
    // each function is claimed by one rank: at most one run per rank (a
    // batch, or a single function a rank claimed alone)
    assert!((1..=4).contains(&runs(&marks)), "{} runs", runs(&marks));
    // every answer is whole: the disassembler's own output for the bytes
    let direct = dir.join("direct");
    for f in &plan.functions {
        std::fs::write(&direct, &f.code).expect("write");
        let out = Command::new(&real).args(["-b", "SM90"]).arg(&direct).output().expect("runs");
        assert_eq!(nvbit_call(&wrapper, &dir, &f.code).as_bytes(), &out.stdout[..], "{}", f.name);
    }
    // no temporary files or marks left in the cache
    let stray: Vec<String> = std::fs::read_dir(&cache)
        .expect("cache")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(stray.is_empty(), "{stray:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kernel launched before its functions are cached: they are
/// disassembled in the background (the launch is told to wait), filed
/// under NVBit's keys, and the kernel is ready once they are; cached or
/// unknown functions are ready at once.
#[test]
fn functions_missing_at_a_first_launch_are_disassembled_in_the_background() {
    use prefill::at_launch::{AtLaunch, Readiness};
    static PROGRESS: prefill::PrefillProgress = prefill::PrefillProgress::new();
    let dir = temp("at-launch");
    let (real, marks) = fake_disassembler(&dir, "0.3");
    let cache = DisasmCache { dir: dir.join("cache"), real: real.clone() };
    let wrapper = cache.write_wrapper().expect("wrapper");
    let fb = fatbin_fixture();
    let cubin = fatbin::entries(&fb).expect("entries")[0].contents().expect("cubin").into_owned();
    let module = fatbin::cubin_functions(&cubin).expect("functions");
    let code = |name: &str| module.iter().find(|f| f.name == name).expect(name).code.clone();
    let at = AtLaunch::new(cache.clone(), wrapper.clone(), 90, &PROGRESS);
    let kernel = ["f32_ops", "f64_ops"];
    assert_eq!(at.prepare(&module, &kernel, |_| false), Ok(Readiness::Preparing { started: 2 }));
    assert!(!at.ready(&kernel), "still being disassembled");
    // a second first launch that shares a pending function waits for it too
    assert_eq!(at.prepare(&module, &["f64_ops"], |_| false), Ok(Readiness::Preparing { started: 0 }));
    let t0 = std::time::Instant::now();
    while !at.ready(&kernel) {
        assert!(t0.elapsed().as_secs() < 20, "the background run ends");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(runs(&marks), 1, "one batched run for the kernel's two functions");
    assert_eq!(PROGRESS.answered(), 2);
    for name in kernel {
        let expected = alone(&real, &dir, &code(name));
        let before = runs(&marks);
        assert_eq!(nvbit_call(&wrapper, &dir, &code(name)), expected, "{name}: the function's own listing");
        assert_eq!(runs(&marks), before, "{name}: NVBit's call came from the cache");
    }
    // a later run (a new process) finds them cached: ready at once
    let later = AtLaunch::new(cache.clone(), wrapper.clone(), 90, &PROGRESS);
    let before = runs(&marks);
    assert_eq!(later.prepare(&module, &kernel, |_| false), Ok(Readiness::Ready));
    // a function the module does not name is left to NVBit
    assert_eq!(later.prepare(&module, &["not_in_this_module"], |_| false), Ok(Readiness::Ready));
    assert_eq!(runs(&marks), before);
    // functions a prefill of the program answers are left to NVBit's call
    let fresh =
        AtLaunch::new(DisasmCache { dir: dir.join("cache2"), real: real.clone() }, wrapper.clone(), 90, &PROGRESS);
    assert_eq!(fresh.prepare(&module, &kernel, |n| kernel.contains(&n)), Ok(Readiness::Ready));
    assert_eq!(runs(&marks), before);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The libraries' index finds a function's code in the fat binary of the
/// library that holds it (read again from its container), leaves the
/// program's own file out, and finds nothing for unknown names.
#[test]
fn the_library_index_finds_functions_by_name() {
    use prefill::library_index::LibraryIndex;
    let dir = temp("index");
    let fb = fatbin_fixture();
    let lib = dir.join("libops.so");
    std::fs::write(&lib, host_elf(&fb)).expect("write");
    let exe = dir.join("program");
    std::fs::write(&exe, host_elf(&fb)).expect("write");
    let cubin = fatbin::entries(&fb).expect("entries")[0].contents().expect("cubin").into_owned();
    let module = fatbin::cubin_functions(&cubin).expect("functions");
    let index = LibraryIndex::new(90, exe.clone());
    index.update(std::slice::from_ref(&exe));
    assert!(index.is_empty(), "the program's own file is left out");
    index.update(&[lib.clone(), lib.clone()]);
    assert_eq!(index.len(), module.len());
    let found = index.functions(&["f64_ops", "f32_ops", "nowhere"]);
    let mut names: Vec<&str> = found.iter().map(|f| f.name.as_str()).collect();
    names.sort_unstable();
    assert_eq!(names, ["f32_ops", "f64_ops"]);
    for f in &found {
        assert!(module.iter().any(|m| m.name == f.name && m.code == f.code), "{}: the cubin's code", f.name);
    }
    assert!(LibraryIndex::new(80, exe).functions(&["f32_ops"]).is_empty(), "another target: nothing");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_programs_functions_are_shown_with_the_listings_nvbit_will_get() {
    let dir = temp("listed");
    let (real, _marks) = fake_disassembler(&dir, "0");
    let cache = DisasmCache { dir: dir.join("cache"), real };
    let wrapper = cache.write_wrapper().expect("wrapper");
    let exe = dir.join("program");
    std::fs::write(&exe, host_elf(&fatbin_fixture())).expect("write");
    let lib = library_file(&dir, "libcublas.so", 1);
    let libraries = [lib];
    TARGET_90.tell(90);
    let sources = prefill::Sources { exe: &exe, libraries: prefill::Libraries::Listed(&libraries) };
    let listed = std::sync::Mutex::new(Vec::new());
    prefill::prefill_files(
        &sources,
        &cache,
        &wrapper,
        &prefill::PrefillLimits::DEFAULT,
        &TARGET_90,
        |_| true,
        |name, listing| listed.lock().expect("lock").push((name.to_string(), listing.to_string())),
    )
    .expect("a line");
    let listed = listed.into_inner().expect("lock");
    let plan = prefill::plan(&host_elf(&fatbin_fixture()), 90, |_| true, 100).expect("plan");
    assert_eq!(listed.len(), plan.functions.len(), "the program's functions, not the library's");
    for (f, (name, listing)) in plan.functions.iter().zip(&listed) {
        assert_eq!(&f.name, name);
        assert_eq!(listing, &nvbit_call(&wrapper, &dir, &f.code), "{name}: NVBit's answer");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The first container of the fixture, as a program hands it to the
/// driver from memory.
fn first_container(fb: &[u8]) -> &[u8] {
    &fb[..fatbin::container_size(fb).expect("a container header") as usize]
}

#[test]
fn module_images_loaded_from_memory_give_the_code_cuobjdump_printed() {
    use xfpx_nvidia::module_image::{self, ImageKind};
    let fb = fatbin_fixture();
    let container = first_container(&fb);
    assert_eq!(module_image::kind(&fb), ImageKind::Container);
    // what follows an image in memory is not part of it
    let mut memory = container.to_vec();
    memory.extend_from_slice(&[0xEE; 512]);
    assert_eq!(module_image::extent_in(&memory), Some(container.len() as u64));
    let oracle = cuobjdump_code();
    let found: BTreeMap<String, Vec<u8>> =
        module_image::functions(container, 90).into_iter().map(|f| (f.name, f.code)).collect();
    assert_eq!(found, oracle, "the container's sm_90 functions");
    assert!(module_image::functions(container, 80).is_empty(), "no sm_80 cubin");
    // the sm_90 cubin alone, as cuModuleLoadData takes it
    let entries = fatbin::entries(&fb).expect("entries");
    let cubin = entries.iter().find(|e| e.kind == EntryKind::Cubin).expect("a cubin").contents().expect("cubin");
    let size = module_image::extent_in(&cubin).expect("an ELF extent") as usize;
    assert!(size <= cubin.len() && size + 64 > cubin.len(), "{size} of {}", cubin.len());
    let found: BTreeMap<String, Vec<u8>> =
        module_image::functions(&cubin[..size], 90).into_iter().map(|f| (f.name, f.code)).collect();
    assert_eq!(found, oracle, "the bare cubin's functions");
}

#[test]
fn the_library_index_finds_functions_of_images_loaded_from_memory() {
    use xfpx_nvidia::prefill::library_index::{self, LibraryIndex};
    let fb = fatbin_fixture();
    let index = LibraryIndex::new(90, "/nonexistent/program".into());
    assert!(index.functions(&["f32_ops"]).is_empty(), "nothing indexed yet");
    index.add_image(first_container(&fb).to_vec());
    index.add_image(b"// PTX text: nothing to read".to_vec());
    let got = index.functions(&["f32_ops", "no_such_kernel", "f64_ops"]);
    let oracle = cuobjdump_code();
    let names: Vec<&str> = got.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["f32_ops", "f64_ops"]);
    assert!(got.iter().all(|f| oracle[&f.name] == f.code));
    assert_eq!(index.images(), (2, oracle.len()));
    // many images and no look-up: read once UNREAD_IMAGES wait
    let quiet = LibraryIndex::new(90, "/nonexistent/program".into());
    for _ in 0..library_index::UNREAD_IMAGES {
        quiet.add_image(first_container(&fb).to_vec());
    }
    assert_eq!(quiet.images(), (library_index::UNREAD_IMAGES, library_index::UNREAD_IMAGES * oracle.len()));
}
