/* The NVBit side of the xfpx tool: a thin shim. It implements NVBit's
 * callbacks, owns the GPU memory (site table, record ring; with the
 * counters tool, each counted launch's count table; with launch screening,
 * the scans' counters and their ring) and the thread that polls the rings,
 * launches the screen's scan kernel (xfpx_screen.cuh) on the program's
 * streams, and forwards everything else to the Rust core through
 * xfpx_nvbit.h, which decides what to instrument, screen and how. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "nvbit.h"
#include "nvbit_tool.h"
#include "xfpx_layout.h"
#include "xfpx_nvbit.h"
#include "xfpx_screen.cuh"

namespace {

bool g_active = false;     /* configuration loaded */
bool g_ready = false;      /* GPU memory allocated */
bool g_swept = false;      /* site table read back */
CUcontext g_ctx = nullptr; /* the context whose memory holds the table */
bool g_other_ctx_noted = false;
std::mutex g_mutex;        /* instrumentation and launches */
thread_local bool g_in_tool = false; /* our own CUDA calls raise callbacks too */

XfpxDeviceState *g_state_dev = nullptr;
XfpxSiteEntry **g_directory_dev = nullptr;
std::vector<XfpxSiteEntry *> g_chunks;
volatile XfpxRecord *g_ring = nullptr;
volatile uint32_t *g_host_tail = nullptr;
uint32_t g_tail = 0;
pthread_t g_poller;
std::atomic<bool> g_poll_stop{false};
bool g_poller_started = false;
std::mutex g_drain_mutex;
std::unordered_set<CUfunction> g_seen;
/* Whether each launched kernel last ran its instrumented code. */
std::unordered_map<CUfunction, bool> g_instrumented;

void note(const std::string &s) { xfpx_note(s.c_str()); }

/* The counters tool: every counted launch gets a count table of its own
 * in device memory, its address the launch's per-launch value, written on
 * the launch's stream before the launch (so launches on any stream, or
 * several at once, never share one). Tables are read back in batches:
 * once the pending ones exceed the limits below, before the next launch,
 * and when the context ends, after a device-wide synchronisation; then
 * they are reused. */
bool g_counting = false;
struct PendingCount {
    uint64_t serial;
    void *table;
    uint64_t bytes;
    uint8_t header[XFPX_COUNT_HEADER_BYTES]; /* the source of the header copy, kept until read */
};
std::deque<PendingCount> g_count_pending;
uint64_t g_count_pending_bytes = 0;
std::multimap<uint64_t, void *> g_count_free; /* idle tables by size */
const uint64_t XFPX_COUNT_BATCH_BYTES = 256ull << 20;
const size_t XFPX_COUNT_BATCH_LAUNCHES = 4096;
/* The inject tool's state (device memory) and the flag it raises in mapped
 * host memory when the fault fires (readable after a trap lost the context). */
XfpxInjectState *g_inject_dev = nullptr;
volatile uint32_t *g_inject_fired = nullptr;
bool g_inject_reported = false;

/* Launch screening: the scans' counters, scratch and record ring (made
 * once the context exists), and the scan to enqueue when a launch's call
 * returns. */
bool g_screening = false;
XfpxScreenState *g_screen_dev = nullptr;
volatile XfpxScreenRecord *g_screen_ring = nullptr;
volatile uint32_t *g_screen_host_tail = nullptr;
uint32_t g_screen_tail = 0;
std::mutex g_screen_drain_mutex;
struct PendingScan {
    bool armed = false;
    XfpxScreenLaunch scan;
    cudaStream_t stream = nullptr;
    uint64_t serial = 0;
};
thread_local PendingScan g_pending_scan;
/* Launch capture (xfpx run --capture): the device allocations the program
 * makes, and per captured launch its parameters and the memory they point
 * into, copied before the launch and after it. The copy after needs the
 * launch to finish: the context is synchronised then, only when capturing. */
bool g_capturing = false;
struct CaptureInFlight {
    uint64_t handle = 0;
    std::vector<std::pair<uint64_t, uint64_t>> ranges; /* base, bytes */
};
thread_local CaptureInFlight g_capture; /* the launch this thread is capturing */
thread_local bool g_capture_open = false;
bool g_params_noted = false;
bool g_graph_noted = false;
/* The parameter layout of each launched function (for launch screening
 * and launch capture): (offset, size) per parameter, and the bytes they span. */
struct ParamLayout {
    std::vector<uint64_t> pairs;
    uint64_t bytes = 0;
};
std::unordered_map<CUfunction, ParamLayout> g_param_layouts;
std::mutex g_param_mutex;

/* Host time the tool spends preparing instrumented code, by phase; the
 * report carries it as one note so a user sees what instrumenting cost. */
struct PrepTime {
    double disassembly = 0, planning = 0, insertion = 0, lines = 0, codegen = 0;
    unsigned functions = 0, generated = 0;
    /* the functions whose disassembly NVBit waited longest for: (seconds, name) */
    std::vector<std::pair<double, std::string>> slowest;
} g_prep;

