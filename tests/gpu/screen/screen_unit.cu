// The scan kernel of launch screening (asm-snippets/nvidia/xfpx_screen.cuh)
// on the GPU, alone: each case fills device buffers, runs scans and prints
// what the scan left in its counters and the records it sent, one line each.
// tests/gpu/screen-check.sh compares the output with screen_unit.expected,
// which the counting rule's host mirror writes (xfpx-nvidia
// backend-nvidia/tests/screen_gpu_fixture.rs): the device and the mirror
// must agree line for line.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "xfpx_screen.cuh"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "error: %s failed: %s\n", #call, cudaGetErrorString(e_));             \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

// splitmix64 bytes, as the Rust mirror makes them
static std::vector<unsigned char> noise(unsigned long long seed, size_t n) {
    std::vector<unsigned char> out;
    unsigned long long x = seed;
    while (out.size() < n) {
        x += 0x9E3779B97F4A7C15ull;
        unsigned long long z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        for (int i = 0; i < 8; i++) out.push_back((unsigned char)(z >> (8 * i)));
    }
    out.resize(n);
    return out;
}

static XfpxScreenState *g_state = nullptr;
static XfpxScreenSlot *g_slots = nullptr;
static XfpxScreenRecord *g_ring = nullptr; // mapped host memory
static unsigned int *g_tail = nullptr;     // mapped host memory
static unsigned int g_read = 0;

static void setup() {
    XfpxScreenState s;
    memset(&s, 0, sizeof(s));
    void *scratch = nullptr, *ring_dev = nullptr, *tail_dev = nullptr;
    CHECK(cudaMalloc(&g_state, sizeof(XfpxScreenState)));
    CHECK(cudaMalloc(&g_slots, sizeof(XfpxScreenSlot) * XFPX_SCREEN_SLOTS));
    CHECK(cudaMemset(g_slots, 0, sizeof(XfpxScreenSlot) * XFPX_SCREEN_SLOTS));
    CHECK(cudaMalloc(&scratch, sizeof(XfpxScreenScratch) * XFPX_SCREEN_SCRATCH));
    CHECK(cudaMemset(scratch, 0, sizeof(XfpxScreenScratch) * XFPX_SCREEN_SCRATCH));
    CHECK(cudaHostAlloc((void **)&g_ring, sizeof(XfpxScreenRecord) * XFPX_SCREEN_RING, cudaHostAllocMapped));
    CHECK(cudaHostAlloc((void **)&g_tail, 64, cudaHostAllocMapped));
    memset(g_ring, 0, sizeof(XfpxScreenRecord) * XFPX_SCREEN_RING);
    memset(g_tail, 0, 64);
    CHECK(cudaHostGetDevicePointer(&ring_dev, g_ring, 0));
    CHECK(cudaHostGetDevicePointer(&tail_dev, g_tail, 0));
    s.slots = (unsigned long long)(uintptr_t)g_slots;
    s.scratch = (unsigned long long)(uintptr_t)scratch;
    s.records = (unsigned long long)(uintptr_t)ring_dev;
    s.host_tail = (unsigned long long)(uintptr_t)tail_dev;
    s.capacity = XFPX_SCREEN_RING;
    CHECK(cudaMemcpy(g_state, &s, sizeof(s), cudaMemcpyHostToDevice));
}

