//! The flat C interface of the tool: the only `unsafe` of the NVIDIA
//! backend. Every entry catches panics (a panic never unwinds into C++)
//! and reports failures as return values or notes.

use std::ffi::{c_char, c_int, CStr, CString};
use std::os::unix::ffi::OsStrExt as _;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::{Mutex, MutexGuard, OnceLock};
use xfpx_common::capture::ParamSlot;
use xfpx_common::probe::When;
use xfpx_nvidia::abi;
use xfpx_nvidia::capture_run::{Geometry, Phase};
use xfpx_nvidia::disasm_cache::{DisasmCache, HELPER_FILE_NAME};
use xfpx_nvidia::prefill::{self, DeviceTarget};
use xfpx_nvidia::runtime::{KernelNames, LaunchWay, ToolCore};
use xfpx_nvidia::screen::device::ScreenPlan;
use xfpx_nvidia::CallArg;

/// Argument kinds of [`XfpxCallArg`] (keep in step with `xfpx_nvbit.h`).
pub const ARG_GUARD_PRED: u32 = 0;
pub const ARG_CONST32: u32 = 1;
pub const ARG_CONST64: u32 = 2;
pub const ARG_REG: u32 = 3;
pub const ARG_UREG: u32 = 4;
pub const ARG_CBANK: u32 = 5;
pub const ARG_LAUNCH64: u32 = 6;
pub const ARG_PREDS: u32 = 7;
/// Most arguments one call may carry.
pub const MAX_ARGS: usize = 12;

/// One argument: `kind` and its operands (`a`: 32-bit value, register or
/// bank; `b`: 64-bit value or bank offset).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct XfpxCallArg {
    pub kind: u32,
    pub a: u32,
    pub b: u64,
}

/// One call to insert.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct XfpxCall {
    pub instr: u32,
    /// 1: after the instruction, 0: before.
    pub after: u32,
    /// Index for [`xfpx_function_name`].
    pub function: u32,
    pub nargs: u32,
    pub args: [XfpxCallArg; MAX_ARGS],
}

static CORE: Mutex<Option<ToolCore>> = Mutex::new(None);
static FUNCTION_NAMES: OnceLock<Vec<CString>> = OnceLock::new();

fn function_names() -> &'static [CString] {
    FUNCTION_NAMES.get_or_init(|| {
        abi::device_functions()
            .map(|fs| fs.into_iter().filter_map(|f| CString::new(f.name).ok()).collect())
            .unwrap_or_default()
    })
}

fn core() -> MutexGuard<'static, Option<ToolCore>> {
    CORE.lock().unwrap_or_else(|p| p.into_inner())
}

fn warn(msg: &str) {
    eprintln!("xfpx: {msg}");
}

/// Run `f` on the core; `default` when there is none or `f` panics.
pub(crate) fn with_core<T>(default: T, f: impl FnOnce(&mut ToolCore) -> T) -> T {
    match catch_unwind(AssertUnwindSafe(|| core().as_mut().map(f))) {
        Ok(Some(v)) => v,
        Ok(None) => default,
        Err(_) => {
            warn("internal error in the NVBit tool (a panic was caught); continuing without it");
            default
        }
    }
}

/// # Safety
/// `p` is null or a NUL-terminated string valid for this call.
pub(crate) unsafe fn str_arg<'a>(p: *const c_char) -> &'a str {
    if p.is_null() {
        return "";
    }
    // SAFETY: the caller passes a valid NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_str().unwrap_or("")
}

/// Load the configuration (`XFPX_CONFIG`); 0 on success, -1 when the tool
/// must stay inactive (the reason is printed on one line).
#[no_mangle]
pub extern "C" fn xfpx_init() -> c_int {
    let r = catch_unwind(ToolCore::from_env);
    match r {
        Ok(Ok(c)) => {
            *core() = Some(c);
            let _ = function_names();
            0
        }
        Ok(Err(e)) => {
            warn(&format!("{e}; the program runs without instrumentation"));
            -1
        }
        Err(_) => -1,
    }
}

/// The device the tool attached to.
///
/// # Safety
/// Both arguments are null or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn xfpx_device(name: *const c_char, target: *const c_char) {
    // SAFETY: forwarded from the caller's contract.
    let (name, target) = unsafe { (str_arg(name), str_arg(target)) };
    with_core((), |c| c.device(name, (!target.is_empty()).then_some(target)));
    if let Some(sm) = prefill::target_number(target) {
        DEVICE_TARGET.tell(sm);
    }
}

