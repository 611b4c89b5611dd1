// Many instrumentation sites: 64 kernels of fully unrolled straight-line
// FFMA chains (over 200,000 floating-point instructions in all, counted
// from the SASS listing by the suite's own test), plus two kernels with one
// known finding each. The chains converge to 0.5 and never leave the normal
// range, so only the marked lines produce exceptions.
#include "suite.cuh"
#include <cmath>
#include <vector>

constexpr int N = 1024;
constexpr int STEPS = 800;  // FFMAs per chain; 4 chains per kernel

#define MANY_KERNEL(n)                                                                      \
    extern "C" __global__ void many_##n(const float* in, const float* c, float* out) {     \
        int i = blockIdx.x * blockDim.x + threadIdx.x;                                      \
        float c0 = c[0], c1 = c[1];                                                         \
        float x0 = in[i], x1 = in[i] + c1, x2 = in[i] * c0, x3 = in[i] - c1;                \
        _Pragma("unroll") for (int k = 0; k < STEPS; ++k) {                                 \
            x0 = fmaf(x0, c0, c1);                                                          \
            x1 = fmaf(x1, c0, c1);                                                          \
            x2 = fmaf(x2, c0, c1);                                                          \
            x3 = fmaf(x3, c0, c1);                                                          \
        }                                                                                   \
        out[i] = (x0 + x1) + (x2 + x3);                                                     \
    }

#define MANY_8(a) MANY_KERNEL(a##0) MANY_KERNEL(a##1) MANY_KERNEL(a##2) MANY_KERNEL(a##3) \
                  MANY_KERNEL(a##4) MANY_KERNEL(a##5) MANY_KERNEL(a##6) MANY_KERNEL(a##7)

MANY_8(0) MANY_8(1) MANY_8(2) MANY_8(3) MANY_8(4) MANY_8(5) MANY_8(6) MANY_8(7)

extern "C" __global__ void many_overflow(const float* in, const float* c, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i] * c[2];  // xfpx-expect: inf f32
}

extern "C" __global__ void many_subnormal(const double* in, const double* c, double* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = in[i] * c[0];  // xfpx-expect: sub f64
}

using ManyKernel = void (*)(const float*, const float*, float*);

#define REF_8(a) many_##a##0, many_##a##1, many_##a##2, many_##a##3, \
                 many_##a##4, many_##a##5, many_##a##6, many_##a##7
static const ManyKernel kernels[64] = {REF_8(0), REF_8(1), REF_8(2), REF_8(3),
                                       REF_8(4), REF_8(5), REF_8(6), REF_8(7)};

int main() {
    Checksum sum;
    SelfCheck check;
    std::vector<float> in(N), out(64 * N), out2(N);
    for (int i = 0; i < N; ++i) in[i] = runtime_f32("1e-3") * static_cast<float>(i);
    in[5] = runtime_f32("1e30");
    float c[3] = {runtime_f32("0.5"), runtime_f32("0.25"), runtime_f32("1e10")};
    float *din, *dc, *dout, *dout2;
    CHECK_CUDA(cudaMalloc(&din, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dc, sizeof c));
    CHECK_CUDA(cudaMalloc(&dout, 64 * N * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dout2, N * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(din, in.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dc, c, sizeof c, cudaMemcpyHostToDevice));
    // the chains get ordinary inputs; lane 5's 1e30 only meets many_overflow
    std::vector<float> chain_in(N);
    for (int i = 0; i < N; ++i) chain_in[i] = runtime_f32("1e-3") * static_cast<float>(i);
    float* dchain;
    CHECK_CUDA(cudaMalloc(&dchain, N * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(dchain, chain_in.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    for (int k = 0; k < 64; ++k) kernels[k]<<<N / 128, 128>>>(dchain, dc, dout + k * N);
    many_overflow<<<N / 128, 128>>>(din, dc, dout2);
    std::vector<double> ind(N, runtime_f64("1e-160")), outd(N);
    double cd[1] = {runtime_f64("1e-160")};
    double *dind, *dcd, *doutd;
    CHECK_CUDA(cudaMalloc(&dind, N * sizeof(double)));
    CHECK_CUDA(cudaMalloc(&dcd, sizeof cd));
    CHECK_CUDA(cudaMalloc(&doutd, N * sizeof(double)));
    CHECK_CUDA(cudaMemcpy(dind, ind.data(), N * sizeof(double), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dcd, cd, sizeof cd, cudaMemcpyHostToDevice));
    many_subnormal<<<N / 128, 128>>>(dind, dcd, doutd);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpy(out.data(), dout, 64 * N * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(out2.data(), dout2, N * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(outd.data(), doutd, N * sizeof(double), cudaMemcpyDeviceToHost));
    for (int i = 0; i < 64 * N; ++i) {
        if (std::fabs(out[i] - 2.0f) > 1e-5f) {
            check.expect(false, "chains converge to 4 x 0.5");
            break;
        }
    }
    check.expect(std::isinf(out2[5]) && std::isnormal(out2[6]), "only lane 5 overflows");
    check.expect(std::fpclassify(outd[0]) == FP_SUBNORMAL, "1e-160 * 1e-160 is subnormal");
    sum.add(out.data(), 64 * N * sizeof(float));
    sum.add(out2.data(), N * sizeof(float));
    sum.add(outd.data(), N * sizeof(double));
    std::printf("checksum %016llx\n", static_cast<unsigned long long>(sum.h));
    if (check.failures) return 1;
    std::printf("self-check ok\n");
    return 0;
}
