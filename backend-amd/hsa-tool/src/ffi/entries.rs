//! The C entry points: `OnLoad` and `OnUnload` as the runtime calls them,
//! the table entries the tool puts in place of the runtime's (each calls
//! the entry it replaced, then tells the session), and the queue
//! interceptor that rewrites dispatch packets.
//!
//! Queues: the program's `hsa_queue_create` makes an interception queue
//! (`hsa_amd_queue_intercept_create`) with the tool's packet handler. The
//! program's queue stays a queue of the runtime's own, so every queue call
//! of any ROCm release (indices, CU masks, priorities, profiling, and
//! entries added after this tool was written) keeps working, and the
//! runtime hands each batch of packets to the handler before the packet
//! processor sees them; the emulated runtime does the same. A runtime that
//! refuses an interception queue gets a plain one, which runs unchecked.

use super::api::{self, Handle, PacketWriter, QueueErrorCallback, Saved, Status, Tables};
use super::completion::{lock, Completions, Watched};
use super::runtime::HsaRuntime;
use crate::hsa::{self, Packet, PACKET_BYTES};
use crate::layout::Entry;
use crate::session::Session;
use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use xfpx_common::config::RunConfig;

/// The tool once loaded.
#[derive(Debug)]
struct Tool {
    rt: HsaRuntime,
    session: Mutex<Session>,
    completions: Completions,
    finished: AtomicBool,
}

static TOOL: OnceLock<Tool> = OnceLock::new();
static LOADED: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Set while this thread is inside the tool: calls the runtime makes
    /// back into the table meanwhile pass straight through.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// The tool, unless it is not loaded, finished, or already on this thread's stack.
fn enter() -> Option<(&'static Tool, Inside)> {
    let tool = TOOL.get()?;
    if tool.finished.load(Ordering::Acquire) || INSIDE.with(|i| i.replace(true)) {
        return None;
    }
    Some((tool, Inside))
}

/// Leaves the tool when dropped.
struct Inside;

impl Drop for Inside {
    fn drop(&mut self) {
        INSIDE.with(|i| i.set(false));
    }
}

/// Runs `f` on the session, a panic caught and said once.
fn with_session(tool: &Tool, f: impl FnOnce(&mut Session)) {
    if catch_unwind(AssertUnwindSafe(|| f(&mut lock(&tool.session)))).is_err() {
        static SAID: AtomicBool = AtomicBool::new(false);
        if !SAID.swap(true, Ordering::Relaxed) {
            eprintln!("xfpx: internal error in the HSA tool (a panic was caught); the program goes on");
        }
    }
}

fn saved() -> &'static Saved {
    // only entries the tool installed call this, after `OnLoad` saved the table
    match TOOL.get() {
        Some(t) => &t.rt.saved,
        None => std::process::abort(),
    }
}

/// The runtime loaded the tool: check the table's layout, read the run
/// configuration, and put the tool's entries in the table. A refusal is
/// one line on stderr; the tool then stays loaded and changes nothing
/// (`true` either way: ROCm 5.2 closes a refusing tool yet keeps its
/// handle for `OnUnload`).
///
/// # Safety
/// Called by the HSA runtime with its API table, during `hsa_init`.
#[no_mangle]
pub unsafe extern "C" fn OnLoad(
    table: *mut c_void,
    _runtime_version: u64,
    failed_tool_count: u64,
    failed_tool_names: *const *const c_char,
) -> bool {
    // SAFETY: forwarded from the runtime's contract.
    let loaded = catch_unwind(|| unsafe { load(table, failed_tool_count, failed_tool_names) });
    match loaded {
        Ok(Ok(())) => {}
        Ok(Err(line)) => eprintln!("xfpx: {line}; the program runs without instrumentation"),
        Err(_) => {
            eprintln!("xfpx: internal error while loading the HSA tool; the program runs without instrumentation")
        }
    }
    true
}

