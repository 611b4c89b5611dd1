// Runs two kernels (one with a known NaN), prints its checksum, then dies
// of SIGSEGV on the host: the report must still be written and carry the
// finding, and xfpx must exit with the program's own status.
// xfpx-exit: signal 11 (SIGSEGV, after the report-worthy kernels ran)
#include "suite.cuh"
#include <cmath>
#include <csignal>

constexpr int N = 32;

extern "C" __global__ void crash_nan(const float* a, const float* b, float* out) {
    int i = threadIdx.x;
    out[i] = a[i] - b[i];  // xfpx-expect: nan f32
}

extern "C" __global__ void crash_clean(const float* a, float* out) {
    int i = threadIdx.x;
    out[i] = a[i] * 0.5f + 1.0f;
}

int main() {
    Checksum sum;
    float ha[N], hb[N], hout[N], hclean[N];
    const float inf = runtime_f32("inf");
    for (int i = 0; i < N; ++i) {
        ha[i] = inf;
        hb[i] = inf;
    }
    float *da, *db, *dout, *dclean;
    CHECK_CUDA(cudaMalloc(&da, sizeof ha));
    CHECK_CUDA(cudaMalloc(&db, sizeof hb));
    CHECK_CUDA(cudaMalloc(&dout, sizeof hout));
    CHECK_CUDA(cudaMalloc(&dclean, sizeof hclean));
    CHECK_CUDA(cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice));
    crash_nan<<<1, N>>>(da, db, dout);
    for (int i = 0; i < N; ++i) ha[i] = static_cast<float>(i);
    CHECK_CUDA(cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice));
    crash_clean<<<1, N>>>(da, dclean);
    CHECK_CUDA(cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(hclean, dclean, sizeof hclean, cudaMemcpyDeviceToHost));
    sum.add(hout, sizeof hout);
    sum.add(hclean, sizeof hclean);
    std::printf("checksum %016llx\n", static_cast<unsigned long long>(sum.h));
    std::printf("self-check %s\n", std::isnan(hout[0]) && hclean[2] == 2.0f ? "ok" : "FAILED");
    std::fflush(stdout);
    volatile int* nowhere = reinterpret_cast<volatile int*>(std::strtoul("0", nullptr, 10));
    *nowhere = 1;  // SIGSEGV on purpose
    return 0;
}
