/* The device side of fault injection (xfpx_inject, declared in abi.def;
 * operations and state in xfpx_layout.h). Included once by xfpx_device.cu.
 * Registers are read and written with NVBit's device API; writes change
 * the thread's register file for the rest of its run. */
#include "nvbit_reg_rw.h"

static __device__ __forceinline__ uint32_t xfpx_special_smid(void) {
    uint32_t v;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(v));
    return v;
}

static __device__ __forceinline__ uint32_t xfpx_special_warpid(void) {
    uint32_t v;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(v));
    return v;
}

/* Whether this thread is one the fault sits under. */
static __device__ __forceinline__ bool xfpx_inject_selects(uint64_t where, uint64_t warps) {
    uint32_t lane = xfpx_lane_id();
    uint32_t warp = xfpx_special_warpid();
    uint32_t sub = (uint32_t)(where >> 48) & 0xffu;
    if (((uint32_t)where >> lane & 1u) == 0u) return false;
    if (xfpx_special_smid() != ((uint32_t)(where >> 32) & 0xffffu)) return false;
    if (sub != 0u && warp % 4u != sub - 1u) return false;
    return (warp / 4u) < 64u && (warps >> (warp / 4u) & 1ull) != 0ull;
}

static __device__ __forceinline__ uint32_t *xfpx_inject_scratch(XfpxInjectState *s) {
    uint32_t warp = xfpx_special_warpid() % XFPX_INJECT_MAX_WARPS;
    return &s->scratch[(warp * 32u + xfpx_lane_id()) * XFPX_INJECT_WORDS];
}

static __device__ __forceinline__ uint32_t xfpx_other_op(uint32_t kind, uint32_t a, uint32_t b) {
    switch (kind) {
    case XFPX_INJECT_OTHER_FMUL: return __float_as_uint(__uint_as_float(a) * __uint_as_float(b));
    case XFPX_INJECT_OTHER_FADD: return __float_as_uint(__uint_as_float(a) + __uint_as_float(b));
    default: return a ^ b;
    }
}

extern "C" __device__ __noinline__ void xfpx_inject(int32_t guard, uint32_t a, uint32_t b, uint64_t op,
                                                    uint64_t value, uint64_t where, uint64_t warps,
                                                    uint64_t state) {
    uint32_t active = __activemask();
    uint32_t code = (uint32_t)op & 0xffu;
    uint32_t reg = (uint32_t)(op >> 8) & 0xffu;
    uint32_t count = (uint32_t)(op >> 16) & 0xffu;
    uint32_t other = (uint32_t)(op >> 24) & 0xffu;
    uint32_t detail = (uint32_t)(op >> 32) & 0xffu;
    XfpxInjectState *s = (XfpxInjectState *)state;
    bool acts = xfpx_inject_selects(where, warps) && (guard != 0 || code == XFPX_INJECT_FORCE_RESTORE);
    bool fired = false;
    if (count > XFPX_INJECT_WORDS) count = XFPX_INJECT_WORDS;
    if (acts) {
        uint32_t *scratch = xfpx_inject_scratch(s);
        fired = true;
        switch (code) {
        case XFPX_INJECT_XOR:
            for (uint32_t k = 0; k < count; k++) {
                uint32_t m = k == 0 ? (uint32_t)value : k == 1 ? (uint32_t)(value >> 32) : 0u;
                nvbit_write_reg(reg + k, nvbit_read_reg(reg + k) ^ m);
            }
            break;
        case XFPX_INJECT_INVERT_PRED:
            nvbit_write_pred_reg(nvbit_read_pred_reg() ^ (1 << reg));
            break;
        case XFPX_INJECT_SAVE:
            for (uint32_t k = 0; k < count; k++) scratch[k] = nvbit_read_reg(reg + k);
            fired = false;
            break;
        case XFPX_INJECT_DISCARD:
            for (uint32_t k = 0; k < count; k++) nvbit_write_reg(reg + k, scratch[k]);
            break;
        case XFPX_INJECT_REDIRECT:
            for (uint32_t k = 0; k < count; k++) {
                nvbit_write_reg(other + k, nvbit_read_reg(reg + k));
                nvbit_write_reg(reg + k, scratch[k]);
            }
            break;
        case XFPX_INJECT_SUBSTITUTE:
            for (uint32_t k = 0; k < count; k++) {
                scratch[k] = nvbit_read_reg(reg + k);
                nvbit_write_reg(reg + k, nvbit_read_reg(other + k));
            }
            break;
        case XFPX_INJECT_RESTORE:
            for (uint32_t k = 0; k < count; k++) nvbit_write_reg(reg + k, scratch[k]);
            fired = false;
            break;
        case XFPX_INJECT_OTHER_OP:
            scratch[0] = xfpx_other_op(detail, a, b);
            fired = false;
            break;
        case XFPX_INJECT_WRITE_SCRATCH:
            nvbit_write_reg(reg, scratch[0]);
            break;
        case XFPX_INJECT_FORCE_SET: {
            /* the guard, predicate `reg` (negated when detail is 1), is off
             * here: turn it on for this one instruction */
            int32_t preds = nvbit_read_pred_reg();
            uint32_t bit = (uint32_t)preds >> reg & 1u;
            bool holds = (bit ^ detail) != 0u;
            scratch[XFPX_INJECT_WORDS - 1] = holds ? 0u : 1u;
            if (!holds) nvbit_write_pred_reg(preds ^ (1 << reg));
            fired = !holds;
            break;
        }
        case XFPX_INJECT_FORCE_RESTORE:
            if (scratch[XFPX_INJECT_WORDS - 1] == 1u) {
                nvbit_write_pred_reg(nvbit_read_pred_reg() ^ (1 << reg));
                scratch[XFPX_INJECT_WORDS - 1] = 0u;
            }
            fired = false;
            break;
        case XFPX_INJECT_XOR_SAVE:
            for (uint32_t k = 0; k < count; k++) {
                uint32_t m = k == 0 ? (uint32_t)value : k == 1 ? (uint32_t)(value >> 32) : 0u;
                uint32_t v = nvbit_read_reg(reg + k);
                scratch[k] = v;
                nvbit_write_reg(reg + k, v ^ m);
            }
            break;
        case XFPX_INJECT_TRAP:
            break;
        case XFPX_INJECT_XOR_UNIFORM:
            break; /* done below, once for the warp */
        default:
            fired = false;
            break;
        }
    }
    uint32_t hits = __ballot_sync(active, fired);
    if (code == XFPX_INJECT_XOR_UNIFORM && hits != 0u) {
        /* every active lane reads the same value and writes the same result */
        nvbit_write_ureg(reg, nvbit_read_ureg(reg) ^ (uint32_t)value);
    }
    if (hits != 0u && xfpx_lane_id() == (uint32_t)(__ffs(active) - 1)) {
        atomicAdd(&s->activations, (unsigned long long)__popc(hits));
        if (atomicExch(&s->fired, 1u) == 0u) {
            *(volatile uint32_t *)s->fired_host = 1u;
            __threadfence_system();
        }
    }
    if (fired && code == XFPX_INJECT_TRAP) {
        __syncwarp(hits);
        __threadfence_system();
        asm volatile("trap;");
    }
}