/* Keep `name` among the three functions NVBit's disassembly took longest for. */
void note_disassembly_time(double seconds, const std::string &name) {
    auto &v = g_prep.slowest;
    v.emplace_back(seconds, name);
    std::sort(v.begin(), v.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
    if (v.size() > 3) v.pop_back();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/* A launch whose instrumented code NVBit generates now (its first
 * instrumented launch): timed from our callback to the launch's exit. */
thread_local bool g_codegen_pending = false;
thread_local std::chrono::steady_clock::time_point g_codegen_start;
std::unordered_set<CUfunction> g_generated;

bool cuda_ok(cudaError_t e, const char *what) {
    if (e == cudaSuccess) return true;
    note(std::string("CUDA error in the tool (") + what + "): " + cudaGetErrorString(e));
    return false;
}

/* Hand every published record to the Rust core, in order. */
void drain_ring() {
    std::lock_guard<std::mutex> lock(g_drain_mutex);
    if (g_ring == nullptr) return;
    std::vector<XfpxRecord> batch;
    for (;;) {
        volatile XfpxRecord *r = &g_ring[g_tail % XFPX_RING_CAPACITY];
        if (r->seq != g_tail + 1u) break;
        __sync_synchronize();
        XfpxRecord copy;
        copy.site = r->site;
        copy.launch = r->launch;
        copy.info = r->info;
        copy.seq = r->seq;
        batch.push_back(copy);
        g_tail++;
        if (batch.size() == 4096) break;
    }
    if (!batch.empty()) {
        xfpx_records((const uint8_t *)batch.data(), batch.size() * sizeof(XfpxRecord));
        __sync_synchronize();
        *g_host_tail = g_tail;
    }
}

/* Hand every published screen record to the Rust core, in order. */
void drain_screen_ring() {
    std::lock_guard<std::mutex> lock(g_screen_drain_mutex);
    if (g_screen_ring == nullptr) return;
    std::vector<XfpxScreenRecord> batch;
    for (;;) {
        volatile XfpxScreenRecord *r = &g_screen_ring[g_screen_tail % XFPX_SCREEN_RING];
        if (r->seq != g_screen_tail + 1u) break;
        __sync_synchronize();
        XfpxScreenRecord copy;
        memcpy(&copy, (const void *)r, sizeof(copy));
        batch.push_back(copy);
        g_screen_tail++;
        if (batch.size() == 1024) break;
    }
    if (!batch.empty()) {
        xfpx_screen_records((const uint8_t *)batch.data(), batch.size() * sizeof(XfpxScreenRecord));
        __sync_synchronize();
        *g_screen_host_tail = g_screen_tail;
    }
}

void *poll_ring(void *) {
    for (uint32_t round = 1; !g_poll_stop.load(); round++) {
        drain_ring();
        drain_screen_ring();
        if (round % 50 == 0) xfpx_tick(); /* about every 10 ms */
        usleep(200);
    }
    drain_ring();
    drain_screen_ring();
    return nullptr;
}

/* The parameter layout of `f`, read once: offsets and sizes from the
 * driver (cuFuncGetParamInfo or cuKernelGetParamInfo, CUDA 12.4+), or NVBit's parameter sizes at
 * natural alignment where the driver gives none. */
const ParamLayout &param_layout(CUcontext ctx, CUfunction f) {
    std::lock_guard<std::mutex> lock(g_param_mutex);
    auto found = g_param_layouts.find(f);
    if (found != g_param_layouts.end()) return found->second;
    ParamLayout l;
    CUresult first = CUDA_SUCCESS; /* what the driver said of the first parameter */
    /* A kernel the runtime launches through its library handle (CUDA 12+,
     * lazy loading) reaches the launch as a CUkernel, which only
     * cuKernelGetParamInfo takes (the function call answers
     * CUDA_ERROR_INVALID_HANDLE, seen on the H200 with driver 580). */
    bool as_kernel = false;
    for (size_t i = 0; i < 4096; i++) {
        size_t offset = 0, size = 0;
        CUresult r = as_kernel ? cuKernelGetParamInfo((CUkernel)f, i, &offset, &size)
                               : cuFuncGetParamInfo(f, i, &offset, &size);
        if (i == 0 && r == CUDA_ERROR_INVALID_HANDLE) {
            as_kernel = true;
            r = cuKernelGetParamInfo((CUkernel)f, i, &offset, &size);
        }
        if (i == 0) first = r;
        if (r != CUDA_SUCCESS) break;
        l.pairs.push_back((uint64_t)offset);
        l.pairs.push_back((uint64_t)size);
        l.bytes = std::max<uint64_t>(l.bytes, (uint64_t)(offset + size));
    }
    if (l.pairs.empty()) {
        std::vector<int> sizes = nvbit_get_kernel_argument_sizes(ctx, f);
        for (int size : sizes) {
            uint64_t align = 1;
            while (align < 8 && size % (int)(align * 2) == 0) align *= 2;
            uint64_t offset = (l.bytes + align - 1) / align * align;
            l.pairs.push_back(offset);
            l.pairs.push_back((uint64_t)size);
            l.bytes = offset + (uint64_t)size;
        }
        if (!sizes.empty() && !g_params_noted) {
            g_params_noted = true;
            note("the driver gave no parameter offsets (cuFuncGetParamInfo or cuKernelGetParamInfo, CUDA 12.4+, "
                 "answered error " +
                 std::to_string((int)first) + "); offsets are assumed from the parameters' sizes");
        }
    }
    return g_param_layouts.emplace(f, l).first->second;
}

/* The launch's parameter bytes and layout (offset, size of each parameter),
 * from its kernelParams (one pointer per parameter) or the packed buffer in
 * its `extra`; false when the launch gives neither. */
bool launch_params(CUcontext ctx, CUfunction f, void **kernel_params, void **extra, std::vector<uint8_t> &bytes,
                   std::vector<uint64_t> &layout) {
    const ParamLayout &l = param_layout(ctx, f);
    layout = l.pairs;
    bytes.assign(l.bytes, 0);
    if (kernel_params != nullptr) {
        for (size_t i = 0; 2 * i + 1 < layout.size(); i++) {
            if (kernel_params[i] != nullptr) memcpy(bytes.data() + layout[2 * i], kernel_params[i], layout[2 * i + 1]);
        }
        return true;
    }
    if (extra == nullptr) return layout.empty();
    void *buffer = nullptr;
    size_t size = 0;
    for (size_t k = 0; k < 64 && extra[k] != CU_LAUNCH_PARAM_END; k += 2) {
        if (extra[k] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
            buffer = extra[k + 1];
        } else if (extra[k] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[k + 1] != nullptr) {
            size = *(size_t *)extra[k + 1];
        }
    }
    if (buffer == nullptr) return false;
    if (size > bytes.size()) bytes.resize(size);
    memcpy(bytes.data(), buffer, std::min(size, bytes.size()));
    return true;
}

/* Enqueue one scan on `stream` (nothing when it has no buffer); false with
 * the CUDA error in `why` when it could not be. */
bool enqueue_scan(const XfpxScreenLaunch &scan, cudaStream_t stream, std::string &why) {
    if (scan.count == 0 || g_screen_dev == nullptr) return true;
    dim3 grid(scan.grid_x, scan.count);
    xfpx_screen_scan<<<grid, XFPX_SCREEN_THREADS, 0, stream>>>(g_screen_dev, scan);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return true;
    why = std::string("scan kernel launch: ") + cudaGetErrorString(e);
    return false;
}

/* A scan could not be enqueued: a screened launch (a reporting scan) ran
 * unchecked; after an instrumented one, the counts were not brought up to
 * date. */
void scan_failed(const XfpxScreenLaunch &scan, uint64_t serial, const std::string &why) {
    if (scan.report) {
        xfpx_screen_lost(serial, why.c_str());
    } else {
        note("a scan after an instrumented launch could not be enqueued (" + why +
             "); a later screened finding in its buffers may belong to that launch");
    }
}

/* The exit of a launch call: the scan decided at its entry follows it on
 * its stream (`launched`: the call succeeded). */
void scan_after(bool launched) {
    if (!g_pending_scan.armed) return;
    g_pending_scan.armed = false;
    if (!launched) return;
    std::string why;
    if (!enqueue_scan(g_pending_scan.scan, g_pending_scan.stream, why))
        scan_failed(g_pending_scan.scan, g_pending_scan.serial, why);
}

/* Make sure the device table has chunks for every site id below `count`. */
bool ensure_chunks(uint32_t count) {
    size_t need = (count + XFPX_SITES_PER_CHUNK - 1) / XFPX_SITES_PER_CHUNK;
    while (g_chunks.size() < need) {
        XfpxSiteEntry *chunk = nullptr;
        size_t bytes = sizeof(XfpxSiteEntry) * XFPX_SITES_PER_CHUNK;
        if (!cuda_ok(cudaMalloc(&chunk, bytes), "cudaMalloc site chunk")) return false;
        if (!cuda_ok(cudaMemset(chunk, 0, bytes), "cudaMemset site chunk")) return false;
        if (!cuda_ok(cudaMemcpy(&g_directory_dev[g_chunks.size()], &chunk, sizeof(chunk), cudaMemcpyHostToDevice),
                     "cudaMemcpy directory"))
            return false;
        g_chunks.push_back(chunk);
    }
    return true;
}

/* Read every pending count table back (after all work on the device
 * completed), hand each to the core, and keep the tables for reuse. */
void read_count_tables(void) {
    if (g_count_pending.empty()) return;
    bool synced = cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize before reading count tables");
    std::vector<uint8_t> host;
    for (const PendingCount &p : g_count_pending) {
        host.resize(p.bytes);
        if (synced && cuda_ok(cudaMemcpy(host.data(), p.table, p.bytes, cudaMemcpyDeviceToHost), "cudaMemcpy count table"))
            xfpx_count_result(p.serial, host.data(), p.bytes);
        else
            xfpx_count_result(p.serial, nullptr, 0);
        g_count_free.emplace(p.bytes, p.table);
    }
    g_count_pending.clear();
    g_count_pending_bytes = 0;
}

/* The table of counted launch `serial` of `blocks` thread blocks (0: not
 * known), written on `stream` ahead of the launch; null when the launch
 * must run its original code (the core was told). */
void *count_table_for(uint64_t serial, uint64_t blocks, cudaStream_t stream) {
    PendingCount p;
    p.serial = serial;
    p.bytes = 0;
    if (!xfpx_count_table(serial, blocks, p.header, &p.bytes) || p.bytes < sizeof(p.header)) return nullptr;
    if (g_count_pending.size() >= XFPX_COUNT_BATCH_LAUNCHES ||
        g_count_pending_bytes + p.bytes > XFPX_COUNT_BATCH_BYTES)
        read_count_tables();
    p.table = nullptr;
    auto idle = g_count_free.find(p.bytes);
    if (idle != g_count_free.end()) {
        p.table = idle->second;
        g_count_free.erase(idle);
    } else if (!cuda_ok(cudaMalloc(&p.table, p.bytes), "cudaMalloc count table")) {
        xfpx_count_result(serial, nullptr, 0);
        return nullptr;
    }
    g_count_pending.push_back(p);
    PendingCount &kept = g_count_pending.back();
    if (!cuda_ok(cudaMemsetAsync(kept.table, 0, kept.bytes, stream), "cudaMemsetAsync count table") ||
        !cuda_ok(cudaMemcpyAsync(kept.table, kept.header, sizeof(kept.header), cudaMemcpyHostToDevice, stream),
                 "cudaMemcpyAsync count table header")) {
        g_count_free.emplace(kept.bytes, kept.table);
        g_count_pending.pop_back();
        xfpx_count_result(serial, nullptr, 0);
        return nullptr;
    }
    g_count_pending_bytes += kept.bytes;
    return kept.table;
}

void add_args(Instr *instr, const XfpxCall &c) {
    for (uint32_t a = 0; a < c.nargs && a < XFPX_MAX_ARGS; a++) {
        const XfpxCallArg &arg = c.args[a];
        switch (arg.kind) {
        case XFPX_ARG_GUARD_PRED: nvbit_add_call_arg_guard_pred_val(instr); break;
        case XFPX_ARG_CONST32: nvbit_add_call_arg_const_val32(instr, arg.a); break;
        case XFPX_ARG_CONST64: nvbit_add_call_arg_const_val64(instr, arg.b); break;
        case XFPX_ARG_REG: nvbit_add_call_arg_reg_val(instr, (int)arg.a); break;
        case XFPX_ARG_UREG: nvbit_add_call_arg_ureg_val(instr, (int)arg.a); break;
        case XFPX_ARG_CBANK: nvbit_add_call_arg_cbank_val(instr, (int)arg.a, (int)arg.b); break;
        case XFPX_ARG_LAUNCH64: nvbit_add_call_arg_launch_val64(instr, 0); break;
        case XFPX_ARG_PREDS: nvbit_add_call_arg_pred_reg(instr); break;
        default: break;
        }
    }
}

void instrument_function(CUcontext ctx, CUfunction f, const std::string &mangled, const std::string &demangled) {
    auto t0 = std::chrono::steady_clock::now();
    const std::vector<Instr *> &instrs = nvbit_get_instrs(ctx, f);
    double took = seconds_since(t0);
    g_prep.disassembly += took;
    g_prep.functions++;
    note_disassembly_time(took, demangled);
    std::vector<const char *> sass;
    std::vector<uint32_t> offsets;
    sass.reserve(instrs.size());
    offsets.reserve(instrs.size());
    for (Instr *i : instrs) {
        sass.push_back(i->getSass());
        offsets.push_back(i->getOffset());
    }
    XfpxCall *calls = nullptr;
    t0 = std::chrono::steady_clock::now();
    int64_t n = xfpx_instrument(mangled.c_str(), demangled.c_str(), (uint32_t)instrs.size(), sass.data(),
                                offsets.data(), (uint64_t)(uintptr_t)g_state_dev, &calls);
    g_prep.planning += seconds_since(t0);
    if (n <= 0) {
        if (calls) xfpx_free_calls(calls, 0);
        return;
    }
    t0 = std::chrono::steady_clock::now();
    for (int64_t k = 0; k < n; k++) {
        const XfpxCall &c = calls[k];
        if (c.instr >= instrs.size()) continue;
        const char *fn = xfpx_function_name(c.function);
        if (fn == nullptr) continue;
        Instr *instr = instrs[c.instr];
        nvbit_insert_call(instr, fn, c.after ? IPOINT_AFTER : IPOINT_BEFORE);
        add_args(instr, c);
    }
    g_prep.insertion += seconds_since(t0);
    xfpx_free_calls(calls, (uint64_t)n);
}

/* The kernel's module, dumped by NVBit into a temporary file when first
 * asked for (for its line table and the disassembly ahead; "" when it
 * could not be); removed when this ends. */
class DumpedModule {
    CUcontext ctx_;
    CUfunction f_;
    bool tried_ = false;
    std::string path_;

  public:
    DumpedModule(CUcontext ctx, CUfunction f) : ctx_(ctx), f_(f) {}
    DumpedModule(const DumpedModule &) = delete;
    DumpedModule &operator=(const DumpedModule &) = delete;
    const std::string &path() {
        if (tried_) return path_;
        tried_ = true;
        char name[] = "/tmp/xfpx-cubin-XXXXXX";
        int fd = mkstemp(name);
        if (fd < 0) return path_;
        close(fd);
        unlink(name); /* a unique name; NVBit creates the file */
        if (nvbit_dump_cubin(ctx_, f_, name)) path_ = name;
        return path_;
    }
    ~DumpedModule() {
        if (!path_.empty()) unlink(path_.c_str());
    }
};

void read_lines(DumpedModule &module) {
    if (!xfpx_lines_enabled()) return;
    auto t0 = std::chrono::steady_clock::now();
    if (!module.path().empty()) {
        xfpx_load_cubin_lines(module.path().c_str());
    } else {
        note("NVBit could not dump the cubin of a kernel; trying the executable's own cubins for source lines");
    }
    g_prep.lines += seconds_since(t0);
}

/* A kernel and the functions it calls, to instrument once their
 * disassembly is ready (the kernel first). */
struct KernelFunctions {
    std::vector<CUfunction> funcs;
    std::vector<std::string> names;
    std::vector<const char *> name_ptrs() const {
        std::vector<const char *> p;
        for (const std::string &n : names) p.push_back(n.c_str());
        return p;
    }
};
/* Kernels whose launches run screened while their disassembly is made in
 * the background (prepare_ffi.rs). */
std::unordered_map<CUfunction, KernelFunctions> g_preparing;
/* Functions instrumented (a function several kernels call, once). */
std::unordered_set<CUfunction> g_done;

/* A function's names, asked of NVBit at its first launch only (a launch
 * otherwise asked twice: measurable on programs of many short launches).
 * Entries are never removed, so a returned reference stays valid. */
struct FunctionNames {
    std::string mangled;
    std::string demangled;
};
std::mutex g_names_mutex;
std::unordered_map<CUfunction, FunctionNames> g_names;

const FunctionNames &names_of(CUcontext ctx, CUfunction f) {
    std::lock_guard<std::mutex> lock(g_names_mutex);
    auto found = g_names.find(f);
    if (found != g_names.end()) return found->second;
    FunctionNames n{nvbit_get_func_name(ctx, f, true), nvbit_get_func_name(ctx, f, false)};
    return g_names.emplace(f, std::move(n)).first->second;
}

void instrument_kernel(CUcontext ctx, const KernelFunctions &k) {
    xfpx_instrumenting_for(k.names[0].c_str());
    for (size_t i = 0; i < k.funcs.size(); i++) {
        if (!g_done.insert(k.funcs[i]).second) continue;
        std::string demangled = nvbit_get_func_name(ctx, k.funcs[i], false);
        instrument_function(ctx, k.funcs[i], k.names[i], demangled);
    }
}

/* First launch of a kernel: decide, read its line table, instrument it
 * and the functions it calls, now or, when their disassembly is not
 * cached and launches are screened, once it is made in the background. */
void first_sight(CUcontext ctx, CUfunction f) {
    if (!g_seen.insert(f).second) return;
    const FunctionNames &f_names = names_of(ctx, f);
    const std::string &mangled = f_names.mangled;
    const std::string &demangled = f_names.demangled;
    if (!xfpx_wants_kernel(mangled.c_str(), demangled.c_str())) {
        xfpx_exclude_kernel(mangled.c_str(), demangled.c_str());
        return;
    }
    DumpedModule module(ctx, f);
    read_lines(module);
    KernelFunctions k;
    k.funcs.push_back(f);
    k.names.push_back(mangled);
    for (CUfunction g : nvbit_get_related_functions(ctx, f)) {
        /* the related functions can include other kernels of the module
         * (seen with CUTLASS): each is decided at its own first launch,
         * so an excluded or never-launched kernel costs no disassembly */
        if (g == f || nvbit_is_func_kernel(ctx, g)) continue;
        std::string gm = nvbit_get_func_name(ctx, g, true);
        /* what the functions it calls compute in counts for its screens */
        xfpx_kernel_calls(mangled.c_str(), gm.c_str());
        if (g_done.count(g)) continue;
        k.funcs.push_back(g);
        k.names.push_back(gm);
    }
    std::vector<const char *> names = k.name_ptrs();
    if (xfpx_prepares_ahead() && !xfpx_prepare_ahead(module.path().c_str(), names.data(), (uint64_t)names.size())) {
        g_preparing[f] = std::move(k);
        return;
    }
    instrument_kernel(ctx, k);
}

/* A kernel whose disassembly was being made: instrument it now
 * (`ask`: once it is ready). */
void when_prepared(CUcontext ctx, CUfunction f, bool ask) {
    auto it = g_preparing.find(f);
    if (it == g_preparing.end()) return;
    std::vector<const char *> names = it->second.name_ptrs();
    if (ask && !xfpx_prepared(names.data(), (uint64_t)names.size())) return;
    instrument_kernel(ctx, it->second);
    g_preparing.erase(it);
}

/* `blocks`: the launch's thread blocks (0: not known, as for a graph
 * node); `per_thread`: a null stream is the per-thread default stream;
 * `graph`: a node of a CUDA graph; `kernel_params`, `extra`: the launch's
 * parameters as the launch call passed them (null for a graph node). */
void on_launch(CUcontext ctx, CUfunction f, CUstream stream, uint64_t launch_handle, uint64_t blocks,
               bool per_thread, bool graph, void **kernel_params, void **extra) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (ctx != g_ctx) {
        /* the site table and ring live in the first context's memory */
        if (!g_other_ctx_noted) {
            g_other_ctx_noted = true;
            note("kernels of a second CUDA context (another GPU, or after a device reset) are not instrumented "
                 "nor screened; their launches are counted as unchecked");
        }
        nvbit_enable_instrumented(ctx, f, false);
        std::string mangled = nvbit_get_func_name(ctx, f, true);
        std::string demangled = nvbit_get_func_name(ctx, f, false);
        uint64_t serial = 0;
        xfpx_launch(mangled.c_str(), demangled.c_str(), XFPX_LAUNCH_OTHER_CONTEXT, nullptr, 0, nullptr, 0, &serial,
                    nullptr);
        return;
    }
    first_sight(ctx, f);
    when_prepared(ctx, f, true);
    const FunctionNames &f_names = names_of(ctx, f);
    const std::string &mangled = f_names.mangled;
    const std::string &demangled = f_names.demangled;
    /* with screening, the launch's parameters (the pointers its scans read) */
    uint32_t way = graph ? XFPX_LAUNCH_GRAPH : XFPX_LAUNCH_PARAMS_UNKNOWN;
    std::vector<uint8_t> param_bytes;
    std::vector<uint64_t> layout;
    if (g_screening && !graph && launch_params(ctx, f, kernel_params, extra, param_bytes, layout))
        way = XFPX_LAUNCH_STREAM;
    bool with_params = way == XFPX_LAUNCH_STREAM;
    uint64_t serial = 0;
    XfpxScreenPlan plan;
    memset(&plan, 0, sizeof(plan));
    int instrument = xfpx_launch(mangled.c_str(), demangled.c_str(), way, with_params ? param_bytes.data() : nullptr,
                                 with_params ? (uint64_t)param_bytes.size() : 0,
                                 with_params ? layout.data() : nullptr, with_params ? (uint64_t)(layout.size() / 2) : 0,
                                 &serial, &plan);
    if (instrument == 2) {
        /* its launch could not be screened: instrumented now, not prepared in the background */
        when_prepared(ctx, f, false);
        instrument = 1;
    }
    if (instrument && !ensure_chunks(xfpx_site_count())) instrument = 0;
    cudaStream_t launch_stream = (stream == nullptr && per_thread) ? cudaStreamPerThread : (cudaStream_t)stream;
    /* the scans: one now, before the launch (buffers no scan counted yet),
     * one when the launch call returns (see nvbit_at_cuda_event) */
    if (plan.after.count > 0 && !graph) {
        std::string why;
        if (enqueue_scan(plan.before, launch_stream, why)) {
            g_pending_scan.armed = true;
            g_pending_scan.scan = plan.after;
            g_pending_scan.stream = launch_stream;
            g_pending_scan.serial = serial;
        } else {
            scan_failed(plan.after, serial, why);
        }
    }
    /* the per-launch value: the launch's serial number, or with the
     * counters tool the address of its count table */
    uint64_t launch_value = serial;
    if (instrument && g_counting) {
        void *table = count_table_for(serial, blocks, launch_stream);
        if (table == nullptr) instrument = 0;
        launch_value = (uint64_t)(uintptr_t)table;
    }
    if (instrument && g_generated.insert(f).second) {
        g_codegen_pending = true;
        g_codegen_start = std::chrono::steady_clock::now();
    }
    if (instrument) {
        /* The per-launch value (the serial the device records carry, or
         * the count table). NVBit (1.7.7.1)
         * keeps a value set for an ordinary launch (no launch handle)
         * pending on the function and hands it to the launch only inside
         * nvbit_enable_instrumented: set it first, then enable, on every
         * instrumented launch (enabling only when the choice changed left
         * every launch reading 0). A graph node's value (launch handle
         * given) is applied by nvbit_set_at_launch itself. */
        nvbit_set_at_launch(ctx, f, launch_value, stream, launch_handle);
        nvbit_enable_instrumented(ctx, f, true);
        g_instrumented[f] = true;
        return;
    }
    /* an uninstrumented launch carries no value: tell NVBit only when the
     * choice changes */
    auto last = g_instrumented.find(f);
    if (last == g_instrumented.end() || last->second) {
        nvbit_enable_instrumented(ctx, f, false);
        g_instrumented[f] = false;
    }
}

/* An allocation the program made (at the exit of a successful allocation
 * call) or freed (at the entry of a free), told to the core (launch
 * screening and launch capture read the allocations). */
void track_memory(int is_exit, nvbit_api_cuda_t cbid, void *params, const CUresult *status) {
    if (!is_exit) {
        switch (cbid) {
        case API_CUDA_cuMemFree_v2: xfpx_device_free((uint64_t)((cuMemFree_v2_params *)params)->dptr); break;
        case API_CUDA_cuMemFreeAsync: xfpx_device_free((uint64_t)((cuMemFreeAsync_params *)params)->dptr); break;
        case API_CUDA_cuMemFreeAsync_ptsz:
            xfpx_device_free((uint64_t)((cuMemFreeAsync_ptsz_params *)params)->dptr);
            break;
        default: break;
        }
        return;
    }
    if (status != nullptr && *status != CUDA_SUCCESS) return;
    CUdeviceptr *dptr = nullptr;
    uint64_t bytes = 0;
    switch (cbid) {
    case API_CUDA_cuMemAlloc_v2: {
        cuMemAlloc_v2_params *p = (cuMemAlloc_v2_params *)params;
        dptr = p->dptr;
        bytes = p->bytesize;
        break;
    }
    case API_CUDA_cuMemAllocPitch_v2: {
        cuMemAllocPitch_v2_params *p = (cuMemAllocPitch_v2_params *)params;
        dptr = p->dptr;
        bytes = p->pPitch != nullptr ? (uint64_t)*p->pPitch * p->Height : 0;
        break;
    }
    case API_CUDA_cuMemAllocManaged: {
        cuMemAllocManaged_params *p = (cuMemAllocManaged_params *)params;
        dptr = p->dptr;
        bytes = p->bytesize;
        break;
    }
    case API_CUDA_cuMemAllocAsync: {
        cuMemAllocAsync_params *p = (cuMemAllocAsync_params *)params;
        dptr = p->dptr;
        bytes = p->bytesize;
        break;
    }
    case API_CUDA_cuMemAllocAsync_ptsz: {
        cuMemAllocAsync_ptsz_params *p = (cuMemAllocAsync_ptsz_params *)params;
        dptr = p->dptr;
        bytes = p->bytesize;
        break;
    }
    case API_CUDA_cuMemAllocFromPoolAsync: {
        cuMemAllocFromPoolAsync_params *p = (cuMemAllocFromPoolAsync_params *)params;
        dptr = p->dptr;
        bytes = p->bytesize;
        break;
    }
    case API_CUDA_cuMemAllocFromPoolAsync_ptsz: {
        cuMemAllocFromPoolAsync_ptsz_params *p = (cuMemAllocFromPoolAsync_ptsz_params *)params;
        dptr = p->dptr;
        bytes = p->bytesize;
        break;
    }
    default: return;
    }
    if (dptr != nullptr && bytes > 0) xfpx_device_alloc((uint64_t)*dptr, bytes);
}

bool is_launch(nvbit_api_cuda_t cbid) {
    return cbid == API_CUDA_cuLaunchKernel || cbid == API_CUDA_cuLaunchKernel_ptsz ||
           cbid == API_CUDA_cuLaunchCooperativeKernel || cbid == API_CUDA_cuLaunchCooperativeKernel_ptsz ||
           cbid == API_CUDA_cuLaunchKernelEx || cbid == API_CUDA_cuLaunchKernelEx_ptsz;
}

/* Copy every allocation of the launch being captured to the core, before
 * (after = 0) or after it, once all work on the device has finished. */
void copy_capture_images(int after) {
    bool synced = cuCtxSynchronize() == CUDA_SUCCESS;
    std::vector<uint8_t> host;
    for (size_t i = 0; i < g_capture.ranges.size(); i++) {
        uint64_t base = g_capture.ranges[i].first, size = g_capture.ranges[i].second;
        bool ok = synced && size > 0;
        if (ok) {
            host.resize(size);
            ok = cuMemcpyDtoH_v2(host.data(), (CUdeviceptr)base, size) == CUDA_SUCCESS;
        }
        xfpx_capture_image(g_capture.handle, i, after, ok ? host.data() : nullptr, ok ? size : 0);
    }
}

/* Offer a launch to the capture; when it is captured, copy the memory its
 * parameters point into now, and again at the launch's exit. `geometry`:
 * grid x, y, z, block x, y, z, dynamic shared memory. */
void capture_before(CUcontext ctx, CUfunction f, const uint32_t *geometry, void **kernel_params, void **extra) {
    std::vector<uint8_t> bytes;
    std::vector<uint64_t> layout;
    launch_params(ctx, f, kernel_params, extra, bytes, layout);
    /* a pointer into memory the tool never saw allocated (before it
     * loaded, or through other calls) is looked up in the driver: every
     * 8-byte-aligned word of a parameter that could be a device address
     * (structures hold pointers too), while the capture has room */
    if (xfpx_capture_room()) {
        for (size_t i = 0; i + 1 < layout.size(); i += 2) {
            for (uint64_t at = (layout[i] + 7) / 8 * 8; at + 8 <= layout[i] + layout[i + 1] && at + 8 <= bytes.size();
                 at += 8) {
                uint64_t v = 0;
                memcpy(&v, bytes.data() + at, 8);
                if (v < 0x10000 || v >= (1ull << 48) || xfpx_capture_knows(v)) continue;
                CUdeviceptr base = 0;
                size_t size = 0;
                if (cuMemGetAddressRange_v2(&base, &size, (CUdeviceptr)v) == CUDA_SUCCESS && size > 0)
                    xfpx_capture_alloc((uint64_t)base, size);
            }
        }
    }
    const FunctionNames &f_names = names_of(ctx, f);
    const std::string &mangled = f_names.mangled;
    const std::string &demangled = f_names.demangled;
    uint64_t handle = 0;
    int64_t n = xfpx_capture_begin(mangled.c_str(), demangled.c_str(), geometry, bytes.data(), bytes.size(),
                                   layout.data(), layout.size() / 2, &handle);
    if (n <= 0) return;
    g_capture.handle = handle;
    g_capture.ranges.clear();
    for (int64_t i = 0; i < n; i++) {
        uint64_t base = 0, size = 0;
        if (!xfpx_capture_range(handle, (uint64_t)i, &base, &size)) base = size = 0;
        g_capture.ranges.push_back({base, size});
    }
    copy_capture_images(0);
    g_capture_open = true;
}

/* The exit of the launch being captured: its memory after it. */
void capture_after(CUresult status) {
    if (!g_capture_open) return;
    g_capture_open = false;
    copy_capture_images(1);
    xfpx_capture_end(g_capture.handle, status == CUDA_SUCCESS ? 1 : 0);
}

/* Read the fault's activations back (in a context that may have failed). */
void report_injection(void) {
    if (g_inject_dev == nullptr || g_inject_reported) return;
    g_inject_reported = true;
    unsigned long long activations = 0;
    if (cudaMemcpy(&activations, g_inject_dev, sizeof(activations), cudaMemcpyDeviceToHost) == cudaSuccess) {
        xfpx_inject_result(activations, 1);
    } else {
        note("the fault's activation count could not be read back (the GPU context failed)");
        xfpx_inject_result(*g_inject_fired ? 1 : 0, 0);
    }
}

/* Make the inject tool's state when the run injects a fault. */
bool make_inject_state(void) {
    uint64_t bytes = xfpx_inject_bytes();
    if (bytes == 0) return true;
    uint32_t *fired_host = nullptr;
    void *fired_dev = nullptr;
    bool ok = cuda_ok(cudaMalloc(&g_inject_dev, bytes), "cudaMalloc inject state") &&
              cuda_ok(cudaMemset(g_inject_dev, 0, bytes), "cudaMemset inject state") &&
              cuda_ok(cudaHostAlloc(&fired_host, 64, cudaHostAllocMapped), "cudaHostAlloc inject flag") &&
              cuda_ok(cudaHostGetDevicePointer(&fired_dev, fired_host, 0), "inject flag device pointer");
    if (ok) {
        memset(fired_host, 0, 64);
        unsigned long long addr = (unsigned long long)(uintptr_t)fired_dev;
        ok = cuda_ok(cudaMemcpy(&g_inject_dev->fired_host, &addr, sizeof(addr), cudaMemcpyHostToDevice),
                     "cudaMemcpy inject flag");
    }
    if (!ok) {
        g_inject_dev = nullptr;
        return false;
    }
    g_inject_fired = fired_host;
    xfpx_inject_state((uint64_t)(uintptr_t)g_inject_dev);
    return true;
}

/* Make the screen's device memory: counters, scratch, the record ring. */
bool make_screen_state(void) {
    XfpxScreenState state;
    memset(&state, 0, sizeof(state));
    void *slots = nullptr, *scratch = nullptr, *ring_dev = nullptr, *tail_dev = nullptr;
    XfpxScreenRecord *ring_host = nullptr;
    uint32_t *tail_host = nullptr;
    size_t slot_bytes = sizeof(XfpxScreenSlot) * XFPX_SCREEN_SLOTS;
    size_t scratch_bytes = sizeof(XfpxScreenScratch) * XFPX_SCREEN_SCRATCH;
    size_t ring_bytes = sizeof(XfpxScreenRecord) * XFPX_SCREEN_RING;
    /* loads the scan kernel now (not lazily inside a launch's callback),
     * and finds out whether it has an image for this GPU */
    cudaFuncAttributes scan_attributes;
    bool ok = cuda_ok(cudaFuncGetAttributes(&scan_attributes, xfpx_screen_scan), "the screen's scan kernel") &&
              cuda_ok(cudaMalloc(&g_screen_dev, sizeof(XfpxScreenState)), "cudaMalloc screen state") &&
              cuda_ok(cudaMalloc(&slots, slot_bytes), "cudaMalloc screen counters") &&
              cuda_ok(cudaMemset(slots, 0, slot_bytes), "cudaMemset screen counters") &&
              cuda_ok(cudaMalloc(&scratch, scratch_bytes), "cudaMalloc screen scratch") &&
              cuda_ok(cudaMemset(scratch, 0, scratch_bytes), "cudaMemset screen scratch") &&
              cuda_ok(cudaHostAlloc((void **)&ring_host, ring_bytes, cudaHostAllocMapped), "cudaHostAlloc screen ring") &&
              cuda_ok(cudaHostAlloc((void **)&tail_host, 64, cudaHostAllocMapped), "cudaHostAlloc screen tail") &&
              cuda_ok(cudaHostGetDevicePointer(&ring_dev, ring_host, 0), "screen ring device pointer") &&
              cuda_ok(cudaHostGetDevicePointer(&tail_dev, tail_host, 0), "screen tail device pointer");
    if (ok) {
        memset(ring_host, 0, ring_bytes);
        memset(tail_host, 0, 64);
        state.slots = (unsigned long long)(uintptr_t)slots;
        state.scratch = (unsigned long long)(uintptr_t)scratch;
        state.records = (unsigned long long)(uintptr_t)ring_dev;
        state.host_tail = (unsigned long long)(uintptr_t)tail_dev;
        state.head = 0;
        state.capacity = XFPX_SCREEN_RING;
        ok = cuda_ok(cudaMemcpy(g_screen_dev, &state, sizeof(state), cudaMemcpyHostToDevice), "cudaMemcpy screen state");
    }
    if (!ok) {
        g_screen_dev = nullptr;
        return false;
    }
    g_screen_ring = ring_host;
    g_screen_host_tail = tail_host;
    return true;
}

/* Read the site table back for the final counts (needs a live context). */
void sweep(void) {
    if (!g_ready || g_swept) return;
    g_swept = true;
    cudaDeviceSynchronize();
    read_count_tables();
    report_injection();
    std::vector<XfpxSiteEntry> host(XFPX_SITES_PER_CHUNK);
    for (size_t c = 0; c < g_chunks.size(); c++) {
        if (cudaMemcpy(host.data(), g_chunks[c], host.size() * sizeof(XfpxSiteEntry), cudaMemcpyDeviceToHost) !=
            cudaSuccess) {
            note("could not read the site table back; occurrence counts are lower bounds");
            break;
        }
        xfpx_table_chunk((uint32_t)(c * XFPX_SITES_PER_CHUNK), (const uint8_t *)host.data(),
                         host.size() * sizeof(XfpxSiteEntry));
    }
}

void stop_poller(void) {
    if (!g_poller_started) return;
    g_poller_started = false;
    g_poll_stop.store(true);
    pthread_join(g_poller, nullptr);
}

} // namespace

