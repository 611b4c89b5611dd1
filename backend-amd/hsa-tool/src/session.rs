//! The tool's decisions, free of FFI: the code objects the program loads
//! (by content), the kernel objects of its frozen executables, and per
//! dispatch which kernel object runs: the original, or the kernel's
//! instrumented copy (rewritten on its first sampled launch, loaded into a
//! second executable with its own record table). When an instrumented
//! launch completes, what its table gained since it was last read becomes
//! findings of that launch. Everything reaches the CLI through the event
//! stream ([`ToolStream`]).
//!
//! What it needs of the HSA runtime (memory, loading a copy) is the
//! [`Runtime`] trait, implemented over the API table by `crate::ffi`.

use crate::cache::Rewriter;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use xfpx_amd::rewrite::{self, KernelState, RewriteRecord};
use xfpx_common::config::RunConfig;
use xfpx_common::event::Event;
use xfpx_common::report::{KernelStatus, RunInfo, LAUNCH_UNKNOWN};
use xfpx_common::screened::LaunchCheck;
use xfpx_common::tool_stream::ToolStream;

/// An HSA handle (agent, executable, reader, signal): its 64-bit value.
pub type Handle = u64;

/// The device an agent is, as the report names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    /// `amd`, or `amd-emulated` on xfpx's emulated runtime.
    pub vendor: String,
    pub name: String,
    /// The processor, e.g. `gfx942`.
    pub target: Option<String>,
}

/// What the session asks of the HSA runtime.
pub trait Runtime {
    /// The device `agent` is.
    fn device(&self, agent: Handle) -> Device;
    /// Zeroed memory of `bytes` that the host reads and `agent`'s kernels
    /// write (fine-grained, host-visible): its address.
    fn allocate_table(&self, agent: Handle, bytes: usize) -> Result<u64, String>;
    /// The current bytes of a table [`Runtime::allocate_table`] gave.
    fn read_table(&self, address: u64, bytes: usize) -> Vec<u8>;
    /// Loads `elf` into a new executable for `agent` (made like the
    /// executable `like`) and returns the kernel object of `kernel`.
    fn load_copy(&self, agent: Handle, like: Handle, elf: &[u8], kernel: &str) -> Result<u64, String>;
}

/// A code object's identity: the SHA-256 of its bytes.
pub type CodeId = [u8; 32];

/// A code object the program handed the runtime.
#[derive(Debug)]
struct CodeObject {
    bytes: Arc<Vec<u8>>,
    /// Its kernels' names, or why it cannot be read.
    kernels: Result<Vec<String>, String>,
}

/// Where a kernel object comes from.
#[derive(Debug, Clone)]
struct KernelRef {
    name: String,
    agent: Handle,
    executable: Handle,
    code: Option<CodeId>,
}

/// An instrumented copy of a kernel, loaded for one agent.
#[derive(Debug)]
struct Copy {
    kernel_object: u64,
    table: u64,
    table_bytes: usize,
    record: RewriteRecord,
    /// Each slot's value when the table was last read.
    seen: Vec<u32>,
}

/// The key of a copy: (agent, code object, kernel).
type CopyKey = (Handle, CodeId, String);

/// An instrumented launch not completed yet.
#[derive(Debug, Clone)]
struct Pending {
    copy: CopyKey,
    kernel: String,
    launch: u64,
}

/// What one dispatch runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    /// The kernel object the packet is to carry.
    pub kernel_object: u64,
    /// For an instrumented launch: the ticket [`Session::completed`] takes.
    pub ticket: Option<u64>,
}

