// Sum of a float array: each workgroup of 256 work-items sums its slice in
// LDS (a tree, halving each step) and writes one partial sum; a second
// dispatch with one workgroup sums the partial sums the same way.
#include "hsa_kernel.h"

#define GROUP 256

KERNEL __attribute__((amdgpu_flat_work_group_size(GROUP, GROUP))) void reduce_sum(float *partial, const float *in,
                                                                                  unsigned n) {
  SHARED float slot[GROUP];
  unsigned t = local_id_x();
  unsigned i = global_id_x();
  slot[t] = i < n ? in[i] : 0.0f;
  barrier();
  for (unsigned half = GROUP / 2; half > 0; half /= 2) {
    if (t < half) slot[t] += slot[t + half];
    barrier();
  }
  if (t == 0) partial[group_id_x()] = slot[0];
}
