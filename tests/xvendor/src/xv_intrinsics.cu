// Cross-vendor suite: CUDA's fast intrinsics against HIP's functions of
// the same names. CUDA's __fdividef(x, y) is x times an approximate
// reciprocal, documented to give 0 for 2^126 < |y| < 2^128 (a NaN when x
// is infinite); HIP's is IEEE division. CUDA's __powf(x, y) is
// exp2(y * log2(x)) from approximate instructions, so __powf(0, 0) is
// exp2(0 * -inf), a NaN; HIP's is the device library's pow, which gives 1.
// Markers `// xv: NAME` name the lines tests/xvendor/expectations.json
// speaks of. Kernels have C++ names: both compilers mangle them alike, and
// the mangled name carries the parameters' types.
#include "xv_portable.h"

__global__ void xv_fast_div(float *q, const float *x, const float *y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  q[i] = __fdividef(x[i], y[i]);  // xv: fdividef
}

__global__ void xv_fast_pow(float *p, const float *x, const float *y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  p[i] = __powf(x[i], y[i]);  // xv: powf
}

#ifndef __HIP__
#include "xv_host.h"

static void fast_div(const char *tag, const std::vector<float> &x, const std::vector<float> &y) {
  DeviceBuffer<float> dx(x), dy(y), q(x.size());
  xv_fast_div<<<xv_blocks(x.size()), XV_BLOCK>>>(q.p, dx.p, dy.p, (unsigned)x.size());
  CUDA_CHECK(cudaGetLastError());
  printf("%s ", tag);
  xv_print("xv_fast_div q", xv_read(q));
}

static void fast_pow(const char *tag, const std::vector<float> &x, const std::vector<float> &y) {
  DeviceBuffer<float> dx(x), dy(y), p(x.size());
  xv_fast_pow<<<xv_blocks(x.size()), XV_BLOCK>>>(p.p, dx.p, dy.p, (unsigned)x.size());
  CUDA_CHECK(cudaGetLastError());
  printf("%s ", tag);
  xv_print("xv_fast_pow p", xv_read(p));
}

int main() {
  // exceptional: inf / 2^127, 1 / 2^127, 1 / 0, 3 / 1.5
  fast_div("exceptional", {INFINITY, 1.0f, 1.0f, 3.0f}, {0x1p127f, 0x1p127f, 0.0f, 1.5f});
  // exceptional: 0^0, and 2^0.5
  fast_pow("exceptional", {0.0f, 2.0f}, {0.0f, 0.5f});
  // clean: divisors and bases in [0.5, 2), exponents in [-2, 2)
  fast_div("clean", xv_range<float>(256, 1.0, 1.0 / 64), xv_range<float>(256, 0.5, 1.0 / 256));
  fast_pow("clean", xv_range<float>(256, 0.5, 1.0 / 256), xv_range<float>(256, -2.0, 1.0 / 64));
  return 0;
}
#endif