/// The tool's state in one process.
#[derive(Debug)]
pub struct Session {
    config: RunConfig,
    stream: ToolStream,
    rewriter: Rewriter,
    objects: HashMap<CodeId, CodeObject>,
    readers: HashMap<Handle, CodeId>,
    /// Code objects of the deprecated `hsa_code_object_deserialize`.
    deserialized: HashMap<Handle, CodeId>,
    /// Per executable: the code objects loaded into it, with their agent
    /// (`None`: a program code object, for every agent).
    executables: HashMap<Handle, Vec<(Option<Handle>, CodeId)>>,
    kernel_objects: HashMap<u64, KernelRef>,
    copies: HashMap<CopyKey, Result<Copy, String>>,
    /// Kernels whose `kernel` event was sent.
    announced: HashSet<String>,
    /// Launches so far, by kernel name.
    launches: HashMap<String, u64>,
    devices: HashSet<Handle>,
    unknown_objects: HashSet<u64>,
    pending: BTreeMap<u64, Pending>,
    next_ticket: u64,
}

impl Session {
    /// The session of a run configured by `config`; `cache_dir` holds its
    /// rewrites and `build` identifies this library. Refused (one line)
    /// for what the AMD tool does not do.
    pub fn new(config: RunConfig, cache_dir: Option<std::path::PathBuf>, build: String) -> Result<Session, String> {
        // settled as `xfpx run` settles it; a refusal is one line, which
        // the caller ends with what happens next
        let settled = xfpx_amd::live::settle(&config).map_err(|r| r.to_string())?;
        let mut notes: Vec<String> = config.sampling_note(false).into_iter().collect();
        notes.extend(settled.notes);
        let mode = settled.mode;
        if config.screens_launches() {
            notes.push(
                "launch screening is NVIDIA only: the launches --sample leaves out run unchecked on AMD \
                 (--sample 1 checks them all)"
                    .into(),
            );
        }
        let run = RunInfo {
            command: xfpx_common::launcher::command_line(),
            started_unix: xfpx_common::report::unix_now(),
            sample_every: config.reported_sample_every(),
            sample_auto: config.sample_doubling,
            notes,
            ..RunInfo::new("amd", "unknown", mode.name())
        };
        let stream = ToolStream::open(&config, "xfpx-hsa", run);
        Ok(Session {
            rewriter: Rewriter::new(&config, mode, cache_dir, build),
            config,
            stream,
            objects: HashMap::new(),
            readers: HashMap::new(),
            deserialized: HashMap::new(),
            executables: HashMap::new(),
            kernel_objects: HashMap::new(),
            copies: HashMap::new(),
            announced: HashSet::new(),
            launches: HashMap::new(),
            devices: HashSet::new(),
            unknown_objects: HashSet::new(),
            pending: BTreeMap::new(),
            next_ticket: 0,
        })
    }

    /// Something the user should read.
    pub fn note(&mut self, text: &str) {
        self.stream.note(text);
    }

    /// A code object handed to the runtime: kept by content, with its
    /// kernels or why it cannot be read.
    fn code_object(&mut self, bytes: Vec<u8>) -> CodeId {
        let id: CodeId = Sha256::digest(&bytes).into();
        if self.objects.contains_key(&id) {
            return id;
        }
        let kernels = xfpx_amd::CodeObject::parse(&bytes)
            .map(|co| co.kernels.iter().map(|k| k.name.clone()).collect())
            .map_err(|e| e.to_string());
        self.objects.insert(id, CodeObject { bytes: Arc::new(bytes), kernels });
        id
    }

    /// The code object `id` was loaded into `executable` for `agent`; one
    /// the tool cannot read is said once (it runs unmodified, unchecked).
    fn loaded(&mut self, executable: Handle, agent: Option<Handle>, id: CodeId) {
        self.executables.entry(executable).or_default().push((agent, id));
        let Some(o) = self.objects.get(&id) else { return };
        if let Err(e) = &o.kernels {
            let short: String = id[..6].iter().map(|b| format!("{b:02x}")).collect();
            let text = format!(
                "a code object ({} bytes, sha256 {short}...) cannot be read ({e}): it is loaded unmodified and its \
                 kernels are not checked",
                o.bytes.len()
            );
            self.note(&text);
        }
    }

