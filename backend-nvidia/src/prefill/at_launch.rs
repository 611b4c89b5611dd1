//! Disassembly at a kernel's first launch, in the background: when NVBit
//! would have to disassemble a kernel (or a function it calls) that the
//! cache does not hold, that launch runs uninstrumented (screened, as a
//! sampled-out launch is) while the functions go through the disassembler
//! on threads of their own; the kernel is instrumented from its first
//! launch after they are filed, and NVBit's calls then find them cached.
//! A program's first run then costs what a later run costs, but for the
//! precise checks of the launches that ran while the functions were
//! prepared (the summary counts them).
//!
//! The functions' bytes come from the kernel's module as NVBit dumps it,
//! or, for a library kernel whose module it cannot dump, from the
//! libraries' fat binaries ([`super::library_index`]), keyed as NVBit's calls are ([`DisasmCache::key`] over the `.text.<name>`
//! section). A function the module does not name, or whose bytes NVBit
//! hands over differently, simply finds nothing: NVBit disassembles it
//! itself at the launch that instruments it, as without this.

use super::{jobs_for, nvbit_disassembler_args, run, PrefillPlan, PrefillProgress};
use crate::disasm_cache::DisasmCache;
use crate::fatbin::DeviceFunction;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// Where one function's disassembly stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prepared {
    /// Being disassembled in the background.
    Pending,
    /// In the cache, filed now, or left to NVBit (not found, or failed).
    Done,
}

/// What [`AtLaunch::prepare`] decided for a kernel's functions.
#[derive(Debug, PartialEq, Eq)]
pub enum Readiness {
    /// Every function is cached (or left to NVBit): instrument it now.
    Ready,
    /// Some are being disassembled: run this launch uninstrumented.
    Preparing { started: usize },
}

/// The disassembly at first launch of one process: where each function
/// named so far stands, and the background runs in flight.
#[derive(Debug)]
pub struct AtLaunch {
    cache: DisasmCache,
    wrapper: PathBuf,
    sm: u32,
    functions: Arc<Mutex<HashMap<String, Prepared>>>,
    /// Background runs at once (each disassembles one kernel's functions).
    slots: Arc<(Mutex<usize>, Condvar)>,
    progress: &'static PrefillProgress,
    /// Names looked for and not found in the code given (left to NVBit).
    unknown: Mutex<Vec<String>>,
}

impl AtLaunch {
    /// Disassembly at first launch through `cache` (its `wrapper` for a
    /// function disassembled alone) for SASS target `sm`.
    pub fn new(cache: DisasmCache, wrapper: PathBuf, sm: u32, progress: &'static PrefillProgress) -> AtLaunch {
        let cpus = std::thread::available_parallelism().map_or(2, usize::from);
        AtLaunch {
            cache,
            wrapper,
            sm,
            functions: Arc::default(),
            slots: Arc::new((Mutex::new(jobs_for(cpus)), Condvar::new())),
            progress,
            unknown: Mutex::default(),
        }
    }

    /// Of the functions `names` (a kernel and those it calls), whose code
    /// `module` holds (its cubin's, or the libraries' index's): start
    /// disassembling in the background those the cache lacks (but those
    /// `ahead` names: a prefill answers NVBit's call for them), and say
    /// whether the kernel can be instrumented now.
    pub fn prepare(
        &self,
        module: &[DeviceFunction],
        names: &[&str],
        ahead: impl Fn(&str) -> bool,
    ) -> Result<Readiness, String> {
        let tag = self.cache.tag()?;
        let options = nvbit_disassembler_args(self.sm);
        let mut wanted: Vec<DeviceFunction> = Vec::new();
        let mut pending = false;
        {
            let mut known = self.functions.lock().map_err(|_| "a disassembly thread failed")?;
            for &name in names {
                match known.get(name) {
                    Some(Prepared::Pending) => pending = true,
                    Some(Prepared::Done) => {}
                    None => {
                        let uncached = module
                            .iter()
                            .find(|f| f.name == name && !ahead(name))
                            .filter(|f| !self.cache.holds(&DisasmCache::key(&tag, &options, &f.code)));
                        match uncached {
                            Some(f) => {
                                known.insert(name.to_string(), Prepared::Pending);
                                wanted.push(f.clone());
                                pending = true;
                            }
                            None => {
                                if !module.iter().any(|f| f.name == name) {
                                    if let Ok(mut u) = self.unknown.lock() {
                                        u.push(name.to_string());
                                    }
                                }
                                known.insert(name.to_string(), Prepared::Done);
                            }
                        }
                    }
                }
            }
        }
        if wanted.is_empty() {
            return Ok(if pending { Readiness::Preparing { started: 0 } } else { Readiness::Ready });
        }
        let started = wanted.len();
        self.start(wanted);
        Ok(Readiness::Preparing { started })
    }

    /// Names looked for that the code given did not hold (NVBit
    /// disassembles them at the launch that instruments them), in the
    /// order they were looked for.
    pub fn unknown(&self) -> Vec<String> {
        self.unknown.lock().map(|u| u.clone()).unwrap_or_default()
    }

    /// Whether every function of `names` is done (cached, filed, or left to NVBit).
    pub fn ready(&self, names: &[&str]) -> bool {
        let Ok(known) = self.functions.lock() else { return true };
        names.iter().all(|n| known.get(*n) != Some(&Prepared::Pending))
    }

    /// Disassemble `functions` on a thread of their own once a slot is free.
    fn start(&self, functions: Vec<DeviceFunction>) {
        let names: Vec<String> = functions.iter().map(|f| f.name.clone()).collect();
        let (cache, wrapper, sm) = (self.cache.clone(), self.wrapper.clone(), self.sm);
        let (slots, progress) = (self.slots.clone(), self.progress);
        let finish = {
            let known = self.functions.clone();
            move |names: &[String]| {
                if let Ok(mut k) = known.lock() {
                    for n in names {
                        k.insert(n.clone(), Prepared::Done);
                    }
                }
            }
        };
        let spawned = std::thread::Builder::new().name("xfpx-disasm".into()).spawn({
            let names = names.clone();
            let finish = finish.clone();
            move || {
                let (free, freed) = &*slots;
                if let Ok(g) = free.lock() {
                    if let Ok(mut g) = freed.wait_while(g, |n| *n == 0) {
                        *g -= 1;
                    }
                }
                let plan = PrefillPlan { sm, functions, left_out: 0, unreadable: 0 };
                static RUNS: AtomicUsize = AtomicUsize::new(0);
                let n = RUNS.fetch_add(1, Ordering::Relaxed);
                let scratch = std::env::temp_dir().join(format!(".xfpx-disasm-{}-{n}", std::process::id()));
                run(&cache, &wrapper, &plan, 1, &scratch, progress);
                if let Ok(mut g) = free.lock() {
                    *g += 1;
                    freed.notify_one();
                }
                finish(&names);
            }
        });
        // No thread: NVBit disassembles them itself when they are instrumented.
        if spawned.is_err() {
            finish(&names);
        }
    }
}