static void *upload(const std::vector<unsigned char> &bytes) {
    void *d = nullptr;
    CHECK(cudaMalloc(&d, bytes.size()));
    CHECK(cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    return d;
}

struct Buf {
    void *dev;
    unsigned long long bytes;
    unsigned int slot;
    unsigned int format;
};

// Run one scan over `bufs` (the grid as xfpx-nvidia `screen::device::grid_x`
// makes it) and print its counters and records.
static void scan(const char *name, unsigned int serial, unsigned int report, const std::vector<Buf> &bufs) {
    static unsigned int scratch = 0;
    XfpxScreenLaunch l;
    memset(&l, 0, sizeof(l));
    l.serial = serial;
    l.report = report;
    l.scratch = scratch++ % XFPX_SCREEN_SCRATCH;
    l.count = (unsigned int)bufs.size();
    unsigned long long largest = 0;
    for (size_t i = 0; i < bufs.size(); i++) {
        l.buffer[i].base = (unsigned long long)(uintptr_t)bufs[i].dev;
        l.buffer[i].bytes = bufs[i].bytes;
        l.buffer[i].slot = bufs[i].slot;
        l.buffer[i].param = (unsigned short)i;
        l.buffer[i].format = (unsigned char)bufs[i].format;
        largest = std::max(largest, bufs[i].bytes / 16ull);
    }
    unsigned long long per_block = 256ull * 4ull;
    unsigned long long wanted = std::max(1ull, (largest + per_block - 1) / per_block);
    unsigned long long cap = std::max(1ull, (unsigned long long)(2048u / l.count));
    l.grid_x = (unsigned int)std::min(wanted, cap);
    dim3 grid(l.grid_x, l.count);
    xfpx_screen_scan<<<grid, XFPX_SCREEN_THREADS>>>(g_state, l);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    for (size_t i = 0; i < bufs.size(); i++) {
        XfpxScreenSlot s;
        CHECK(cudaMemcpy(&s, g_slots + bufs[i].slot, sizeof(s), cudaMemcpyDeviceToHost));
        printf("%s buffer=%zu serial=%u nan=%llu inf=%llu\n", name, i, s.serial, s.nan, s.inf);
    }
    std::vector<XfpxScreenRecord> got;
    for (;;) {
        volatile XfpxScreenRecord *r = &g_ring[g_read % XFPX_SCREEN_RING];
        if (r->seq != g_read + 1u) break;
        XfpxScreenRecord copy;
        memcpy(&copy, (const void *)r, sizeof(copy));
        got.push_back(copy);
        g_read++;
    }
    *(volatile unsigned int *)g_tail = g_read;
    std::sort(got.begin(), got.end(),
              [](const XfpxScreenRecord &a, const XfpxScreenRecord &b) { return a.param < b.param; });
    for (const XfpxScreenRecord &r : got) {
        printf("%s record param=%u serial=%u previous=%u format=%u nan=%llu->%llu inf=%llu->%llu first=%lld bytes=%llu\n",
               name, (unsigned)r.param, r.serial, r.previous, (unsigned)r.format, r.nan_before, r.nan_after,
               r.inf_before, r.inf_after, r.first == ~0ull ? -1ll : (long long)r.first, r.bytes);
    }
}

int main() {
    setup();
    // random bits read as each format: many NaN and infinities
    std::vector<unsigned char> n1 = noise(1, (1u << 20) + 12);
    void *d1 = upload(n1);
    const unsigned int formats[4] = {XFPX_FMT_F64, XFPX_FMT_F32, XFPX_FMT_BF16, XFPX_FMT_F16};
    const char *names[4] = {"noise-f64", "noise-f32", "noise-bf16", "noise-f16"};
    for (unsigned int f = 0; f < 4; f++) scan(names[f], 1 + f, 1, {{d1, n1.size(), f, formats[f]}});
    // one scan of three buffers of three formats
    std::vector<unsigned char> a = noise(2, 4096), b = noise(3, 100003), c = noise(4, 24);
    scan("multi", 9, 1,
         {{upload(a), a.size(), 10, XFPX_FMT_F32}, {upload(b), b.size(), 11, XFPX_FMT_F16},
          {upload(c), c.size(), 12, XFPX_FMT_F64}});
    // growth: 1000 f32 ones; a NaN at 700, later an infinity at 3
    std::vector<float> ones(1000, 1.0f);
    void *g = nullptr;
    CHECK(cudaMalloc(&g, ones.size() * sizeof(float)));
    CHECK(cudaMemcpy(g, ones.data(), ones.size() * sizeof(float), cudaMemcpyHostToDevice));
    Buf gb = {g, ones.size() * sizeof(float), 20, XFPX_FMT_F32};
    scan("growth-a", 100, 1, {gb});
    unsigned int nan_bits = 0x7fffffffu, inf_bits = 0x7f800000u;
    CHECK(cudaMemcpy((char *)g + 4 * 700, &nan_bits, 4, cudaMemcpyHostToDevice));
    scan("growth-b", 101, 1, {gb});
    scan("growth-c", 102, 1, {gb});
    CHECK(cudaMemcpy((char *)g + 4 * 3, &inf_bits, 4, cudaMemcpyHostToDevice));
    scan("growth-d", 103, 0, {gb});
    CHECK(cudaMemcpy((char *)g + 4 * 4, &inf_bits, 4, cudaMemcpyHostToDevice));
    scan("growth-e", 104, 1, {gb});
    // no whole chunk: f16 infinity, NaN, a finite value
    std::vector<unsigned char> t = {0x00, 0x7c, 0x01, 0x7e, 0xff, 0x3b};
    scan("tail", 200, 1, {{upload(t), t.size(), 30, XFPX_FMT_F16}});
    // 64 MiB of zeros with a NaN in the last element: the grid is capped
    size_t big = 64u << 20;
    void *z = nullptr;
    CHECK(cudaMalloc(&z, big));
    CHECK(cudaMemset(z, 0, big));
    unsigned long long nan64 = 0x7ff8000000000001ull;
    CHECK(cudaMemcpy((char *)z + big - 8, &nan64, 8, cudaMemcpyHostToDevice));
    scan("big", 300, 1, {{z, big, 40, XFPX_FMT_F64}});
    printf("screen_unit: done\n");
    return 0;
}
