//! A stand-in HSA runtime inside the test process, enough to load tool
//! libraries as the runtime does (`OnLoad` with an API table laid out as a
//! ROCm release lays it out) and to play a small HSA program against them:
//! agents, one fine-grained region, signals, code-object readers,
//! executables with kernel symbols, and interception queues whose packets
//! go through the registered handlers. Its "GPU" runs each dispatched
//! kernel object on the emulator with the inputs of the demo's launch
//! description for that kernel; an instrumented copy's record table is
//! placed in emulated memory for the run and what the run recorded is added
//! into the host table whose address the copy carries.

#![allow(dead_code, unsafe_code, clippy::unwrap_used, clippy::type_complexity)]

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;
use xfpx_amd::rewrite::RewriteRecord;
use xfpx_amd_emu::{Launch, LaunchMemory, Program, RunLimits};
use xfpx_hsa::layout::{Entry, Layout, Table, KNOWN_LAYOUTS};

pub const CPU: u64 = 1;
pub const GPU: u64 = 2;
pub const REGION: u64 = 7;
const OK: u32 = 0;
const ERROR: u32 = 0x1000;
const INFO_BREAK: u32 = 1;

/// The tables one runtime hands to its tools.
pub struct ApiTables {
    pub root: Vec<u64>,
    pub core: Vec<u64>,
    pub amd_ext: Vec<u64>,
}

impl ApiTables {
    /// Tables of the stated versions ((major, size) each), entries at the
    /// places `layout` gives, filled with this runtime's functions.
    pub fn new(root: (u32, u32), core: (u32, u32), amd: (u32, u32), layout: &Layout) -> Box<ApiTables> {
        let table = |(major, size): (u32, u32)| {
            let mut t = vec![0u64; size as usize / 8];
            t[0] = u64::from(major) | (u64::from(size) << 32);
            t
        };
        let mut t = Box::new(ApiTables { root: table(root), core: table(core), amd_ext: table(amd) });
        t.root[2] = t.core.as_mut_ptr() as u64;
        t.root[3] = t.amd_ext.as_mut_ptr() as u64;
        for e in Entry::ALL {
            let f = function(e);
            let slot = layout.offset(e) / 8;
            match e.table() {
                Table::AmdExt => t.amd_ext[slot] = f,
                _ => t.core[slot] = f,
            }
        }
        t
    }

    /// Tables as ROCm 5.2 lays them out.
    pub fn rocm_5_2() -> Box<ApiTables> {
        ApiTables::new((1, 48), (1, 1016), (1, 400), &KNOWN_LAYOUTS[0])
    }

    /// Tables as the ROCm 6.3 runtime lays them out.
    pub fn rocm_6_3() -> Box<ApiTables> {
        ApiTables::new((3, 64), (2, 1016), (2, 584), &KNOWN_LAYOUTS[2])
    }

    pub fn root_ptr(&mut self) -> *mut c_void {
        self.root.as_mut_ptr().cast()
    }

    /// The table's current entry (a tool may have replaced it).
    pub fn entry(&self, e: Entry, layout: &Layout) -> u64 {
        let slot = layout.offset(e) / 8;
        match e.table() {
            Table::AmdExt => self.amd_ext[slot],
            _ => self.core[slot],
        }
    }
}

/// Loads tool libraries in order and calls their `OnLoad`, as the runtime does.
pub fn load_tools(tables: &mut ApiTables, libraries: &[PathBuf]) {
    type OnLoad = unsafe extern "C" fn(*mut c_void, u64, u64, *const *const c_char) -> bool;
    let major = tables.root[0] & 0xffff_ffff;
    for lib in libraries {
        let name = std::ffi::CString::new(lib.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: loads a shared library the test built.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW) };
        assert!(!handle.is_null(), "cannot load {}", lib.display());
        // SAFETY: looks a symbol up in it.
        let f = unsafe { libc::dlsym(handle, c"OnLoad".as_ptr()) };
        assert!(!f.is_null(), "{} has no OnLoad", lib.display());
        // SAFETY: OnLoad has this type (hsa_api_trace.h's tool interface).
        let on_load: OnLoad = unsafe { std::mem::transmute::<*mut c_void, OnLoad>(f) };
        // SAFETY: the tables live as long as the test.
        assert!(unsafe { on_load(tables.root_ptr(), major, 0, std::ptr::null()) });
    }
}

