/* Device functions injected by the xfpx NVBit tool. Compiled by
 * `xfpx setup nvidia` (steps in backend-nvidia/src/toolbuild.rs) with `-Xptxas -astoolspatch
 * --keep-device-functions`; NVBit finds them by name.
 *
 * The check runs on the device. The clean path costs one classification
 * and one warp reduction, and touches no memory. When a lane of the warp
 * sees an exception, one lane (the lowest active) adds the warp's
 * occurrence to the site's counters, sets the kind bits with atomicOr, and
 * sends a record to the host only for bits no warp had set before, so each
 * (site, kind, format) crosses to the host once. */
#include <stdint.h>
#include "xfpx_layout.h"

#define XFPX_DEVICE_FN(name, params, ...) extern "C" __device__ __noinline__ void name params;
#include "abi.def"
#undef XFPX_DEVICE_FN

/* Kind bits of one scalar with `ebits` exponent and `mbits` mantissa bits. */
static __device__ __forceinline__ uint32_t xfpx_scalar_kinds(uint32_t bits, uint32_t ebits, uint32_t mbits,
                                                             bool division) {
    uint32_t emax = (1u << ebits) - 1u;
    uint32_t exp = (bits >> mbits) & emax;
    uint32_t mant = bits & ((1u << mbits) - 1u);
    if (exp == emax) {
        if (mant != 0u) return XFPX_KIND_NAN;
        return division ? XFPX_KIND_DIV0 : XFPX_KIND_INF;
    }
    if (exp == 0u && mant != 0u) return XFPX_KIND_SUB;
    return 0u;
}

static __device__ __forceinline__ uint32_t xfpx_value_kinds(uint32_t lo, uint32_t hi, uint32_t format,
                                                            bool division, bool high_word) {
    switch (format) {
    case XFPX_FMT_F16:
        return xfpx_scalar_kinds(lo & 0xffffu, 5, 10, division);
    case XFPX_FMT_F16X2:
        return xfpx_scalar_kinds(lo & 0xffffu, 5, 10, division) | xfpx_scalar_kinds(lo >> 16, 5, 10, division);
    case XFPX_FMT_BF16:
        return xfpx_scalar_kinds(lo & 0xffffu, 8, 7, division);
    case XFPX_FMT_BF16X2:
        return xfpx_scalar_kinds(lo & 0xffffu, 8, 7, division) | xfpx_scalar_kinds(lo >> 16, 8, 7, division);
    case XFPX_FMT_F32:
        return xfpx_scalar_kinds(lo, 8, 23, division);
    case XFPX_FMT_F64: {
        uint32_t low = high_word ? 0u : lo;
        uint32_t exp = (hi >> 20) & 0x7ffu;
        bool mant = ((hi & 0xfffffu) | low) != 0u;
        if (exp == 0x7ffu) return mant ? XFPX_KIND_NAN : (division ? XFPX_KIND_DIV0 : XFPX_KIND_INF);
        if (exp == 0u && mant) return XFPX_KIND_SUB;
        return 0u;
    }
    default:
        return 0u;
    }
}

static __device__ void xfpx_send_record(XfpxDeviceState *state, uint32_t site, uint32_t launch, uint32_t info) {
    uint32_t slot = atomicAdd(&state->head, 1u);
    volatile uint32_t *host_tail = (volatile uint32_t *)state->host_tail;
    while (slot - *host_tail >= state->capacity) {
        __nanosleep(1000);
    }
    volatile XfpxRecord *r = (volatile XfpxRecord *)state->records + (slot % state->capacity);
    r->site = site;
    r->launch = launch;
    r->info = info;
    __threadfence_system();
    r->seq = slot + 1u;
    __threadfence_system();
}

/* What MUFU.RCP (f32) or MUFU.RCP64H (the high word of an f64, its low
 * word taken as 0) makes of a divisor: infinite from zero (and from the
 * subnormals it flushes to zero), NaN from NaN. */
static __device__ __forceinline__ uint32_t xfpx_reciprocal_kinds(uint32_t lo, uint32_t hi, uint32_t format) {
    uint32_t exp, mant, emax;
    if (format == XFPX_FMT_F64) {
        exp = (hi >> 20) & 0x7ffu;
        mant = hi & 0xfffffu;
        emax = 0x7ffu;
    } else if (format == XFPX_FMT_F32) {
        exp = (lo >> 23) & 0xffu;
        mant = lo & 0x7fffffu;
        emax = 0xffu;
    } else {
        return 0u;
    }
    if (exp == 0u) return XFPX_KIND_DIV0;
    if (exp == emax && mant != 0u) return XFPX_KIND_NAN;
    return 0u;
}