/// # Safety
/// As [`OnLoad`].
unsafe fn load(table: *mut c_void, failed_count: u64, failed_names: *const *const c_char) -> Result<(), String> {
    if LOADED.swap(true, Ordering::AcqRel) {
        return Err("the xfpx HSA tool was loaded twice (named twice in HSA_TOOLS_LIB?): the first stays".into());
    }
    // SAFETY: the runtime's table (caller's contract).
    let tables = unsafe { Tables::read(table) }?;
    // SAFETY: the layout was chosen for these tables.
    let saved = unsafe { tables.saved() }?;
    let config = RunConfig::from_env().map_err(|e| e.to_string())?;
    let cache = config.tools.rewrite_cache.resolve("amd-rewrites", |k| std::env::var(k).ok());
    let mut session = Session::new(config, cache, build_id())?;
    if library_of(saved.queue_create as usize) != library_of(saved.queue_intercept_create as usize) {
        session.note(
            "a tool loaded before xfpx's replaced hsa_queue_create: the program's queues are made through \
             hsa_amd_queue_intercept_create, so that tool does not see them made (xfpx run names its tool first)",
        );
    }
    for i in 0..usize::try_from(failed_count).unwrap_or(0) {
        // SAFETY: the runtime passes `failed_count` names.
        let name = unsafe { *failed_names.add(i) };
        if !name.is_null() {
            // SAFETY: a NUL-terminated name.
            let name = unsafe { CStr::from_ptr(name) }.to_string_lossy();
            session.note(&format!("HSA_TOOLS_LIB: the tool library {name} failed to load before xfpx's"));
        }
    }
    let tool = Tool {
        rt: HsaRuntime::new(saved),
        session: Mutex::new(session),
        completions: Completions::default(),
        finished: AtomicBool::new(false),
    };
    TOOL.set(tool).map_err(|_| "the HSA tool was set up twice")?;
    let replaced: [(Entry, usize); 11] = [
        (Entry::QueueCreate, queue_create as api::QueueCreateFn as usize),
        (Entry::QueueInterceptCreate, queue_intercept_create as api::QueueCreateFn as usize),
        (Entry::CodeObjectDeserialize, code_object_deserialize as api::DeserializeFn as usize),
        (Entry::ExecutableDestroy, executable_destroy as api::HandleFn as usize),
        (Entry::ExecutableLoadCodeObject, executable_load_code_object as api::LoadCodeObjectFn as usize),
        (Entry::ExecutableFreeze, executable_freeze as api::FreezeFn as usize),
        (Entry::ReaderCreateFromFile, reader_create_from_file as api::ReaderFromFileFn as usize),
        (Entry::ReaderCreateFromMemory, reader_create_from_memory as api::ReaderFromMemoryFn as usize),
        (Entry::ReaderDestroy, reader_destroy as api::HandleFn as usize),
        (
            Entry::ExecutableLoadProgramCodeObject,
            executable_load_program_code_object as api::LoadProgramCodeObjectFn as usize,
        ),
        (
            Entry::ExecutableLoadAgentCodeObject,
            executable_load_agent_code_object as api::LoadAgentCodeObjectFn as usize,
        ),
    ];
    for (entry, f) in replaced {
        // SAFETY: each function has its entry's type; the table is writable during OnLoad.
        unsafe { tables.set(entry, f) };
    }
    // SAFETY: registers a plain function.
    unsafe { libc::atexit(at_exit) };
    Ok(())
}

/// The file name and load address of the shared object holding `address`.
fn library_of(address: usize) -> Option<(String, usize)> {
    let mut info: libc::Dl_info = empty_dl_info();
    // SAFETY: dladdr only reads the address and fills `info`.
    let found = unsafe { libc::dladdr(address as *const c_void, &mut info) } != 0 && !info.dli_fname.is_null();
    // SAFETY: dladdr's file name is a NUL-terminated string.
    found.then(|| (unsafe { CStr::from_ptr(info.dli_fname) }.to_string_lossy().into_owned(), info.dli_fbase as usize))
}

/// Identifies this build of the library (its file, size and time), so
/// that rewrites another build made are not reused.
fn build_id() -> String {
    let path = library_of(build_id as fn() -> String as usize).map(|l| l.0).unwrap_or_default();
    let meta = std::fs::metadata(&path).ok();
    let modified =
        meta.as_ref().and_then(|m| m.modified().ok()).and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    format!("{} {path} {:?} {:?}", env!("CARGO_PKG_VERSION"), meta.map(|m| m.len()), modified)
}

fn empty_dl_info() -> libc::Dl_info {
    libc::Dl_info {
        dli_fname: std::ptr::null(),
        dli_fbase: std::ptr::null_mut(),
        dli_sname: std::ptr::null(),
        dli_saddr: std::ptr::null_mut(),
    }
}

/// The runtime is shutting down (`hsa_shut_down`).
#[no_mangle]
pub extern "C" fn OnUnload() {
    finish();
}

extern "C" fn at_exit() {
    finish();
}

