//! Disassembly ahead of NVBit: a program's own functions, then those of
//! the shared libraries it has mapped by then ([`libraries`]),
//! are put through the disassembler cache ([`crate::disasm_cache`]) in
//! parallel, in the background, while the program starts, so that NVBit's
//! one-at-a-time disassembly at each kernel's first launch finds them
//! ready. [`PrefillLimits`] bounds the work.
//!
//! NVBit 1.7.7.1 disassembles a function by running the disassembler as
//! `nvdisasm -b SM<nn> FILE`, FILE holding exactly the bytes of the
//! function's `.text.<name>` section in the program's cubin (checked on
//! the H100 for every function of two benchmark programs); each run costs
//! 0.4-0.5 s, nearly all of it the disassembler starting. The prefill
//! files each function's answer under the key NVBit's call will look up.
//! A function whose bytes differ at load time (relocated calls, code
//! compiled just in time from PTX) simply finds nothing: the cache is keyed
//! by content, so a prefill can make a call faster, never answer it wrong.
//!
//! Functions go through the disassembler in batches ([`batch`]): one run
//! over many functions laid end to end, its listing cut into each
//! function's own ([`crate::disasm_split`], checked byte for byte against
//! per-function runs on the H100) and filed under NVBit's key; a function
//! the cut refuses is disassembled alone through the wrapper.

pub mod at_launch;
pub mod batch;
pub mod libraries;
pub mod library_index;

use crate::disasm_cache::DisasmCache;
use crate::fatbin::{self, DeviceFunction};
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// Environment variable (read into the run configuration): `0` turns the
/// prefill off, a number bounds how many functions one run disassembles
/// ahead (default [`DEFAULT_LIMIT`]).
pub const PREFILL_ENV: &str = "XFPX_PREFILL";
/// Functions disassembled ahead per run unless the run configuration says.
pub const DEFAULT_LIMIT: usize = xfpx_common::config::DEFAULT_DISASSEMBLE_AHEAD;

/// Every bound on one run's disassembly ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrefillLimits {
    /// Functions disassembled ahead, the program's first (the run
    /// configuration's `tools.disassemble_ahead`, `XFPX_PREFILL`).
    pub functions: usize,
    /// Largest program file read (it is read whole).
    pub program_bytes: u64,
    /// Libraries with device code looked at, in mapping order.
    pub libraries: usize,
    /// Bytes of one library's fat binary read.
    pub library_fatbin_bytes: u64,
    /// Bytes of all the libraries' fat binaries read together.
    pub libraries_fatbin_bytes: u64,
}

impl PrefillLimits {
    pub const DEFAULT: PrefillLimits = PrefillLimits {
        functions: DEFAULT_LIMIT,
        program_bytes: 1 << 30,
        libraries: 32,
        library_fatbin_bytes: 256 << 20,
        libraries_fatbin_bytes: 1 << 30,
    };

    /// The default limits with the run configuration's function limit.
    pub fn with_functions(functions: usize) -> PrefillLimits {
        PrefillLimits { functions, ..PrefillLimits::DEFAULT }
    }
}

/// The arguments NVBit gives the disassembler before the file, for a
/// device of SASS target `sm` (90 for sm_90).
pub fn nvbit_disassembler_args(sm: u32) -> [String; 2] {
    ["-b".to_string(), format!("SM{sm}")]
}

/// The SASS target number of a target name: `sm_90` -> 90, `sm_90a` -> 90.
pub fn target_number(target: &str) -> Option<u32> {
    let digits: String = target.strip_prefix("sm_")?.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// What to disassemble ahead, in the order the program's file holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefillPlan {
    pub sm: u32,
    pub functions: Vec<DeviceFunction>,
    /// Functions left out: over the limit, repeated, or not wanted.
    pub left_out: usize,
    /// Cubins of the target that could not be read.
    pub unreadable: usize,
}

/// The SASS target to prefill for, when the program's file decides it
/// alone: the fat binary holds cubins of exactly one target.
pub fn sole_target(host_elf: &[u8]) -> Option<u32> {
    sole_cubin_target(fatbin::host_fatbin(host_elf).ok()??)
}

