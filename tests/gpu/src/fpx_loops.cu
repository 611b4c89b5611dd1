// Exceptions that arise inside loops and in straight-line code whose
// results fast mode checks in groups or where a loop exits, not at the
// instruction: each finding must show up as the same (kernel, kind,
// format) in both modes. Inputs are parsed from text on the host.
#include "suite.cuh"
#include <cmath>

constexpr int N = 32;      // one warp
constexpr int STEPS = 64;  // loop trips

// A NaN enters a sum through one element in the middle of the loop.
extern "C" __global__ void loop_sum_nan(const float* x, int n, float* out) {
    float acc = 0.0f;
    for (int k = 0; k < n; ++k) {
        acc += x[k] * x[k];  // xfpx-expect: nan f32
    }
    out[threadIdx.x] = acc;
}

// Doubling a value on every trip overflows to infinity part way through.
extern "C" __global__ void loop_grow_inf(const float* x, int n, float* out) {
    float v = x[threadIdx.x];
    for (int k = 0; k < n; ++k) {
        v = v * 4.0f + 1.0f;  // xfpx-expect: inf f32
    }
    out[threadIdx.x] = v;
}

// An f64 accumulation picks up a NaN from its input.
extern "C" __global__ void loop_f64_nan(const double* x, int n, double* out) {
    double acc = 1.0;
    for (int k = 0; k < n; ++k) {
        acc = acc * 0.5 + x[k];  // xfpx-expect: nan f64
    }
    out[threadIdx.x] = acc;
}

// Straight-line results stored side by side: checked in pairs.
extern "C" __global__ void stored_pairs(const float* a, const float* b, float* out) {
    int i = threadIdx.x;
    float p = a[i] * b[i];  // xfpx-expect: nan f32
    float q = a[i] - a[i];
    float r = b[i] * b[i];  // xfpx-expect: inf f32
    out[4 * i] = p;
    out[4 * i + 1] = q;
    out[4 * i + 2] = r;
    out[4 * i + 3] = q * 0.5f;
}

template <typename T>
static T* to_device(const T* host, int count) {
    T* d;
    CHECK_CUDA(cudaMalloc(&d, sizeof(T) * count));
    CHECK_CUDA(cudaMemcpy(d, host, sizeof(T) * count, cudaMemcpyHostToDevice));
    return d;
}

template <typename T>
static void from_device(T* host, T* d, int count, Checksum& sum) {
    CHECK_CUDA(cudaMemcpy(host, d, sizeof(T) * count, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaFree(d));
    sum.add(host, sizeof(T) * count);
}

int main() {
    Checksum sum;
    SelfCheck check;
    const float nanf_ = runtime_f32("nan"), onef = runtime_f32("1"), bigf = runtime_f32("1e30"),
                zf = runtime_f32("0"), inff = runtime_f32("inf");
    const double nand_ = runtime_f64("nan"), oned = runtime_f64("1");

    float xs[STEPS];
    for (int k = 0; k < STEPS; ++k) xs[k] = onef;
    xs[STEPS / 2] = nanf_;
    float* dx = to_device(xs, STEPS);
    float* dout = to_device(xs, N);
    loop_sum_nan<<<1, N>>>(dx, STEPS, dout);
    CHECK_CUDA(cudaGetLastError());
    float out[4 * N];
    from_device(out, dout, N, sum);
    check.expect(std::isnan(out[0]), "sum with a NaN element is NaN");

    for (int k = 0; k < N; ++k) xs[k] = onef;
    float* dv = to_device(xs, N);
    dout = to_device(xs, N);
    loop_grow_inf<<<1, N>>>(dv, STEPS, dout);
    CHECK_CUDA(cudaGetLastError());
    from_device(out, dout, N, sum);
    CHECK_CUDA(cudaFree(dv));
    check.expect(std::isinf(out[0]), "4^64 overflows f32");

    double xd[STEPS];
    for (int k = 0; k < STEPS; ++k) xd[k] = oned;
    xd[STEPS - 3] = nand_;
    double* dxd = to_device(xd, STEPS);
    double* doutd = to_device(xd, N);
    loop_f64_nan<<<1, N>>>(dxd, STEPS, doutd);
    CHECK_CUDA(cudaGetLastError());
    double outd[N];
    from_device(outd, doutd, N, sum);
    CHECK_CUDA(cudaFree(dxd));
    check.expect(std::isnan(outd[0]), "f64 sum with a NaN input is NaN");

    float ha[N], hb[N];
    for (int i = 0; i < N; ++i) {
        ha[i] = zf;
        hb[i] = bigf;
    }
    hb[0] = inff;  // lane 0: 0 * inf = NaN, inf * inf = inf; the others: 1e30 * 1e30 = inf
    float* da = to_device(ha, N);
    float* db = to_device(hb, N);
    dout = to_device(out, 4 * N);
    stored_pairs<<<1, N>>>(da, db, dout);
    CHECK_CUDA(cudaGetLastError());
    from_device(out, dout, 4 * N, sum);
    CHECK_CUDA(cudaFree(da));
    CHECK_CUDA(cudaFree(db));
    CHECK_CUDA(cudaFree(dx));
    check.expect(std::isnan(out[0]) && std::isinf(out[2]) && std::isinf(out[6]), "pairs: NaN and Inf stored");

    std::printf("checksum %016llx\n", static_cast<unsigned long long>(sum.h));
    if (check.failures) return 1;
    std::printf("self-check ok\n");
    return 0;
}
