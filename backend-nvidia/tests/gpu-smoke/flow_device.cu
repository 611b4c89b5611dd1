// The flow tool's device functions (asm-snippets/nvidia/xfpx_flow.cuh) run
// on a GPU without NVBit: each case is one warp calling xfpx_flow (or
// xfpx_flow_hold, then xfpx_flow_held) with chosen values per lane, some
// lanes inactive and some with their guard off, into a site table of its
// own site. Prints, per case, its inputs and the site-table entries of its
// four keys; `cargo test -p xfpx-nvidia --test flow_device` holds a
// committed run of this output to the rules of xfpx_common::flow.
//
//   nvcc -arch=sm_90 -O2 -I asm-snippets/nvidia -o flow_device flow_device.cu && ./flow_device > out.txt
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
#include "xfpx_layout.h"

static __device__ __forceinline__ uint32_t xfpx_lane_id(void) {
    uint32_t v;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(v));
    return v;
}
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
/* the records go to a plain device array here (no host ring) */
static __device__ void xfpx_send_record(XfpxDeviceState *s, uint32_t site, uint32_t launch, uint32_t info) {
    uint32_t slot = atomicAdd(&s->head, 1u);
    if (slot >= s->capacity) return;
    XfpxRecord *r = (XfpxRecord *)s->records + slot;
    r->site = site;
    r->launch = launch;
    r->info = info;
    r->seq = slot + 1u;
}
#define XFPX_DEVICE_FN(name, params, ...) extern "C" __device__ __noinline__ void name params;
#include "abi.def"
#undef XFPX_DEVICE_FN
#include "xfpx_flow.cuh"

struct Case {
    uint32_t held;    /* 0: xfpx_flow; 1: xfpx_flow_hold then xfpx_flow_held */
    uint32_t meta;
    uint32_t active;  /* lanes that call */
    uint32_t guard;   /* lanes whose guard holds */
    uint32_t r[32][2];
    uint32_t s[32][6];
};

__global__ void run_case(const Case *c, uint32_t site, uint64_t state, uint64_t scratch) {
    uint32_t lane = threadIdx.x;
    if (((c->active >> lane) & 1u) == 0u) return;
    int32_t guard = (int32_t)((c->guard >> lane) & 1u);
    const uint32_t *s = c->s[lane];
    uint64_t site_meta = (uint64_t)site | (uint64_t)c->meta << 32;
    if (c->held == 0u) {
        xfpx_flow(guard, c->r[lane][0], c->r[lane][1], s[0], s[1], s[2], s[3], s[4], s[5], site_meta, state, 0ull);
    } else {
        xfpx_flow_hold(guard, s[0], s[1], s[2], s[3], s[4], s[5], c->meta, scratch);
        xfpx_flow_held(guard, c->r[lane][0], c->r[lane][1], site_meta, scratch, state, 0ull);
    }
}

/* xorshift64* */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next() {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ull;
}

/* A value of format code `f` (4 f32, 5 f64, 0 f16) from the specials. */
static void value(uint32_t f, uint32_t *lo, uint32_t *hi) {
    static const uint32_t f32[] = {0x0u, 0x80000000u, 0x3f800000u, 0xc0200000u, 0x7f7fffffu, 0x7f800000u,
                                   0xff800000u, 0x7fc00000u, 0x7fa00000u, 0x00000001u, 0x807fffffu};
    static const uint64_t f64[] = {0x0ull, 0x8000000000000000ull, 0x3ff0000000000000ull, 0xc004000000000000ull,
                                   0x7fefffffffffffffull, 0x7ff0000000000000ull, 0xfff0000000000000ull,
                                   0x7ff8000000000000ull, 0x7ff4000000000000ull, 0x0000000000000001ull,
                                   0x000fffffffffffffull};
    static const uint32_t f16[] = {0x0000u, 0x8000u, 0x3c00u, 0xc100u, 0x7bffu, 0x7c00u, 0xfc00u, 0x7e00u, 0x7d00u,
                                   0x0001u, 0x83ffu};
    uint32_t i = (uint32_t)(next() % 11u);
    /* mostly ordinary values, so that categories mix within a warp */
    if (next() % 3u != 0u) i = 2u + (uint32_t)(next() % 2u);
    if (f == 5u) {
        *lo = (uint32_t)f64[i];
        *hi = (uint32_t)(f64[i] >> 32);
    } else if (f == 0u) {
        *lo = f16[i] | 0xabcd0000u; /* the high half is no part of an f16 */
        *hi = 0u;
    } else {
        *lo = f32[i];
        *hi = 0u;
    }
}

