// Cross-vendor suite: plain IEEE arithmetic, one operation per line and
// nothing the compilers could contract, so both vendors raise the same
// exceptions at the same lines and compute the same bits.
// Markers `// xv: NAME` name the lines tests/xvendor/expectations.json
// speaks of. Kernels have C++ names: both compilers mangle them alike, and
// the mangled name carries the parameters' types.
#include "xv_portable.h"

__global__ void xv_arith(float *prod, float *diff, const float *x, const float *y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  prod[i] = x[i] * y[i];  // xv: prod
  diff[i] = x[i] - y[i];  // xv: diff
}

__global__ void xv_arith64(double *prod, const double *x, const double *y, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  prod[i] = x[i] * y[i];  // xv: prod64
}

#ifndef __HIP__
#include "xv_host.h"

static void arith(const char *tag, const std::vector<float> &x, const std::vector<float> &y) {
  DeviceBuffer<float> dx(x), dy(y), prod(x.size()), diff(x.size());
  xv_arith<<<xv_blocks(x.size()), XV_BLOCK>>>(prod.p, diff.p, dx.p, dy.p, (unsigned)x.size());
  CUDA_CHECK(cudaGetLastError());
  printf("%s ", tag);
  xv_print("xv_arith prod", xv_read(prod));
  printf("%s ", tag);
  xv_print("xv_arith diff", xv_read(diff));
}

static void arith64(const char *tag, const std::vector<double> &x, const std::vector<double> &y) {
  DeviceBuffer<double> dx(x), dy(y), prod(x.size());
  xv_arith64<<<xv_blocks(x.size()), XV_BLOCK>>>(prod.p, dx.p, dy.p, (unsigned)x.size());
  CUDA_CHECK(cudaGetLastError());
  printf("%s ", tag);
  xv_print("xv_arith64 prod", xv_read(prod));
}

int main() {
  // exceptional: 2^100 * 2^100 overflows, inf - inf, 2^-70 * 2^-70 is subnormal
  arith("exceptional", {0x1p100f, INFINITY, 0x1p-70f, 1.5f}, {0x1p100f, INFINITY, 0x1p-70f, 2.0f});
  arith64("exceptional", {0x1p600, 0x1p-1000, 3.0}, {0x1p600, 0x1p-40, 0.5});
  // clean: ordinary values, each result correctly rounded on both vendors
  arith("clean", xv_range<float>(256, 0.5, 1.0 / 128), xv_range<float>(256, 2.0, -1.0 / 256));
  arith64("clean", xv_range<double>(256, 0.5, 1.0 / 128), xv_range<double>(256, 2.0, -1.0 / 256));
  return 0;
}
#endif
