// FP32 and FP64 exceptions, one small kernel each, every finding on a
// line carrying an expectation marker (gen-expected.py). Inputs are parsed
// from text on the host and copied to the device, so nothing is folded.
#include "suite.cuh"
#include <cmath>

constexpr int N = 32;  // one warp, every lane sees the same operands

extern "C" __global__ void fpx_f32_nan(const float* a, const float* b, float* out) {
    int i = threadIdx.x;
    out[i] = a[i] * b[i];  // xfpx-expect: nan f32
}

extern "C" __global__ void fpx_f32_inf(const float* a, const float* b, float* out) {
    int i = threadIdx.x;
    out[i] = a[i] * b[i];  // xfpx-expect: inf f32
}

extern "C" __global__ void fpx_f32_sub(const float* a, const float* b, float* out) {
    int i = threadIdx.x;
    out[i] = a[i] * b[i];  // xfpx-expect: sub f32
}

extern "C" __global__ void fpx_f32_rcp(const float* a, const float* b, float* out) {
    int i = threadIdx.x;
    out[i] = 1.0f / a[i];  // x == 0 takes the slow path, whose code sits on the next line
}  // xfpx-expect: div0 f32 (MUFU.RCP of the slow path)

extern "C" __global__ void fpx_f32_div(const float* a, const float* b, float* out) {
    int i = threadIdx.x;
    out[i] = a[i] / b[i];  // xfpx-expect: div0 f32, nan f32 (MUFU.RCP, then FFMA refinement of inf)
}  // slow path: only integer work and comparisons of non-NaN values

extern "C" __global__ void fpx_f64_nan(const double* a, const double* b, double* out) {
    int i = threadIdx.x;
    out[i] = a[i] * b[i];  // xfpx-expect: nan f64
}

extern "C" __global__ void fpx_f64_inf(const double* a, const double* b, double* out) {
    int i = threadIdx.x;
    out[i] = a[i] * b[i];  // xfpx-expect: inf f64
}

extern "C" __global__ void fpx_f64_sub(const double* a, const double* b, double* out) {
    int i = threadIdx.x;
    out[i] = a[i] * b[i];  // xfpx-expect: sub f64
}

extern "C" __global__ void fpx_f64_rcp(const double* a, const double* b, double* out) {
    int i = threadIdx.x;
    out[i] = 1.0 / a[i];  // xfpx-expect: div0 f64, nan f64 (MUFU.RCP64H, then DFMA refinement)
}  // slow path: result built by integer operations

extern "C" __global__ void fpx_f64_div(const double* a, const double* b, double* out) {
    int i = threadIdx.x;
    out[i] = a[i] / b[i];  // xfpx-expect: div0 f64, nan f64 (RCP64H, DFMA; the FFMA+FSETP test of high words is no value)
}  // xfpx-expect: div0 f64, nan f64 (slow path: MUFU.RCP64H of 0, DFMA refinement)

// A max whose bound sits in a uniform register (`FMNMX R, R, URn`): the max
// returns the other operand, so a NaN bound leaves no NaN in the result.
extern "C" __global__ void fpx_f32_max_uniform(const float4* x, float lo, float4* out) {
    float4 v = x[threadIdx.x];
    v.x = fmaxf(v.x, lo), v.y = fmaxf(v.y, lo), v.z = fmaxf(v.z, lo), v.w = fmaxf(v.w, lo);  // xfpx-expect: nan f32 (FMNMX with the NaN bound in a uniform register)
    out[threadIdx.x] = v;
}

template <typename T>
using Kernel = void (*)(const T*, const T*, T*);

// Runs `k` on N copies of (a, b) and returns lane 0's result; adds all
// lanes' bytes to the checksum.
template <typename T>
static T launch(Kernel<T> k, T a, T b, Checksum& sum) {
    T ha[N], hb[N], hout[N];
    for (int i = 0; i < N; ++i) {
        ha[i] = a;
        hb[i] = b;
    }
    T *da, *db, *dout;
    CHECK_CUDA(cudaMalloc(&da, sizeof ha));
    CHECK_CUDA(cudaMalloc(&db, sizeof hb));
    CHECK_CUDA(cudaMalloc(&dout, sizeof hout));
    CHECK_CUDA(cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice));
    k<<<1, N>>>(da, db, dout);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaFree(da));
    CHECK_CUDA(cudaFree(db));
    CHECK_CUDA(cudaFree(dout));
    sum.add(hout, sizeof hout);
    return hout[0];
}

// Runs fpx_f32_max_uniform on 256 vectors of ones with bound `lo`; returns
// the first result.
static float max_uniform(float lo, Checksum& sum) {
    float4 hx[256], hout[256];
    for (float4& v : hx) v = make_float4(1.0f, 1.0f, 1.0f, 1.0f);
    float4 *dx, *dout;
    CHECK_CUDA(cudaMalloc(&dx, sizeof hx));
    CHECK_CUDA(cudaMalloc(&dout, sizeof hout));
    CHECK_CUDA(cudaMemcpy(dx, hx, sizeof hx, cudaMemcpyHostToDevice));
    fpx_f32_max_uniform<<<1, 256>>>(dx, lo, dout);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaFree(dx));
    CHECK_CUDA(cudaFree(dout));
    sum.add(hout, sizeof hout);
    return hout[0].x;
}

int main() {
    Checksum sum;
    SelfCheck check;
    const float zf = runtime_f32("0"), inff = runtime_f32("inf"), bigf = runtime_f32("1e30"),
                tinyf = runtime_f32("1e-20"), onef = runtime_f32("1");
    const double zd = runtime_f64("0"), infd = runtime_f64("inf"), bigd = runtime_f64("1e300"),
                 tinyd = runtime_f64("1e-160"), oned = runtime_f64("1");

    check.expect(std::isnan(launch<float>(fpx_f32_nan, zf, inff, sum)), "f32 0*inf is NaN");
    check.expect(std::isinf(launch<float>(fpx_f32_inf, bigf, bigf, sum)), "f32 1e30*1e30 is Inf");
    check.expect(std::fpclassify(launch<float>(fpx_f32_sub, tinyf, tinyf, sum)) == FP_SUBNORMAL,
                 "f32 1e-20*1e-20 is subnormal");
    check.expect(std::isinf(launch<float>(fpx_f32_rcp, zf, onef, sum)), "f32 1/0 is Inf");
    check.expect(std::isinf(launch<float>(fpx_f32_div, onef, zf, sum)), "f32 1/0 (division) is Inf");
    check.expect(std::isnan(launch<double>(fpx_f64_nan, zd, infd, sum)), "f64 0*inf is NaN");
    check.expect(std::isinf(launch<double>(fpx_f64_inf, bigd, bigd, sum)), "f64 1e300*1e300 is Inf");
    check.expect(std::fpclassify(launch<double>(fpx_f64_sub, tinyd, tinyd, sum)) == FP_SUBNORMAL,
                 "f64 1e-160*1e-160 is subnormal");
    check.expect(std::isinf(launch<double>(fpx_f64_rcp, zd, oned, sum)), "f64 1/0 is Inf");
    check.expect(std::isinf(launch<double>(fpx_f64_div, oned, zd, sum)), "f64 1/0 (division) is Inf");
    check.expect(max_uniform(runtime_f32("nan"), sum) == 1.0f, "f32 max(1, NaN) is 1");

    std::printf("checksum %016llx\n", static_cast<unsigned long long>(sum.h));
    if (check.failures) return 1;
    std::printf("self-check ok\n");
    return 0;
}
