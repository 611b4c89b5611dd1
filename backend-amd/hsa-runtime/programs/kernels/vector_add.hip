// c = a + b, one element per work-item.
#include "hsa_kernel.h"

KERNEL void vector_add(float *c, const float *a, const float *b, unsigned n) {
  unsigned i = global_id_x();
  if (i < n) c[i] = a[i] + b[i];
}