pub(crate) static DEVICE_TARGET: DeviceTarget = DeviceTarget::new();

/// Disassemble the program's functions and its libraries' ahead of NVBit, in the
/// background, through the caching wrapper (module `prefill`). Does
/// nothing when the cache is off or the run configuration disassembles
/// nothing ahead (`XFPX_PREFILL=0`).
#[no_mangle]
pub extern "C" fn xfpx_prefill_start() {
    let _ = catch_unwind(|| {
        let Some(Some((cache, wrapper))) = NVDISASM_WRAPPER.get() else { return };
        let ahead = with_core(0, |c| c.tool_settings().disassemble_ahead);
        let limits = prefill::PrefillLimits::with_functions(ahead);
        if limits.functions == 0 {
            return;
        }
        let wrapper = Path::new(std::ffi::OsStr::from_bytes(wrapper.as_bytes())).to_path_buf();
        let wanted = |name: &str| with_core(true, |c| c.wants_kernel(KernelNames { mangled: name, demangled: name }));
        let done = |line: String| with_core((), |c| c.note(&line));
        // the detector's plans of the program's functions, made here
        // rather than at their first launches
        let planner = with_core(None, |c| c.ahead_planner());
        let listed = move |name: &str, listing: &str| {
            if let Some(p) = &planner {
                p.plan(name, listing);
            }
        };
        // The libraries' functions a program launches are a few of
        // thousands: where their first launches are screened while they are
        // disassembled (`prepare_ffi`), the libraries are not read ahead.
        let with_libraries = with_core(true, |c| !(c.screening() && c.tool_settings().background_disassembly));
        if !with_libraries {
            crate::prepare_ffi::index_libraries();
        }
        let started = prefill::start_background(
            "/proc/self/exe".into(),
            with_libraries,
            cache.clone(),
            wrapper,
            limits,
            &DEVICE_TARGET,
            wanted,
            listed,
            done,
        );
        if let Err(e) = started {
            with_core((), |c| c.note(&format!("the program's functions are not disassembled ahead: {e}")));
        }
    });
}

/// Something the user should read.
///
/// # Safety
/// `text` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xfpx_note(text: *const c_char) {
    // SAFETY: forwarded from the caller's contract.
    let text = unsafe { str_arg(text) };
    with_core((), |c| c.note(text));
}

/// 1 when the user's filters admit the kernel.
///
/// # Safety
/// Both names are null or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn xfpx_wants_kernel(mangled: *const c_char, demangled: *const c_char) -> c_int {
    // SAFETY: forwarded from the caller's contract.
    let names = unsafe { KernelNames { mangled: str_arg(mangled), demangled: str_arg(demangled) } };
    with_core(0, |c| c_int::from(c.wants_kernel(names)))
}

/// Note a kernel the filters exclude.
///
/// # Safety
/// Both names are null or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn xfpx_exclude_kernel(mangled: *const c_char, demangled: *const c_char) {
    // SAFETY: forwarded from the caller's contract.
    let names = unsafe { KernelNames { mangled: str_arg(mangled), demangled: str_arg(demangled) } };
    with_core((), |c| c.exclude_kernel(names));
}

/// The disassembler cache and what NVBit runs for it, once set up.
pub(crate) static NVDISASM_WRAPPER: OnceLock<Option<(DisasmCache, CString)>> = OnceLock::new();

/// The disassembler NVBit should run: the caching wrapper of
/// [`xfpx_nvidia::disasm_cache`], or null (NVBit's own choice) when the
/// cache is off or cannot be set up (a note says why). Where the cache's
/// helper program is installed beside `tool_library` (this library's
/// file), that program, with its settings put in the environment, answers
/// cached calls and hands the others to the wrapper script.
///
/// # Safety
/// `tool_library` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xfpx_nvdisasm_wrapper(tool_library: *const c_char) -> *const c_char {
    // SAFETY: forwarded from the caller's contract.
    let library = Path::new(unsafe { str_arg(tool_library) });
    let helper = library.parent().map(|d| d.join(HELPER_FILE_NAME)).filter(|p| p.is_file());
    let made = catch_unwind(|| {
        NVDISASM_WRAPPER.get_or_init(|| {
            let setting = with_core(None, |c| Some(c.tool_settings().disassembly_cache.clone()))?;
            let cache = DisasmCache::resolve(&setting, |k| std::env::var(k).ok())?;
            let script = match cache.write_wrapper() {
                Ok(p) => p,
                Err(e) => {
                    with_core((), |c| c.note(&format!("NVBit's disassembler calls are not cached: {e}")));
                    return None;
                }
            };
            // the settings go to the environment NVBit's calls inherit; set
            // while the program has no thread of its own yet (at the tool's
            // start)
            let run = match helper.map(|h| cache.helper_env(&script).map(|env| (h, env))) {
                Some(Ok((h, env))) => {
                    env.iter().for_each(|(k, v)| std::env::set_var(k, v));
                    h
                }
                Some(Err(e)) => {
                    with_core((), |c| c.note(&format!("the disassembly cache's helper is not used: {e}")));
                    script
                }
                None => script,
            };
            CString::new(run.into_os_string().into_encoded_bytes()).ok().map(|w| (cache, w))
        })
    });
    match made {
        Ok(Some((_, w))) => w.as_ptr(),
        _ => std::ptr::null(),
    }
}