/* The kinds one lane sees in one checked value. */
static __device__ __forceinline__ uint32_t xfpx_slot_kinds(uint32_t lo, uint32_t hi, uint32_t meta) {
    uint32_t wanted = (meta >> XFPX_META_KINDS_SHIFT) & 0xffu;
    if (wanted == 0u) return 0u;
    if (meta & XFPX_META_RECIPROCAL) return xfpx_reciprocal_kinds(lo, hi, meta & XFPX_META_FORMAT_MASK) & wanted;
    return xfpx_value_kinds(lo, hi, meta & XFPX_META_FORMAT_MASK, (meta & XFPX_META_DIVISION) != 0u,
                            (meta & XFPX_META_HIGH_WORD) != 0u) & wanted;
}

/* The warp saw `found` (per lane) at `site`: one lane adds the warp's
 * occurrence to the site's counters and sends bits no warp had set before.
 * Every active lane must call this (it votes). */
static __device__ void xfpx_record_found(uint32_t active, uint32_t found, uint32_t site, uint32_t format,
                                         uint64_t state, uint64_t launch) {
    if (__ballot_sync(active, found != 0u) == 0u) return;
    uint32_t warp_found = 0u;
    for (uint32_t k = 0; k < 4u; k++) {
        if (__ballot_sync(active, (found >> k) & 1u) != 0u) warp_found |= 1u << k;
    }
    uint32_t lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    if (lane != (uint32_t)(__ffs(active) - 1)) return;

    XfpxDeviceState *s = (XfpxDeviceState *)state;
    XfpxSiteEntry **directory = (XfpxSiteEntry **)s->directory;
    XfpxSiteEntry *chunk = directory[site / XFPX_SITES_PER_CHUNK];
    if (chunk == nullptr) return;
    XfpxSiteEntry *entry = &chunk[site % XFPX_SITES_PER_CHUNK];
    for (uint32_t k = 0; k < 4u; k++) {
        if (warp_found & (1u << k)) atomicAdd(&entry->count[k], 1ull);
    }
    uint32_t shift = 4u * format;
    uint32_t old = atomicOr(&entry->seen, warp_found << shift);
    uint32_t fresh = warp_found & ~(old >> shift) & 0xfu;
    if (fresh != 0u) {
        xfpx_send_record(s, site, (uint32_t)launch, fresh | (format << 8));
    }
}

extern "C" __device__ __noinline__ void xfpx_check_value(int32_t guard, uint32_t lo, uint32_t hi, uint32_t site,
                                                         uint32_t meta, uint64_t state, uint64_t launch) {
    uint32_t active = __activemask();
    /* warp reductions (redux) are not allowed in tool code: vote instead */
    uint32_t found = guard ? xfpx_slot_kinds(lo, hi, meta) : 0u;
    xfpx_record_found(active, found, site, meta & XFPX_META_FORMAT_MASK, state, launch);
}

/* A grouped slot's kinds: nothing where its instruction's guard did not
 * hold. */
static __device__ __forceinline__ uint32_t xfpx_guarded_slot_kinds(uint32_t lo, uint32_t hi, uint32_t meta,
                                                                   uint32_t preds) {
    if (meta & XFPX_META_GUARDED) {
        uint32_t held = (preds >> ((meta >> XFPX_META_GUARD_SHIFT) & 7u)) & 1u;
        if (meta & XFPX_META_GUARD_NEGATED) held ^= 1u;
        if (held == 0u) return 0u;
    }
    return xfpx_slot_kinds(lo, hi, meta);
}

extern "C" __device__ __noinline__ void xfpx_check_values3(uint32_t preds,
                                                           uint32_t lo0, uint32_t hi0, uint64_t site_meta0,
                                                           uint32_t lo1, uint32_t hi1, uint64_t site_meta1,
                                                           uint32_t lo2, uint32_t hi2, uint64_t site_meta2,
                                                           uint64_t state, uint64_t launch) {
    uint32_t active = __activemask();
    uint32_t m0 = (uint32_t)(site_meta0 >> 32), m1 = (uint32_t)(site_meta1 >> 32), m2 = (uint32_t)(site_meta2 >> 32);
    uint32_t f0 = xfpx_guarded_slot_kinds(lo0, hi0, m0, preds);
    uint32_t f1 = xfpx_guarded_slot_kinds(lo1, hi1, m1, preds);
    uint32_t f2 = xfpx_guarded_slot_kinds(lo2, hi2, m2, preds);
    /* the clean path: one vote */
    if (__ballot_sync(active, (f0 | f1 | f2) != 0u) == 0u) return;
    xfpx_record_found(active, f0, (uint32_t)site_meta0, m0 & XFPX_META_FORMAT_MASK, state, launch);
    xfpx_record_found(active, f1, (uint32_t)site_meta1, m1 & XFPX_META_FORMAT_MASK, state, launch);
    xfpx_record_found(active, f2, (uint32_t)site_meta2, m2 & XFPX_META_FORMAT_MASK, state, launch);
}

/* Counters: one update per region execution, by the lowest active lane,
 * into its SM's copy of the slot (see XfpxCountTable). A slot outside the
 * launch's table (which the host never plans) is not counted rather than
 * written out of bounds. */
