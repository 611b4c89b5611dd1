/* The hardware counters of xfpx (`xfpx run --tool counters --counters
 * hardware`): a small CUDA injection library, libxfpx_cupti.so, that
 * instruments nothing. The driver loads it through CUDA_INJECTION64_PATH
 * and calls InitializeInjection; it subscribes to the driver's launch
 * callbacks (CUPTI callback API) and reads per kernel launch the metrics
 * the Rust core names (xfpx_hw_metric) with CUPTI's range profiler
 * (cupti_range_profiler.h, CUDA 12.6+): auto range (one range per launch),
 * user replay with a configuration of one pass, so nothing is replayed.
 * The host side of the configuration is prepared on a thread when the
 * first context is created. The profiler runs launches one at a time. Launches are collected in
 * passes of XFPX_HW_BATCH ranges; a full pass is stopped, decoded and
 * started again before the next launch, and its ranges are evaluated on a
 * worker thread while the program goes on. Range i of a pass is the i-th
 * launch this library saw in it (the profiler numbers ranges in launch
 * order, and launch calls are serialised here); a pass whose range count
 * differs is not attributed. This file is the library's only use of
 * CUPTI; everything else goes to the Rust core through xfpx_nvbit.h. */
#include <cuda.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cxxabi.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "xfpx_cupti_paths.h" /* XFPX_CUPTI_LIB_DIR, written by xfpx setup nvidia */
#include "xfpx_nvbit.h"

namespace {

/* Ranges per pass: launches between two reads of the counters. The
 * profiler's first start costs about 0.2 s plus 18 ms per MB of the counter
 * data image, which grows with the ranges a pass holds (H200, CUDA 13.0:
 * 2048 ranges, 113 MB, 2.2 s; 256, 14 MB, 0.46 s; 64, 3.6 MB, 0.23-0.26 s);
 * later passes start and are read in a few milliseconds. */
const size_t XFPX_HW_BATCH = 64;

/* One pass read back: its counter data and the serials of its launches. */
struct Pass {
    std::vector<uint8_t> image;
    std::vector<uint64_t> serials;
    size_t ranges = 0;
    size_t dropped = 0;
    bool graph = false; /* a CUDA graph launched in it: its ranges cannot be told apart */
};

std::mutex g_mutex;                  /* everything below; held from a launch's entry to its exit */
thread_local bool g_holding = false; /* this thread holds g_mutex for its launch */
bool g_failed = false;               /* the counters could not be set up */
bool g_finished = false;
CUcontext g_ctx = nullptr; /* the context the profiler is enabled on */
bool g_other_ctx_noted = false;
bool g_graph_noted = false;
CUpti_SubscriberHandle g_subscriber = nullptr;
CUpti_RangeProfiler_Object *g_profiler = nullptr;
CUpti_Profiler_Host_Object *g_host = nullptr;
std::vector<std::string> g_metric_names;
std::vector<const char *> g_metrics;
std::vector<uint8_t> g_config;
std::vector<uint8_t> g_counter_data;
Pass g_pass; /* the pass being collected (its serials) */
bool g_started = false;
uint64_t g_passes = 0; /* passes started */
/* kernel names by the driver's symbol name: mangled and demangled */
std::unordered_map<std::string, std::string> g_demangled;

/* The worker that evaluates passes read back. */
std::mutex g_work_mutex;
std::condition_variable g_work_cv;
std::deque<Pass> g_work;
bool g_work_stop = false;
std::thread g_worker;

std::string result_text(CUptiResult r) {
    const char *s = nullptr;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || s == nullptr) return "CUPTI error " + std::to_string((int)r);
    return s;
}

void note(const std::string &s) { xfpx_note(s.c_str()); }

/* The counters cannot be read: the core is told once, nothing more is counted. */
void give_up(const std::string &why) {
    if (g_failed) return;
    g_failed = true;
    g_started = false;
    xfpx_hw_unavailable(why.c_str());
}

bool ok(CUptiResult r, const char *what) {
    if (r == CUPTI_SUCCESS) return true;
    give_up(std::string(what) + ": " + result_text(r));
    return false;
}