/// 1 when source lines are wanted (the run configuration's
/// `tools.source_lines`, `XFPX_NVIDIA_LINES`).
#[no_mangle]
pub extern "C" fn xfpx_lines_enabled() -> c_int {
    with_core(0, |c| c_int::from(c.lines_enabled()))
}

/// Read the line table of a dumped cubin; failures become one note.
///
/// # Safety
/// `path` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xfpx_load_cubin_lines(path: *const c_char) {
    // SAFETY: forwarded from the caller's contract.
    let path = unsafe { str_arg(path) };
    with_core((), |c| {
        if let Err(e) = c.load_cubin_lines(Path::new(path)) {
            c.note(&format!("source lines unavailable: {e}"));
        }
    });
}

fn encode_arg(a: CallArg) -> XfpxCallArg {
    match a {
        CallArg::GuardPred => XfpxCallArg { kind: ARG_GUARD_PRED, a: 0, b: 0 },
        CallArg::Const32 { value } => XfpxCallArg { kind: ARG_CONST32, a: value, b: 0 },
        CallArg::Const64 { value } => XfpxCallArg { kind: ARG_CONST64, a: 0, b: value },
        CallArg::Reg { num } => XfpxCallArg { kind: ARG_REG, a: u32::from(num), b: 0 },
        CallArg::UReg { num } => XfpxCallArg { kind: ARG_UREG, a: u32::from(num), b: 0 },
        CallArg::Cbank { bank, offset } => XfpxCallArg { kind: ARG_CBANK, a: bank, b: u64::from(offset) },
        CallArg::LaunchVal64 => XfpxCallArg { kind: ARG_LAUNCH64, a: 0, b: 0 },
        CallArg::Preds => XfpxCallArg { kind: ARG_PREDS, a: 0, b: 0 },
    }
}

/// Plan one function from its `n` instructions (SASS texts and offsets)
/// and return the calls to insert in `*calls_out` (free them with
/// [`xfpx_free_calls`]). Returns the number of calls, or -1 when the
/// function is left uninstrumented.
///
/// # Safety
/// `sass` and `offsets` point to `n` valid entries (each SASS text a
/// NUL-terminated string); `calls_out` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn xfpx_instrument(
    mangled: *const c_char,
    demangled: *const c_char,
    n: u32,
    sass: *const *const c_char,
    offsets: *const u32,
    state_addr: u64,
    calls_out: *mut *mut XfpxCall,
) -> i64 {
    if calls_out.is_null() || (n > 0 && (sass.is_null() || offsets.is_null())) {
        return -1;
    }
    // SAFETY: the caller guarantees n valid entries behind each pointer.
    let (names, instrs) = unsafe {
        let names = KernelNames { mangled: str_arg(mangled), demangled: str_arg(demangled) };
        let (texts, offs): (&[*const c_char], &[u32]) = if n == 0 {
            (&[], &[])
        } else {
            (std::slice::from_raw_parts(sass, n as usize), std::slice::from_raw_parts(offsets, n as usize))
        };
        let instrs: Vec<(u64, String)> =
            offs.iter().zip(texts).map(|(o, t)| (u64::from(*o), str_arg(*t).to_string())).collect();
        (names, instrs)
    };
    let calls = with_core(None, |c| match c.instrument_function(names, &instrs, state_addr) {
        Ok(calls) => Some(calls),
        Err(e) => {
            warn(&format!("kernel {} left uninstrumented: {e}", names.mangled));
            None
        }
    });
    let Some(calls) = calls else { return -1 };
    let functions = function_names();
    let mut out = Vec::with_capacity(calls.len());
    // the lowering checks calls against abi.def; a call the record cannot
    // carry leaves the kernel alone, and the report says so
    let refuse = |why: String| {
        with_core((), |c| c.leave_uninstrumented(names, &why));
        -1
    };
    for c in calls {
        let Some(function) = functions.iter().position(|n| n.to_str() == Ok(c.function.as_str())) else {
            return refuse(format!("no device function `{}` in the tool", c.function));
        };
        if c.args.len() > MAX_ARGS {
            return refuse(format!("a call to `{}` has {} arguments, more than {MAX_ARGS}", c.function, c.args.len()));
        }
        let mut call = XfpxCall {
            instr: c.instr,
            after: u32::from(c.when == When::After),
            function: function as u32,
            nargs: c.args.len() as u32,
            args: [XfpxCallArg::default(); MAX_ARGS],
        };
        for (slot, a) in call.args.iter_mut().zip(c.args) {
            *slot = encode_arg(a);
        }
        out.push(call);
    }
    let len = out.len();
    let boxed: Box<[XfpxCall]> = out.into_boxed_slice();
    // SAFETY: calls_out was checked non-null.
    unsafe { *calls_out = Box::into_raw(boxed).cast::<XfpxCall>() };
    len as i64
}

