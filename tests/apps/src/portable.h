// The CUDA dialect the applications' kernels are written in, once for both
// vendors. Under nvcc (or clang in CUDA mode) it is CUDA itself and this
// header adds only the kernel marker. Under clang -x hip without HIP headers
// (-nogpuinc, as the AMD fixtures are built) it defines the few CUDA names
// the kernels use on top of clang's AMDGPU builtins:
//   __global__ __device__ __host__ __shared__ __forceinline__
//   threadIdx blockIdx blockDim gridDim (.x .y .z)
//   __syncthreads()  fmaf  sqrtf  fminf  fmaxf  __brev
// Kernels are extern "C" (APP_KERNEL) so both vendors' code objects name
// them alike.
#pragma once
#include <stddef.h>

#define APP_KERNEL extern "C" __global__

#if defined(__HIP__) && !defined(__CUDACC__)

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __forceinline__ inline __attribute__((always_inline))

// The built-in index variables, read through clang's property extension
// (the way CUDA's own definitions work): `threadIdx.x` calls get_x().
#define APP_BUILTIN_DIM3(type, fx, fy, fz)                                \
  struct type {                                                          \
    __declspec(property(get = get_x)) unsigned x;                        \
    __declspec(property(get = get_y)) unsigned y;                        \
    __declspec(property(get = get_z)) unsigned z;                        \
    static __device__ __forceinline__ unsigned get_x() { return fx; }     \
    static __device__ __forceinline__ unsigned get_y() { return fy; }     \
    static __device__ __forceinline__ unsigned get_z() { return fz; }     \
  }
APP_BUILTIN_DIM3(AppThreadIdx, __builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(),
                 __builtin_amdgcn_workitem_id_z());
APP_BUILTIN_DIM3(AppBlockIdx, __builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(),
                 __builtin_amdgcn_workgroup_id_z());
APP_BUILTIN_DIM3(AppBlockDim, __builtin_amdgcn_workgroup_size_x(), __builtin_amdgcn_workgroup_size_y(),
                 __builtin_amdgcn_workgroup_size_z());
// The dispatch packet holds the grid in work-items; CUDA's gridDim counts blocks.
APP_BUILTIN_DIM3(AppGridDim, __builtin_amdgcn_grid_size_x() / __builtin_amdgcn_workgroup_size_x(),
                 __builtin_amdgcn_grid_size_y() / __builtin_amdgcn_workgroup_size_y(),
                 __builtin_amdgcn_grid_size_z() / __builtin_amdgcn_workgroup_size_z());
#undef APP_BUILTIN_DIM3
static __device__ const AppThreadIdx threadIdx{};
static __device__ const AppBlockIdx blockIdx{};
static __device__ const AppBlockDim blockDim{};
static __device__ const AppGridDim gridDim{};

// A workgroup barrier that also orders shared-memory accesses around it.
static __device__ __forceinline__ void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// IEEE operations (correctly rounded: no device library is linked).
#define fmaf(a, b, c) __builtin_fmaf((a), (b), (c))
#define sqrtf(x) __builtin_sqrtf(x)
#define fminf(a, b) __builtin_fminf((a), (b))
#define fmaxf(a, b) __builtin_fmaxf((a), (b))
static __device__ __forceinline__ unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }

#endif