/* Evaluate one pass: each range's metric values to the core, in order. */
void evaluate(const Pass &p) {
    if (p.graph) {
        for (uint64_t s : p.serials) xfpx_hw_lost(s, "a CUDA graph launched in their pass: its ranges cannot be told apart");
        return;
    }
    if (p.ranges != p.serials.size() || p.dropped > 0) {
        std::string why = "their pass gave " + std::to_string(p.ranges) + " ranges (" + std::to_string(p.dropped) +
                          " dropped) for " + std::to_string(p.serials.size()) + " launches";
        for (uint64_t s : p.serials) xfpx_hw_lost(s, why.c_str());
        return;
    }
    std::vector<double> values(g_metrics.size());
    for (size_t i = 0; i < p.serials.size(); i++) {
        CUpti_Profiler_Host_EvaluateToGpuValues_Params e = {CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
        e.pHostObject = g_host;
        e.pCounterDataImage = p.image.data();
        e.counterDataImageSize = p.image.size();
        e.rangeIndex = i;
        e.ppMetricNames = g_metrics.data();
        e.numMetrics = g_metrics.size();
        e.pMetricValues = values.data();
        CUptiResult r = cuptiProfilerHostEvaluateToGpuValues(&e);
        if (r == CUPTI_SUCCESS) {
            xfpx_hw_result(p.serials[i], values.data(), values.size());
        } else {
            std::string why = "cuptiProfilerHostEvaluateToGpuValues: " + result_text(r);
            xfpx_hw_lost(p.serials[i], why.c_str());
        }
    }
}

void work() {
    for (;;) {
        Pass p;
        {
            std::unique_lock<std::mutex> lock(g_work_mutex);
            g_work_cv.wait(lock, [] { return g_work_stop || !g_work.empty(); });
            if (g_work.empty()) return;
            p = std::move(g_work.front());
            g_work.pop_front();
        }
        evaluate(p);
    }
}

/* Bind the counter data image, initialised afresh, to the profiler. */
CUptiResult configure(void) {
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    init.pRangeProfilerObject = g_profiler;
    init.counterDataSize = g_counter_data.size();
    init.pCounterData = g_counter_data.data();
    CUptiResult r = cuptiRangeProfilerCounterDataImageInitialize(&init);
    if (r != CUPTI_SUCCESS) return r;
    CUpti_RangeProfiler_SetConfig_Params set = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    set.pRangeProfilerObject = g_profiler;
    set.configSize = g_config.size();
    set.pConfig = g_config.data();
    set.counterDataImageSize = g_counter_data.size();
    set.pCounterDataImage = g_counter_data.data();
    set.range = CUPTI_AutoRange;
    set.replayMode = CUPTI_UserReplay;
    set.maxRangesPerPass = XFPX_HW_BATCH;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    return cuptiRangeProfilerSetConfig(&set);
}

/* Enable the range profiler on g_ctx. */
CUptiResult enable(void) {
    CUpti_RangeProfiler_Enable_Params enable = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    enable.ctx = g_ctx;
    CUptiResult r = cuptiRangeProfilerEnable(&enable);
    if (r == CUPTI_SUCCESS) g_profiler = enable.pRangeProfilerObject;
    return r;
}

/* Start collecting a pass into a fresh image. After a pass was read, a
 * profiler that refuses to be configured again is disabled and enabled
 * anew (a note says so once). */
bool start_pass(void) {
    CUptiResult r = configure();
    if (r != CUPTI_SUCCESS && g_passes > 0) {
        static bool noted = false;
        if (!noted) {
            noted = true;
            note("the range profiler refused a new configuration after a pass (" + result_text(r) +
                 "); it is enabled anew for each pass");
        }
        CUpti_RangeProfiler_Disable_Params d = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
        d.pRangeProfilerObject = g_profiler;
        cuptiRangeProfilerDisable(&d);
        g_profiler = nullptr;
        r = enable();
        if (r == CUPTI_SUCCESS) r = configure();
    }
    if (!ok(r, "cuptiRangeProfilerSetConfig")) return false;
    CUpti_RangeProfiler_Start_Params start = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    start.pRangeProfilerObject = g_profiler;
    if (!ok(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart")) return false;
    g_started = true;
    g_passes++;
    return true;
}

/* Stop the pass, wait for its launches, decode it and hand it to the
 * worker; then start the next one unless `last`. */
void end_pass(bool last) {
    if (!g_started) return;
    g_started = false;
    Pass p = std::move(g_pass);
    g_pass = Pass();
    CUpti_RangeProfiler_Stop_Params stop = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    stop.pRangeProfilerObject = g_profiler;
    bool read = ok(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
    if (read && !stop.isAllPassSubmitted) {
        give_up("the range profiler asked for another pass (xfpx reads one pass, with no replay)");
        read = false;
    }
    if (read) {
        CUresult sync = cuCtxSynchronize();
        if (sync != CUDA_SUCCESS) {
            give_up("cuCtxSynchronize before reading the counters failed (error " + std::to_string((int)sync) + ")");
            read = false;
        }
    }
    CUpti_RangeProfiler_DecodeData_Params decode = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = g_profiler;
    read = read && ok(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
    CUpti_RangeProfiler_GetCounterDataInfo_Params info = {CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = g_counter_data.data();
    info.counterDataImageSize = g_counter_data.size();
    read = read && ok(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
    if (!read) {
        for (uint64_t s : p.serials) xfpx_hw_lost(s, "their pass could not be read back");
        return;
    }
    p.ranges = info.numTotalRanges;
    p.dropped = decode.numOfRangeDropped;
    if (!p.serials.empty()) {
        p.image = g_counter_data; /* the next pass reuses the bound image */
        std::lock_guard<std::mutex> lock(g_work_mutex);
        g_work.push_back(std::move(p));
        g_work_cv.notify_one();
    }
    if (!last) start_pass();
}

/* The host side of the metrics' configuration for `chip`: the host object
 * and the configuration image, which must need one pass; "" or why not. */
std::string configure_host(const char *chip, const uint8_t *availability, CUpti_Profiler_Host_Object **host,
                           std::vector<uint8_t> &config) {
    auto failed = [](const char *what, CUptiResult r) { return std::string(what) + ": " + result_text(r); };
    CUpti_Profiler_Host_Initialize_Params init = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    init.pChipName = chip;
    init.pCounterAvailabilityImage = availability;
    CUptiResult r = cuptiProfilerHostInitialize(&init);
    if (r != CUPTI_SUCCESS) return failed("cuptiProfilerHostInitialize", r);
    *host = init.pHostObject;
    CUpti_Profiler_Host_ConfigAddMetrics_Params add = {CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = *host;
    add.ppMetricNames = g_metrics.data();
    add.numMetrics = g_metrics.size();
    if ((r = cuptiProfilerHostConfigAddMetrics(&add)) != CUPTI_SUCCESS) return failed("cuptiProfilerHostConfigAddMetrics", r);
    CUpti_Profiler_Host_GetConfigImageSize_Params size = {CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    size.pHostObject = *host;
    if ((r = cuptiProfilerHostGetConfigImageSize(&size)) != CUPTI_SUCCESS)
        return failed("cuptiProfilerHostGetConfigImageSize", r);
    config.resize(size.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params image = {CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    image.pHostObject = *host;
    image.configImageSize = config.size();
    image.pConfigImage = config.data();
    if ((r = cuptiProfilerHostGetConfigImage(&image)) != CUPTI_SUCCESS) return failed("cuptiProfilerHostGetConfigImage", r);
    CUpti_Profiler_Host_GetNumOfPasses_Params passes = {CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    passes.configImageSize = config.size();
    passes.pConfigImage = config.data();
    if ((r = cuptiProfilerHostGetNumOfPasses(&passes)) != CUPTI_SUCCESS)
        return failed("cuptiProfilerHostGetNumOfPasses", r);
    if (passes.numOfPasses != 1)
        return "the metrics need " + std::to_string(passes.numOfPasses) + " passes on " + chip +
               " (xfpx reads one pass, with no replay)";
    return "";
}

void release_host(CUpti_Profiler_Host_Object **host) {
    if (*host == nullptr) return;
    CUpti_Profiler_Host_Deinitialize_Params d = {CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    d.pHostObject = *host;
    cuptiProfilerHostDeinitialize(&d);
    *host = nullptr;
}

/* The host side prepared ahead, on a thread started when the first context
 * is created (once the host library is loaded, building the configuration
 * takes a while): for device 0's chip, without a counter availability image
 * (which needs the context); the first launch uses it when its device has
 * the same chip and it worked, and does it all itself otherwise. */
struct Prepared {
    bool initialized = false; /* cuptiProfilerInitialize succeeded */
    std::string chip, error;
    CUpti_Profiler_Host_Object *host = nullptr;
    std::vector<uint8_t> config;
};
Prepared g_prepared;
std::thread g_prep;
std::once_flag g_prep_once;
/* Loads CUPTI's host library from cuInit on (about 0.1 s on the H200,
 * while the driver creates the first context): a plain dlopen, no CUDA. */
std::thread g_host_lib;

/* The host library loaded (called where no other thread joins it). */
void await_host_library(void) {
    if (g_host_lib.joinable()) g_host_lib.join();
}

void load_host_library(void) {
    /* CUPTI loads its host library by name: the one beside libcupti first */
    std::string lib = std::string(XFPX_CUPTI_LIB_DIR) + "/libnvperf_host.so";
    if (XFPX_CUPTI_LIB_DIR[0] != 0 && access(lib.c_str(), R_OK) == 0) dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
}

void prepare(void) {
    await_host_library();
    CUpti_Profiler_Initialize_Params init = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    if (cuptiProfilerInitialize(&init) != CUPTI_SUCCESS) return;
    g_prepared.initialized = true;
    CUpti_Device_GetChipName_Params chip = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    chip.deviceIndex = 0;
    if (cuptiDeviceGetChipName(&chip) != CUPTI_SUCCESS || chip.pChipName == nullptr) return;
    g_prepared.chip = chip.pChipName;
    g_prepared.error = configure_host(chip.pChipName, nullptr, &g_prepared.host, g_prepared.config);
}

/* Set up the profiler on `ctx` (current on this thread): the chip, the
 * configuration of the metrics (one pass, or nothing is counted), the
 * counter data image, and the first pass. */
bool set_up(CUcontext ctx) {
    g_ctx = ctx;
    CUdevice dev = 0;
    if (cuCtxGetDevice(&dev) != CUDA_SUCCESS) {
        give_up("cuCtxGetDevice failed");
        return false;
    }
    char name[256] = {0};
    int major = 0, minor = 0;
    if (cuDeviceGetName(name, sizeof(name) - 1, dev) == CUDA_SUCCESS &&
        cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS &&
        cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS) {
        char target[32];
        snprintf(target, sizeof(target), "sm_%d%d", major, minor);
        xfpx_device(name, target);
    }
    if (g_prep.joinable()) g_prep.join();
    await_host_library();
    if (!g_prepared.initialized) {
        load_host_library();
        CUpti_Profiler_Initialize_Params init = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
        if (!ok(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize")) return false;
    }
    CUpti_Device_GetChipName_Params chip = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    chip.deviceIndex = (size_t)dev;
    if (!ok(cuptiDeviceGetChipName(&chip), "cuptiDeviceGetChipName")) return false;
    if (g_prepared.host != nullptr && g_prepared.error.empty() && g_prepared.chip == chip.pChipName) {
        g_host = g_prepared.host;
        g_config = std::move(g_prepared.config);
        g_prepared.host = nullptr;
    } else {
        release_host(&g_prepared.host);
        CUpti_Profiler_GetCounterAvailability_Params avail = {CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
        avail.ctx = ctx;
        if (!ok(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability")) return false;
        std::vector<uint8_t> availability(avail.counterAvailabilityImageSize);
        avail.pCounterAvailabilityImage = availability.data();
        if (!ok(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability")) return false;
        std::string why = configure_host(chip.pChipName, availability.data(), &g_host, g_config);
        if (!why.empty()) {
            give_up(why);
            return false;
        }
    }
    if (!ok(enable(), "cuptiRangeProfilerEnable")) return false;
    CUpti_RangeProfiler_GetCounterDataSize_Params data = {CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    data.pRangeProfilerObject = g_profiler;
    data.pMetricNames = g_metrics.data();
    data.numMetrics = g_metrics.size();
    data.maxNumOfRanges = XFPX_HW_BATCH;
    data.maxNumRangeTreeNodes = (uint32_t)XFPX_HW_BATCH;
    if (!ok(cuptiRangeProfilerGetCounterDataSize(&data), "cuptiRangeProfilerGetCounterDataSize")) return false;
    g_counter_data.assign(data.counterDataSize, 0);
    g_worker = std::thread(work);
    return start_pass();
}

/* The last pass, the worker, the profiler and the core, once. */
void finish(void) {
    std::unique_lock<std::mutex> lock(g_mutex, std::defer_lock);
    if (!g_holding) lock.lock();
    if (g_finished) return;
    g_finished = true;
    if (g_prep.joinable()) g_prep.join();
    await_host_library();
    release_host(&g_prepared.host);
    if (g_started) end_pass(true);
    if (g_worker.joinable()) {
        {
            std::lock_guard<std::mutex> w(g_work_mutex);
            g_work_stop = true;
        }
        g_work_cv.notify_one();
        g_worker.join();
    }
    if (g_profiler != nullptr) {
        CUpti_RangeProfiler_Disable_Params d = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
        d.pRangeProfilerObject = g_profiler;
        cuptiRangeProfilerDisable(&d);
        g_profiler = nullptr;
    }
    release_host(&g_host);
    xfpx_finish();
}

/* The kernel's two names from the driver's symbol name. */
const std::string &demangled(const std::string &mangled) {
    auto found = g_demangled.find(mangled);
    if (found != g_demangled.end()) return found->second;
    int status = 0;
    char *d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
    std::string name = (status == 0 && d != nullptr) ? std::string(d) : mangled;
    free(d);
    return g_demangled.emplace(mangled, name).first->second;
}

/* The parameter records the driver's launch callbacks carry (the layouts
 * of CUPTI's generated_cuda_meta.h, which needs the driver's internal
 * typedefs): the grid launches (the cooperative one ends before `extra`,
 * the _ptsz variants are the same), the launch with a configuration, and
 * a graph launch. */
struct GridLaunchParams {
    CUfunction f;
    unsigned int grid[3], block[3], shared_bytes;
    CUstream stream;
};
struct ConfigLaunchParams {
    const CUlaunchConfig *config;
};
struct GraphLaunchParams {
    CUgraphExec exec;
    CUstream stream;
};

/* The stream a launch goes to, and whether it is a graph launch. */
CUstream launch_stream(CUpti_CallbackId cbid, const void *params, bool &graph) {
    graph = false;
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: return ((const GridLaunchParams *)params)->stream;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
        const CUlaunchConfig *c = ((const ConfigLaunchParams *)params)->config;
        return c != nullptr ? c->hStream : nullptr;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz: graph = true; return ((const GraphLaunchParams *)params)->stream;
    default: return nullptr;
    }
}

/* The entry of a launch call: set up on the first one, end a full pass,
 * and give the launch its serial and its place in the pass. g_mutex stays
 * held until the call's exit, so that the passes' order is the launches'. */
void launch_entry(CUpti_CallbackId cbid, const CUpti_CallbackData *cb) {
    bool graph = false;
    CUstream stream = launch_stream(cbid, cb->functionParams, graph);
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    if (cuStreamIsCapturing(stream, &capture) == CUDA_SUCCESS && capture != CU_STREAM_CAPTURE_STATUS_NONE)
        return; /* only recorded into a graph: nothing runs now */
    g_mutex.lock();
    g_holding = true;
    if (g_finished) return;
    if (g_ctx == nullptr && !g_failed) set_up(cb->context);
    bool here = cb->context == g_ctx;
    if (graph) {
        if (here && g_started) {
            if (!g_graph_noted) {
                g_graph_noted = true;
                note("kernels launched from CUDA graphs are not counted by the hardware counters (their ranges "
                     "cannot be told apart); the launches around them are");
            }
            end_pass(false); /* the launches before it stay countable */
            g_pass.graph = true;
        }
        return;
    }
    if (!here && !g_other_ctx_noted) {
        g_other_ctx_noted = true;
        note("kernels of a second CUDA context (another GPU) are not counted by the hardware counters");
    }
    if (here && g_started && (g_pass.graph || g_pass.serials.size() >= XFPX_HW_BATCH)) end_pass(false);
    std::string mangled = cb->symbolName != nullptr ? cb->symbolName : "";
    uint64_t serial = 0;
    xfpx_launch(mangled.c_str(), demangled(mangled).c_str(), here ? XFPX_LAUNCH_PARAMS_UNKNOWN : XFPX_LAUNCH_OTHER_CONTEXT,
                nullptr, 0, nullptr, 0, &serial, nullptr);
    if (here && g_started) {
        g_pass.serials.push_back(serial);
        *cb->correlationData = serial + 1;
    }
}

/* The exit of a launch call: a launch that failed made no range. */
void launch_exit(const CUpti_CallbackData *cb) {
    if (!g_holding) return;
    CUresult status = cb->functionReturnValue != nullptr ? *(const CUresult *)cb->functionReturnValue : CUDA_SUCCESS;
    uint64_t serial = *cb->correlationData;
    if (status != CUDA_SUCCESS && serial != 0 && !g_pass.serials.empty() && g_pass.serials.back() == serial - 1) {
        g_pass.serials.pop_back();
        xfpx_hw_lost(serial - 1, "the launch call failed");
    }
    g_holding = false;
    g_mutex.unlock();
}

void CUPTIAPI on_callback(void *, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data) {
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
        const CUpti_CallbackData *cb = (const CUpti_CallbackData *)data;
        if (cb->callbackSite == CUPTI_API_ENTER) {
            *cb->correlationData = 0;
            launch_entry(cbid, cb);
        } else {
            launch_exit(cb);
        }
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
        std::call_once(g_prep_once, [] { g_prep = std::thread(prepare); });
    } else if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
        const CUpti_ResourceData *r = (const CUpti_ResourceData *)data;
        if (r->context == g_ctx && g_ctx != nullptr) finish();
    }
}

void at_exit(void) { finish(); }

} // namespace

/* Loading through CUDA_INJECTION64_PATH: the driver calls this during
 * cuInit. Nothing is done unless the core's configuration asks for
 * hardware counters. */
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
    static bool once = false;
    if (once) return 1;
    once = true;
    if (xfpx_init() != 0) return 1;
    if (!xfpx_hw_counting()) {
        note("this library reads hardware counters only (--tool counters --counters hardware); nothing is counted");
        xfpx_finish();
        return 1;
    }
    for (uint32_t i = 0; xfpx_hw_metric(i) != nullptr; i++) g_metric_names.push_back(xfpx_hw_metric(i));
    for (const std::string &m : g_metric_names) g_metrics.push_back(m.c_str());
    CUptiResult r = cuptiSubscribe(&g_subscriber, on_callback, nullptr);
    if (r != CUPTI_SUCCESS) {
        bool other = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
        give_up("cuptiSubscribe: " + result_text(r) + (other ? " (another CUPTI tool, such as Nsight, is attached)" : ""));
        xfpx_finish();
        return 1;
    }
    const CUpti_CallbackId launches[] = {
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,            CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    };
    for (CUpti_CallbackId id : launches) {
        if (!ok(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id), "cuptiEnableCallback")) break;
    }
    for (CUpti_CallbackId id : {CUPTI_CBID_RESOURCE_CONTEXT_CREATED, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING})
        ok(cuptiEnableCallback(1, g_subscriber, CUPTI_CB_DOMAIN_RESOURCE, id), "cuptiEnableCallback");
    g_host_lib = std::thread(load_host_library);
    atexit(at_exit);
    return 1;
}
