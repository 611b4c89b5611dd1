/* The scan kernel of launch screening, compiled into the NVBit shim (and
 * into the GPU check of the scan, tests/gpu/src/screen_unit.cu). The shim
 * launches it on the program's stream after a launch that ran its original
 * code (and before one, for buffers no scan has counted yet); its layout is
 * in xfpx_layout.h, its host side in xfpx-nvidia `screen`, and its counting
 * rule is mirrored and tested there (`screen::reading::count`): every whole
 * element of the buffer, read as one format, is NaN when its exponent bits
 * are all ones and its mantissa is not zero, infinite when the mantissa is
 * zero; a partial element at the end is not read.
 *
 * Grid: scan.grid_x blocks per buffer (x) by scan.count buffers (y), of
 * XFPX_SCREEN_THREADS threads. Each thread reads 16-byte chunks of its
 * buffer; the blocks add their counts into the scan's scratch entry; the
 * last block to finish swaps each buffer's counts into its counter, sends
 * a record where a count grew (a reporting scan), and clears the entry. */
#ifndef XFPX_SCREEN_CUH
#define XFPX_SCREEN_CUH
#include <stddef.h>
#include <stdint.h>
#include "xfpx_layout.h"

/* The sizes xfpx-nvidia `screen::device` mirrors (its tests check the
 * fields against xfpx_layout.h). */
static_assert(sizeof(XfpxScreenBuffer) == 24, "XfpxScreenBuffer is 24 bytes");
static_assert(sizeof(XfpxScreenLaunch) == 24 + 24 * XFPX_SCREEN_MAX_BUFFERS, "XfpxScreenLaunch layout");
static_assert(sizeof(XfpxScreenPlan) == 2 * sizeof(XfpxScreenLaunch), "XfpxScreenPlan layout");
static_assert(sizeof(XfpxScreenRecord) == 64, "XfpxScreenRecord is 64 bytes");
static_assert(offsetof(XfpxScreenRecord, nan_before) == 16, "XfpxScreenRecord layout");

/* One thread's counts; first holds ~(lowest element index), 0 for none. */
struct XfpxScreenCount {
    unsigned long long nan;
    unsigned long long inf;
    unsigned long long first;
};

/* Count one element: `bits` with its exponent at `exp_shift` (`exp_mask`
 * wide) and its mantissa under `mant_mask`. */
static __device__ __forceinline__ void xfpx_screen_element(unsigned long long bits, unsigned int exp_shift,
                                                           unsigned long long exp_mask, unsigned long long mant_mask,
                                                           unsigned long long index, XfpxScreenCount &c) {
    if (((bits >> exp_shift) & exp_mask) != exp_mask) return;
    if ((bits & mant_mask) != 0ull) {
        c.nan += 1ull;
    } else {
        c.inf += 1ull;
    }
    unsigned long long inverted = ~index;
    if (inverted > c.first) c.first = inverted;
}

/* Count one element of `format` whose bits are in the low bits of `bits`. */
static __device__ __forceinline__ void xfpx_screen_bits(unsigned long long bits, unsigned int format,
                                                        unsigned long long index, XfpxScreenCount &c) {
    switch (format) {
    case XFPX_FMT_F64: xfpx_screen_element(bits, 52u, 0x7ffull, 0xfffffffffffffull, index, c); break;
    case XFPX_FMT_F32: xfpx_screen_element(bits, 23u, 0xffull, 0x7fffffull, index, c); break;
    case XFPX_FMT_BF16: xfpx_screen_element(bits, 7u, 0xffull, 0x7full, index, c); break;
    default: xfpx_screen_element(bits, 10u, 0x1full, 0x3ffull, index, c); break; /* XFPX_FMT_F16 */
    }
}

/* Bytes of one element of `format`. */
static __device__ __forceinline__ unsigned int xfpx_screen_element_bytes(unsigned int format) {
    return format == XFPX_FMT_F64 ? 8u : (format == XFPX_FMT_F32 ? 4u : 2u);
}

/* Count the elements of one 16-byte chunk whose first element is `index`. */
static __device__ __forceinline__ void xfpx_screen_chunk(uint4 v, unsigned int format, unsigned long long index,
                                                         XfpxScreenCount &c) {
    const unsigned int w[4] = {v.x, v.y, v.z, v.w};
    if (format == XFPX_FMT_F64) {
        for (unsigned int k = 0u; k < 2u; k++) {
            unsigned long long bits = ((unsigned long long)w[2u * k + 1u] << 32) | (unsigned long long)w[2u * k];
            xfpx_screen_bits(bits, format, index + k, c);
        }
    } else if (format == XFPX_FMT_F32) {
        for (unsigned int k = 0u; k < 4u; k++) xfpx_screen_bits((unsigned long long)w[k], format, index + k, c);
    } else {
        for (unsigned int k = 0u; k < 8u; k++) {
            unsigned int half = (w[k / 2u] >> (16u * (k % 2u))) & 0xffffu;
            xfpx_screen_bits((unsigned long long)half, format, index + k, c);
        }
    }
}

/* Element `index` of a buffer, read alone (the elements after the last
 * whole chunk). */
static __device__ __forceinline__ unsigned long long xfpx_screen_load(const unsigned char *base, unsigned int format,
                                                                      unsigned long long index) {
    if (format == XFPX_FMT_F64) return ((const unsigned long long *)base)[index];
    if (format == XFPX_FMT_F32) return (unsigned long long)((const unsigned int *)base)[index];
    return (unsigned long long)((const unsigned short *)base)[index];
}

