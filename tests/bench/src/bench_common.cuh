//! Shared plumbing of the benchmark programs: error checks, deterministic
//! input generation, the scale knob, output hashing and the three lines every
//! program prints for the harness (`BENCH`, `SELFCHECK`, `CHECKSUM`).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <algorithm>

#include <cuda_runtime.h>

#define BENCH_CHECK(call)                                                       \
  do {                                                                          \
    cudaError_t err_ = (call);                                                  \
    if (err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "error: %s failed at %s:%d: %s\n", #call, __FILE__, \
                   __LINE__, cudaGetErrorString(err_));                         \
      std::exit(2);                                                             \
    }                                                                           \
  } while (0)

#define BENCH_CHECK_LAUNCH() BENCH_CHECK(cudaGetLastError())

namespace bench {

// splitmix64: a stateless mix used to derive every input from an index, so
// host and device can regenerate any element on their own.
__host__ __device__ inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform double in [0, 1) from (stream, index).
__host__ __device__ inline double unit(uint64_t stream, uint64_t i) {
  return (double)(mix64(mix64(stream) ^ i) >> 11) * (1.0 / 9007199254740992.0);
}

// Uniform in [lo, hi). Rounded the same on host and device (no contraction
// into a fused multiply-add), so the host can regenerate any input element.
__host__ __device__ inline double uniform(uint64_t stream, uint64_t i, double lo, double hi) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(lo, __dmul_rn(hi - lo, unit(stream, i)));
#else
  return lo + (hi - lo) * unit(stream, i);
#endif
}

// Fills p[0..n) with uniform(stream, i, lo, hi) converted to T.
template <typename T>
__global__ void fill_uniform(T* p, size_t n, uint64_t stream, double lo, double hi) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = (T)uniform(stream, i, lo, hi);
}

// Work multiplier from the environment (BENCH_SCALE, default 1). Scales
// repetitions/steps, never data sizes, so checks stay meaningful.
inline double scale() {
  const char* s = std::getenv("BENCH_SCALE");
  if (!s || !*s) return 1.0;
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s || !(v > 0.0) || v > 1000.0) {
    std::fprintf(stderr, "error: BENCH_SCALE must be a number in (0, 1000], got '%s'\n", s);
    std::exit(2);
  }
  return v;
}

inline int scaled(int base) {
  int n = (int)std::lround(base * scale());
  return n < 1 ? 1 : n;
}

// FNV-1a over raw bytes: the checksum compares results bit for bit.
inline uint64_t fnv1a(const void* data, size_t bytes, uint64_t h = 0xcbf29ce484222325ull) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

template <typename T>
inline uint64_t hash_vec(const std::vector<T>& v, uint64_t h = 0xcbf29ce484222325ull) {
  return fnv1a(v.data(), v.size() * sizeof(T), h);
}

// Relative difference with an absolute floor.
inline double rel_err(double got, double want, double floor = 1e-30) {
  double d = std::fabs(got - want);
  double m = std::fabs(want);
  return d / (m > floor ? m : floor);
}

// Largest error seen; a NaN error is remembered and fails the check.
struct MaxErr {
  double worst = 0.0;
  bool nan = false;
  void add(double e) {
    if (std::isnan(e)) nan = true;
    else if (e > worst) worst = e;
  }
  double value() const { return nan ? NAN : worst; }
  bool within(double tol) const { return !nan && worst <= tol; }
};

// Times the GPU work between construction and stop() with CUDA events.
struct GpuTimer {
  cudaEvent_t a, b;
  GpuTimer() {
    BENCH_CHECK(cudaEventCreate(&a));
    BENCH_CHECK(cudaEventCreate(&b));
    BENCH_CHECK(cudaEventRecord(a));
  }
  double stop_ms() {
    BENCH_CHECK(cudaEventRecord(b));
    BENCH_CHECK(cudaEventSynchronize(b));
    float ms = 0.f;
    BENCH_CHECK(cudaEventElapsedTime(&ms, a, b));
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms;
  }
};

// The lines the harness reads. `detail` says what was checked.
inline int finish(const char* name, double gpu_ms, bool ok, const char* detail, uint64_t checksum) {
  std::printf("BENCH %s gpu_ms=%.3f\n", name, gpu_ms);
  std::printf("SELFCHECK %s %s\n", ok ? "PASS" : "FAIL", detail);
  std::printf("CHECKSUM %016llx\n", (unsigned long long)checksum);
  std::fflush(stdout);
  return ok ? 0 : 1;
}

template <typename T>
T* device_alloc(size_t n) {
  T* p = nullptr;
  BENCH_CHECK(cudaMalloc(&p, n * sizeof(T)));
  return p;
}

template <typename T>
void fill(T* d, size_t n, uint64_t stream, double lo, double hi) {
  fill_uniform<T><<<1024, 256>>>(d, n, stream, lo, hi);
  BENCH_CHECK_LAUNCH();
}

template <typename T>
std::vector<T> download(const T* d, size_t n) {
  std::vector<T> h(n);
  BENCH_CHECK(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return h;
}

template <typename T>
void upload(T* d, const std::vector<T>& h) {
  BENCH_CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
}

}  // namespace bench