/// Calls `OnUnload` of a loaded library, as `hsa_shut_down` does.
pub fn unload_tool(lib: &Path) {
    let name = std::ffi::CString::new(lib.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: the library is loaded already.
    let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) };
    assert!(!handle.is_null());
    // SAFETY: as in load_tools.
    let f = unsafe { libc::dlsym(handle, c"OnUnload".as_ptr()) };
    assert!(!f.is_null());
    // SAFETY: OnUnload takes nothing.
    unsafe { std::mem::transmute::<*mut c_void, extern "C" fn()>(f)() };
}

/// What the runtime holds.
#[derive(Default)]
struct State {
    readers: HashMap<u64, Vec<u8>>,
    /// Per executable: loaded (agent, code object) and whether frozen.
    executables: HashMap<u64, (Vec<(u64, Vec<u8>)>, bool)>,
    /// Kernel objects: (code object, kernel name, executable).
    kernels: HashMap<u64, (Vec<u8>, String, u64)>,
    /// Symbols: kernel object by symbol handle.
    symbols: HashMap<u64, u64>,
    /// Interception handlers by queue.
    handlers: HashMap<u64, Vec<(usize, usize)>>,
    next: u64,
    /// Queues made without interception.
    plain_queues: u64,
    /// Dispatches the "GPU" ran: (kernel, instrumented copy?, first output buffer).
    pub ran: Vec<(String, bool, Vec<u8>)>,
    /// Emulated memory per kernel (buffers of its demo launch).
    written: Vec<Vec<u8>>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn with<T>(f: impl FnOnce(&mut State) -> T) -> T {
    let mut s = STATE.lock().unwrap_or_else(|p| p.into_inner());
    f(s.get_or_insert_with(State::default))
}

fn fresh() -> u64 {
    with(|s| {
        s.next += 1;
        0x1_0000 + s.next
    })
}

/// Dispatches the GPU ran so far: (kernel, whether the instrumented copy
/// ran, its first output buffer).
pub fn ran() -> Vec<(String, bool, Vec<u8>)> {
    with(|s| s.ran.clone())
}

pub fn plain_queues() -> u64 {
    with(|s| s.plain_queues)
}

fn function(e: Entry) -> u64 {
    match e {
        Entry::AgentGetInfo => agent_get_info as unsafe extern "C" fn(_, _, _) -> _ as usize as u64,
        Entry::QueueCreate => queue_create as unsafe extern "C" fn(_, _, _, _, _, _, _, _) -> _ as usize as u64,
        Entry::AgentIterateRegions => iterate_regions as unsafe extern "C" fn(_, _, _) -> _ as usize as u64,
        Entry::RegionGetInfo => region_get_info as unsafe extern "C" fn(_, _, _) -> _ as usize as u64,
        Entry::MemoryAllocate => memory_allocate as unsafe extern "C" fn(_, _, _) -> _ as usize as u64,
        Entry::SignalCreate => signal_create as unsafe extern "C" fn(_, _, _, _) -> _ as usize as u64,
        Entry::SignalDestroy => signal_destroy as unsafe extern "C" fn(_) -> _ as usize as u64,
        Entry::SignalLoadScacquire => signal_load as unsafe extern "C" fn(_) -> _ as usize as u64,
        Entry::SignalSubtractScrelease => signal_subtract as unsafe extern "C" fn(_, _) as usize as u64,
        Entry::CodeObjectDeserialize => deserialize as unsafe extern "C" fn(_, _, _, _) -> _ as usize as u64,
        Entry::ExecutableDestroy => handle_ok as unsafe extern "C" fn(_) -> _ as usize as u64,
        Entry::ExecutableLoadCodeObject => load_code_object as unsafe extern "C" fn(_, _, _, _) -> _ as usize as u64,
        Entry::ExecutableFreeze => freeze as unsafe extern "C" fn(_, _) -> _ as usize as u64,
        Entry::ExecutableGetInfo => executable_get_info as unsafe extern "C" fn(_, _, _) -> _ as usize as u64,
        Entry::ExecutableSymbolGetInfo => symbol_get_info as unsafe extern "C" fn(_, _, _) -> _ as usize as u64,
        Entry::ExecutableIterateSymbols => iterate_symbols as unsafe extern "C" fn(_, _, _) -> _ as usize as u64,
        Entry::ReaderCreateFromFile => reader_from_file as unsafe extern "C" fn(_, _) -> _ as usize as u64,
        Entry::ReaderCreateFromMemory => reader_from_memory as unsafe extern "C" fn(_, _, _) -> _ as usize as u64,
        Entry::ReaderDestroy => handle_ok as unsafe extern "C" fn(_) -> _ as usize as u64,
        Entry::ExecutableCreateAlt => executable_create as unsafe extern "C" fn(_, _, _, _) -> _ as usize as u64,
        Entry::ExecutableLoadProgramCodeObject => load_program as unsafe extern "C" fn(_, _, _, _) -> _ as usize as u64,
        Entry::ExecutableLoadAgentCodeObject => load_agent as unsafe extern "C" fn(_, _, _, _, _) -> _ as usize as u64,
        Entry::ExecutableGetSymbolByName => symbol_by_name as unsafe extern "C" fn(_, _, _, _) -> _ as usize as u64,
        Entry::QueueInterceptCreate => {
            intercept_create as unsafe extern "C" fn(_, _, _, _, _, _, _, _) -> _ as usize as u64
        }
        Entry::QueueInterceptRegister => intercept_register as unsafe extern "C" fn(_, _, _) -> _ as usize as u64,
    }
}

type AgentCallback = unsafe extern "C" fn(u64, *mut c_void) -> u32;

unsafe fn put_text(out: *mut c_void, text: &str) {
    // SAFETY: the caller gives 64 bytes.
    unsafe {
        std::ptr::write_bytes(out.cast::<u8>(), 0, 64);
        std::ptr::copy_nonoverlapping(text.as_ptr(), out.cast::<u8>(), text.len());
    }
}

unsafe extern "C" fn agent_get_info(agent: u64, attr: u32, out: *mut c_void) -> u32 {
    // SAFETY: each attribute's value type.
    unsafe {
        match attr {
            0 => put_text(out, if agent == GPU { "gfx942" } else { "cpu" }),
            1 => put_text(out, "AMD"),
            0xA009 => put_text(out, "harness GPU"),
            17 => *out.cast::<u32>() = if agent == GPU { 1 } else { 0 },
            _ => return ERROR,
        }
    }
    OK
}

unsafe extern "C" fn iterate_regions(_agent: u64, cb: AgentCallback, data: *mut c_void) -> u32 {
    // SAFETY: the caller's callback; one kernarg-like region.
    let _ = unsafe { cb(REGION, data) };
    OK
}

unsafe extern "C" fn region_get_info(_region: u64, attr: u32, out: *mut c_void) -> u32 {
    // SAFETY: each attribute's value type.
    unsafe {
        match attr {
            0 => *out.cast::<u32>() = 0,
            1 => *out.cast::<u32>() = 2 | 1,
            5 => *out.cast::<u8>() = 1,
            _ => return ERROR,
        }
    }
    OK
}

unsafe extern "C" fn memory_allocate(_region: u64, size: usize, out: *mut *mut c_void) -> u32 {
    let mem: &'static mut [u64] = Box::leak(vec![0x5a5a_5a5a_5a5a_5a5au64; size.div_ceil(8)].into_boxed_slice());
    // SAFETY: one pointer written.
    unsafe { *out = mem.as_mut_ptr().cast() };
    OK
}

/// A signal is an `amd_signal_t` (64 bytes, the value at byte 8), its
/// handle the block's address, as in AMD's runtime.
unsafe extern "C" fn signal_create(initial: i64, _n: u32, _c: *const u64, out: *mut u64) -> u32 {
    let block: &'static [AtomicI64; 8] = Box::leak(Box::new(std::array::from_fn(|_| AtomicI64::new(0))));
    block[1].store(initial, Ordering::Release);
    // SAFETY: one handle written.
    unsafe { *out = block.as_ptr() as u64 };
    OK
}

fn signal(h: u64) -> &'static AtomicI64 {
    // SAFETY: handles are leaked amd_signal_t-sized blocks; the value is their second word.
    unsafe { &*((h as *const AtomicI64).add(1)) }
}