/* NVBit prints a banner on stdout and a warning on stderr when it loads;
 * a program's output must not change under xfpx, so quiet both unless the
 * user set them. Runs before NVBit's own (default-priority) constructor. */
__attribute__((constructor(101))) static void xfpx_quiet_nvbit(void) {
    setenv("NOBANNER", "1", 0);
    setenv("ACK_CTX_INIT_LIMITATION", "1", 0);
}

/* This library's file (empty when not known): the disassembly cache's
 * helper is installed beside it. */
std::string own_library() {
    Dl_info info;
    if (dladdr((void *)&own_library, &info) == 0 || info.dli_fname == nullptr) return "";
    return info.dli_fname;
}

void nvbit_at_init() {
    g_active = xfpx_init() == 0;
    g_counting = g_active && xfpx_counting() != 0;
    /* allocations are tracked from the start: the program allocates its
     * buffers before its first launch, when the tool makes its memory */
    g_screening = g_active && xfpx_screening() != 0;
    g_capturing = g_active && xfpx_capturing() != 0;
    /* NVBit runs nvdisasm once per function it instruments (~0.4 s each):
     * let it run the tool's caching wrapper instead */
    const char *wrapper = g_active ? xfpx_nvdisasm_wrapper(own_library().c_str()) : nullptr;
    if (wrapper != nullptr) {
        nvbit_set_nvdisasm(wrapper);
        /* and disassemble the program's own functions through it ahead of
         * their first launch, several at once, in the background */
        xfpx_prefill_start();
    }
}

