// Two small kernels the multi-object program loads beside vector_add:
// x = s * x, and y = a * x + y.
#include "hsa_kernel.h"

KERNEL void scale(float *x, float s, unsigned n) {
  unsigned i = global_id_x();
  if (i < n) x[i] = s * x[i];
}

KERNEL void axpy(float *y, const float *x, float a, unsigned n) {
  unsigned i = global_id_x();
  if (i < n) y[i] = a * x[i] + y[i];
}