fn sole_cubin_target(section: &[u8]) -> Option<u32> {
    match fatbin::cubin_targets(section).ok()?.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

/// The functions of a host ELF file's cubins for target `sm` that
/// `wanted` admits (by mangled name), without repeats, at most `limit`.
/// A file without device code gives an empty plan.
pub fn plan(host_elf: &[u8], sm: u32, wanted: impl Fn(&str) -> bool, limit: usize) -> Result<PrefillPlan, String> {
    match fatbin::host_fatbin(host_elf) {
        Ok(Some(section)) => plan_fatbin(section, sm, wanted, limit),
        Ok(None) => Ok(PrefillPlan { sm, functions: Vec::new(), left_out: 0, unreadable: 0 }),
        Err(e) => Err(e.to_string()),
    }
}

/// [`plan`] for the fat binary itself (a `.nv_fatbin` section).
fn plan_fatbin(section: &[u8], sm: u32, wanted: impl Fn(&str) -> bool, limit: usize) -> Result<PrefillPlan, String> {
    let (all, unreadable) = fatbin::functions_for_target(section, sm).map_err(|e| e.to_string())?;
    let total = all.len();
    let mut seen = HashSet::new();
    let functions: Vec<DeviceFunction> =
        all.into_iter().filter(|f| wanted(&f.name) && seen.insert(f.code.clone())).take(limit).collect();
    Ok(PrefillPlan { sm, left_out: total - functions.len(), functions, unreadable })
}

/// How far this process's background prefill has come: a prefill cut
/// short by the program's end says so ([`PrefillProgress::unfinished_note`])
/// instead of saying nothing.
#[derive(Debug, Default)]
pub struct PrefillProgress {
    started: AtomicBool,
    finished: AtomicBool,
    /// Functions planned and answered so far (by [`run`]).
    planned: AtomicUsize,
    answered: AtomicUsize,
}

impl PrefillProgress {
    pub const fn new() -> PrefillProgress {
        PrefillProgress {
            started: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            planned: AtomicUsize::new(0),
            answered: AtomicUsize::new(0),
        }
    }

    /// Functions answered so far (from the cache, or disassembled).
    pub fn answered(&self) -> usize {
        self.answered.load(Ordering::Acquire)
    }

    /// The note for a prefill that started and has not finished.
    pub fn unfinished_note(&self) -> Option<String> {
        if !self.started.load(Ordering::Acquire) || self.finished.load(Ordering::Acquire) {
            return None;
        }
        Some(match self.planned.load(Ordering::Acquire) {
            0 => "the disassembly ahead was still choosing its functions (reading the device code of the program \
                  and its libraries) when the program ended"
                .to_string(),
            planned => format!(
                "the disassembly ahead was still running when the program ended: {} of {planned} functions done \
                 (a later run finds them cached)",
                self.answered.load(Ordering::Acquire)
            ),
        })
    }
}

/// This process's background prefill ([`start_background`]).
pub static PROGRESS: PrefillProgress = PrefillProgress::new();

/// Names of the program's own functions this process's prefill puts
/// through the cache: NVBit's call for one waits for that answer, so its
/// first launch need not wait in the background ([`at_launch`]).
#[derive(Debug, Default)]
pub struct AheadNames(Mutex<BTreeSet<String>>);

impl AheadNames {
    pub const fn new() -> AheadNames {
        AheadNames(Mutex::new(BTreeSet::new()))
    }

    fn add(&self, names: impl Iterator<Item = String>) {
        if let Ok(mut g) = self.0.lock() {
            g.extend(names);
        }
    }

    pub fn contains(&self, name: &str) -> bool {
        self.0.lock().is_ok_and(|g| g.contains(name))
    }
}

/// The program's functions [`start_background`]'s prefill planned.
pub static AHEAD: AheadNames = AheadNames::new();

/// What a prefill did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PrefillOutcome {
    pub disassembled: usize,
    pub failed: usize,
    /// Runs of the disassembler over several functions at once.
    pub batches: usize,
    /// Functions put through the wrapper one at a time (refused by the
    /// cut, in progress elsewhere, or alone in their group).
    pub alone: usize,
    pub seconds: f64,
}

