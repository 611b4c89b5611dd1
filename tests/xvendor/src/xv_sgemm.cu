// Cross-vendor suite: a program whose kernels include a library's. Its own
// kernel fills the matrices (one NaN in A); cuBLAS multiplies them
// (cublasSgemm), so the NaN spreads through the library's GEMM kernel. The
// AMD build holds the program's own kernel only: replaying a capture of
// this program says, for each cuBLAS launch, that the AMD build has no
// such kernel, and replays the fill.
#include "xv_portable.h"

__global__ void xv_fill(float *m, unsigned n, float start, float step, unsigned nan_at) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = start + step * (float)(i % 17);  // xv: fill
  m[i] = i == nan_at ? __int_as_float(0x7fc00000) : v;  // xv: fill_nan
}

#ifndef __HIP__
#include "xv_host.h"
#include <cublas_v2.h>

#define XV_N 32

int main() {
  const unsigned n = XV_N * XV_N;
  DeviceBuffer<float> a(n), b(n), c(n);
  xv_fill<<<xv_blocks(n), XV_BLOCK>>>(a.p, n, 0.25f, 0.125f, 5);
  xv_fill<<<xv_blocks(n), XV_BLOCK>>>(b.p, n, -1.0f, 0.0625f, n);
  CUDA_CHECK(cudaGetLastError());
  cublasHandle_t h;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "error: cublasCreate failed\n");
    return 2;
  }
  const float one = 1.0f, zero = 0.0f;
  if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, XV_N, XV_N, XV_N, &one, a.p, XV_N, b.p, XV_N, &zero, c.p, XV_N) !=
      CUBLAS_STATUS_SUCCESS) {
    fprintf(stderr, "error: cublasSgemm failed\n");
    return 2;
  }
  xv_print("xv_sgemm a", xv_read(a));
  xv_print("xv_sgemm c", xv_read(c));
  cublasDestroy(h);
  return 0;
}
#endif
