// A kernel that uses every architected VGPR (v255 through inline assembly),
// leaving the rewriter no registers for its probes: it refuses the kernel
// ("needs ... VGPRs above v255"), so the code object runs unmodified.
#include "hsa_kernel.h"

KERNEL __attribute__((amdgpu_flat_work_group_size(64, 256))) void all_vgprs(float *out, const float *in, unsigned n) {
  unsigned i = global_id_x();
  if (i < n) {
    float v = in[i];
    asm volatile("v_mov_b32 v255, %0\n\tv_add_f32 %0, v255, v255" : "+v"(v) : : "v255");
    out[i] = v + 1.0f;
  }
}