    /// `hsa_code_object_reader_create_from_*` made `reader` over `bytes`.
    pub fn reader_created(&mut self, reader: Handle, bytes: Vec<u8>) {
        let id = self.code_object(bytes);
        self.readers.insert(reader, id);
    }

    pub fn reader_destroyed(&mut self, reader: Handle) {
        self.readers.remove(&reader);
    }

    /// `hsa_code_object_deserialize` made `code_object` of `bytes`.
    pub fn code_object_deserialized(&mut self, code_object: Handle, bytes: Vec<u8>) {
        let id = self.code_object(bytes);
        self.deserialized.insert(code_object, id);
    }

    /// A reader's code object was loaded into `executable` (for `agent`;
    /// `None`: a program code object).
    pub fn reader_loaded(&mut self, executable: Handle, agent: Option<Handle>, reader: Handle) {
        if let Some(&id) = self.readers.get(&reader) {
            self.loaded(executable, agent, id);
        }
    }

    /// A deserialized code object was loaded into `executable` for `agent`.
    pub fn code_object_loaded(&mut self, executable: Handle, agent: Handle, code_object: Handle) {
        if let Some(&id) = self.deserialized.get(&code_object) {
            self.loaded(executable, Some(agent), id);
        }
    }

    /// `executable` was frozen: its kernel symbols, as
    /// (symbol name, kernel object, agent).
    pub fn frozen(&mut self, executable: Handle, kernels: Vec<(String, u64, Handle)>) {
        let loaded = self.executables.get(&executable).cloned().unwrap_or_default();
        for (symbol, object, agent) in kernels {
            let name = crate::hsa::kernel_name(&symbol).to_string();
            let code =
                loaded.iter().filter(|(a, _)| a.is_none_or(|a| a == agent)).map(|(_, id)| *id).find(|id| {
                    self.objects.get(id).is_some_and(|o| o.kernels.as_ref().is_ok_and(|k| k.contains(&name)))
                });
            self.kernel_objects.insert(object, KernelRef { name, agent, executable, code });
        }
    }

    /// `executable` is being destroyed: its kernel objects are gone.
    pub fn executable_destroyed(&mut self, executable: Handle) {
        self.executables.remove(&executable);
        self.kernel_objects.retain(|_, k| k.executable != executable);
    }

    /// One dispatch of `kernel_object`: counted, sampled, and pointed at
    /// the instrumented copy when sampled.
    pub fn dispatch(&mut self, kernel_object: u64, rt: &dyn Runtime) -> Decision {
        let original = Decision { kernel_object, ticket: None };
        let Some(k) = self.kernel_objects.get(&kernel_object).cloned() else {
            if self.unknown_objects.insert(kernel_object) {
                self.note(&format!(
                    "a dispatch of kernel object {kernel_object:#x}, which no frozen executable names, ran unchecked"
                ));
            }
            return original;
        };
        if self.devices.insert(k.agent) {
            let d = rt.device(k.agent);
            let run = self.stream.collector_mut().run_mut();
            run.vendor = d.vendor.clone();
            run.device = d.name.clone();
            run.target = d.target.clone();
            self.stream.emit(Event::Device { vendor: d.vendor, device: d.name, target: d.target });
        }
        let admitted = self.config.filter().admits(&[&k.name]);
        if !admitted && self.announced.insert(k.name.clone()) {
            self.stream.collector_mut().kernel_status(&k.name, KernelStatus::Excluded, 0);
            self.stream.emit(Event::Kernel { name: k.name.clone(), status: KernelStatus::Excluded, probes: 0 });
        }
        let count = self.launches.entry(k.name.clone()).or_insert(0);
        let index = *count;
        *count += 1;
        let sampled = admitted && self.config.samples_launch(index) && !self.stream.collector().full();
        let copy = if sampled { self.copy_of(&k, rt) } else { None };
        let decision = match copy {
            Some((key, object)) => {
                let ticket = self.next_ticket;
                self.next_ticket += 1;
                self.pending.insert(ticket, Pending { copy: key, kernel: k.name.clone(), launch: index });
                Decision { kernel_object: object, ticket: Some(ticket) }
            }
            None => original,
        };
        let instrumented = decision.ticket.is_some();
        // no launch screening here: a launch left out has no reason to give
        let check = if instrumented { LaunchCheck::Instrumented } else { LaunchCheck::Unchecked(None) };
        self.stream.collector_mut().launch_checked(&k.name, check);
        self.stream.emit(Event::launch(k.name, index, check));
        decision
    }