/// The dispatch times in a signal (`start_ts`, `end_ts`).
pub fn times(h: u64) -> (i64, i64) {
    // SAFETY: as in `signal`: words 4 and 5 of the block.
    unsafe {
        let w = h as *const AtomicI64;
        ((*w.add(4)).load(Ordering::Acquire), (*w.add(5)).load(Ordering::Acquire))
    }
}

unsafe extern "C" fn signal_destroy(_h: u64) -> u32 {
    OK
}

unsafe extern "C" fn signal_load(h: u64) -> i64 {
    signal(h).load(Ordering::Acquire)
}

unsafe extern "C" fn signal_subtract(h: u64, v: i64) {
    signal(h).fetch_sub(v, Ordering::AcqRel);
}

/// A signal of the program's (value 1), and a wait for it.
pub fn new_signal() -> u64 {
    let mut h = 0;
    // SAFETY: one handle written.
    unsafe { signal_create(1, 0, std::ptr::null(), &mut h) };
    h
}

pub fn wait(h: u64) -> bool {
    let start = std::time::Instant::now();
    while signal(h).load(Ordering::Acquire) >= 1 {
        if start.elapsed() > std::time::Duration::from_secs(20) {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    true
}

unsafe extern "C" fn deserialize(p: *mut c_void, size: usize, _o: *const c_char, out: *mut u64) -> u32 {
    let h = fresh();
    // SAFETY: `size` bytes at `p`.
    let bytes = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), size) }.to_vec();
    with(|s| s.readers.insert(h, bytes));
    // SAFETY: one handle written.
    unsafe { *out = h };
    OK
}

