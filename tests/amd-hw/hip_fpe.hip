// A HIP program for the AMD hardware check: three kernels whose results
// are NaN, infinite, or a division by zero at chosen elements, each at one
// known line (hip_fpe.expect.json), run through the HIP runtime (so the
// HSA tool sees HIP's own code-object loads and queues). Every output is
// checked against the host's; exit 0 when all are equal.
#include <hip/hip_runtime.h>
#include <cmath>
#include <cstdio>
#include <cstring>

__global__ void hip_nan(float *out, const float *x, const float *y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * y[i];  // NaN where x is 0 and y is infinite
}

__global__ void hip_overflow(float *out, const float *x, float s, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] * s;  // infinite where |x * s| exceeds FLT_MAX
}

__global__ void hip_div0(double *out, const double *x, const double *y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] / y[i];  // division by zero where y is 0
}

#define N 1024
#define CHECK(call)                                                                  \
  do {                                                                               \
    hipError_t e_ = (call);                                                          \
    if (e_ != hipSuccess) {                                                          \
      fprintf(stderr, "error: %s: %s\n", #call, hipGetErrorString(e_));             \
      return 2;                                                                      \
    }                                                                                \
  } while (0)

static bool same(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

int main() {
  static float x[N], y[N], on[N], oi[N];
  static double p[N], q[N], od[N];
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 13) * 0.125f - 0.75f;
    y[i] = 2.0f + (float)(i % 3);
    p[i] = (double)i - 100.0;
    q[i] = (double)(i % 11) + 1.0;
  }
  x[5] = 0.0f;
  y[5] = INFINITY;
  x[7] = 1.0e10f;
  q[3] = 0.0;
  const float big = 1.0e37f;
  float *dx, *dy, *dn, *di;
  double *dp, *dq, *dd;
  CHECK(hipMalloc(&dx, sizeof x));
  CHECK(hipMalloc(&dy, sizeof y));
  CHECK(hipMalloc(&dn, sizeof on));
  CHECK(hipMalloc(&di, sizeof oi));
  CHECK(hipMalloc(&dp, sizeof p));
  CHECK(hipMalloc(&dq, sizeof q));
  CHECK(hipMalloc(&dd, sizeof od));
  CHECK(hipMemcpy(dx, x, sizeof x, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dy, y, sizeof y, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dp, p, sizeof p, hipMemcpyHostToDevice));
  CHECK(hipMemcpy(dq, q, sizeof q, hipMemcpyHostToDevice));
  hipLaunchKernelGGL(hip_nan, dim3(N / 256), dim3(256), 0, 0, dn, dx, dy, N);
  hipLaunchKernelGGL(hip_overflow, dim3(N / 256), dim3(256), 0, 0, di, dx, big, N);
  hipLaunchKernelGGL(hip_div0, dim3(N / 256), dim3(256), 0, 0, dd, dp, dq, N);
  CHECK(hipGetLastError());
  CHECK(hipMemcpy(on, dn, sizeof on, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(oi, di, sizeof oi, hipMemcpyDeviceToHost));
  CHECK(hipMemcpy(od, dd, sizeof od, hipMemcpyDeviceToHost));
  int bad = 0;
  for (int i = 0; i < N; i++) {
    volatile float wn = x[i] * y[i], wi = x[i] * big;
    volatile double wd = p[i] / q[i];
    bad += !same(on[i], wn) + !same(oi[i], wi) + !same(od[i], wd);
  }
  if (bad) {
    fprintf(stderr, "hip_fpe: %d results differ from the host's\n", bad);
    return 1;
  }
  printf("hip_fpe: NaN, overflow and division by zero where planted; %d results equal the host's\n", 3 * N);
  return 0;
}