    /// The instrumented copy of `k` for its agent (made on first use, its
    /// kernel's status sent then): its key and kernel object, or `None`
    /// when the kernel cannot be instrumented.
    fn copy_of(&mut self, k: &KernelRef, rt: &dyn Runtime) -> Option<(CopyKey, u64)> {
        let Some(code) = k.code else {
            self.announce_skipped(&k.name, "its code object was not seen being loaded or cannot be read");
            return None;
        };
        let key = (k.agent, code, k.name.clone());
        if !self.copies.contains_key(&key) {
            let made = self.make_copy(k, code, rt);
            match &made {
                Ok(c) => self.announce(&k.name, &c.record),
                Err(reason) => self.announce_skipped(&k.name, reason),
            }
            self.copies.insert(key.clone(), made);
        }
        match &self.copies[&key] {
            Ok(c) => Some((key, c.kernel_object)),
            Err(_) => None,
        }
    }

    fn make_copy(&mut self, k: &KernelRef, code: CodeId, rt: &dyn Runtime) -> Result<Copy, String> {
        let elf = self.objects.get(&code).map(|o| o.bytes.clone()).ok_or("its code object is gone")?;
        let rewritten = self.rewriter.rewrite(&elf, &code, &k.name)?;
        for note in &rewritten.notes {
            self.note(note);
        }
        match rewritten.record.kernels.iter().find(|r| r.name == k.name).map(|r| &r.state) {
            Some(KernelState::Skipped { reason }) => return Err(reason.clone()),
            Some(KernelState::Excluded) | None => return Err("the rewrite left it out".into()),
            Some(KernelState::Instrumented | KernelState::Partial) => {}
        }
        let table_bytes = usize::try_from(rewritten.record.table_bytes()).unwrap_or(0).max(4);
        let table = rt.allocate_table(k.agent, table_bytes)?;
        let placed = rewritten.record.place_table(&rewritten.elf, table).map_err(|e| e.to_string())?;
        let kernel_object = rt
            .load_copy(k.agent, k.executable, &placed, &k.name)
            .map_err(|e| format!("the runtime does not load its instrumented copy: {e}"))?;
        let slots = rewritten.record.table.slots.len();
        for note in &rewritten.record.notes {
            self.note(note);
        }
        Ok(Copy { kernel_object, table, table_bytes, record: rewritten.record, seen: vec![0; slots] })
    }

    fn announce(&mut self, name: &str, record: &RewriteRecord) {
        let Some(k) = record.kernels.iter().find(|r| r.name == name) else { return };
        let status = match &k.state {
            KernelState::Partial => KernelStatus::Partial,
            _ => KernelStatus::Instrumented,
        };
        self.announced.insert(name.to_string());
        let probes = k.probes as u64;
        self.stream.collector_mut().kernel_status(name, status.clone(), probes);
        self.stream.emit(Event::Kernel { name: name.to_string(), status, probes });
        if let Some(coverage) = k.coverage.clone() {
            self.stream.collector_mut().kernel_coverage(name, coverage.clone());
            self.stream.emit(Event::Coverage { kernel: name.to_string(), coverage });
        }
        if k.waits_added > 0 {
            self.note(&format!("{name}: {} memory waits added by the rewrite", k.waits_added));
        }
    }

    fn announce_skipped(&mut self, name: &str, reason: &str) {
        if !self.announced.insert(name.to_string()) {
            return;
        }
        let status = KernelStatus::Skipped { reason: reason.to_string() };
        self.stream.collector_mut().kernel_status(name, status.clone(), 0);
        self.stream.emit(Event::Kernel { name: name.to_string(), status, probes: 0 });
        self.note(&format!("{name}: runs unchecked: {reason}"));
    }