/// Free calls returned by [`xfpx_instrument`].
///
/// # Safety
/// `calls` and `n` are exactly what one `xfpx_instrument` call returned.
#[no_mangle]
pub unsafe extern "C" fn xfpx_free_calls(calls: *mut XfpxCall, n: u64) {
    if calls.is_null() {
        return;
    }
    // SAFETY: rebuilds the boxed slice xfpx_instrument leaked.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(calls, n as usize)) });
}

/// Name of device function `index` (a static string), or null.
#[no_mangle]
pub extern "C" fn xfpx_function_name(index: u32) -> *const c_char {
    function_names().get(index as usize).map_or(std::ptr::null(), |n| n.as_ptr())
}

/// Number of sites so far (the device table must cover ids below it).
#[no_mangle]
pub extern "C" fn xfpx_site_count() -> u32 {
    with_core(0, |c| c.site_count())
}

/// How a launch reached the shim (`way` of [`xfpx_launch`]; keep in step
/// with `xfpx_nvbit.h`).
pub const LAUNCH_STREAM: u32 = 0;
pub const LAUNCH_PARAMS_UNKNOWN: u32 = 1;
pub const LAUNCH_GRAPH: u32 = 2;
pub const LAUNCH_OTHER_CONTEXT: u32 = 3;

/// Decide a launch: 1 to run it instrumented (2: and to instrument its
/// code first, the kernel's background preparation cut short), with its serial number in
/// `*serial` and the scans of its buffers in `*plan` (launch screening;
/// each scan's `count` 0 when there is none). `way` says how it was
/// launched; a stream launch ([`LAUNCH_STREAM`]) gives its `len` parameter
/// bytes and `n` pairs (offset, size) of its parameters in `layout`.
///
/// # Safety
/// Names are null or NUL-terminated strings; `params` points to `len`
/// bytes and `layout` to `2 * n` values (or are null when those are 0);
/// `serial` and `plan` are null or valid pointers.
#[no_mangle]
pub unsafe extern "C" fn xfpx_launch(
    mangled: *const c_char,
    demangled: *const c_char,
    way: u32,
    params: *const u8,
    len: u64,
    layout: *const u64,
    n: u64,
    serial: *mut u64,
    plan: *mut ScreenPlan,
) -> c_int {
    // SAFETY: forwarded from the caller's contract.
    let names = unsafe { KernelNames { mangled: str_arg(mangled), demangled: str_arg(demangled) } };
    let readable = (len == 0 || !params.is_null()) && (n == 0 || !layout.is_null());
    // SAFETY: the caller guarantees the sizes behind each non-null pointer.
    let (bytes, pairs): (&[u8], &[u64]) = unsafe {
        (
            if len == 0 || params.is_null() { &[] } else { std::slice::from_raw_parts(params, len as usize) },
            if n == 0 || layout.is_null() { &[] } else { std::slice::from_raw_parts(layout, 2 * n as usize) },
        )
    };
    let slots: Vec<ParamSlot> = pairs.chunks_exact(2).map(|p| ParamSlot { offset: p[0], size: p[1] }).collect();
    let way = match way {
        LAUNCH_STREAM if readable => LaunchWay::Stream { params: bytes, layout: &slots },
        LAUNCH_GRAPH => LaunchWay::Graph,
        LAUNCH_OTHER_CONTEXT => LaunchWay::OtherContext,
        _ => LaunchWay::ParamsUnknown,
    };
    let d = with_core(None, |c| Some(c.launch_with(names, way)));
    if !plan.is_null() {
        // SAFETY: checked non-null; the caller passes a valid pointer.
        unsafe { *plan = d.and_then(|d| d.screen).unwrap_or_default() };
    }
    match d {
        Some(d) => {
            if !serial.is_null() {
                // SAFETY: checked non-null; the caller passes a valid pointer.
                unsafe { *serial = d.serial };
            }
            // 2: instrument it now, its preparation cut short (see `prepare_ffi`)
            c_int::from(d.instrument) + c_int::from(d.instrument && d.prepare_now)
        }
        None => 0,
    }
}

