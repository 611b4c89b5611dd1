// Reduction and prefix sum over 2^26 single-precision values, the way a
// sort, a stream compaction or a histogram equalisation would use them:
// a two-pass deterministic sum of squares (float partials, double final
// combine) and a three-phase inclusive scan (per-block scan, scan of block
// totals, add offsets).
// Self-check: the sum against a CPU double sum; 4096 sampled prefixes
// against CPU double prefixes; the scan's last element against the sum.
#include "bench_common.cuh"

constexpr int THREADS = 256, PER_THREAD = 8, TILE = THREADS * PER_THREAD;

__device__ inline float warp_inclusive_scan(float v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int d = 1; d < 32; d <<= 1) {
    float o = __shfl_up_sync(0xffffffffu, v, d);
    if (lane >= d) v += o;
  }
  return v;
}

// Block-wide inclusive scan of one value per thread; returns the thread's
// inclusive prefix and writes the block total to *total.
__device__ inline float block_inclusive_scan(float v, float* total) {
  __shared__ float warp_tot[THREADS / 32];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  float s = warp_inclusive_scan(v);
  if (lane == 31) warp_tot[w] = s;
  __syncthreads();
  if (w == 0) {
    float t = lane < THREADS / 32 ? warp_tot[lane] : 0.f;
    t = warp_inclusive_scan(t);
    if (lane < THREADS / 32) warp_tot[lane] = t;
  }
  __syncthreads();
  float r = s + (w > 0 ? warp_tot[w - 1] : 0.f);
  *total = warp_tot[THREADS / 32 - 1];
  __syncthreads();
  return r;
}

// Per-block partial sums of x^2, combined in a fixed tree order.
__global__ void __launch_bounds__(THREADS) sumsq_partials(const float* __restrict__ x, size_t n,
                                                          float* __restrict__ partial) {
  __shared__ float sh[THREADS];
  float acc = 0.f;
  for (size_t i = blockIdx.x * (size_t)THREADS + threadIdx.x; i < n; i += (size_t)gridDim.x * THREADS)
    acc = fmaf(x[i], x[i], acc);
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

__global__ void __launch_bounds__(THREADS) combine_partials(const float* __restrict__ partial, int n,
                                                            double* __restrict__ out) {
  __shared__ double sh[THREADS];
  double acc = 0.0;
  for (int i = threadIdx.x; i < n; i += THREADS) acc += partial[i];
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (int s = THREADS / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = sh[0];
}

// Phase 1: each block scans one TILE; writes local prefixes and its total.
__global__ void __launch_bounds__(THREADS) scan_tiles(const float* __restrict__ x, float* __restrict__ y,
                                                      float* __restrict__ tile_sum) {
  const size_t base = (size_t)blockIdx.x * TILE + (size_t)threadIdx.x * PER_THREAD;
  float v[PER_THREAD];
  float run = 0.f;
#pragma unroll
  for (int i = 0; i < PER_THREAD; ++i) {
    run += x[base + i];
    v[i] = run;
  }
  float total;
  float incl = block_inclusive_scan(run, &total);
  float off = incl - run;
#pragma unroll
  for (int i = 0; i < PER_THREAD; ++i) y[base + i] = v[i] + off;
  if (threadIdx.x == 0) tile_sum[blockIdx.x] = total;
}

// Phase 2: one block turns the tile totals into exclusive tile offsets.
__global__ void __launch_bounds__(THREADS) scan_tile_sums(float* __restrict__ tile_sum, int tiles) {
  float carry = 0.f;
  for (int start = 0; start < tiles; start += THREADS) {
    int i = start + threadIdx.x;
    float v = i < tiles ? tile_sum[i] : 0.f;
    float total;
    float incl = block_inclusive_scan(v, &total);
    if (i < tiles) tile_sum[i] = carry + incl - v;
    carry += total;
  }
}

// Phase 3: add each tile's offset.
__global__ void __launch_bounds__(THREADS) add_offsets(float* __restrict__ y, const float* __restrict__ tile_off) {
  const float off = tile_off[blockIdx.x];
  const size_t base = (size_t)blockIdx.x * TILE;
  for (int i = threadIdx.x; i < TILE; i += THREADS) y[base + i] += off;
}

int main() {
  const size_t n = (size_t)1 << 26;
  const int tiles = (int)(n / TILE), parts = 2048;
  const int reps = bench::scaled(100);
  float* x = bench::device_alloc<float>(n);
  float* y = bench::device_alloc<float>(n);
  float* tsum = bench::device_alloc<float>(tiles);
  float* partial = bench::device_alloc<float>(parts);
  double* dsum = bench::device_alloc<double>(1);
  bench::fill(x, n, 21, 0.0, 1.0);
  BENCH_CHECK(cudaDeviceSynchronize());

  bench::GpuTimer t;
  for (int r = 0; r < reps; ++r) {
    sumsq_partials<<<parts, THREADS>>>(x, n, partial);
    combine_partials<<<1, THREADS>>>(partial, parts, dsum);
    scan_tiles<<<tiles, THREADS>>>(x, y, tsum);
    scan_tile_sums<<<1, THREADS>>>(tsum, tiles);
    add_offsets<<<tiles, THREADS>>>(y, tsum);
  }
  BENCH_CHECK_LAUNCH();
  double ms = t.stop_ms();

  std::vector<float> hx = bench::download(x, n), hy = bench::download(y, n);
  std::vector<double> hs = bench::download(dsum, 1);
  double want_sq = 0.0;
  std::vector<size_t> probes;
  for (int s = 0; s < 4096; ++s) probes.push_back(bench::mix64(5000 + s) % n);
  probes.push_back(n - 1);
  std::sort(probes.begin(), probes.end());
  bench::MaxErr scan_err;
  double prefix = 0.0;
  size_t p = 0;
  for (size_t i = 0; i < n; ++i) {
    want_sq += (double)hx[i] * hx[i];
    prefix += hx[i];
    while (p < probes.size() && probes[p] == i) scan_err.add(bench::rel_err(hy[i], prefix)), ++p;
  }
  double sum_err = bench::rel_err(hs[0], want_sq);
  double last_err = bench::rel_err(hy[n - 1], prefix);
  bool ok = sum_err < 1e-5 && scan_err.within(1e-4) && last_err < 1e-4;
  char detail[200];
  std::snprintf(detail, sizeof detail,
                "sum of squares rel err %.2e (tol 1e-5); 4097 prefixes max rel err %.2e (tol 1e-4)", sum_err,
                scan_err.value());
  uint64_t h = bench::hash_vec(hy);
  h = bench::hash_vec(hs, h);
  return bench::finish("reduce_scan", ms, ok, detail, h);
}
