// A kernel that uses every architected VGPR (v255 through inline assembly)
// and calls a device function through a pointer chosen at run time: with a
// call whose target the code does not say there is no liveness to borrow
// registers by, and there is no room above v255, so the rewriter refuses
// the kernel ("needs ... VGPRs above v255", "the call ... has a target the
// code does not say") and the code object runs unmodified.
#include "hsa_kernel.h"

DEVICE __attribute__((noinline)) float plus_one(float v) { return v + 1.0f; }
DEVICE __attribute__((noinline)) float plus_two(float v) { return v + 2.0f; }

KERNEL __attribute__((amdgpu_flat_work_group_size(64, 256))) void all_vgprs(float *out, const float *in, unsigned n) {
  unsigned i = global_id_x();
  if (i < n) {
    float v = in[i];
    asm volatile("v_mov_b32 v255, %0\n\tv_add_f32 %0, v255, v255" : "+v"(v) : : "v255");
    float (*step)(float) = n > 0x7fffffffu ? plus_two : plus_one;
    out[i] = step(v);
  }
}