/// 1 when the run screens launches: the shim then makes the screen's
/// device memory (telling [`xfpx_screen_ready`]), reports device
/// allocations and reads each launch's parameters.
#[no_mangle]
pub extern "C" fn xfpx_screening() -> c_int {
    with_core(0, |c| c_int::from(c.screening()))
}

/// The screen's device memory was made (`ok` 1) or could not be.
#[no_mangle]
pub extern "C" fn xfpx_screen_ready(ok: c_int) {
    with_core((), |c| c.screen_ready(ok != 0));
}

/// The program allocated `bytes` of device memory at `base` (for launch
/// screening and launch capture).
#[no_mangle]
pub extern "C" fn xfpx_device_alloc(base: u64, bytes: u64) {
    with_core((), |c| c.allocated(base, bytes));
}

/// The program freed the device allocation at `base`.
#[no_mangle]
pub extern "C" fn xfpx_device_free(base: u64) {
    with_core((), |c| c.freed(base));
}

/// Kernel `kernel` calls function `callee` (both mangled).
///
/// # Safety
/// Both names are null or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn xfpx_kernel_calls(kernel: *const c_char, callee: *const c_char) {
    // SAFETY: forwarded from the caller's contract.
    let (kernel, callee) = unsafe { (str_arg(kernel), str_arg(callee)) };
    with_core((), |c| c.kernel_calls(kernel, callee));
}

/// Records read from the screen's ring (`len` bytes, 64 per record).
///
/// # Safety
/// `bytes` points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn xfpx_screen_records(bytes: *const u8, len: u64) {
    if bytes.is_null() {
        return;
    }
    // SAFETY: the caller guarantees len readable bytes.
    let b = unsafe { std::slice::from_raw_parts(bytes, len as usize) };
    with_core((), |c| c.on_screen_records(b));
}

/// The screen of launch `serial` (a screened launch) could not be
/// enqueued; `why` is the CUDA error.
///
/// # Safety
/// `why` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xfpx_screen_lost(serial: u64, why: *const c_char) {
    // SAFETY: forwarded from the caller's contract.
    let why = unsafe { str_arg(why) };
    with_core((), |c| c.screen_lost(serial, why));
}

/// New-finding records read from the ring (`len` bytes, 16 per record).
///
/// # Safety
/// `bytes` points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn xfpx_records(bytes: *const u8, len: u64) {
    if bytes.is_null() {
        return;
    }
    // SAFETY: the caller guarantees len readable bytes.
    let b = unsafe { std::slice::from_raw_parts(bytes, len as usize) };
    let bad = with_core(0, |c| c.on_records(b));
    if bad > 0 {
        warn(&format!("{bad} malformed device records ignored"));
    }
}

/// A chunk of the device site table, first site `first`.
///
/// # Safety
/// `bytes` points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn xfpx_table_chunk(first: u32, bytes: *const u8, len: u64) {
    if bytes.is_null() {
        return;
    }
    // SAFETY: the caller guarantees len readable bytes.
    let b = unsafe { std::slice::from_raw_parts(bytes, len as usize) };
    with_core((), |c| {
        if let Err(e) = c.on_table_chunk(first, b) {
            c.note(&format!("site table unreadable: {e}"));
        }
    });
}

/// 1 when the run counts (the counters tool): each instrumented launch
/// then needs a count table ([`xfpx_count_table`]) as its per-launch value.
#[no_mangle]
pub extern "C" fn xfpx_counting() -> c_int {
    with_core(0, |c| c_int::from(c.counting()))
}