    /// Sends the launch events that have waited their batch's longest
    /// (called while the program launches nothing new).
    pub fn flush_aged_events(&mut self) {
        self.stream.flush_aged();
    }

    /// The instrumented launch `ticket` completed: what its table gained
    /// becomes findings of that launch.
    pub fn completed(&mut self, ticket: u64, rt: &dyn Runtime) {
        let Some(p) = self.pending.remove(&ticket) else { return };
        self.read_gains(&p.copy, Some((&p.kernel, p.launch)), rt);
    }

    /// Reads a copy's table: what it gained since last read becomes
    /// findings of `launch` (kernel, index), or of no known launch.
    fn read_gains(&mut self, key: &CopyKey, launch: Option<(&str, u64)>, rt: &dyn Runtime) {
        let Some(Ok(copy)) = self.copies.get_mut(key) else { return };
        let now = rt.read_table(copy.table, copy.table_bytes);
        let mut gained = vec![0u8; copy.seen.len() * 4];
        for (i, seen) in copy.seen.iter_mut().enumerate() {
            let Some(b) = now.get(i * 4..i * 4 + 4) else { break };
            let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            gained[i * 4..i * 4 + 4].copy_from_slice(&v.saturating_sub(*seen).to_le_bytes());
            *seen = (*seen).max(v);
        }
        let index = launch.map_or(LAUNCH_UNKNOWN, |l| l.1);
        let decoded = rewrite::table::decode(&copy.record.table, &copy.record.site_table(), &gained, index);
        let contents = match decoded {
            Ok(c) => c,
            Err(e) => return self.note(&format!("{}: its table cannot be read: {e}", key.2)),
        };
        for (kernel, r) in contents.records {
            self.stream.collector_mut().record(&kernel, r.kind, r.format, r.site.clone(), index, r.occurrences);
            self.stream.emit(Event::Finding {
                kernel,
                kind: r.kind,
                format: r.format,
                site: r.site,
                launch: index,
                occurrences: r.occurrences,
            });
        }
        for s in contents.screened {
            let kinds: Vec<&str> = s.kinds.iter().map(|k| k.name()).collect();
            let first = launch.map_or(String::new(), |l| format!(" (first in launch {})", l.1));
            self.note(&format!(
                "{}: waves ended with exception bits {} ({:#x}), kinds {}{first}",
                s.kernel,
                s.exceptions.join(", "),
                s.trapsts,
                if kinds.is_empty() { "none".to_string() } else { kinds.join(", ") },
            ));
        }
    }

    /// The instrumented launch `ticket` cannot be watched (`why`): it is
    /// forgotten, and its packet keeps the original kernel.
    pub fn abandon(&mut self, ticket: u64, why: &str) {
        if let Some(p) = self.pending.remove(&ticket) {
            self.note(&format!("{} launch {} ran unchecked: {why}", p.kernel, p.launch));
        }
    }

    /// Instrumented launches not completed yet.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The program is ending: every table is read a last time (what
    /// launches that never completed recorded is of no known launch), then
    /// the CLI is told (or the report written).
    pub fn finish(&mut self, rt: &dyn Runtime) -> Result<(), String> {
        if !self.pending.is_empty() {
            let n = self.pending.len();
            self.note(&format!(
                "{n} instrumented launch{} had not completed when the program ended: what {} recorded by then is \
                 reported without a launch",
                if n == 1 { "" } else { "es" },
                if n == 1 { "it" } else { "they" }
            ));
        }
        let keys: Vec<CopyKey> = self.copies.keys().cloned().collect();
        for key in keys {
            self.read_gains(&key, None, rt);
        }
        self.stream.finish()
    }

    /// The report so far.
    pub fn report(&self) -> xfpx_common::report::Report {
        self.stream.report()
    }
}
