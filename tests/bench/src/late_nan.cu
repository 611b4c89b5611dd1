// A long job of many short launches with a NaN that first appears late:
// 10,000 relaxation steps over 16,384 cells (one small launch each), every
// step also writing the residual magnitude at one probe cell to a diagnostic
// array. At step 5,000 (counted from 0) the host passes a negative weight,
// as a mis-set schedule would, and that step's diagnostic is sqrtf of a
// negative number: a NaN in launch 5,000 of `relax_step`, and in no other.
// The state itself stays finite.
// Self-check: 256 cells relaxed on the CPU with the same float operations
// match bit for bit; the diagnostic is NaN at step 5,000 and finite and
// equal to the CPU's residual magnitude elsewhere at the sampled steps.
#include "bench_common.cuh"

constexpr int CELLS = 1 << 14;
constexpr int LATE_STEP = 5000;
constexpr float RATE = 0.002f;

__host__ __device__ inline float weight_of(int step) { return step == LATE_STEP ? -1.0f : 1.0f; }

__global__ void relax_step(int n, float* __restrict__ x, const float* __restrict__ target, float* __restrict__ diag,
                           float weight, int step) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float xi = x[i];
  const float d = target[i] - xi;
  x[i] = fmaf(RATE, d, xi);
  if (i == step % n) diag[step] = sqrtf(weight * (d * d));
}

int main() {
  const int steps = std::max(bench::scaled(10000), LATE_STEP + 1);
  float *x = bench::device_alloc<float>(CELLS), *target = bench::device_alloc<float>(CELLS),
        *diag = bench::device_alloc<float>(steps);
  bench::fill(x, CELLS, 61, -1.0, 1.0);
  bench::fill(target, CELLS, 62, 2.0, 3.0);
  BENCH_CHECK(cudaMemset(diag, 0, steps * sizeof(float)));
  std::vector<float> x0 = bench::download(x, CELLS), ht = bench::download(target, CELLS);
  BENCH_CHECK(cudaDeviceSynchronize());

  bench::GpuTimer t;
  for (int s = 0; s < steps; ++s) {
    relax_step<<<CELLS / 256, 256>>>(CELLS, x, target, diag, weight_of(s), s);
    BENCH_CHECK_LAUNCH();
  }
  double ms = t.stop_ms();

  std::vector<float> hx = bench::download(x, CELLS), hd = bench::download(diag, steps);
  // 256 cells on the CPU, every step; the probe cell of a step is step % n
  int bad_cells = 0, bad_diag = 0, checked_diag = 0;
  for (int k = 0; k < 256; ++k) {
    const int i = (int)(bench::mix64(900 + k) % CELLS);
    float xi = x0[i];
    for (int s = 0; s < steps; ++s) {
      const float d = ht[i] - xi;
      if (s % CELLS == i) {
        const float want = std::sqrt(weight_of(s) * (d * d));
        ++checked_diag;
        const bool same = s == LATE_STEP ? std::isnan(hd[s]) : (std::isfinite(hd[s]) && hd[s] == want);
        if (!same) ++bad_diag;
      }
      xi = std::fma(RATE, d, xi);
    }
    if (xi != hx[i]) ++bad_cells;
  }
  int nans = 0;
  for (int s = 0; s < steps; ++s) nans += std::isnan(hd[s]) ? 1 : 0;
  const bool late_is_nan = std::isnan(hd[LATE_STEP]);
  const bool ok = bad_cells == 0 && bad_diag == 0 && nans == 1 && late_is_nan;
  char detail[240];
  std::snprintf(detail, sizeof detail,
                "%d launches; 256 cells vs CPU: %d differ; %d sampled diagnostics: %d differ; NaN diagnostics: %d "
                "(want 1, at launch %d: %s)",
                steps, bad_cells, checked_diag, bad_diag, nans, LATE_STEP, late_is_nan ? "yes" : "no");
  // NaN bits are the GPU's canonical NaN: the checksum stays deterministic
  uint64_t h = bench::hash_vec(hx);
  return bench::finish("late_nan", ms, ok, detail, bench::hash_vec(hd, h));
}
