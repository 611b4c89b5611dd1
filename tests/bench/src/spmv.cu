// Sparse matrix-vector products in CSR, double precision: Jacobi iterations
// x <- x + D^-1 (b - A x) on a 2M-row strictly diagonally dominant matrix
// with 8 to 24 entries per row (a band around the diagonal plus scattered
// long-range couplings), 8 lanes per row with a shuffle reduction.
// Self-check: the relative residual |b - A x| / |b| after the iterations;
// one product y = A x on 2048 sampled rows against the CPU.
#include "bench_common.cuh"

constexpr int LANES = 8;

__host__ __device__ inline int row_len(int i) { return 8 + (int)(bench::mix64(7000000 + i) % 17); }

// Entry e of row i: column and value (entry 0 is the diagonal, filled later).
__host__ __device__ inline void entry(int n, int i, int e, int* col, double* val) {
  uint64_t h = bench::mix64(((uint64_t)i << 5) + e);
  int c;
  if (h % 4 != 0) {
    c = i + (int)((h >> 8) % 129) - 64;  // band
  } else {
    c = (int)((h >> 8) % (uint64_t)n);  // long range
  }
  c = (c % n + n) % n;
  if (c == i) c = (i + 1) % n;
  *col = c;
  *val = bench::uniform(71, ((uint64_t)i << 5) + e, -1.0, 1.0) / row_len(i);
}

__global__ void build_rows(int n, const int* __restrict__ rowptr, int* __restrict__ col, double* __restrict__ val,
                           double* __restrict__ dinv) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int start = rowptr[i], len = rowptr[i + 1] - start;
  double off = 0.0;
  for (int e = 1; e < len; ++e) {
    entry(n, i, e, &col[start + e], &val[start + e]);
    off += fabs(val[start + e]);
  }
  double diag = 1.0 + off;
  col[start] = i;
  val[start] = diag;
  dinv[i] = 1.0 / diag;
}

// Sum over row i of A[i][c] * x[c], LANES lanes per row.
__device__ inline double row_dot(const int* __restrict__ rowptr, const int* __restrict__ col,
                                 const double* __restrict__ val, const double* __restrict__ x, int i, int lane) {
  double s = 0.0;
  for (int k = rowptr[i] + lane; k < rowptr[i + 1]; k += LANES) s = fma(val[k], x[col[k]], s);
#pragma unroll
  for (int d = LANES / 2; d > 0; d >>= 1) s += __shfl_down_sync(0xffffffffu, s, d, LANES);
  return s;
}

__global__ void __launch_bounds__(256) jacobi_step(int n, const int* __restrict__ rowptr, const int* __restrict__ col,
                                                   const double* __restrict__ val, const double* __restrict__ dinv,
                                                   const double* __restrict__ b, const double* __restrict__ x,
                                                   double* __restrict__ xn) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, i = t / LANES, lane = t % LANES;
  if (i >= n) return;  // n is a multiple of 256 / LANES: whole groups exit together
  double ax = row_dot(rowptr, col, val, x, i, lane);
  if (lane == 0) xn[i] = x[i] + dinv[i] * (b[i] - ax);
}

__global__ void __launch_bounds__(256) spmv(int n, const int* __restrict__ rowptr, const int* __restrict__ col,
                                            const double* __restrict__ val, const double* __restrict__ x,
                                            double* __restrict__ y) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, i = t / LANES, lane = t % LANES;
  if (i >= n) return;
  double ax = row_dot(rowptr, col, val, x, i, lane);
  if (lane == 0) y[i] = ax;
}

int main() {
  const int n = 1 << 21;
  const int iters = 2 * bench::scaled(120);
  std::vector<int> hrow(n + 1);
  hrow[0] = 0;
  for (int i = 0; i < n; ++i) hrow[i + 1] = hrow[i] + row_len(i);
  const int nnz = hrow[n];
  int* rowptr = bench::device_alloc<int>(n + 1);
  int* col = bench::device_alloc<int>(nnz);
  double* val = bench::device_alloc<double>(nnz);
  double *dinv = bench::device_alloc<double>(n), *b = bench::device_alloc<double>(n);
  double *x = bench::device_alloc<double>(n), *xn = bench::device_alloc<double>(n), *y = bench::device_alloc<double>(n);
  bench::upload(rowptr, hrow);
  build_rows<<<n / 256, 256>>>(n, rowptr, col, val, dinv);
  BENCH_CHECK_LAUNCH();
  bench::fill(b, n, 72, -1.0, 1.0);
  BENCH_CHECK(cudaMemset(x, 0, n * sizeof(double)));
  BENCH_CHECK(cudaDeviceSynchronize());

  const int blocks = (int)((size_t)n * LANES / 256);
  bench::GpuTimer t;
  for (int k = 0; k < iters; k += 2) {
    jacobi_step<<<blocks, 256>>>(n, rowptr, col, val, dinv, b, x, xn);
    jacobi_step<<<blocks, 256>>>(n, rowptr, col, val, dinv, b, xn, x);
  }
  spmv<<<blocks, 256>>>(n, rowptr, col, val, x, y);
  BENCH_CHECK_LAUNCH();
  double ms = t.stop_ms();

  std::vector<double> hx = bench::download(x, n), hy = bench::download(y, n), hb = bench::download(b, n);
  double rr = 0.0, bb = 0.0;
  for (int i = 0; i < n; ++i) rr += (hb[i] - hy[i]) * (hb[i] - hy[i]), bb += hb[i] * hb[i];
  double resid = std::sqrt(rr / bb);
  bench::MaxErr prod;
  for (int s = 0; s < 2048; ++s) {
    int i = (int)(bench::mix64(31337 + s) % n);
    double want = 0.0, mag = 0.0, diag_off = 0.0;
    for (int e = 1; e < row_len(i); ++e) {
      int c;
      double v;
      entry(n, i, e, &c, &v);
      want += v * hx[c], mag += std::fabs(v * hx[c]), diag_off += std::fabs(v);
    }
    want += (1.0 + diag_off) * hx[i], mag += std::fabs((1.0 + diag_off) * hx[i]);
    prod.add(std::fabs(hy[i] - want) / mag);
  }
  bool ok = resid < 1e-12 && prod.within(1e-13);
  char detail[200];
  std::snprintf(detail, sizeof detail,
                "%d nnz; residual after %d Jacobi sweeps %.2e (tol 1e-12); 2048 rows of A*x vs CPU %.2e (tol 1e-13)",
                nnz, iters, resid, prod.value());
  uint64_t h = bench::hash_vec(hx);
  return bench::finish("spmv", ms, ok, detail, bench::hash_vec(hy, h));
}
