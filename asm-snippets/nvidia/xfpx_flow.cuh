/* The device side of the flow tool (xfpx_flow, xfpx_flow_hold,
 * xfpx_flow_held; declared in abi.def, constants in xfpx_layout.h).
 * Included once by xfpx_device.cu.
 *
 * Each lane makes one word of the classes of the instruction's sources
 * and result (the rules of xfpx_common::flow, which tests hold this file
 * to). A warp with no exceptional word returns after one vote; otherwise
 * each flow category is one vote, and where some lane is in it the lowest
 * active lane counts the warp execution in the site table's entry of
 * (site, state), ORs the lanes' classes into it, and sends a record for a
 * kind the entry had not seen. */

/* The class bit of one value of `format`: NaN 1, inf 2, subnormal 4,
 * zero 8, normal 16 (f16 and bf16 in the low half of `lo`). */
static __device__ __forceinline__ uint32_t xfpx_flow_class(uint32_t lo, uint32_t hi, uint32_t format) {
    unsigned long long bits;
    uint32_t ebits, mbits;
    switch (format) {
    case XFPX_FMT_F16: bits = lo & 0xffffu; ebits = 5; mbits = 10; break;
    case XFPX_FMT_BF16: bits = lo & 0xffffu; ebits = 8; mbits = 7; break;
    case XFPX_FMT_F32: bits = lo; ebits = 8; mbits = 23; break;
    case XFPX_FMT_F64: bits = (unsigned long long)hi << 32 | lo; ebits = 11; mbits = 52; break;
    default: return 0u;
    }
    unsigned long long emax = (1ull << ebits) - 1ull;
    unsigned long long exp = (bits >> mbits) & emax;
    unsigned long long mant = bits & ((1ull << mbits) - 1ull);
    if (exp == emax) return mant != 0ull ? XFPX_FLOW_SRC_NAN : XFPX_FLOW_SRC_INF;
    if (exp == 0ull) return mant != 0ull ? XFPX_FLOW_SRC_SUB : XFPX_FLOW_SRC_ZERO;
    return XFPX_FLOW_SRC_NORMAL;
}

/* The classes of the sources the call carries. */
static __device__ __forceinline__ uint32_t xfpx_flow_sources(uint32_t a_lo, uint32_t a_hi, uint32_t b_lo,
                                                            uint32_t b_hi, uint32_t c_lo, uint32_t c_hi,
                                                            uint32_t meta) {
    uint32_t n = (meta >> XFPX_FLOW_META_SOURCES_SHIFT) & 3u;
    uint32_t format = (meta >> XFPX_FLOW_META_SOURCE_SHIFT) & 0xffu;
    uint32_t w = 0u;
    if (n > 0u) w |= xfpx_flow_class(a_lo, a_hi, format);
    if (n > 1u) w |= xfpx_flow_class(b_lo, b_hi, format);
    if (n > 2u) w |= xfpx_flow_class(c_lo, c_hi, format);
    return w;
}

/* The result's class (or the no-result fact) and the division fact. */
static __device__ __forceinline__ uint32_t xfpx_flow_result(uint32_t r_lo, uint32_t r_hi, uint32_t meta) {
    uint32_t w = (meta & XFPX_FLOW_META_DIVISION) ? XFPX_FLOW_DIVISION : 0u;
    if (meta & XFPX_FLOW_META_RESULT) {
        w |= xfpx_flow_class(r_lo, r_hi, meta & 0xffu) << XFPX_FLOW_RESULT_SHIFT;
    } else {
        w |= XFPX_FLOW_NO_RESULT;
    }
    return w;
}

/* The byte kept per kind: the sources' classes (bits 0-4), result zero
 * (5) and result normal (6). */
static __device__ __forceinline__ uint32_t xfpx_flow_byte(uint32_t w) {
    return (w & 31u) | ((w >> 8) & 3u) << 5;
}

/* One category (its lanes: word & mask == want). Every active lane calls it. */
static __device__ void xfpx_flow_category(uint32_t active, uint32_t w, uint32_t mask, uint32_t want,
                                          uint32_t state_code, uint32_t kind, uint32_t site, uint32_t format,
                                          uint64_t state, uint64_t launch) {
    bool in = (w & mask) == want;
    if (__ballot_sync(active, in) == 0u) return;
    uint32_t mine = in ? xfpx_flow_byte(w) : 0u;
    uint32_t bytes = 0u;
    for (uint32_t k = 0; k < 7u; k++) {
        if (__ballot_sync(active, (mine >> k) & 1u) != 0u) bytes |= 1u << k;
    }
    if (xfpx_lane_id() != (uint32_t)(__ffs(active) - 1)) return;
    XfpxDeviceState *s = (XfpxDeviceState *)state;
    uint32_t key = site * XFPX_FLOW_KEYS_PER_SITE + state_code;
    XfpxSiteEntry **directory = (XfpxSiteEntry **)s->directory;
    XfpxSiteEntry *chunk = directory[key / XFPX_SITES_PER_CHUNK];
    if (chunk == nullptr) return;
    XfpxSiteEntry *entry = &chunk[key % XFPX_SITES_PER_CHUNK];
    atomicAdd(&entry->count[kind], 1ull);
    atomicOr(&entry->classes, bytes << (8u * kind));
    uint32_t bit = 1u << kind, shift = 4u * format;
    uint32_t old = atomicOr(&entry->seen, bit << shift);
    if (((old >> shift) & bit) == 0u) xfpx_send_record(s, key, (uint32_t)launch, bit | (format << 8));
}

