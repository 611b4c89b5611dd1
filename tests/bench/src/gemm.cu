// Dense single-precision GEMM, C = alpha*A*B + beta*C, with a tiled kernel:
// 64x64 tiles of C per block, 16-wide slabs of A and B staged in shared
// memory, each thread accumulating a 4x4 register block.
// Self-check: 256 random entries of C against a double-precision CPU dot.
#include "bench_common.cuh"

constexpr int BM = 64, BN = 64, BK = 16, TM = 4, TN = 4;

__global__ void __launch_bounds__(256) sgemm_tiled(int M, int N, int K, float alpha,
                                                   const float* __restrict__ A,
                                                   const float* __restrict__ B, float beta,
                                                   float* __restrict__ C) {
  __shared__ float As[BK][BM + 4];
  __shared__ float Bs[BK][BN + 4];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    // 64x16 of A and 16x64 of B: 1024 elements each, 4 per thread.
    for (int e = threadIdx.x; e < BM * BK; e += 256) {
      int r = e / BK, c = e % BK;
      As[c][r] = A[(size_t)(row0 + r) * K + k0 + c];
      int br = e / BN, bc = e % BN;
      Bs[br][bc] = B[(size_t)(k0 + br) * N + col0 + bc];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[k][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      size_t idx = (size_t)(row0 + ty * TM + i) * N + col0 + tx * TN + j;
      C[idx] = alpha * acc[i][j] + beta * C[idx];
    }
}

int main() {
  const int M = 4096, N = 4096, K = 4096;
  const int reps = bench::scaled(8);
  float* A = bench::device_alloc<float>((size_t)M * K);
  float* B = bench::device_alloc<float>((size_t)K * N);
  float* C = bench::device_alloc<float>((size_t)M * N);
  bench::fill(A, (size_t)M * K, 1, -1.0, 1.0);
  bench::fill(B, (size_t)K * N, 2, -1.0, 1.0);
  BENCH_CHECK(cudaMemset(C, 0, (size_t)M * N * sizeof(float)));
  BENCH_CHECK(cudaDeviceSynchronize());

  // Each repetition recomputes C = A*B (beta = 0), so the result does not
  // depend on the repetition count.
  bench::GpuTimer t;
  dim3 grid(N / BN, M / BM);
  for (int r = 0; r < reps; ++r) {
    sgemm_tiled<<<grid, 256>>>(M, N, K, 1.0f, A, B, 0.0f, C);
    BENCH_CHECK_LAUNCH();
  }
  double ms = t.stop_ms();

  std::vector<float> hA = bench::download(A, (size_t)M * K);
  std::vector<float> hB = bench::download(B, (size_t)K * N);
  std::vector<float> hC = bench::download(C, (size_t)M * N);
  bench::MaxErr worst;
  for (int s = 0; s < 256; ++s) {
    int i = (int)(bench::mix64(100 + s) % M), j = (int)(bench::mix64(900 + s) % N);
    double want = 0.0, mag = 0.0;
    for (int k = 0; k < K; ++k) {
      double p = (double)hA[(size_t)i * K + k] * hB[(size_t)k * N + j];
      want += p;
      mag += std::fabs(p);
    }
    // Error relative to the sum of magnitudes (cancellation-safe).
    double err = std::fabs(hC[(size_t)i * N + j] - want) / mag;
    worst.add(err);
  }
  bool ok = worst.within(1e-5);
  char detail[128];
  std::snprintf(detail, sizeof detail, "256 entries vs CPU, max rel err %.2e (tol 1e-5)", worst.value());
  return bench::finish("gemm", ms, ok, detail, bench::hash_vec(hC));
}
