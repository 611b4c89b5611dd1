// Matrix multiply C = A B of n x n single-precision matrices (row-major),
// tiled through shared memory: each block computes one MATMUL_TILE square of
// C, stepping both operands' tiles along k; each product is accumulated with
// one fused multiply-add, in increasing k (any n: tiles past the edge are
// padded with zeros).
#include "portable.h"
#include "apps.h"

APP_KERNEL void matmul(float *c, const float *a, const float *b, unsigned n) {
  __shared__ float ta[MATMUL_TILE][MATMUL_TILE];
  __shared__ float tb[MATMUL_TILE][MATMUL_TILE];
  unsigned tx = threadIdx.x, ty = threadIdx.y;
  unsigned row = blockIdx.y * MATMUL_TILE + ty, col = blockIdx.x * MATMUL_TILE + tx;
  float acc = 0.0f;
  for (unsigned k0 = 0; k0 < n; k0 += MATMUL_TILE) {
    ta[ty][tx] = row < n && k0 + tx < n ? a[(size_t)row * n + k0 + tx] : 0.0f;
    tb[ty][tx] = k0 + ty < n && col < n ? b[(size_t)(k0 + ty) * n + col] : 0.0f;
    __syncthreads();
    unsigned kend = n - k0 < MATMUL_TILE ? n - k0 : MATMUL_TILE;
    for (unsigned k = 0; k < kend; k++) acc = fmaf(ta[ty][k], tb[k][tx], acc);
    __syncthreads();
  }
  if (row < n && col < n) c[(size_t)row * n + col] = acc;
}

#ifndef __HIP__
#include "cuda_host.h"
#include "reference.h"

int main(int argc, char **argv) {
  AppArgs args("matmul", argc, argv);
  uint64_t seed = args.get("--seed", 1);
  unsigned n = (unsigned)args.get("--n", 512);
  args.done();
  std::vector<float> a = matmul_input(seed, n, 0), b = matmul_input(seed, n, 1), c;
  DeviceBuffer<float> d_a(a), d_b(b), d_c((size_t)n * n);
  dim3 block(MATMUL_TILE, MATMUL_TILE), grid((n + MATMUL_TILE - 1) / MATMUL_TILE, (n + MATMUL_TILE - 1) / MATMUL_TILE);
  matmul<<<grid, block>>>(d_c.p, d_a.p, d_b.p, n);
  CUDA_CHECK(cudaGetLastError());
  d_c.read(c);
  long long bad = app_first_difference(c, matmul_reference(a, b, n));
  return app_verdict("matmul", bad < 0,
                     app_fmt("%ux%u, seed %llu, %s", n, n, (unsigned long long)seed,
                             bad < 0 ? "all elements bit-identical to the host's" : app_fmt("element %lld differs", bad).c_str()),
                     app_checksum(c.data(), c.size() * sizeof(float)));
}
#endif
