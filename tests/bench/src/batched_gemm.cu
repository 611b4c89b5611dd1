// Batched small GEMM (as in block-sparse solvers and attention heads):
// 16384 independent 32x32 single-precision products C_b = A_b * B_b, one
// thread block per matrix, operands staged in shared memory.
// Self-check: 8 whole matrices against a double-precision CPU product.
#include "bench_common.cuh"

constexpr int NB = 32;

__global__ void __launch_bounds__(256) batched_sgemm32(int batch, const float* __restrict__ A,
                                                       const float* __restrict__ B,
                                                       float* __restrict__ C) {
  __shared__ float As[NB][NB + 1];
  __shared__ float Bs[NB][NB + 1];
  const size_t base = (size_t)blockIdx.x * NB * NB;
  for (int e = threadIdx.x; e < NB * NB; e += blockDim.x) {
    As[e / NB][e % NB] = A[base + e];
    Bs[e / NB][e % NB] = B[base + e];
  }
  __syncthreads();
  // 256 threads, 4 outputs each: rows r, r+8, r+16, r+24 of column c.
  const int c = threadIdx.x % NB, r = threadIdx.x / NB;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 8
  for (int k = 0; k < NB; ++k) {
    float b = Bs[k][c];
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[i] = fmaf(As[r + 8 * i][k], b, acc[i]);
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) C[base + (r + 8 * i) * NB + c] = acc[i];
}

int main() {
  const int batch = 16384;
  const int reps = bench::scaled(600);
  const size_t n = (size_t)batch * NB * NB;
  float* A = bench::device_alloc<float>(n);
  float* B = bench::device_alloc<float>(n);
  float* C = bench::device_alloc<float>(n);
  bench::fill(A, n, 11, -1.0, 1.0);
  bench::fill(B, n, 12, -1.0, 1.0);
  BENCH_CHECK(cudaDeviceSynchronize());

  bench::GpuTimer t;
  for (int r = 0; r < reps; ++r) {
    batched_sgemm32<<<batch, 256>>>(batch, A, B, C);
    BENCH_CHECK_LAUNCH();
  }
  double ms = t.stop_ms();

  std::vector<float> hA = bench::download(A, n), hB = bench::download(B, n), hC = bench::download(C, n);
  bench::MaxErr worst;
  for (int s = 0; s < 8; ++s) {
    size_t b = bench::mix64(77 + s) % batch, base = b * NB * NB;
    for (int i = 0; i < NB; ++i)
      for (int j = 0; j < NB; ++j) {
        double want = 0.0, mag = 0.0;
        for (int k = 0; k < NB; ++k) {
          double p = (double)hA[base + i * NB + k] * hB[base + k * NB + j];
          want += p;
          mag += std::fabs(p);
        }
        worst.add(std::fabs(hC[base + i * NB + j] - want) / mag);
      }
  }
  bool ok = worst.within(1e-5);
  char detail[128];
  std::snprintf(detail, sizeof detail, "8 matrices vs CPU, max rel err %.2e (tol 1e-5)", worst.value());
  return bench::finish("batched_gemm", ms, ok, detail, bench::hash_vec(hC));
}
