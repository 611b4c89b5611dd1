// Kernels whose results are NaN, infinite, or a division by zero at chosen
// elements, each at one known line (fpe.expect.json lists them).
#include "hsa_kernel.h"

KERNEL void fpe_nan(float *out, const float *x, const float *y, unsigned n) {
  unsigned i = global_id_x();
  if (i < n)
    out[i] = x[i] * y[i];  // NaN where x is 0 and y is infinite
}

KERNEL void fpe_overflow(float *out, const float *x, float s, unsigned n) {
  unsigned i = global_id_x();
  if (i < n)
    out[i] = x[i] * s;  // infinite where |x * s| exceeds FLT_MAX
}

KERNEL void fpe_div0(double *out, const double *x, const double *y, unsigned n) {
  unsigned i = global_id_x();
  if (i < n)
    out[i] = x[i] / y[i];  // division by zero where y is 0
}