/// The functions instrumented next are this kernel (about to be launched
/// for the first time) and the functions it calls.
///
/// # Safety
/// `mangled` is null or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn xfpx_instrumenting_for(mangled: *const c_char) {
    // SAFETY: forwarded from the caller's contract.
    let mangled = unsafe { str_arg(mangled) };
    with_core((), |c| c.instrumenting_for(mangled));
}

/// The count table of instrumented launch `serial` of `blocks` thread
/// blocks (0: not known): its header (`TABLE_HEADER_BYTES`, 32) in `header` and its size in
/// `*bytes`; the rest of the table is zero. Returns 0 when the launch has
/// no table (it must then run its original code).
///
/// # Safety
/// `header` points to 32 writable bytes and `bytes` is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn xfpx_count_table(serial: u64, blocks: u64, header: *mut u8, bytes: *mut u64) -> c_int {
    if header.is_null() || bytes.is_null() {
        return 0;
    }
    let Some(shape) = with_core(None, |c| c.count_table(serial, blocks)) else { return 0 };
    let h = shape.header();
    // SAFETY: the caller passes 32 writable bytes and a valid pointer.
    unsafe {
        std::ptr::copy_nonoverlapping(h.as_ptr(), header, h.len());
        *bytes = shape.bytes() as u64;
    }
    1
}

/// The count table of launch `serial` read back after the launch
/// completed (`len` bytes), or null when it could not be allocated or read.
///
/// # Safety
/// `table` is null or points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn xfpx_count_result(serial: u64, table: *const u8, len: u64) {
    // SAFETY: the caller guarantees len readable bytes.
    let t = (!table.is_null()).then(|| unsafe { std::slice::from_raw_parts(table, len as usize) });
    with_core((), |c| c.on_count_table(serial, t));
}

/// Bytes of device memory the inject tool's state needs (0: the run
/// injects nothing).
#[no_mangle]
pub extern "C" fn xfpx_inject_bytes() -> u64 {
    with_core(0, |c| c.inject_bytes())
}

/// The device address of the inject tool's state, made by the shim.
#[no_mangle]
pub extern "C" fn xfpx_inject_state(addr: u64) {
    with_core((), |c| c.set_inject_state(addr));
}

/// The fault's activations read back (`exact` 0: only the mapped flag
/// could be read, `activations` is then 1 if the fault fired).
#[no_mangle]
pub extern "C" fn xfpx_inject_result(activations: u64, exact: c_int) {
    with_core((), |c| c.inject_result(activations, exact != 0));
}

/// 1 when the run captures launches (`--capture`): the shim then reports
/// device allocations and offers each launch to [`xfpx_capture_begin`].
#[no_mangle]
pub extern "C" fn xfpx_capturing() -> c_int {
    with_core(0, |c| c_int::from(c.capture().is_some()))
}

/// A device allocation of `bytes` at `base` that the driver named
/// (`cuMemGetAddressRange`) but the tool did not see made: the capture
/// learns it (the allocations the program makes come through
/// [`xfpx_device_alloc`]).
#[no_mangle]
pub extern "C" fn xfpx_capture_alloc(base: u64, bytes: u64) {
    with_core((), |c| {
        if let Some(k) = c.capture() {
            k.allocated(base, bytes);
        }
    });
}

/// 1 when `addr` lies in a device allocation the capture knows.
#[no_mangle]
pub extern "C" fn xfpx_capture_knows(addr: u64) -> c_int {
    with_core(0, |c| c_int::from(c.capture().is_some_and(|k| k.knows(addr))))
}

/// 1 while the capture may still take a launch (under
/// `--capture-max-launches`, not stopped by a write error).
#[no_mangle]
pub extern "C" fn xfpx_capture_room() -> c_int {
    with_core(0, |c| c_int::from(c.capture().is_some_and(|k| k.has_room())))
}