/* The categories of xfpx_common::flow::CATEGORIES, in its order:
 * (mask, want, state code, kind code). */
#define XFPX_FLOW_CATEGORIES(C)      \
    C(0x021u, 0x020u, 0u, 0u)        \
    C(0x442u, 0x040u, 0u, 1u)        \
    C(0x44au, 0x440u, 0u, 1u)        \
    C(0x44au, 0x448u, 0u, 3u)        \
    C(0x084u, 0x080u, 0u, 2u)        \
    C(0x021u, 0x021u, 1u, 0u)        \
    C(0x042u, 0x042u, 1u, 1u)        \
    C(0x084u, 0x084u, 1u, 2u)        \
    C(0x8e1u, 0x001u, 2u, 0u)        \
    C(0x8e2u, 0x002u, 2u, 1u)        \
    C(0x8e4u, 0x004u, 2u, 2u)        \
    C(0x801u, 0x801u, 3u, 0u)        \
    C(0x802u, 0x802u, 3u, 1u)        \
    C(0x804u, 0x804u, 3u, 2u)

/* Records the categories of the warp's words. Every active lane calls it. */
static __device__ void xfpx_flow_record(uint32_t active, uint32_t w, uint64_t site_meta, uint64_t state,
                                        uint64_t launch) {
    const uint32_t exceptional = XFPX_FLOW_SRC_NAN | XFPX_FLOW_SRC_INF | XFPX_FLOW_SRC_SUB |
                                 ((XFPX_FLOW_SRC_NAN | XFPX_FLOW_SRC_INF | XFPX_FLOW_SRC_SUB)
                                  << XFPX_FLOW_RESULT_SHIFT);
    if (__ballot_sync(active, (w & exceptional) != 0u) == 0u) return;
    uint32_t site = (uint32_t)site_meta;
    uint32_t format = (uint32_t)(site_meta >> 32) & 0xffu;
#define XFPX_FLOW_CATEGORY(mask, want, st, kind) \
    xfpx_flow_category(active, w, mask, want, st, kind, site, format, state, launch);
    XFPX_FLOW_CATEGORIES(XFPX_FLOW_CATEGORY)
#undef XFPX_FLOW_CATEGORY
}

/* This thread's word of the flow scratch (null beyond its bounds). */
static __device__ __forceinline__ uint32_t *xfpx_flow_slot(uint64_t scratch) {
    uint32_t sm = xfpx_special_smid(), warp = xfpx_special_warpid();
    if (scratch == 0ull || sm >= XFPX_FLOW_MAX_SMS || warp >= XFPX_FLOW_MAX_WARPS) return nullptr;
    uint32_t *words = (uint32_t *)(scratch + XFPX_FLOW_SCRATCH_OFFSET);
    return &words[(sm * XFPX_FLOW_MAX_WARPS + warp) * 32u + xfpx_lane_id()];
}

extern "C" __device__ __noinline__ void xfpx_flow(int32_t guard, uint32_t r_lo, uint32_t r_hi, uint32_t a_lo,
                                                  uint32_t a_hi, uint32_t b_lo, uint32_t b_hi, uint32_t c_lo,
                                                  uint32_t c_hi, uint64_t site_meta, uint64_t state,
                                                  uint64_t launch) {
    uint32_t active = __activemask();
    uint32_t meta = (uint32_t)(site_meta >> 32);
    uint32_t w = 0u;
    if (guard) w = xfpx_flow_sources(a_lo, a_hi, b_lo, b_hi, c_lo, c_hi, meta) | xfpx_flow_result(r_lo, r_hi, meta);
    xfpx_flow_record(active, w, site_meta, state, launch);
}

extern "C" __device__ __noinline__ void xfpx_flow_hold(int32_t guard, uint32_t a_lo, uint32_t a_hi, uint32_t b_lo,
                                                       uint32_t b_hi, uint32_t c_lo, uint32_t c_hi, uint32_t meta,
                                                       uint64_t scratch) {
    if (!guard) return;
    uint32_t *slot = xfpx_flow_slot(scratch);
    if (slot != nullptr) *slot = xfpx_flow_sources(a_lo, a_hi, b_lo, b_hi, c_lo, c_hi, meta);
}

extern "C" __device__ __noinline__ void xfpx_flow_held(int32_t guard, uint32_t r_lo, uint32_t r_hi,
                                                       uint64_t site_meta, uint64_t scratch, uint64_t state,
                                                       uint64_t launch) {
    uint32_t active = __activemask();
    uint32_t meta = (uint32_t)(site_meta >> 32);
    uint32_t w = 0u;
    if (guard) {
        uint32_t *slot = xfpx_flow_slot(scratch);
        w = (slot != nullptr ? *slot : 0u) | xfpx_flow_result(r_lo, r_hi, meta);
    }
    xfpx_flow_record(active, w, site_meta, state, launch);
}