int main() {
    const uint32_t cases = 400;
    const uint32_t formats[] = {4u, 5u, 0u};
    XfpxDeviceState host_state;
    memset(&host_state, 0, sizeof host_state);
    XfpxSiteEntry *chunk;
    XfpxSiteEntry **directory;
    XfpxRecord *records;
    uint64_t *scratch;
    XfpxDeviceState *state;
    Case *dcase;
    std::vector<XfpxSiteEntry *> dir(XFPX_DIRECTORY_LEN, nullptr);
    if (cudaMalloc(&chunk, sizeof(XfpxSiteEntry) * XFPX_SITES_PER_CHUNK) != cudaSuccess ||
        cudaMalloc(&directory, sizeof(XfpxSiteEntry *) * XFPX_DIRECTORY_LEN) != cudaSuccess ||
        cudaMalloc(&records, sizeof(XfpxRecord) * 16384) != cudaSuccess ||
        cudaMalloc(&scratch, XFPX_FLOW_SCRATCH_OFFSET + XFPX_FLOW_MAX_SMS * XFPX_FLOW_MAX_WARPS * 32u * 4u) != cudaSuccess ||
        cudaMalloc(&state, sizeof(XfpxDeviceState)) != cudaSuccess || cudaMalloc(&dcase, sizeof(Case)) != cudaSuccess) {
        fprintf(stderr, "flow_device: cudaMalloc failed\n");
        return 1;
    }
    dir[0] = chunk;
    cudaMemset(chunk, 0, sizeof(XfpxSiteEntry) * XFPX_SITES_PER_CHUNK);
    cudaMemcpy(directory, dir.data(), sizeof(XfpxSiteEntry *) * XFPX_DIRECTORY_LEN, cudaMemcpyHostToDevice);
    host_state.directory = (unsigned long long)directory;
    host_state.records = (unsigned long long)records;
    host_state.capacity = 16384;
    cudaMemcpy(state, &host_state, sizeof host_state, cudaMemcpyHostToDevice);
    std::vector<Case> all(cases);
    for (uint32_t n = 0; n < cases; n++) {
        Case &c = all[n];
        memset(&c, 0, sizeof c);
        uint32_t rf = formats[next() % 3u];
        uint32_t sf = next() % 4u == 0u ? formats[next() % 3u] : rf;
        uint32_t sources = (uint32_t)(next() % 4u);
        bool result = next() % 5u != 0u || sources == 0u;
        c.held = result && next() % 3u == 0u;
        c.meta = rf | sf << XFPX_FLOW_META_SOURCE_SHIFT | sources << XFPX_FLOW_META_SOURCES_SHIFT;
        if (result) c.meta |= XFPX_FLOW_META_RESULT;
        if (next() % 3u == 0u) c.meta |= XFPX_FLOW_META_DIVISION;
        c.active = n % 4u == 0u ? 0xffffffffu : (uint32_t)next() | 1u;
        c.guard = next() % 2u == 0u ? 0xffffffffu : (uint32_t)next();
        for (uint32_t l = 0; l < 32; l++) {
            if (result) value(rf, &c.r[l][0], &c.r[l][1]);
            for (uint32_t k = 0; k < sources; k++) value(sf, &c.s[l][2 * k], &c.s[l][2 * k + 1]);
        }
        cudaMemcpy(dcase, &c, sizeof c, cudaMemcpyHostToDevice);
        run_case<<<1, 32>>>(dcase, n, (uint64_t)state, (uint64_t)scratch);
        if (cudaDeviceSynchronize() != cudaSuccess) {
            fprintf(stderr, "flow_device: case %u failed: %s\n", n, cudaGetErrorString(cudaGetLastError()));
            return 1;
        }
    }
    std::vector<XfpxSiteEntry> entries(XFPX_SITES_PER_CHUNK);
    cudaMemcpy(entries.data(), chunk, sizeof(XfpxSiteEntry) * XFPX_SITES_PER_CHUNK, cudaMemcpyDeviceToHost);
    cudaMemcpy(&host_state, state, sizeof host_state, cudaMemcpyDeviceToHost);
    printf("flow_device cases %u records %u\n", cases, host_state.head);
    for (uint32_t n = 0; n < cases; n++) {
        const Case &c = all[n];
        printf("case %u held %u meta %x active %x guard %x\n", n, c.held, c.meta, c.active, c.guard);
        for (uint32_t l = 0; l < 32; l++) {
            printf("lane %u %x %x %x %x %x %x %x %x\n", l, c.r[l][0], c.r[l][1], c.s[l][0], c.s[l][1], c.s[l][2],
                   c.s[l][3], c.s[l][4], c.s[l][5]);
        }
        for (uint32_t st = 0; st < XFPX_FLOW_KEYS_PER_SITE; st++) {
            const XfpxSiteEntry &e = entries[n * XFPX_FLOW_KEYS_PER_SITE + st];
            printf("key %u seen %x classes %x counts %llu %llu %llu %llu\n", st, e.seen, e.classes, e.count[0],
                   e.count[1], e.count[2], e.count[3]);
        }
    }
    return 0;
}