/// A launch is about to start: `geometry` holds grid x, y, z, block x, y,
/// z and the dynamic shared memory in bytes; `params` its `len` parameter
/// bytes; `layout` `n` pairs (offset, size) of its parameters. Returns
/// the number of allocations to copy before and after it (0: the launch
/// is not captured), its handle in `*handle`.
///
/// # Safety
/// Names are null or NUL-terminated strings; `geometry` points to 7
/// values, `params` to `len` bytes, `layout` to `2 * n` values; `handle`
/// is a valid pointer.
#[no_mangle]
pub unsafe extern "C" fn xfpx_capture_begin(
    mangled: *const c_char,
    demangled: *const c_char,
    geometry: *const u32,
    params: *const u8,
    len: u64,
    layout: *const u64,
    n: u64,
    handle: *mut u64,
) -> i64 {
    if geometry.is_null() || handle.is_null() || (len > 0 && params.is_null()) || (n > 0 && layout.is_null()) {
        return 0;
    }
    // SAFETY: the caller guarantees the sizes behind each pointer.
    let (names, g, bytes, pairs) = unsafe {
        (
            KernelNames { mangled: str_arg(mangled), demangled: str_arg(demangled) },
            std::slice::from_raw_parts(geometry, 7),
            if len == 0 { &[][..] } else { std::slice::from_raw_parts(params, len as usize) },
            if n == 0 { &[][..] } else { std::slice::from_raw_parts(layout, 2 * n as usize) },
        )
    };
    let geometry = Geometry { grid: [g[0], g[1], g[2]], block: [g[3], g[4], g[5]], dynamic_shared: g[6] };
    let slots: Vec<ParamSlot> = pairs.chunks(2).map(|p| ParamSlot { offset: p[0], size: p[1] }).collect();
    match with_core(None, |c| c.capture_begin(names, geometry, bytes, &slots)) {
        Some((h, ranges)) => {
            // SAFETY: checked non-null; the caller passes a valid pointer.
            unsafe { *handle = h };
            ranges.len() as i64
        }
        None => 0,
    }
}

/// Allocation `index` of captured launch `handle`: its base and size.
/// Returns 0 when there is no such allocation.
///
/// # Safety
/// `base` and `bytes` are valid pointers.
#[no_mangle]
pub unsafe extern "C" fn xfpx_capture_range(handle: u64, index: u64, base: *mut u64, bytes: *mut u64) -> c_int {
    if base.is_null() || bytes.is_null() {
        return 0;
    }
    let Some((b, n)) = with_core(None, |c| c.capture()?.range(handle, index as usize)) else { return 0 };
    // SAFETY: checked non-null; the caller passes valid pointers.
    unsafe {
        *base = b;
        *bytes = n;
    }
    1
}

/// The contents of allocation `index` of captured launch `handle`, before
/// (`after` 0) or after the launch: `len` bytes, or null when the copy failed.
///
/// # Safety
/// `bytes` is null or points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn xfpx_capture_image(handle: u64, index: u64, after: c_int, bytes: *const u8, len: u64) {
    // SAFETY: the caller guarantees len readable bytes.
    let data = (!bytes.is_null()).then(|| unsafe { std::slice::from_raw_parts(bytes, len as usize) });
    let phase = if after != 0 { Phase::After } else { Phase::Before };
    with_core((), |c| {
        if let Some(k) = c.capture() {
            k.image(handle, index as usize, phase, data);
        }
    });
}

/// Captured launch `handle` finished (`launched` 0: it failed).
#[no_mangle]
pub extern "C" fn xfpx_capture_end(handle: u64, launched: c_int) {
    with_core((), |c| {
        if let Some(k) = c.capture() {
            k.end(handle, launched != 0);
        }
    });
}

/// Called now and then by the shim's poller: what waits to be sent and
/// has waited long enough goes out.
#[no_mangle]
pub extern "C" fn xfpx_tick() {
    with_core((), ToolCore::tick);
}