static __device__ __forceinline__ XfpxCountSlot *xfpx_count_slot(uint64_t table, uint32_t slot) {
    XfpxCountTable *t = (XfpxCountTable *)table;
    if (t == nullptr || slot >= t->slots) return nullptr;
    uint32_t w = 0u;
    if (t->window_blocks != 0u) {
        uint32_t block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
        w = block / t->window_blocks;
        if (w >= t->windows) w = t->windows - 1u;
    }
    uint64_t at = (uint64_t)w * t->slots + slot;
    if (t->shards > 1u) {
        uint32_t sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        at += (uint64_t)(sm % t->shards) * t->shard_slots;
    }
    return &t->slot[at];
}

static __device__ __forceinline__ uint32_t xfpx_lane_id(void) {
    uint32_t lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

extern "C" __device__ __noinline__ void xfpx_count_region(uint32_t preds, uint64_t slot_meta, uint64_t table) {
    uint32_t active = __activemask();
    uint32_t meta = (uint32_t)(slot_meta >> 32);
    bool divergent = false;
    uint32_t taken = 0u;
    if (meta & XFPX_COUNT_BRANCH) {
        uint32_t guard = (preds >> ((meta >> XFPX_COUNT_PRED_SHIFT) & 7u)) & 1u;
        if (meta & XFPX_COUNT_NEGATED) guard ^= 1u;
        taken = __ballot_sync(active, guard);
        divergent = taken != 0u && taken != active;
    }
    if (xfpx_lane_id() != (uint32_t)(__ffs(active) - 1)) return;
    XfpxCountSlot *s = xfpx_count_slot(table, (uint32_t)slot_meta);
    if (s == nullptr) return;
    atomicAdd(&s->warps, 1ull);
    atomicAdd(&s->lanes, (unsigned long long)__popc(active));
    if (divergent) atomicAdd(&s->divergent, 1ull);
    if (meta & XFPX_COUNT_HELD) {
        XfpxCountSlot *g = xfpx_count_slot(table, (uint32_t)slot_meta + (meta >> XFPX_COUNT_HELD_SHIFT));
        if (g != nullptr) atomicAdd(&g->lanes, (unsigned long long)__popc(taken));
    }
}

extern "C" __device__ __noinline__ void xfpx_count_guard(int32_t guard, uint64_t slot_meta, uint64_t table) {
    uint32_t active = __activemask();
    uint32_t held = __ballot_sync(active, guard != 0);
    if (xfpx_lane_id() != (uint32_t)(__ffs(active) - 1)) return;
    XfpxCountSlot *s = xfpx_count_slot(table, (uint32_t)slot_meta);
    if (s != nullptr) atomicAdd(&s->lanes, (unsigned long long)__popc(held));
}

/* The lanes whose guard held for each of the (up to 7) guards of `spec`
 * (see abi.def), voted by every active lane. */
static __device__ __forceinline__ void xfpx_guards_held(uint32_t active, uint32_t preds, uint64_t spec,
                                                        uint32_t held[7]) {
    uint32_t n = (uint32_t)(spec >> 32) & 7u;
#pragma unroll
    for (uint32_t k = 0u; k < 7u; k++) {
        uint32_t g = (uint32_t)(spec >> (35u + 4u * k)) & 15u;
        uint32_t bit = ((preds >> (g & 7u)) & 1u) ^ (g >> 3);
        held[k] = k < n ? __ballot_sync(active, bit) : 0u;
    }
}

/* The leader adds the guards' held lanes to their slots. */
static __device__ __forceinline__ void xfpx_add_guards(uint64_t table, uint64_t spec, const uint32_t held[7]) {
    uint32_t n = (uint32_t)(spec >> 32) & 7u;
#pragma unroll
    for (uint32_t k = 0u; k < 7u; k++) {
        if (k >= n) break;
        XfpxCountSlot *s = xfpx_count_slot(table, (uint32_t)spec + k);
        if (s != nullptr) atomicAdd(&s->lanes, (unsigned long long)__popc(held[k]));
    }
}

extern "C" __device__ __noinline__ void xfpx_count_guards(uint32_t preds, uint64_t spec, uint64_t table) {
    uint32_t active = __activemask();
    uint32_t held[7];
    xfpx_guards_held(active, preds, spec, held);
    if (xfpx_lane_id() != (uint32_t)(__ffs(active) - 1)) return;
    xfpx_add_guards(table, spec, held);
}

extern "C" __device__ __noinline__ void xfpx_count_region_guards(uint32_t preds, uint64_t slot_meta, uint64_t spec,
                                                                 uint64_t table) {
    uint32_t active = __activemask();
    uint32_t held[7];
    xfpx_guards_held(active, preds, spec, held);
    if (xfpx_lane_id() != (uint32_t)(__ffs(active) - 1)) return;
    XfpxCountSlot *s = xfpx_count_slot(table, (uint32_t)slot_meta);
    if (s != nullptr) {
        atomicAdd(&s->warps, 1ull);
        atomicAdd(&s->lanes, (unsigned long long)__popc(active));
    }
    xfpx_add_guards(table, spec, held);
}

#include "xfpx_inject.cuh"
#include "xfpx_flow.cuh"
