// Bitonic sort of n = 2^m single-precision keys (n >= SORT_CHUNK), ascending.
// Step (k, j) of the network compares keys i and i + j (bit j of i clear)
// and orders them ascending where bit k of i is clear, descending where set.
// bitonic_sort_block runs every step with k <= SORT_CHUNK in shared memory;
// then, per k, bitonic_merge_global runs the steps with j >= SORT_CHUNK (one
// launch each) and bitonic_merge_block the rest in shared memory.
#include "portable.h"
#include "apps.h"

// Lower index of the pair that thread t compares in a step of distance j.
static __device__ __forceinline__ unsigned pair_low(unsigned t, unsigned j) { return 2 * t - (t & (j - 1)); }

static __device__ __forceinline__ void compare_exchange(float *s, unsigned i, unsigned j, bool ascending) {
  float a = s[i], b = s[i + j];
  if (ascending ? a > b : a < b) {
    s[i] = b;
    s[i + j] = a;
  }
}

APP_KERNEL void bitonic_sort_block(float *keys) {
  __shared__ float s[SORT_CHUNK];
  unsigned t = threadIdx.x, base = blockIdx.x * SORT_CHUNK;
  s[t] = keys[base + t];
  s[t + SORT_CHUNK / 2] = keys[base + t + SORT_CHUNK / 2];
  __syncthreads();
  for (unsigned k = 2; k <= SORT_CHUNK; k <<= 1)
    for (unsigned j = k >> 1; j > 0; j >>= 1) {
      unsigned i = pair_low(t, j);
      compare_exchange(s, i, j, ((base + i) & k) == 0);
      __syncthreads();
    }
  keys[base + t] = s[t];
  keys[base + t + SORT_CHUNK / 2] = s[t + SORT_CHUNK / 2];
}

APP_KERNEL void bitonic_merge_global(float *keys, unsigned k, unsigned j) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned i = pair_low(t, j);
  compare_exchange(keys, i, j, (i & k) == 0);
}

APP_KERNEL void bitonic_merge_block(float *keys, unsigned k) {
  __shared__ float s[SORT_CHUNK];
  unsigned t = threadIdx.x, base = blockIdx.x * SORT_CHUNK;
  s[t] = keys[base + t];
  s[t + SORT_CHUNK / 2] = keys[base + t + SORT_CHUNK / 2];
  __syncthreads();
  for (unsigned j = SORT_CHUNK / 2; j > 0; j >>= 1) {
    unsigned i = pair_low(t, j);
    compare_exchange(s, i, j, ((base + i) & k) == 0);
    __syncthreads();
  }
  keys[base + t] = s[t];
  keys[base + t + SORT_CHUNK / 2] = s[t + SORT_CHUNK / 2];
}

#ifndef __HIP__
#include "cuda_host.h"
#include "reference.h"
#include <algorithm>

int main(int argc, char **argv) {
  AppArgs args("sort", argc, argv);
  uint64_t seed = args.get("--seed", 1);
  unsigned log2n = (unsigned)args.get("--log2n", 20);
  args.done();
  if (log2n < 10 || log2n > 28 || (1u << log2n) < SORT_CHUNK) args.usage("--log2n must be 10..28");
  unsigned n = 1u << log2n;
  std::vector<float> keys = sort_input(seed, n), sorted;
  DeviceBuffer<float> d_keys(keys);
  unsigned launches = 1;
  bitonic_sort_block<<<n / SORT_CHUNK, SORT_CHUNK / 2>>>(d_keys.p);
  CUDA_CHECK(cudaGetLastError());
  for (unsigned k = 2 * SORT_CHUNK; k <= n; k <<= 1) {
    for (unsigned j = k >> 1; j >= SORT_CHUNK; j >>= 1, launches++)
      bitonic_merge_global<<<n / 2 / SORT_GLOBAL_THREADS, SORT_GLOBAL_THREADS>>>(d_keys.p, k, j);
    bitonic_merge_block<<<n / SORT_CHUNK, SORT_CHUNK / 2>>>(d_keys.p, k);
    launches++;
    CUDA_CHECK(cudaGetLastError());
  }
  d_keys.read(sorted);
  std::vector<float> want = keys;
  std::sort(want.begin(), want.end());
  long long bad = app_first_difference(sorted, want);
  return app_verdict("sort", bad < 0,
                     app_fmt("%u keys, seed %llu, %u launches, %s", n, (unsigned long long)seed, launches,
                             bad < 0 ? "equal to std::sort's order" : app_fmt("key %lld out of place", bad).c_str()),
                     app_checksum(sorted.data(), sorted.size() * sizeof(float)));
}
#endif