/* Send one record to the host (the ring in mapped host memory): claim a
 * slot, wait while the ring is full, write, publish with seq last. */
static __device__ void xfpx_screen_send(XfpxScreenState *state, const XfpxScreenRecord &rec) {
    unsigned int slot = atomicAdd(&state->head, 1u);
    volatile unsigned int *host_tail = (volatile unsigned int *)state->host_tail;
    while (slot - *host_tail >= state->capacity) {
        __nanosleep(1000);
    }
    volatile XfpxScreenRecord *r = (volatile XfpxScreenRecord *)state->records + (slot % state->capacity);
    r->serial = rec.serial;
    r->previous = rec.previous;
    r->param = rec.param;
    r->format = rec.format;
    r->reserved = 0;
    r->nan_before = rec.nan_before;
    r->nan_after = rec.nan_after;
    r->inf_before = rec.inf_before;
    r->inf_after = rec.inf_after;
    r->first = rec.first;
    r->bytes = rec.bytes;
    __threadfence_system();
    r->seq = slot + 1u;
    __threadfence_system();
}

/* Settle buffer `b` of the scan (the last block): swap its counts into its
 * counter and, for a reporting scan, send a record if a count grew. */
static __device__ void xfpx_screen_settle(XfpxScreenState *state, const XfpxScreenLaunch &scan,
                                          XfpxScreenScratch *scratch, unsigned int b) {
    unsigned long long nan = atomicExch(&scratch->nan[b], 0ull);
    unsigned long long inf = atomicExch(&scratch->inf[b], 0ull);
    unsigned long long first = atomicExch(&scratch->first[b], 0ull);
    const XfpxScreenBuffer &buffer = scan.buffer[b];
    XfpxScreenSlot *slot = (XfpxScreenSlot *)state->slots + buffer.slot;
    unsigned long long nan_before = atomicExch(&slot->nan, nan);
    unsigned long long inf_before = atomicExch(&slot->inf, inf);
    unsigned int previous = atomicExch(&slot->serial, scan.serial);
    if (scan.report == 0u || (nan <= nan_before && inf <= inf_before)) return;
    XfpxScreenRecord rec;
    rec.seq = 0u;
    rec.serial = scan.serial;
    rec.previous = previous;
    rec.param = buffer.param;
    rec.format = buffer.format;
    rec.reserved = 0;
    rec.nan_before = nan_before;
    rec.nan_after = nan;
    rec.inf_before = inf_before;
    rec.inf_after = inf;
    rec.first = first != 0ull ? ~first : ~0ull;
    rec.bytes = buffer.bytes;
    xfpx_screen_send(state, rec);
}

extern "C" __global__ void xfpx_screen_scan(XfpxScreenState *state, XfpxScreenLaunch scan) {
    const unsigned int b = blockIdx.y;
    const unsigned int format = scan.buffer[b].format;
    const unsigned long long bytes = scan.buffer[b].bytes;
    const unsigned char *base = (const unsigned char *)scan.buffer[b].base;
    const unsigned long long per_chunk = 16ull / xfpx_screen_element_bytes(format);
    const unsigned long long chunks = bytes / 16ull;
    const unsigned long long elements = bytes / xfpx_screen_element_bytes(format);
    XfpxScreenCount c;
    c.nan = 0ull;
    c.inf = 0ull;
    c.first = 0ull;
    const uint4 *p = (const uint4 *)base;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < chunks; i += stride) {
        xfpx_screen_chunk(p[i], format, i * per_chunk, c);
    }
    if (blockIdx.x == 0u) {
        for (unsigned long long e = chunks * per_chunk + threadIdx.x; e < elements; e += blockDim.x) {
            xfpx_screen_bits(xfpx_screen_load(base, format, e), format, e, c);
        }
    }

    __shared__ unsigned long long s_nan, s_inf, s_first;
    __shared__ unsigned int s_last;
    if (threadIdx.x == 0u) {
        s_nan = 0ull;
        s_inf = 0ull;
        s_first = 0ull;
    }
    __syncthreads();
    if (c.nan != 0ull) atomicAdd(&s_nan, c.nan);
    if (c.inf != 0ull) atomicAdd(&s_inf, c.inf);
    if (c.first != 0ull) atomicMax(&s_first, c.first);
    __syncthreads();
    XfpxScreenScratch *scratch = (XfpxScreenScratch *)state->scratch + scan.scratch;
    if (threadIdx.x == 0u) {
        if (s_nan != 0ull) atomicAdd(&scratch->nan[b], s_nan);
        if (s_inf != 0ull) atomicAdd(&scratch->inf[b], s_inf);
        if (s_first != 0ull) atomicMax(&scratch->first[b], s_first);
        __threadfence();
        unsigned int done = atomicAdd(&scratch->done, 1u);
        s_last = (done + 1u == gridDim.x * gridDim.y) ? 1u : 0u;
    }
    __syncthreads();
    if (s_last == 0u) return;
    __threadfence();
    for (unsigned int k = threadIdx.x; k < scan.count; k += blockDim.x) {
        xfpx_screen_settle(state, scan, scratch, k);
    }
    if (threadIdx.x == 0u) atomicExch(&scratch->done, 0u);
}

#endif
