// One kernel built twice for `xfpx compare`: with denormals kept (clang's
// default for AMDGPU) and with -fgpu-flush-denormals-to-zero, which sets the
// descriptor's FLOAT_DENORM_MODE_32 to flush. A subnormal input then gives
// a subnormal product on one build and zero on the other.
#define KERNEL extern "C" __attribute__((global))

KERNEL void scale_tiny(float *out, float *inv, const float *x, float s, unsigned n) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * __builtin_amdgcn_workgroup_size_x() +
               __builtin_amdgcn_workitem_id_x();
  if (i >= n) return;
  out[i] = x[i] * s;
  inv[i] = __builtin_amdgcn_rcpf(x[i]);
}