unsafe extern "C" fn handle_ok(_h: u64) -> u32 {
    OK
}

unsafe extern "C" fn load_code_object(exec: u64, agent: u64, co: u64, _o: *const c_char) -> u32 {
    load(exec, agent, co)
}

fn load(exec: u64, agent: u64, reader: u64) -> u32 {
    with(|s| {
        let Some(bytes) = s.readers.get(&reader).cloned() else { return ERROR };
        if xfpx_amd::CodeObject::parse(&bytes).is_err() {
            return 0x100a; // HSA_STATUS_ERROR_INVALID_CODE_OBJECT
        }
        s.executables.entry(exec).or_default().0.push((agent, bytes));
        OK
    })
}

unsafe extern "C" fn load_agent(exec: u64, agent: u64, reader: u64, _o: *const c_char, _l: *mut u64) -> u32 {
    load(exec, agent, reader)
}

unsafe extern "C" fn load_program(exec: u64, reader: u64, _o: *const c_char, _l: *mut u64) -> u32 {
    load(exec, GPU, reader)
}

unsafe extern "C" fn freeze(exec: u64, _o: *const c_char) -> u32 {
    with(|s| {
        let Some((loaded, frozen)) = s.executables.get_mut(&exec) else { return ERROR };
        *frozen = true;
        let loaded = loaded.clone();
        for (_, bytes) in loaded {
            let co = xfpx_amd::CodeObject::parse(&bytes).unwrap();
            for k in &co.kernels {
                s.next += 1;
                let object = 0x7000_0000 + s.next;
                s.kernels.insert(object, (bytes.clone(), k.name.clone(), exec));
                s.symbols.insert(0x9000_0000 + s.next, object);
            }
        }
        OK
    })
}

unsafe extern "C" fn executable_create(_p: u32, _r: u32, _o: *const c_char, out: *mut u64) -> u32 {
    let h = fresh();
    with(|s| s.executables.insert(h, (Vec::new(), false)));
    // SAFETY: one handle written.
    unsafe { *out = h };
    OK
}

unsafe extern "C" fn executable_get_info(_e: u64, attr: u32, out: *mut c_void) -> u32 {
    // SAFETY: profile and rounding mode are 32-bit.
    unsafe { *out.cast::<u32>() = if attr == 1 { 0 } else { 1 } };
    OK
}

fn symbols_of(exec: u64) -> Vec<u64> {
    with(|s| {
        let mut v: Vec<u64> = s.symbols.iter().filter(|(_, o)| s.kernels[o].2 == exec).map(|(h, _)| *h).collect();
        v.sort();
        v
    })
}

unsafe extern "C" fn iterate_symbols(
    exec: u64,
    cb: unsafe extern "C" fn(u64, u64, *mut c_void) -> u32,
    data: *mut c_void,
) -> u32 {
    for sym in symbols_of(exec) {
        // SAFETY: the caller's callback.
        if unsafe { cb(exec, sym, data) } != OK {
            break;
        }
    }
    OK
}

