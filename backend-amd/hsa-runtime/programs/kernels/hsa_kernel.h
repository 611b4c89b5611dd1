// Device side of the HSA programs' kernels: HIP compiled without HIP headers
// or device libraries (clang -x hip -nogpulib -nogpuinc --cuda-device-only).
// A work-item finds its place from the AQL dispatch packet the program wrote
// (workgroup size) and the ids the hardware provides, so the kernels need
// no hidden arguments and the programs fill only the explicit ones.
#pragma once

#define KERNEL extern "C" __attribute__((global))
#define DEVICE __attribute__((device))
#define SHARED __attribute__((shared))

// hsa_kernel_dispatch_packet_t: workgroup_size_x is the u16 at byte 4.
static DEVICE inline unsigned workgroup_size_x() {
  return ((const unsigned short *)__builtin_amdgcn_dispatch_ptr())[2];
}
static DEVICE inline unsigned local_id_x() { return __builtin_amdgcn_workitem_id_x(); }
static DEVICE inline unsigned group_id_x() { return __builtin_amdgcn_workgroup_id_x(); }
static DEVICE inline unsigned global_id_x() { return group_id_x() * workgroup_size_x() + local_id_x(); }
static DEVICE inline void barrier() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
