// Packed half-precision exceptions: f16x2 (HFMA2/HMUL2/HADD2) and bf16x2
// (their .BF16_V2 forms). The low lane of every operand pair is the
// exceptional one, the high lane stays normal, so lane handling is tested.
#include "suite.cuh"
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cmath>

constexpr int N = 32;

extern "C" __global__ void fpx_f16x2_nan(const __half2* a, const __half2* b, const __half2* c, __half2* out) {
    int i = threadIdx.x;
    out[i] = __hfma2(a[i], b[i], c[i]);  // xfpx-expect: nan f16x2
}

extern "C" __global__ void fpx_f16x2_inf(const __half2* a, const __half2* b, const __half2* c, __half2* out) {
    int i = threadIdx.x;
    out[i] = __hmul2(a[i], b[i]);  // xfpx-expect: inf f16x2
}

extern "C" __global__ void fpx_f16x2_sub(const __half2* a, const __half2* b, const __half2* c, __half2* out) {
    int i = threadIdx.x;
    out[i] = __hadd2(a[i], b[i]);  // xfpx-expect: sub f16x2
}

extern "C" __global__ void fpx_bf16x2_nan(const __nv_bfloat162* a, const __nv_bfloat162* b,
                                          const __nv_bfloat162* c, __nv_bfloat162* out) {
    int i = threadIdx.x;
    out[i] = __hfma2(a[i], b[i], c[i]);  // xfpx-expect: nan bf16x2
}

extern "C" __global__ void fpx_bf16x2_inf(const __nv_bfloat162* a, const __nv_bfloat162* b,
                                          const __nv_bfloat162* c, __nv_bfloat162* out) {
    int i = threadIdx.x;
    out[i] = __hmul2(a[i], b[i]);  // xfpx-expect: inf bf16x2
}

template <typename P>
using Kernel = void (*)(const P*, const P*, const P*, P*);

template <typename P>
static P launch(Kernel<P> k, P a, P b, P c, Checksum& sum) {
    P ha[N], hb[N], hc[N], hout[N];
    for (int i = 0; i < N; ++i) {
        ha[i] = a;
        hb[i] = b;
        hc[i] = c;
    }
    P *da, *db, *dc, *dout;
    CHECK_CUDA(cudaMalloc(&da, sizeof ha));
    CHECK_CUDA(cudaMalloc(&db, sizeof hb));
    CHECK_CUDA(cudaMalloc(&dc, sizeof hc));
    CHECK_CUDA(cudaMalloc(&dout, sizeof hout));
    CHECK_CUDA(cudaMemcpy(da, ha, sizeof ha, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(db, hb, sizeof hb, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dc, hc, sizeof hc, cudaMemcpyHostToDevice));
    k<<<1, N>>>(da, db, dc, dout);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaFree(da));
    CHECK_CUDA(cudaFree(db));
    CHECK_CUDA(cudaFree(dc));
    CHECK_CUDA(cudaFree(dout));
    sum.add(hout, sizeof hout);
    return hout[0];
}

static __half2 h2(const char* lo, const char* hi) {
    return __halves2half2(__float2half_rn(runtime_f32(lo)), __float2half_rn(runtime_f32(hi)));
}

static __nv_bfloat162 b2(const char* lo, const char* hi) {
    return __halves2bfloat162(__float2bfloat16_rn(runtime_f32(lo)), __float2bfloat16_rn(runtime_f32(hi)));
}

int main() {
    Checksum sum;
    SelfCheck check;
    const __half2 zero = h2("0", "0");
    __half2 r;
    r = launch<__half2>(fpx_f16x2_nan, h2("0", "2"), h2("inf", "3"), zero, sum);
    check.expect(std::isnan(__low2float(r)) && __high2float(r) == 6.0f, "f16x2 fma(0,inf,0) is NaN in the low lane");
    r = launch<__half2>(fpx_f16x2_inf, h2("60000", "2"), h2("2", "3"), zero, sum);
    check.expect(std::isinf(__low2float(r)) && __high2float(r) == 6.0f, "f16x2 60000*2 is Inf in the low lane");
    r = launch<__half2>(fpx_f16x2_sub, h2("0.0001", "1"), h2("-0.00009", "1"), zero, sum);
    check.expect(std::fabs(__low2float(r)) > 0.0f && std::fabs(__low2float(r)) < 6.1e-5f && __high2float(r) == 2.0f,
                 "f16x2 1e-4 - 9e-5 is subnormal in the low lane");
    const __nv_bfloat162 bzero = b2("0", "0");
    __nv_bfloat162 s;
    s = launch<__nv_bfloat162>(fpx_bf16x2_nan, b2("0", "2"), b2("inf", "3"), bzero, sum);
    check.expect(std::isnan(__low2float(s)) && __high2float(s) == 6.0f, "bf16x2 fma(0,inf,0) is NaN in the low lane");
    s = launch<__nv_bfloat162>(fpx_bf16x2_inf, b2("1e30", "2"), b2("1e30", "3"), bzero, sum);
    check.expect(std::isinf(__low2float(s)) && __high2float(s) == 6.0f, "bf16x2 1e30*1e30 is Inf in the low lane");

    std::printf("checksum %016llx\n", static_cast<unsigned long long>(sum.h));
    if (check.failures) return 1;
    std::printf("self-check ok\n");
    return 0;
}