unsafe extern "C" fn symbol_get_info(sym: u64, attr: u32, out: *mut c_void) -> u32 {
    let Some((object, name)) = with(|s| s.symbols.get(&sym).map(|o| (*o, s.kernels[o].1.clone()))) else {
        return ERROR;
    };
    let symbol = format!("{name}.kd");
    // SAFETY: each attribute's value type.
    unsafe {
        match attr {
            0 => *out.cast::<u32>() = 1,
            1 => *out.cast::<u32>() = symbol.len() as u32,
            2 => std::ptr::copy_nonoverlapping(symbol.as_ptr(), out.cast::<u8>(), symbol.len()),
            20 => *out.cast::<u64>() = GPU,
            22 => *out.cast::<u64>() = object,
            _ => return ERROR,
        }
    }
    OK
}

unsafe extern "C" fn symbol_by_name(exec: u64, name: *const c_char, _agent: *const u64, out: *mut u64) -> u32 {
    // SAFETY: a NUL-terminated name.
    let name = unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned();
    let found =
        symbols_of(exec).into_iter().find(|sym| with(|s| format!("{}.kd", s.kernels[&s.symbols[sym]].1)) == name);
    match found {
        Some(sym) => {
            // SAFETY: one handle written.
            unsafe { *out = sym };
            OK
        }
        None => 0x100b,
    }
}

unsafe extern "C" fn reader_from_memory(p: *const c_void, size: usize, out: *mut u64) -> u32 {
    // SAFETY: same contract as deserialize.
    unsafe { deserialize(p.cast_mut(), size, std::ptr::null(), out) }
}

unsafe extern "C" fn reader_from_file(fd: c_int, out: *mut u64) -> u32 {
    let mut bytes = Vec::new();
    // SAFETY: the program's open file, read from its start.
    unsafe {
        libc::lseek(fd, 0, libc::SEEK_SET);
        let mut buf = [0u8; 65536];
        loop {
            let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
            if n <= 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n as usize]);
        }
        deserialize(bytes.as_mut_ptr().cast(), bytes.len(), std::ptr::null(), out)
    }
}

type Writer = unsafe extern "C" fn(*const c_void, u64);
type Handler = unsafe extern "C" fn(*const c_void, u64, u64, *mut c_void, Writer);

unsafe extern "C" fn queue_create(
    _a: u64,
    _s: u32,
    _t: u32,
    _cb: *mut c_void,
    _d: *mut c_void,
    _p: u32,
    _g: u32,
    out: *mut *mut c_void,
) -> u32 {
    with(|s| s.plain_queues += 1);
    // SAFETY: one queue written.
    unsafe { *out = fresh() as *mut c_void };
    OK
}

unsafe extern "C" fn intercept_create(
    a: u64,
    s: u32,
    t: u32,
    cb: *mut c_void,
    d: *mut c_void,
    p: u32,
    g: u32,
    out: *mut *mut c_void,
) -> u32 {
    // SAFETY: same contract.
    unsafe { queue_create(a, s, t, cb, d, p, g, out) };
    with(|s| {
        s.plain_queues -= 1;
        // SAFETY: just written.
        s.handlers.insert(unsafe { *out } as u64, Vec::new());
    });
    OK
}

unsafe extern "C" fn intercept_register(queue: *mut c_void, handler: Handler, data: *mut c_void) -> u32 {
    with(|s| match s.handlers.get_mut(&(queue as u64)) {
        Some(h) => {
            h.push((handler as usize, data as usize));
            OK
        }
        None => ERROR,
    })
}

thread_local! {
    /// The handlers still to run for the packets being submitted.
    static CHAIN: std::cell::RefCell<Vec<(usize, usize)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Passes packets to the next handler, the last one to the "GPU".
unsafe extern "C" fn writer(pkts: *const c_void, count: u64) {
    let next = CHAIN.with(|c| c.borrow_mut().pop());
    match next {
        Some((h, data)) => {
            // SAFETY: a registered handler.
            let h: Handler = unsafe { std::mem::transmute::<usize, Handler>(h) };
            // SAFETY: the packets are alive for the call.
            unsafe { h(pkts, count, 0, data as *mut c_void, writer) };
            CHAIN.with(|c| c.borrow_mut().push((h as usize, data)));
        }
        None => {
            for i in 0..count as usize {
                // SAFETY: `count` packets of 64 bytes.
                let p = unsafe { std::ptr::read_unaligned(pkts.cast::<[u8; 64]>().add(i)) };
                execute(&p);
            }
        }
    }
}

/// The program rings a queue's doorbell with these packets: the
/// handlers run (the last registered first), then the "GPU".
pub fn submit(queue: *mut c_void, packets: &[[u8; 64]]) {
    let handlers = with(|s| s.handlers.get(&(queue as u64)).cloned().unwrap_or_default());
    CHAIN.with(|c| *c.borrow_mut() = handlers);
    // SAFETY: the packets are alive for the call.
    unsafe { writer(packets.as_ptr().cast(), packets.len() as u64) };
}

/// A kernel dispatch packet of `kernel_object` completing into `signal`.
pub fn dispatch_packet(kernel_object: u64, signal: u64) -> [u8; 64] {
    let mut p = [0u8; 64];
    p[..2].copy_from_slice(&(2u16 | 1 << 8 | 1 << 9 | 1 << 11).to_le_bytes());
    p[32..40].copy_from_slice(&kernel_object.to_le_bytes());
    p[56..64].copy_from_slice(&signal.to_le_bytes());
    p
}

fn demo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../cli/demo").join(name)
}