void nvbit_tool_init(CUcontext ctx) {
    if (!g_active || g_ready) return;
    g_ctx = ctx;
    g_in_tool = true;
    XfpxDeviceState state;
    memset(&state, 0, sizeof(state));
    XfpxRecord *ring_host = nullptr;
    uint32_t *tail_host = nullptr;
    bool ok = cuda_ok(cudaMalloc(&g_state_dev, sizeof(XfpxDeviceState)), "cudaMalloc state") &&
              cuda_ok(cudaMalloc(&g_directory_dev, sizeof(void *) * XFPX_DIRECTORY_LEN), "cudaMalloc directory") &&
              cuda_ok(cudaMemset(g_directory_dev, 0, sizeof(void *) * XFPX_DIRECTORY_LEN), "cudaMemset directory") &&
              cuda_ok(cudaHostAlloc(&ring_host, sizeof(XfpxRecord) * XFPX_RING_CAPACITY, cudaHostAllocMapped),
                      "cudaHostAlloc ring") &&
              cuda_ok(cudaHostAlloc(&tail_host, 64, cudaHostAllocMapped), "cudaHostAlloc tail");
    if (ok) {
        memset(ring_host, 0, sizeof(XfpxRecord) * XFPX_RING_CAPACITY);
        memset(tail_host, 0, 64);
        void *ring_dev = nullptr, *tail_dev = nullptr;
        ok = cuda_ok(cudaHostGetDevicePointer(&ring_dev, ring_host, 0), "ring device pointer") &&
             cuda_ok(cudaHostGetDevicePointer(&tail_dev, tail_host, 0), "tail device pointer");
        state.directory = (unsigned long long)(uintptr_t)g_directory_dev;
        state.records = (unsigned long long)(uintptr_t)ring_dev;
        state.host_tail = (unsigned long long)(uintptr_t)tail_dev;
        state.head = 0;
        state.capacity = XFPX_RING_CAPACITY;
        ok = ok && cuda_ok(cudaMemcpy(g_state_dev, &state, sizeof(state), cudaMemcpyHostToDevice), "cudaMemcpy state");
    }
    ok = ok && make_inject_state();
    if (ok && g_screening) {
        bool screen_ok = make_screen_state();
        xfpx_screen_ready(screen_ok ? 1 : 0);
        if (!screen_ok) g_screening = false;
    }
    if (ok) {
        g_ring = ring_host;
        g_host_tail = tail_host;
        int dev = 0;
        cudaDeviceProp prop;
        if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
            char target[32];
            snprintf(target, sizeof(target), "sm_%d%d", prop.major, prop.minor);
            xfpx_device(prop.name, target);
        }
        if (pthread_create(&g_poller, nullptr, poll_ring, nullptr) == 0) {
            g_poller_started = true;
            nvbit_set_tool_pthread(g_poller);
        }
        g_ready = true;
    } else {
        note("the tool could not allocate its GPU memory; nothing is instrumented");
    }
    g_in_tool = false;
}

