// A program without floating-point exceptions: saxpy, a polynomial, a
// division and a square root of well-scaled values, min/max (one with its
// bound in a uniform register) and a comparison. It must produce no
// findings at all.
#include "suite.cuh"
#include <cmath>
#include <vector>

constexpr int N = 4096;

extern "C" __global__ void clean_saxpy(float alpha, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + y[i];
}

extern "C" __global__ void clean_poly_div_sqrt(const float* x, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];                               // in [1, 2)
    float p = ((0.25f * v + 0.5f) * v + 1.0f) * v + 2.0f;
    float q = p / (v + 1.0f);
    float r = sqrtf(q + v);
    float m = fminf(fmaxf(r, 1.0f), 8.0f);
    out[i] = m > 1.5f ? m : -m;
}

// A max whose bound sits in a uniform register (`FMNMX R, R, URn`): the
// tool reads the uniform register, which holds a number here.
extern "C" __global__ void clean_max_uniform(const float4* x, float lo, float4* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v = x[i];
    v.x = fmaxf(v.x, lo), v.y = fmaxf(v.y, lo), v.z = fmaxf(v.z, lo), v.w = fmaxf(v.w, lo);
    out[i] = v;
}

extern "C" __global__ void clean_f64(const double* x, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v = x[i];
    out[i] = (v * v + 3.0) / (v + 1.0) + sqrt(v);
}

int main() {
    Checksum sum;
    SelfCheck check;
    const float seed = runtime_f32("1.0");
    std::vector<float> x(N), y(N), out(N);
    std::vector<double> xd(N), outd(N);
    for (int i = 0; i < N; ++i) {
        x[i] = seed + static_cast<float>(i) / N;  // [1, 2)
        y[i] = 0.5f * x[i];
        xd[i] = static_cast<double>(x[i]);
    }
    float *dx, *dy, *dout;
    double *dxd, *doutd;
    CHECK_CUDA(cudaMalloc(&dx, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dy, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dout, N * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dxd, N * sizeof(double)));
    CHECK_CUDA(cudaMalloc(&doutd, N * sizeof(double)));
    CHECK_CUDA(cudaMemcpy(dx, x.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dy, y.data(), N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dxd, xd.data(), N * sizeof(double), cudaMemcpyHostToDevice));
    for (int rep = 0; rep < 3; ++rep) clean_saxpy<<<N / 256, 256>>>(0.25f, dx, dy, N);
    clean_poly_div_sqrt<<<N / 256, 256>>>(dx, dout, N);
    clean_f64<<<N / 256, 256>>>(dxd, doutd, N);
    // the N floats of x as N / 4 vectors, bound 1.5: half of them are raised
    float4* dmax;
    CHECK_CUDA(cudaMalloc(&dmax, N * sizeof(float)));
    clean_max_uniform<<<N / 4 / 256, 256>>>(reinterpret_cast<const float4*>(dx), 1.5f * seed, dmax, N / 4);
    CHECK_CUDA(cudaGetLastError());
    std::vector<float> maxed(N);
    CHECK_CUDA(cudaMemcpy(maxed.data(), dmax, N * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(y.data(), dy, N * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(out.data(), dout, N * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(outd.data(), doutd, N * sizeof(double), cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; ++i) {
        check.expect(std::isnormal(y[i]) && std::fabs(y[i] - 1.25f * x[i]) <= 1e-5f * x[i], "saxpy result");
        check.expect(std::isnormal(out[i]), "polynomial result is normal");
        check.expect(std::isnormal(outd[i]), "f64 result is normal");
        check.expect(maxed[i] == std::fmax(x[i], 1.5f), "max with a uniform bound");
        if (check.failures) break;
    }
    sum.add(y.data(), N * sizeof(float));
    sum.add(out.data(), N * sizeof(float));
    sum.add(outd.data(), N * sizeof(double));
    sum.add(maxed.data(), N * sizeof(float));
    std::printf("checksum %016llx\n", static_cast<unsigned long long>(sum.h));
    if (check.failures) return 1;
    std::printf("self-check ok\n");
    return 0;
}