/// Reads what launches still in flight recorded (for a moment), then ends
/// the session: the CLI hears `finished`, or the report is written.
fn finish() {
    let Some(tool) = TOOL.get() else { return };
    if tool.finished.swap(true, Ordering::AcqRel) {
        return;
    }
    let done = catch_unwind(AssertUnwindSafe(|| {
        tool.completions.drain(&tool.rt, &tool.session, Duration::from_secs(2));
        lock(&tool.session).finish(&tool.rt)
    }));
    match done {
        Ok(Ok(())) => {}
        Ok(Err(e)) => eprintln!("xfpx: {e}"),
        Err(_) => eprintln!("xfpx: internal error while ending the run; the report may be incomplete"),
    }
}

unsafe extern "C" fn queue_create(
    agent: Handle,
    size: u32,
    kind: u32,
    callback: Option<QueueErrorCallback>,
    data: *mut c_void,
    private_segment: u32,
    group_segment: u32,
    queue: *mut *mut c_void,
) -> Status {
    let s = saved();
    // SAFETY: the runtime's entries of this signature (plain or interception)
    // with the caller's arguments.
    let make = |entry: api::QueueCreateFn| unsafe {
        entry(agent, size, kind, callback, data, private_segment, group_segment, queue)
    };
    let Some((tool, _inside)) = enter() else { return make(s.queue_create) };
    let status = make(s.queue_intercept_create);
    if status != hsa::STATUS_SUCCESS || queue.is_null() {
        let plain = make(s.queue_create);
        if plain == hsa::STATUS_SUCCESS {
            with_session(tool, |s| {
                s.note(&format!(
                    "the HSA runtime made no interception queue (status {status:#x}): dispatches on a plain queue run \
                     unchecked"
                ))
            });
        }
        return plain;
    }
    // SAFETY: the queue was just made; `queue` holds it.
    unsafe { register(tool, *queue) };
    status
}

/// Puts the tool's handler on an interception queue.
///
/// # Safety
/// `queue` is an interception queue of the runtime's.
unsafe fn register(tool: &Tool, queue: *mut c_void) {
    // SAFETY: forwarded from the caller's contract.
    let status = unsafe { (tool.rt.saved.queue_intercept_register)(queue, on_packets, std::ptr::null_mut()) };
    if status != hsa::STATUS_SUCCESS {
        with_session(tool, |s| {
            s.note(&format!(
                "a queue's packets cannot be intercepted (status {status:#x}): its dispatches run unchecked"
            ))
        });
    }
}

/// Another tool's (or the program's) interception queue gets the handler too.
unsafe extern "C" fn queue_intercept_create(
    agent: Handle,
    size: u32,
    kind: u32,
    callback: Option<QueueErrorCallback>,
    data: *mut c_void,
    private_segment: u32,
    group_segment: u32,
    queue: *mut *mut c_void,
) -> Status {
    let s = saved();
    // SAFETY: the runtime's entry with the caller's arguments.
    let status =
        unsafe { (s.queue_intercept_create)(agent, size, kind, callback, data, private_segment, group_segment, queue) };
    if status == hsa::STATUS_SUCCESS && !queue.is_null() {
        if let Some((tool, _inside)) = enter() {
            // SAFETY: the queue was just made.
            unsafe { register(tool, *queue) };
        }
    }
    status
}

/// The queue's packets, before the packet processor sees them: each kernel
/// dispatch gets the kernel object the session chooses, and an
/// instrumented one the tool's completion signal. Packets always go on
/// (unchanged when anything fails).
unsafe extern "C" fn on_packets(
    pkts: *const c_void,
    count: u64,
    _index: u64,
    _data: *mut c_void,
    writer: PacketWriter,
) {
    let n = usize::try_from(count).unwrap_or(0);
    let rewritten = enter().filter(|_| !pkts.is_null()).and_then(|(tool, _inside)| {
        let mut packets: Vec<Packet> = (0..n)
            .map(|i| {
                // SAFETY: the runtime passes `count` packets of 64 bytes at `pkts`.
                Packet(unsafe { std::ptr::read_unaligned(pkts.cast::<[u8; PACKET_BYTES]>().add(i)) })
            })
            .collect();
        catch_unwind(AssertUnwindSafe(|| dispatch(tool, &mut packets))).ok().map(|()| packets)
    });
    match rewritten {
        // SAFETY: `count` packets, alive for the call.
        Some(packets) => unsafe { writer(packets.as_ptr().cast(), count) },
        // SAFETY: the runtime's own packets, passed on.
        None => unsafe { writer(pkts, count) },
    }
}