/* A module image the program hands the driver, for kernels whose
 * disassembly may be made in the background. */
void module_image(const void *image) {
    if (image != nullptr && xfpx_prepares_ahead()) xfpx_module_image(image);
}

void nvbit_at_cuda_event(CUcontext ctx, int is_exit, nvbit_api_cuda_t cbid, const char *name, void *params,
                         CUresult *pStatus) {
    (void)name;
    if (is_exit && g_codegen_pending) {
        g_codegen_pending = false;
        g_prep.codegen += seconds_since(g_codegen_start);
        g_prep.generated++;
    }
    if (g_in_tool) return;
    if (g_capturing || g_screening) {
        g_in_tool = true;
        track_memory(is_exit, cbid, params, pStatus);
        if (is_exit && is_launch(cbid)) {
            bool launched = pStatus == nullptr || *pStatus == CUDA_SUCCESS;
            if (g_screening) scan_after(launched);
            if (g_capturing) capture_after(pStatus != nullptr ? *pStatus : CUDA_SUCCESS);
        }
        g_in_tool = false;
    }
    if (!g_ready || is_exit) return;
    CUfunction f = nullptr;
    CUstream stream = nullptr;
    void **kernel_params = nullptr;
    void **extra = nullptr;
    uint64_t blocks = 0;
    uint32_t geometry[7] = {0, 0, 0, 0, 0, 0, 0};
    bool per_thread = cbid == API_CUDA_cuLaunchKernel_ptsz || cbid == API_CUDA_cuLaunchCooperativeKernel_ptsz ||
                      cbid == API_CUDA_cuLaunchKernelEx_ptsz;
    switch (cbid) {
    case API_CUDA_cuLaunchKernel:
    case API_CUDA_cuLaunchKernel_ptsz: {
        cuLaunchKernel_params *p = (cuLaunchKernel_params *)params;
        f = p->f;
        stream = p->hStream;
        blocks = (uint64_t)p->gridDimX * p->gridDimY * p->gridDimZ;
        uint32_t g[7] = {p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ,
                         p->sharedMemBytes};
        memcpy(geometry, g, sizeof(g));
        kernel_params = p->kernelParams;
        extra = p->extra;
        break;
    }
    case API_CUDA_cuLaunchCooperativeKernel:
    case API_CUDA_cuLaunchCooperativeKernel_ptsz: {
        cuLaunchCooperativeKernel_params *p = (cuLaunchCooperativeKernel_params *)params;
        f = p->f;
        stream = p->hStream;
        blocks = (uint64_t)p->gridDimX * p->gridDimY * p->gridDimZ;
        uint32_t g[7] = {p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY, p->blockDimZ,
                         p->sharedMemBytes};
        memcpy(geometry, g, sizeof(g));
        kernel_params = p->kernelParams;
        break;
    }
    case API_CUDA_cuLaunchKernelEx:
    case API_CUDA_cuLaunchKernelEx_ptsz: {
        cuLaunchKernelEx_params *p = (cuLaunchKernelEx_params *)params;
        f = p->f;
        stream = p->config ? p->config->hStream : nullptr;
        if (p->config) {
            const CUlaunchConfig *c = p->config;
            blocks = (uint64_t)c->gridDimX * c->gridDimY * c->gridDimZ;
            uint32_t g[7] = {c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                             c->sharedMemBytes};
            memcpy(geometry, g, sizeof(g));
        }
        kernel_params = p->kernelParams;
        extra = p->extra;
        break;
    }
    /* modules loaded from memory (cuBLAS loads kernels so that are in no
     * file's fat binary): copied for the disassembly at first launch */
    case API_CUDA_cuModuleLoadData:
        module_image(((cuModuleLoadData_params *)params)->image);
        return;
    case API_CUDA_cuModuleLoadDataEx:
        module_image(((cuModuleLoadDataEx_params *)params)->image);
        return;
    case API_CUDA_cuModuleLoadFatBinary:
        module_image(((cuModuleLoadFatBinary_params *)params)->fatCubin);
        return;
    case API_CUDA_cuLibraryLoadData:
        module_image(((cuLibraryLoadData_params *)params)->code);
        return;
    default:
        return;
    }
    g_in_tool = true;
    /* A launch into a capturing stream only records a graph node: it is
     * decided when the graph launches it (nvbit_at_graph_node_launch), and
     * the tool's own CUDA calls would break a global-mode capture. */
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    if (cuStreamIsCapturing(stream, &capture) != CUDA_SUCCESS || capture == CU_STREAM_CAPTURE_STATUS_NONE) {
        on_launch(ctx, f, stream, 0, blocks, per_thread, false, kernel_params, extra);
        if (g_capturing) capture_before(ctx, f, geometry, kernel_params, extra);
    }
    g_in_tool = false;
}