/// Runs a dispatch packet: its kernel object on the emulator, with the
/// demo's launch of that kernel; an instrumented copy's findings added
/// into its host table; then the packet's completion signal.
fn execute(p: &[u8; 64]) {
    let object = u64::from_le_bytes(p[32..40].try_into().unwrap());
    let completion = u64::from_le_bytes(p[56..64].try_into().unwrap());
    let (elf, kernel, _) = with(|s| s.kernels.get(&object).cloned()).expect("a kernel object of a frozen executable");
    let launch_file = match kernel.as_str() {
        "exc_nan" => "nan.json",
        "exc_overflow" => "overflow.json",
        _ => "div0.json",
    };
    let launch = Launch::load(&demo(launch_file)).unwrap();
    let mut memory = LaunchMemory::new(&launch);
    let record = RewriteRecord::read(&elf).unwrap();
    let (program, table) = match &record {
        Some(r) => {
            let host = table_address(&elf, r);
            let bytes = r.table_bytes() as usize;
            let emulated = memory.allocate(vec![0; bytes]);
            (Program::parse(&r.place_table(&elf, emulated).unwrap()).unwrap(), Some((host, emulated, bytes)))
        }
        None => (Program::parse(&elf).unwrap(), None),
    };
    let (outputs, _) = memory.run(&launch, &program, &RunLimits::default()).unwrap();
    if let Some((host, emulated, bytes)) = table {
        let recorded = memory.allocation(emulated).unwrap()[..bytes].to_vec();
        for (i, word) in recorded.chunks(4).enumerate() {
            let add = u32::from_le_bytes(word.try_into().unwrap());
            // SAFETY: the host table the copy names, `bytes` long (the tool allocated it here).
            let slot = unsafe { &*((host as *const std::sync::atomic::AtomicU32).add(i)) };
            slot.fetch_add(add, Ordering::AcqRel);
        }
    }
    with(|s| s.ran.push((kernel, record.is_some(), outputs[0].bytes.clone())));
    if completion != 0 {
        // the packet processor's times: this dispatch is the n-th ran
        let n = with(|s| s.ran.len()) as i64;
        // SAFETY: words 4 and 5 of the signal's block (`start_ts`, `end_ts`).
        unsafe {
            let w = completion as *const AtomicI64;
            (*w.add(4)).store(1000 * n, Ordering::Release);
            (*w.add(5)).store(1000 * n + 500, Ordering::Release);
        }
        signal(completion).fetch_sub(1, Ordering::AcqRel);
    }
}

/// The table address an instrumented copy carries in its literals.
fn table_address(elf: &[u8], r: &RewriteRecord) -> u64 {
    let file = xfpx_amd::elf::ElfFile::parse(elf).unwrap();
    r.table_address_literals.iter().fold(0u64, |a, l| {
        let w = u32::from_le_bytes(file.bytes_at_addr(l.address, 4).unwrap().try_into().unwrap());
        if l.high {
            a | (u64::from(w) << 32)
        } else {
            a | u64::from(w)
        }
    })
}

/// The program's calls, through the table as `hsa_*` would go.
pub struct App {
    pub tables: Box<ApiTables>,
    pub layout: &'static Layout,
}

macro_rules! call {
    ($self:expr, $entry:expr, $ty:ty, $($arg:expr),*) => {{
        let f = $self.tables.entry($entry, $self.layout);
        assert_ne!(f, 0);
        // SAFETY: the table's entry has this type.
        let f: $ty = unsafe { std::mem::transmute::<u64, $ty>(f) };
        // SAFETY: the arguments are the program's.
        unsafe { f($($arg),*) }
    }};
}