/// Put every planned function through `cache`, `jobs` groups at a time:
/// batched where they can be ([`batch`]), else through `wrapper` (the
/// cache's disassembler wrapper) as NVBit would call it; the code goes
/// through files in `scratch` (created, and removed after).
pub fn run(
    cache: &DisasmCache,
    wrapper: &Path,
    plan: &PrefillPlan,
    jobs: usize,
    scratch: &Path,
    progress: &PrefillProgress,
) -> PrefillOutcome {
    let t0 = Instant::now();
    if plan.functions.is_empty() {
        return PrefillOutcome::default();
    }
    if std::fs::create_dir_all(scratch).is_err() {
        return PrefillOutcome { failed: plan.functions.len(), ..PrefillOutcome::default() };
    }
    progress.planned.fetch_add(plan.functions.len(), Ordering::AcqRel);
    let groups = batch::groups(&plan.functions, plan.sm);
    let tag = cache.tag().ok();
    let next = AtomicUsize::new(0);
    let [done, failed, batches, alone] = [(); 4].map(|()| AtomicUsize::new(0));
    let args = nvbit_disassembler_args(plan.sm);
    std::thread::scope(|s| {
        for worker in 0..jobs.clamp(1, 64) {
            let (next, args, groups, tag, progress) = (&next, &args, &groups, &tag, progress);
            let (done, failed, batches, alone) = (&done, &failed, &batches, &alone);
            s.spawn(move || {
                let file = scratch.join(format!("code-{worker}"));
                while let Some(group) = groups.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let group: Vec<&DeviceFunction> = group.iter().map(|&i| &plan.functions[i]).collect();
                    let one_by_one = match tag {
                        Some(tag) if group.len() > 1 => {
                            let b = batch::run_group(cache, tag, args, &group, &file);
                            done.fetch_add(b.answered, Ordering::Relaxed);
                            progress.answered.fetch_add(b.answered, Ordering::AcqRel);
                            batches.fetch_add(usize::from(b.ran), Ordering::Relaxed);
                            b.alone
                        }
                        _ => group,
                    };
                    for f in one_by_one {
                        alone.fetch_add(1, Ordering::Relaxed);
                        let ok = std::fs::write(&file, &f.code).is_ok()
                            && std::process::Command::new(wrapper)
                                .args(args.iter())
                                .arg(&file)
                                .stdin(std::process::Stdio::null())
                                .stdout(std::process::Stdio::null())
                                .stderr(std::process::Stdio::null())
                                .status()
                                .is_ok_and(|st| st.success());
                        if ok {
                            progress.answered.fetch_add(1, Ordering::AcqRel);
                            done.fetch_add(1, Ordering::Relaxed)
                        } else {
                            failed.fetch_add(1, Ordering::Relaxed)
                        };
                    }
                }
                let _ = std::fs::remove_file(&file);
            });
        }
    });
    let _ = std::fs::remove_dir(scratch);
    PrefillOutcome {
        disassembled: done.into_inner(),
        failed: failed.into_inner(),
        batches: batches.into_inner(),
        alone: alone.into_inner(),
        seconds: t0.elapsed().as_secs_f64(),
    }
}

/// Parallel disassembler runs for a machine with `cpus` processors: half
/// of them, at least one, at most eight (the program keeps the rest).
pub fn jobs_for(cpus: usize) -> usize {
    (cpus / 2).clamp(1, 8)
}

/// A private scratch folder for one process's prefill.
pub fn scratch_dir(base: &Path) -> PathBuf {
    base.join(format!(".prefill-{}", std::process::id()))
}

/// How long a prefill waits for the device's target when the program's
/// file holds cubins of several targets.
pub const TARGET_WAIT: Duration = Duration::from_secs(30);

/// The device's SASS target, told by the tool once it attaches to a GPU;
/// a prefill that needs it waits here.
#[derive(Debug, Default)]
pub struct DeviceTarget {
    sm: Mutex<Option<u32>>,
    told: Condvar,
}

impl DeviceTarget {
    pub const fn new() -> DeviceTarget {
        DeviceTarget { sm: Mutex::new(None), told: Condvar::new() }
    }

    pub fn tell(&self, sm: u32) {
        if let Ok(mut g) = self.sm.lock() {
            *g = Some(sm);
            self.told.notify_all();
        }
    }

    /// The target once told, waiting at most `timeout`.
    pub fn wait(&self, timeout: Duration) -> Option<u32> {
        let g = self.sm.lock().ok()?;
        let (g, _) = self.told.wait_timeout_while(g, timeout, |sm| sm.is_none()).ok()?;
        *g
    }
}

