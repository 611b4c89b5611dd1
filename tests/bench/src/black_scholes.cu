// European option pricing (Black-Scholes) over a book of 2^21 options, each
// priced under 128 volatility/rate scenarios as a risk engine does, in single
// precision with logf, expf, sqrtf and erff (normal CDF).
// Self-check: 4096 sampled (option, scenario) prices against a CPU double
// evaluation, and put-call parity on every sampled pair.
#include "bench_common.cuh"

constexpr int SCENARIOS = 128;

__host__ __device__ inline float scenario_vol_shift(int s) { return 0.6f + 0.8f * (float)s / SCENARIOS; }
__host__ __device__ inline float scenario_rate(int s) { return 0.005f + 0.0003f * (float)s; }

__device__ inline float norm_cdf(float x) { return 0.5f * (1.0f + erff(x * 0.70710678118654752f)); }

__global__ void __launch_bounds__(256) price_book(int n, const float* __restrict__ spot, const float* __restrict__ strike,
                                                  const float* __restrict__ years, const float* __restrict__ vol,
                                                  float* __restrict__ call_avg, float* __restrict__ put_avg) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float S = spot[i], K = strike[i], T = years[i], sqrtT = sqrtf(T), lnSK = logf(S / K);
  float csum = 0.f, psum = 0.f;
  for (int s = 0; s < SCENARIOS; ++s) {
    const float sig = vol[i] * scenario_vol_shift(s), r = scenario_rate(s);
    const float d1 = (lnSK + (r + 0.5f * sig * sig) * T) / (sig * sqrtT);
    const float d2 = d1 - sig * sqrtT;
    const float disc = expf(-r * T);
    const float call = S * norm_cdf(d1) - K * disc * norm_cdf(d2);
    const float put = K * disc * norm_cdf(-d2) - S * norm_cdf(-d1);
    csum += call;
    psum += put;
  }
  call_avg[i] = csum / SCENARIOS;
  put_avg[i] = psum / SCENARIOS;
}

int main() {
  const int n = 1 << 21;
  const int reps = bench::scaled(50);
  float *S = bench::device_alloc<float>(n), *K = bench::device_alloc<float>(n), *T = bench::device_alloc<float>(n),
        *V = bench::device_alloc<float>(n), *C = bench::device_alloc<float>(n), *P = bench::device_alloc<float>(n);
  bench::fill(S, n, 41, 5.0, 30.0);
  bench::fill(K, n, 42, 1.0, 100.0);
  bench::fill(T, n, 43, 0.25, 10.0);
  bench::fill(V, n, 44, 0.1, 0.5);
  BENCH_CHECK(cudaDeviceSynchronize());

  bench::GpuTimer t;
  for (int r = 0; r < reps; ++r) {
    price_book<<<(n + 255) / 256, 256>>>(n, S, K, T, V, C, P);
    BENCH_CHECK_LAUNCH();
  }
  double ms = t.stop_ms();

  std::vector<float> hS = bench::download(S, n), hK = bench::download(K, n), hT = bench::download(T, n),
                     hV = bench::download(V, n), hC = bench::download(C, n), hP = bench::download(P, n);
  bench::MaxErr price_err, parity_err;
  auto ncdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  for (int k = 0; k < 4096; ++k) {
    int i = (int)(bench::mix64(777 + k) % n);
    double s0 = hS[i], k0 = hK[i], t0 = hT[i], call = 0.0, put = 0.0, parity = 0.0;
    for (int s = 0; s < SCENARIOS; ++s) {
      double sig = (double)(hV[i] * scenario_vol_shift(s)), r = scenario_rate(s);
      double d1 = (std::log(s0 / k0) + (r + 0.5 * sig * sig) * t0) / (sig * std::sqrt(t0)), d2 = d1 - sig * std::sqrt(t0);
      double disc = std::exp(-r * t0);
      call += s0 * ncdf(d1) - k0 * disc * ncdf(d2);
      put += k0 * disc * ncdf(-d2) - s0 * ncdf(-d1);
      parity += s0 - k0 * disc;
    }
    call /= SCENARIOS, put /= SCENARIOS, parity /= SCENARIOS;
    // Absolute error relative to the spot: prices near zero have no
    // meaningful relative error in single precision.
    price_err.add(std::fabs(hC[i] - call) / s0);
    price_err.add(std::fabs(hP[i] - put) / s0);
    parity_err.add(std::fabs((double)hC[i] - hP[i] - parity) / s0);
  }
  bool ok = price_err.within(1e-4) && parity_err.within(1e-4);
  char detail[200];
  std::snprintf(detail, sizeof detail,
                "4096 options vs CPU: max err %.2e of spot (tol 1e-4); put-call parity max err %.2e (tol 1e-4)",
                price_err.value(), parity_err.value());
  uint64_t h = bench::hash_vec(hC);
  return bench::finish("black_scholes", ms, ok, detail, bench::hash_vec(hP, h));
}
