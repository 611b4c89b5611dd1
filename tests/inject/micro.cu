// Micro-kernels for the inject tool, whose faulty output can be predicted
// from the fault, the golden output and the SM each block ran on (every
// kernel records %smid per block: the block scheduler decides where blocks
// land, so the prediction is made after the fact).
//
// Usage: micro KERNEL OUT.bin   (KERNEL: index, fadd, select, shared, guarded)
// OUT.bin: the output words, then the block log (little-endian uint32).
// 264 blocks of 32 threads (one warp each): every one of the 132 SMs of an
// H100 gets blocks.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

constexpr int BLOCKS = 264;
constexpr int THREADS = 32;
constexpr int N = BLOCKS * THREADS;
constexpr uint32_t SENTINEL = 0xffffffffu;

__device__ __forceinline__ uint32_t lane_id() {
    uint32_t v;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(v));
    return v;
}

__device__ __forceinline__ uint32_t sm_id() {
    uint32_t v;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(v));
    return v;
}

// IAT, IAW, IAC: out has 64 slots per block; a thread writes slot
// block*64 + threadIdx.x the value 100000*block + 7*lane + 1 (lane from
// %laneid, which the faults leave alone). Lane 0 logs (smid, block index read).
__global__ void index_kernel(uint32_t *out, uint32_t *log, uint32_t *count) {
    uint32_t lane = lane_id();
    uint32_t b = blockIdx.x;
    out[b * 64u + threadIdx.x] = 100000u * b + 7u * lane + 1u;
    if (lane == 0) {
        uint32_t i = atomicAdd(count, 1u);
        log[2 * i] = sm_id();
        log[2 * i + 1] = b;
    }
}

// IOC (fp): the one floating-point instruction is the add.
__global__ void fadd_kernel(const float *a, const float *b, float *out, uint32_t *smid) {
    int i = blockIdx.x * THREADS + threadIdx.x;
    out[i] = a[i] + b[i];
    if (lane_id() == 0) smid[blockIdx.x] = sm_id();
}

// WV: a comparison's predicate selects 1 or 2.
__global__ void select_kernel(const float *a, const float *b, uint32_t *out, uint32_t *smid) {
    int i = blockIdx.x * THREADS + threadIdx.x;
    out[i] = a[i] > b[i] ? 1u : 2u;
    if (lane_id() == 0) smid[blockIdx.x] = sm_id();
}

// IMD: each lane stores 3*i + 7 to its shared word, the warp syncs, each
// lane reads its word back and writes it out.
__global__ void shared_kernel(uint32_t *out, uint32_t *smid) {
    __shared__ uint32_t s[THREADS];
    int i = blockIdx.x * THREADS + threadIdx.x;
    uint32_t lane = lane_id();
    s[lane] = 3u * (uint32_t)i + 7u;
    __syncwarp();
    out[i] = s[lane];
    if (lane == 0) smid[blockIdx.x] = sm_id();
}

// IAL force: a predicated add (kept predicated by inline PTX) runs in even
// lanes only; odd lanes write a[i] unchanged.
__global__ void guarded_kernel(const float *a, const float *b, float *out, uint32_t *smid) {
    int i = blockIdx.x * THREADS + threadIdx.x;
    uint32_t lane = lane_id();
    float r = a[i];
    asm volatile("{\n\t.reg .pred p;\n\tsetp.eq.u32 p, %1, 0;\n\t@p add.f32 %0, %0, %2;\n\t}"
                 : "+f"(r)
                 : "r"(lane & 1u), "f"(b[i]));
    out[i] = r;
    if (lane == 0) smid[blockIdx.x] = sm_id();
}

static void check(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        fprintf(stderr, "micro: %s: %s\n", what, cudaGetErrorString(e));
        exit(2);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: micro index|fadd|select|shared|guarded OUT.bin\n");
        return 64;
    }
    std::string k = argv[1];
    std::vector<float> ha(N), hb(N);
    for (int i = 0; i < N; i++) {
        ha[i] = 1.5f + 0.25f * (float)(i % 97);
        hb[i] = 3.0f + 0.125f * (float)(i % 89);
    }
    float *a, *b;
    uint32_t *out, *log, *count;
    size_t out_words = k == "index" ? BLOCKS * 64 : N;
    size_t log_words = k == "index" ? BLOCKS * 2 : BLOCKS;
    check(cudaMalloc(&a, N * 4), "malloc");
    check(cudaMalloc(&b, N * 4), "malloc");
    check(cudaMalloc(&out, out_words * 4), "malloc");
    check(cudaMalloc(&log, log_words * 4), "malloc");
    check(cudaMalloc(&count, 4), "malloc");
    check(cudaMemcpy(a, ha.data(), N * 4, cudaMemcpyHostToDevice), "copy");
    check(cudaMemcpy(b, hb.data(), N * 4, cudaMemcpyHostToDevice), "copy");
    check(cudaMemset(out, 0xff, out_words * 4), "memset");
    check(cudaMemset(log, 0xff, log_words * 4), "memset");
    check(cudaMemset(count, 0, 4), "memset");
    if (k == "index") index_kernel<<<BLOCKS, THREADS>>>(out, log, count);
    else if (k == "fadd") fadd_kernel<<<BLOCKS, THREADS>>>(a, b, (float *)out, log);
    else if (k == "select") select_kernel<<<BLOCKS, THREADS>>>(a, b, out, log);
    else if (k == "shared") shared_kernel<<<BLOCKS, THREADS>>>(out, log);
    else if (k == "guarded") guarded_kernel<<<BLOCKS, THREADS>>>(a, b, (float *)out, log);
    else {
        fprintf(stderr, "micro: unknown kernel %s\n", k.c_str());
        return 64;
    }
    check(cudaGetLastError(), "launch");
    check(cudaDeviceSynchronize(), "kernel");
    std::vector<uint32_t> host(out_words + log_words);
    check(cudaMemcpy(host.data(), out, out_words * 4, cudaMemcpyDeviceToHost), "copy back");
    check(cudaMemcpy(host.data() + out_words, log, log_words * 4, cudaMemcpyDeviceToHost), "copy back");
    FILE *f = fopen(argv[2], "wb");
    if (!f || fwrite(host.data(), 4, host.size(), f) != host.size()) {
        fprintf(stderr, "micro: cannot write %s\n", argv[2]);
        return 3;
    }
    fclose(f);
    return 0;
}