/// Start a prefill of the program in `exe` (and, `with_libraries`, of the
/// libraries with device code mapped once the target is known) on a
/// background thread: the target is the
/// program file's sole one, else the device's (waiting for it); `wanted`
/// filters functions by mangled name; `listed` is shown each of the
/// program's own functions with the listing it got (see [`prefill_files`]);
/// `done` receives one line for the user when it ends (nothing when there
/// was nothing to do).
#[allow(clippy::too_many_arguments)]
pub fn start_background(
    exe: PathBuf,
    with_libraries: bool,
    cache: DisasmCache,
    wrapper: PathBuf,
    limits: PrefillLimits,
    target: &'static DeviceTarget,
    wanted: impl Fn(&str) -> bool + Send + 'static,
    listed: impl Fn(&str, &str) + Send + 'static,
    done: impl FnOnce(String) + Send + 'static,
) -> std::io::Result<()> {
    PROGRESS.started.store(true, Ordering::Release);
    let spawned = std::thread::Builder::new().name("xfpx-prefill".into()).spawn(move || {
        let libraries = if with_libraries { Libraries::Mapped } else { Libraries::Listed(&[]) };
        let sources = Sources { exe: &exe, libraries };
        let line = prefill_files(&sources, &cache, &wrapper, &limits, target, wanted, listed);
        PROGRESS.finished.store(true, Ordering::Release);
        if let Some(line) = line {
            done(line);
        }
    });
    if spawned.is_err() {
        PROGRESS.finished.store(true, Ordering::Release);
    }
    spawned.map(|_| ())
}

/// The files a prefill reads: the program, then the libraries.
#[derive(Debug)]
pub struct Sources<'a> {
    pub exe: &'a Path,
    pub libraries: Libraries<'a>,
}

/// Which libraries a prefill reads.
#[derive(Debug)]
pub enum Libraries<'a> {
    /// These files.
    Listed(&'a [PathBuf]),
    /// The files with device code mapped into this process once the
    /// target is known (a program that loads its libraries before its
    /// first CUDA call has them all mapped by then), the program left out.
    Mapped,
}

impl Libraries<'_> {
    fn files(&self, exe: &Path) -> Vec<PathBuf> {
        match self {
            Libraries::Listed(files) => files.to_vec(),
            Libraries::Mapped => {
                let exe = std::fs::canonicalize(exe).unwrap_or_else(|_| exe.to_path_buf());
                crate::mapped::files_with_device_code(u64::MAX)
                    .into_iter()
                    .filter(|p| std::fs::canonicalize(p).map_or(true, |c| c != exe))
                    .collect()
            }
        }
    }
}