/// The program is exiting.
#[no_mangle]
pub extern "C" fn xfpx_finish() {
    with_core((), |c| {
        if let Some(line) = prefill::PROGRESS.unfinished_note() {
            c.note(&line);
        }
        if let Some(line) = crate::prepare_ffi::finish_note() {
            c.note(&line);
        }
        if let Err(e) = c.finish() {
            warn(&e);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_names_come_from_the_declaration() {
        assert!(!xfpx_function_name(0).is_null());
        // SAFETY: a static NUL-terminated string.
        let name = unsafe { CStr::from_ptr(xfpx_function_name(0)) };
        assert_eq!(name.to_str(), Ok(abi::CHECK_VALUE));
        assert!(xfpx_function_name(99).is_null());
    }

    #[test]
    fn header_matches_the_exports() {
        let header = include_str!("../shim/xfpx_nvbit.h");
        for f in [
            "xfpx_init",
            "xfpx_device",
            "xfpx_note",
            "xfpx_wants_kernel",
            "xfpx_exclude_kernel",
            "xfpx_lines_enabled",
            "xfpx_load_cubin_lines",
            "xfpx_instrument",
            "xfpx_free_calls",
            "xfpx_function_name",
            "xfpx_site_count",
            "xfpx_launch",
            "xfpx_records",
            "xfpx_table_chunk",
            "xfpx_finish",
            "xfpx_inject_bytes",
            "xfpx_inject_state",
            "xfpx_inject_result",
            "xfpx_nvdisasm_wrapper",
            "xfpx_prefill_start",
            "xfpx_prepares_ahead",
            "xfpx_prepare_ahead",
            "xfpx_prepared",
            "xfpx_module_image",
            "xfpx_counting",
            "xfpx_instrumenting_for",
            "xfpx_count_table",
            "xfpx_count_result",
            "xfpx_screening",
            "xfpx_screen_ready",
            "xfpx_device_alloc",
            "xfpx_device_free",
            "xfpx_kernel_calls",
            "xfpx_screen_records",
            "xfpx_screen_lost",
            "xfpx_capturing",
            "xfpx_capture_alloc",
            "xfpx_capture_knows",
            "xfpx_capture_room",
            "xfpx_capture_begin",
            "xfpx_capture_range",
            "xfpx_capture_image",
            "xfpx_capture_end",
        ] {
            assert!(
                header.contains(&format!(" {f}(")) || header.contains(&format!("*{f}(")),
                "{f} missing from xfpx_nvbit.h"
            );
        }
        for (name, v) in [
            ("XFPX_ARG_GUARD_PRED", ARG_GUARD_PRED),
            ("XFPX_ARG_CONST32", ARG_CONST32),
            ("XFPX_ARG_CONST64", ARG_CONST64),
            ("XFPX_ARG_REG", ARG_REG),
            ("XFPX_ARG_UREG", ARG_UREG),
            ("XFPX_ARG_CBANK", ARG_CBANK),
            ("XFPX_ARG_LAUNCH64", ARG_LAUNCH64),
            ("XFPX_ARG_PREDS", ARG_PREDS),
            ("XFPX_MAX_ARGS", MAX_ARGS as u32),
            ("XFPX_LAUNCH_STREAM", LAUNCH_STREAM),
            ("XFPX_LAUNCH_PARAMS_UNKNOWN", LAUNCH_PARAMS_UNKNOWN),
            ("XFPX_LAUNCH_GRAPH", LAUNCH_GRAPH),
            ("XFPX_LAUNCH_OTHER_CONTEXT", LAUNCH_OTHER_CONTEXT),
        ] {
            assert!(header.contains(&format!("#define {name} {v}\n")), "{name} differs in xfpx_nvbit.h");
        }
        assert_eq!(std::mem::size_of::<XfpxCall>(), 16 + 16 * MAX_ARGS);
        // every declared device function's call fits (a longer one would
        // leave its whole kernel uninstrumented)
        for f in xfpx_nvidia::abi::device_functions().expect("abi.def parses") {
            assert!(f.params.len() <= MAX_ARGS, "{} takes {} arguments, more than {MAX_ARGS}", f.name, f.params.len());
        }
    }

    #[test]
    fn without_a_core_entries_are_inert() {
        // no xfpx_init: nothing is instrumented and nothing panics
        let mut out: *mut XfpxCall = std::ptr::null_mut();
        // SAFETY: zero instructions; out is a valid pointer.
        let n = unsafe {
            xfpx_instrument(std::ptr::null(), std::ptr::null(), 0, std::ptr::null(), std::ptr::null(), 0, &mut out)
        };
        assert_eq!(n, -1);
        let mut serial = 0;
        let mut plan = ScreenPlan::default();
        plan.after.count = 3;
        // SAFETY: null names and parameters are accepted; serial and plan are valid.
        let instrument = unsafe {
            xfpx_launch(
                std::ptr::null(),
                std::ptr::null(),
                LAUNCH_STREAM,
                std::ptr::null(),
                4,
                std::ptr::null(),
                2,
                &mut serial,
                &mut plan,
            )
        };
        assert_eq!(instrument, 0);
        assert_eq!(plan.after.count, 0, "no scan without a core");
        assert_eq!(xfpx_screening(), 0);
        xfpx_device_alloc(0x1000, 64);
        xfpx_device_free(0x1000);
        // SAFETY: a null pointer is refused.
        unsafe { xfpx_screen_records(std::ptr::null(), 64) };
        xfpx_finish();
    }
}