void nvbit_at_graph_node_launch(CUcontext ctx, CUfunction func, CUstream stream, uint64_t launch_handle) {
    if (!g_ready || g_in_tool) return;
    if (g_capturing && !g_graph_noted) {
        g_graph_noted = true;
        note("capture: launches of CUDA graphs are not captured (their parameters are not seen)");
    }
    g_in_tool = true;
    on_launch(ctx, func, stream, launch_handle, 0, false, true, nullptr, nullptr);
    g_in_tool = false;
}

void nvbit_at_ctx_term(CUcontext ctx) {
    if (!g_ready || ctx != g_ctx) return;
    g_in_tool = true;
    sweep();
    stop_poller();
    drain_ring();
    drain_screen_ring();
    g_ready = false; /* the table went with the context */
    g_screening = false;
    g_in_tool = false;
}

void nvbit_at_term() {
    if (!g_active) return;
    if (g_prep.functions > 0) {
        char text[400];
        snprintf(text, sizeof(text),
                 "preparing instrumented code took %.3f s of host time: NVBit's disassembly of %u functions %.3f s, "
                 "planning %.3f s, call insertion %.3f s, line tables %.3f s, the first instrumented launch of %u "
                 "kernels (NVBit's code generation) %.3f s",
                 g_prep.disassembly + g_prep.planning + g_prep.insertion + g_prep.lines + g_prep.codegen,
                 g_prep.functions, g_prep.disassembly, g_prep.planning, g_prep.insertion, g_prep.lines,
                 g_prep.generated, g_prep.codegen);
        std::string line = text;
        if (g_prep.disassembly >= 0.5) {
            line += "; the longest waits for NVBit's disassembly:";
            for (const auto &[seconds, name] : g_prep.slowest) {
                char one[32];
                snprintf(one, sizeof(one), " %.2f s ", seconds);
                line += one + (name.size() > 60 ? name.substr(0, 57) + "..." : name) + ",";
            }
            line.pop_back();
        }
        note(line);
    }
    stop_poller();
    drain_ring();
    drain_screen_ring();
    xfpx_finish();
}

/* Loading through CUDA_INJECTION64_PATH: the driver calls this after
 * loading the library; NVBit has already hooked itself in. */
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) { return 1; }