/// Plan and run a prefill of `sources`; the line for the user (`None`
/// when there was nothing to do). Once the functions are through the
/// cache, `listed` is shown each of the program's own functions (mangled
/// name) with the listing the cache holds for it, the one NVBit's call
/// will be answered with (the libraries' functions are many, and few of
/// them are launched).
pub fn prefill_files(
    sources: &Sources<'_>,
    cache: &DisasmCache,
    wrapper: &Path,
    limits: &PrefillLimits,
    target: &DeviceTarget,
    wanted: impl Fn(&str) -> bool,
    listed: impl Fn(&str, &str),
) -> Option<String> {
    let exe = sources.exe;
    let bytes = std::fs::metadata(exe)
        .is_ok_and(|m| m.len() <= limits.program_bytes)
        .then(|| std::fs::read(exe).ok())
        .flatten()
        .unwrap_or_default();
    // no device code, or not an ELF file: only the libraries
    let section = fatbin::host_fatbin(&bytes).ok().flatten();
    if section.is_none() && matches!(sources.libraries, Libraries::Listed([])) {
        return None;
    }
    let sm = section.and_then(sole_cubin_target).or_else(|| target.wait(TARGET_WAIT))?;
    let mut notes = Vec::new();
    let mut plan = match section.map(|s| plan_fatbin(s, sm, &wanted, limits.functions)) {
        Some(Ok(p)) => p,
        Some(Err(e)) => {
            notes.push(format!("the program's device code was not read: {e}"));
            PrefillPlan { sm, functions: Vec::new(), left_out: 0, unreadable: 0 }
        }
        None => PrefillPlan { sm, functions: Vec::new(), left_out: 0, unreadable: 0 },
    };
    drop(bytes);
    AHEAD.add(plan.functions.iter().map(|f| f.name.clone()));
    let own = plan.functions.len();
    let mut seen: HashSet<Vec<u8>> = plan.functions.iter().map(|f| f.code.clone()).collect();
    let room = limits.functions.saturating_sub(own);
    let files = sources.libraries.files(exe);
    let libs = libraries::plan(&files, sm, &wanted, limits, room, &mut seen);
    plan.functions.extend(libs.functions.iter().cloned());
    if plan.functions.is_empty() && libs == libraries::LibraryPlan::default() {
        return None;
    }
    let cpus = std::thread::available_parallelism().map_or(2, usize::from);
    let jobs = jobs_for(cpus);
    let out = run(cache, wrapper, &plan, jobs, &scratch_dir(&std::env::temp_dir()), &PROGRESS);
    if let Ok(tag) = cache.tag() {
        let args = nvbit_disassembler_args(sm);
        for f in &plan.functions[..own] {
            if let Some(listing) = cache.answer(&DisasmCache::key(&tag, &args, &f.code)) {
                listed(&f.name, &listing);
            }
        }
    }
    let mut line = format!(
        "disassembled {} sm_{sm} functions ahead of their first launch in {:.2} s ({} batched disassembler runs, \
         {} functions alone; {jobs} at a time): {own} of the program, {} of {} libraries",
        out.disassembled,
        out.seconds,
        out.batches,
        out.alone,
        libs.functions.len(),
        libs.libraries
    );
    if out.failed > 0 {
        line += &format!("; {} failed", out.failed);
    }
    let left = plan.left_out + libs.functions_left_out;
    if left > 0 {
        line += &format!(
            "; {left} functions left out (repeated, filtered or over the limit of {}, `{PREFILL_ENV}`)",
            limits.functions
        );
    }
    if libs.bytes_left_out > 0 || libs.libraries_left_out > 0 {
        line += &format!(
            "; {} MB of the libraries' device code not read ({} libraries not looked at; limits: {} libraries, \
             {} MB each, {} MB in all)",
            libs.bytes_left_out >> 20,
            libs.libraries_left_out,
            limits.libraries,
            limits.library_fatbin_bytes >> 20,
            limits.libraries_fatbin_bytes >> 20
        );
    }
    if plan.unreadable + libs.unreadable > 0 {
        line += &format!("; {} cubins unreadable (compressed)", plan.unreadable + libs.unreadable);
    }
    notes.push(line);
    Some(notes.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_and_limits_are_read() {
        assert_eq!(target_number("sm_90"), Some(90));
        assert_eq!(target_number("sm_90a"), Some(90));
        assert_eq!(target_number("sm_100"), Some(100));
        assert_eq!(target_number("compute_90"), None);
        assert_eq!(nvbit_disassembler_args(90), ["-b".to_string(), "SM90".to_string()]);
        assert_eq!(PrefillLimits::with_functions(12).functions, 12);
        assert_eq!(PrefillLimits::with_functions(12).libraries, PrefillLimits::DEFAULT.libraries);
        assert_eq!(jobs_for(1), 1);
        assert_eq!(jobs_for(16), 8);
        assert_eq!(jobs_for(64), 8);
    }

    #[test]
    fn a_prefill_cut_short_says_how_far_it_came() {
        let p = PrefillProgress::new();
        assert_eq!(p.unfinished_note(), None, "never started");
        p.started.store(true, Ordering::Release);
        assert!(p.unfinished_note().is_some_and(|n| n.contains("still choosing its functions")));
        p.planned.store(512, Ordering::Release);
        p.answered.store(114, Ordering::Release);
        assert!(
            p.unfinished_note().is_some_and(|n| n.contains("114 of 512 functions done")),
            "{:?}",
            p.unfinished_note()
        );
        // one line, words single-spaced
        assert!(p.unfinished_note().is_some_and(|n| !n.contains("  ") && !n.contains('\n')));
        p.finished.store(true, Ordering::Release);
        assert_eq!(p.unfinished_note(), None, "finished: its own note says what it did");
    }

    #[test]
    fn a_file_without_device_code_plans_nothing() {
        assert!(plan(b"not an elf", 90, |_| true, 10).is_err());
    }
}