fn dispatch(tool: &'static Tool, packets: &mut [Packet]) {
    for p in packets.iter_mut().filter(|p| p.is_kernel_dispatch()) {
        let decision = lock(&tool.session).dispatch(p.kernel_object(), &tool.rt);
        let Some(ticket) = decision.ticket else { continue };
        match tool.rt.new_signal() {
            Ok(ours) => {
                let theirs = p.completion_signal();
                p.set_kernel_object(decision.kernel_object);
                p.set_completion_signal(ours);
                p.release_to_system();
                tool.completions.watch(Watched { ticket, ours, theirs }, &tool.rt, &tool.session);
            }
            Err(e) => lock(&tool.session).abandon(ticket, &e),
        }
    }
}

unsafe extern "C" fn reader_create_from_memory(code: *const c_void, size: usize, reader: *mut Handle) -> Status {
    // SAFETY: the runtime's entry with the caller's arguments.
    let status = unsafe { (saved().reader_create_from_memory)(code, size, reader) };
    if status == hsa::STATUS_SUCCESS && !code.is_null() && !reader.is_null() {
        if let Some((tool, _inside)) = enter() {
            // SAFETY: the caller passes `size` readable bytes (the runtime read them).
            let bytes = unsafe { std::slice::from_raw_parts(code.cast::<u8>(), size) };
            // SAFETY: the reader was just written.
            let handle = unsafe { *reader };
            code_object(tool, bytes.len(), || bytes.to_vec(), |s, b| s.reader_created(handle, b));
        }
    }
    status
}

unsafe extern "C" fn reader_create_from_file(file: c_int, reader: *mut Handle) -> Status {
    // SAFETY: the runtime's entry with the caller's arguments.
    let status = unsafe { (saved().reader_create_from_file)(file, reader) };
    if status == hsa::STATUS_SUCCESS && !reader.is_null() {
        if let Some((tool, _inside)) = enter() {
            // SAFETY: the reader was just written.
            let handle = unsafe { *reader };
            let size = file_size(file);
            code_object(tool, size, || read_file(file, size), |s, b| s.reader_created(handle, b));
        }
    }
    status
}

unsafe extern "C" fn code_object_deserialize(
    serialized: *mut c_void,
    size: usize,
    options: *const c_char,
    code_object_out: *mut Handle,
) -> Status {
    // SAFETY: the runtime's entry with the caller's arguments.
    let status = unsafe { (saved().code_object_deserialize)(serialized, size, options, code_object_out) };
    if status == hsa::STATUS_SUCCESS && !serialized.is_null() && !code_object_out.is_null() {
        if let Some((tool, _inside)) = enter() {
            // SAFETY: the caller passes `size` readable bytes.
            let bytes = unsafe { std::slice::from_raw_parts(serialized.cast::<u8>(), size) };
            // SAFETY: the code object was just written.
            let handle = unsafe { *code_object_out };
            code_object(tool, size, || bytes.to_vec(), |s, b| s.code_object_deserialized(handle, b));
        }
    }
    status
}

/// Hands a code object's bytes to the session, unless it is larger than
/// any code object xfpx reads (said once; it runs unchecked).
fn code_object(tool: &Tool, size: usize, bytes: impl FnOnce() -> Vec<u8>, f: impl FnOnce(&mut Session, Vec<u8>)) {
    let limit = xfpx_common::limits::CODE_OBJECT;
    if size as u64 > limit.bytes {
        return with_session(tool, |s| {
            s.note(&format!(
                "a code object of {size} bytes is larger than {}, the limit for {}: its kernels run unchecked",
                limit.size(),
                limit.what
            ))
        });
    }
    let bytes = bytes();
    with_session(tool, |s| f(s, bytes));
}

fn file_size(file: c_int) -> usize {
    // SAFETY: fstat writes one stat structure.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid stat buffer.
    if unsafe { libc::fstat(file, &mut st) } != 0 {
        return 0;
    }
    usize::try_from(st.st_size).unwrap_or(0)
}

/// The file's bytes from its start, its offset left as it was.
fn read_file(file: c_int, size: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; size];
    let mut done = 0;
    while done < size {
        // SAFETY: reads into the unfilled part of `bytes`.
        let n = unsafe { libc::pread(file, bytes[done..].as_mut_ptr().cast(), size - done, done as libc::off_t) };
        if n <= 0 {
            break;
        }
        done += n as usize;
    }
    bytes.truncate(done);
    bytes
}

unsafe extern "C" fn reader_destroy(reader: Handle) -> Status {
    if let Some((tool, _inside)) = enter() {
        with_session(tool, |s| s.reader_destroyed(reader));
    }
    // SAFETY: the runtime's entry with the caller's arguments.
    unsafe { (saved().reader_destroy)(reader) }
}