impl App {
    pub fn reader_from_memory(&self, bytes: &[u8]) -> u64 {
        let mut r = 0u64;
        let st = call!(
            self,
            Entry::ReaderCreateFromMemory,
            unsafe extern "C" fn(*const c_void, usize, *mut u64) -> u32,
            bytes.as_ptr().cast(),
            bytes.len(),
            &mut r
        );
        assert_eq!(st, OK);
        r
    }

    pub fn reader_from_file(&self, path: &Path) -> u64 {
        let file = std::fs::File::open(path).unwrap();
        use std::os::fd::AsRawFd;
        let mut r = 0u64;
        let st = call!(
            self,
            Entry::ReaderCreateFromFile,
            unsafe extern "C" fn(c_int, *mut u64) -> u32,
            file.as_raw_fd(),
            &mut r
        );
        assert_eq!(st, OK);
        r
    }

    /// The deprecated path: `hsa_code_object_deserialize`.
    pub fn deserialize(&self, bytes: &[u8]) -> u64 {
        let mut co = 0u64;
        let st = call!(
            self,
            Entry::CodeObjectDeserialize,
            unsafe extern "C" fn(*mut c_void, usize, *const c_char, *mut u64) -> u32,
            bytes.as_ptr().cast_mut().cast(),
            bytes.len(),
            std::ptr::null(),
            &mut co
        );
        assert_eq!(st, OK);
        co
    }

    /// `hsa_executable_load_code_object` of a deserialized code object.
    pub fn load_code_object(&self, exec: u64, co: u64) -> u32 {
        call!(
            self,
            Entry::ExecutableLoadCodeObject,
            unsafe extern "C" fn(u64, u64, u64, *const c_char) -> u32,
            exec,
            GPU,
            co,
            std::ptr::null()
        )
    }

    pub fn executable(&self) -> u64 {
        let mut e = 0u64;
        let st = call!(
            self,
            Entry::ExecutableCreateAlt,
            unsafe extern "C" fn(u32, u32, *const c_char, *mut u64) -> u32,
            0,
            1,
            std::ptr::null(),
            &mut e
        );
        assert_eq!(st, OK);
        e
    }

    pub fn load(&self, exec: u64, reader: u64) -> u32 {
        call!(
            self,
            Entry::ExecutableLoadAgentCodeObject,
            unsafe extern "C" fn(u64, u64, u64, *const c_char, *mut u64) -> u32,
            exec,
            GPU,
            reader,
            std::ptr::null(),
            std::ptr::null_mut()
        )
    }

    pub fn freeze(&self, exec: u64) {
        let st = call!(
            self,
            Entry::ExecutableFreeze,
            unsafe extern "C" fn(u64, *const c_char) -> u32,
            exec,
            std::ptr::null()
        );
        assert_eq!(st, OK);
    }

    pub fn kernel_object(&self, exec: u64, kernel: &str) -> u64 {
        let name = std::ffi::CString::new(format!("{kernel}.kd")).unwrap();
        let (mut sym, mut object) = (0u64, 0u64);
        let st = call!(
            self,
            Entry::ExecutableGetSymbolByName,
            unsafe extern "C" fn(u64, *const c_char, *const u64, *mut u64) -> u32,
            exec,
            name.as_ptr(),
            &GPU,
            &mut sym
        );
        assert_eq!(st, OK);
        let st = call!(
            self,
            Entry::ExecutableSymbolGetInfo,
            unsafe extern "C" fn(u64, u32, *mut c_void) -> u32,
            sym,
            22,
            (&mut object as *mut u64).cast()
        );
        assert_eq!(st, OK);
        object
    }

    pub fn queue(&self) -> *mut c_void {
        let mut q: *mut c_void = std::ptr::null_mut();
        let st = call!(
            self,
            Entry::QueueCreate,
            unsafe extern "C" fn(u64, u32, u32, *mut c_void, *mut c_void, u32, u32, *mut *mut c_void) -> u32,
            GPU,
            64,
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            0,
            &mut q
        );
        assert_eq!(st, OK);
        q
    }
}

/// The tool library cargo built beside this test.
pub fn tool_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps.join("libxfpx_hsa.so"), deps.join("../libxfpx_hsa.so")]
        .into_iter()
        .find(|p| p.is_file())
        .expect("libxfpx_hsa.so built beside the tests")
}
