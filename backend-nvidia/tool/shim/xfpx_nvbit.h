/* The flat C interface between the NVBit shim and the Rust core of the
 * tool (crate xfpx-nvbit, module ffi; a Rust test checks the names and
 * constants here against it). */
#ifndef XFPX_NVBIT_H
#define XFPX_NVBIT_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define XFPX_ARG_GUARD_PRED 0
#define XFPX_ARG_CONST32 1
#define XFPX_ARG_CONST64 2
#define XFPX_ARG_REG 3
#define XFPX_ARG_UREG 4
#define XFPX_ARG_CBANK 5
#define XFPX_ARG_LAUNCH64 6
#define XFPX_ARG_PREDS 7
#define XFPX_MAX_ARGS 12
/* how a launch reached the shim (xfpx_launch's way) */
#define XFPX_LAUNCH_STREAM 0
#define XFPX_LAUNCH_PARAMS_UNKNOWN 1
#define XFPX_LAUNCH_GRAPH 2
#define XFPX_LAUNCH_OTHER_CONTEXT 3

typedef struct XfpxCallArg {
    uint32_t kind;
    uint32_t a; /* 32-bit value, register number or bank */
    uint64_t b; /* 64-bit value or bank offset */
} XfpxCallArg;

typedef struct XfpxCall {
    uint32_t instr;
    uint32_t after;
    uint32_t function;
    uint32_t nargs;
    XfpxCallArg args[XFPX_MAX_ARGS];
} XfpxCall;

int xfpx_init(void);
void xfpx_device(const char *name, const char *target);
void xfpx_note(const char *text);
int xfpx_wants_kernel(const char *mangled, const char *demangled);
void xfpx_exclude_kernel(const char *mangled, const char *demangled);
const char *xfpx_nvdisasm_wrapper(const char *tool_library);
void xfpx_prefill_start(void);
/* disassembly at a kernel's first launch (prepare_ffi.rs): names are the
 * kernel's mangled name first, then those of the functions it calls */
int xfpx_prepares_ahead(void);
int xfpx_prepare_ahead(const char *module, const char *const *names, uint64_t n);
int xfpx_prepared(const char *const *names, uint64_t n);
void xfpx_module_image(const void *image);
int xfpx_lines_enabled(void);
void xfpx_load_cubin_lines(const char *path);
int64_t xfpx_instrument(const char *mangled, const char *demangled, uint32_t n, const char *const *sass,
                        const uint32_t *offsets, uint64_t state_addr, XfpxCall **calls_out);
void xfpx_free_calls(XfpxCall *calls, uint64_t n);
const char *xfpx_function_name(uint32_t index);
uint32_t xfpx_site_count(void);
struct XfpxScreenPlan; /* xfpx_layout.h */
/* a stream launch gives its parameter bytes and (offset, size) pairs */
int xfpx_launch(const char *mangled, const char *demangled, uint32_t way, const uint8_t *params, uint64_t len,
                const uint64_t *layout, uint64_t n, uint64_t *serial, struct XfpxScreenPlan *plan);
void xfpx_records(const uint8_t *bytes, uint64_t len);
void xfpx_table_chunk(uint32_t first, const uint8_t *bytes, uint64_t len);
/* the counters tool: a table per instrumented launch (see xfpx_layout.h) */
int xfpx_counting(void);
void xfpx_instrumenting_for(const char *mangled);
int xfpx_count_table(uint64_t serial, uint64_t blocks, uint8_t *header, uint64_t *bytes);
void xfpx_count_result(uint64_t serial, const uint8_t *table, uint64_t len);
/* the inject tool: its state in device memory and the activations read back */
uint64_t xfpx_inject_bytes(void);
void xfpx_inject_state(uint64_t addr);
void xfpx_inject_result(uint64_t activations, int exact);
/* device allocations the program makes (launch screening, launch capture) */
void xfpx_device_alloc(uint64_t base, uint64_t bytes);
void xfpx_device_free(uint64_t base);
/* launch screening: callees, the scans' records */
int xfpx_screening(void);
void xfpx_screen_ready(int ok);
void xfpx_kernel_calls(const char *kernel, const char *callee);
void xfpx_screen_records(const uint8_t *bytes, uint64_t len);
void xfpx_screen_lost(uint64_t serial, const char *why);
/* launch capture (--capture): allocations the driver names that the tool
 * did not see made, and each launch's parameters and the memory they point
 * into, before and after it */
int xfpx_capturing(void);
void xfpx_capture_alloc(uint64_t base, uint64_t bytes);
int xfpx_capture_knows(uint64_t addr);
int xfpx_capture_room(void);
int64_t xfpx_capture_begin(const char *mangled, const char *demangled, const uint32_t *geometry, const uint8_t *params,
                           uint64_t len, const uint64_t *layout, uint64_t n, uint64_t *handle);
int xfpx_capture_range(uint64_t handle, uint64_t index, uint64_t *base, uint64_t *bytes);
void xfpx_capture_image(uint64_t handle, uint64_t index, int after, const uint8_t *bytes, uint64_t len);
void xfpx_capture_end(uint64_t handle, int launched);
/* hardware counters (the CUPTI library, xfpx_cupti.cpp): whether the run
 * reads them, the metrics in the order their values come, each launch's
 * values read back, a launch whose values will not come, and counters
 * that cannot be read at all */
int xfpx_hw_counting(void);
const char *xfpx_hw_metric(uint32_t index);
void xfpx_hw_result(uint64_t serial, const double *values, uint64_t n);
void xfpx_hw_lost(uint64_t serial, const char *why);
void xfpx_hw_unavailable(const char *why);
/* now and then (the poller): launch events waiting in their batch go out */
void xfpx_tick(void);
void xfpx_finish(void);

#ifdef __cplusplus
}
#endif
#endif