unsafe extern "C" fn executable_load_agent_code_object(
    executable: Handle,
    agent: Handle,
    reader: Handle,
    options: *const c_char,
    loaded: *mut Handle,
) -> Status {
    // SAFETY: the runtime's entry with the caller's arguments.
    let status = unsafe { (saved().executable_load_agent_code_object)(executable, agent, reader, options, loaded) };
    if status == hsa::STATUS_SUCCESS {
        if let Some((tool, _inside)) = enter() {
            with_session(tool, |s| s.reader_loaded(executable, Some(agent), reader));
        }
    }
    status
}

unsafe extern "C" fn executable_load_program_code_object(
    executable: Handle,
    reader: Handle,
    options: *const c_char,
    loaded: *mut Handle,
) -> Status {
    // SAFETY: the runtime's entry with the caller's arguments.
    let status = unsafe { (saved().executable_load_program_code_object)(executable, reader, options, loaded) };
    if status == hsa::STATUS_SUCCESS {
        if let Some((tool, _inside)) = enter() {
            with_session(tool, |s| s.reader_loaded(executable, None, reader));
        }
    }
    status
}

unsafe extern "C" fn executable_load_code_object(
    executable: Handle,
    agent: Handle,
    code_object: Handle,
    options: *const c_char,
) -> Status {
    // SAFETY: the runtime's entry with the caller's arguments.
    let status = unsafe { (saved().executable_load_code_object)(executable, agent, code_object, options) };
    if status == hsa::STATUS_SUCCESS {
        if let Some((tool, _inside)) = enter() {
            with_session(tool, |s| s.code_object_loaded(executable, agent, code_object));
        }
    }
    status
}

unsafe extern "C" fn executable_freeze(executable: Handle, options: *const c_char) -> Status {
    let s = saved();
    // SAFETY: the runtime's entry with the caller's arguments.
    let status = unsafe { (s.executable_freeze)(executable, options) };
    if status == hsa::STATUS_SUCCESS {
        if let Some((tool, _inside)) = enter() {
            let mut found: (Saved, Vec<(String, u64, Handle)>) = (*s, Vec::new());
            // SAFETY: the callback fills `found` during the iteration only.
            unsafe {
                (s.executable_iterate_symbols)(
                    executable,
                    kernel_symbol,
                    (&mut found as *mut (Saved, Vec<(String, u64, Handle)>)).cast(),
                )
            };
            with_session(tool, |s| s.frozen(executable, found.1));
        }
    }
    status
}

/// Collects a kernel symbol's name, kernel object and agent.
unsafe extern "C" fn kernel_symbol(_executable: Handle, symbol: Handle, data: *mut c_void) -> Status {
    // SAFETY: `data` is the `(Saved, Vec)` of `executable_freeze`.
    let (saved, found) = unsafe { &mut *data.cast::<(Saved, Vec<(String, u64, Handle)>)>() };
    let info = |attr: u32, out: *mut c_void| {
        // SAFETY: `out` holds the attribute's value type.
        unsafe { (saved.executable_symbol_get_info)(symbol, attr, out) == hsa::STATUS_SUCCESS }
    };
    let (mut kind, mut len, mut object, mut agent) = (0u32, 0u32, 0u64, 0u64);
    if !info(hsa::SYMBOL_INFO_TYPE, (&mut kind as *mut u32).cast()) || kind != hsa::SYMBOL_KIND_KERNEL {
        return hsa::STATUS_SUCCESS;
    }
    if !info(hsa::SYMBOL_INFO_NAME_LENGTH, (&mut len as *mut u32).cast()) {
        return hsa::STATUS_SUCCESS;
    }
    let mut name = vec![0u8; len as usize + 1];
    let named = info(hsa::SYMBOL_INFO_NAME, name.as_mut_ptr().cast());
    if named
        && info(hsa::SYMBOL_INFO_KERNEL_OBJECT, (&mut object as *mut u64).cast())
        && info(hsa::SYMBOL_INFO_AGENT, (&mut agent as *mut u64).cast())
    {
        name.truncate(len as usize);
        found.push((String::from_utf8_lossy(&name).into_owned(), object, agent));
    }
    hsa::STATUS_SUCCESS
}

unsafe extern "C" fn executable_destroy(executable: Handle) -> Status {
    if let Some((tool, _inside)) = enter() {
        with_session(tool, |s| s.executable_destroyed(executable));
    }
    // SAFETY: the runtime's entry with the caller's arguments.
    unsafe { (saved().executable_destroy)(executable) }
}
