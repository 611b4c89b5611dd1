// Sum of n single-precision values in two launches of one kernel: each block
// first adds a grid-strided slice per thread, then halves its shared-memory
// array in a tree (sequential addressing), writing one partial sum per
// block; the second launch, one block, sums the partials.
#include "portable.h"
#include "apps.h"

APP_KERNEL void reduce_sum(float *partial, const float *x, unsigned n) {
  __shared__ float s[REDUCE_THREADS];
  unsigned t = threadIdx.x;
  float acc = 0.0f;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + t; i < n; i += (size_t)gridDim.x * blockDim.x) acc += x[i];
  s[t] = acc;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}

#ifndef __HIP__
#include "cuda_host.h"
#include "reference.h"

int main(int argc, char **argv) {
  AppArgs args("reduce", argc, argv);
  uint64_t seed = args.get("--seed", 1);
  unsigned n = (unsigned)args.get("--n", 1u << 24);
  unsigned blocks = (unsigned)args.get("--blocks", 1024);
  args.done();
  if (blocks == 0) args.usage("--blocks must be at least 1");
  std::vector<float> x = reduce_input(seed, n), sum;
  DeviceBuffer<float> d_x(x), d_partial(blocks), d_sum(1);
  reduce_sum<<<blocks, REDUCE_THREADS>>>(d_partial.p, d_x.p, n);
  CUDA_CHECK(cudaGetLastError());
  reduce_sum<<<1, REDUCE_THREADS>>>(d_sum.p, d_partial.p, blocks);
  CUDA_CHECK(cudaGetLastError());
  d_sum.read(sum);
  std::vector<float> partial_ref = reduce_reference(x, blocks, REDUCE_THREADS);
  std::vector<float> want = reduce_reference(partial_ref, 1, REDUCE_THREADS);
  // The host reference adds in the kernel's order; a double-precision sum
  // shows that this order sums correctly: its error is at most (the longest
  // chain of additions) x 2^-24 x sum |x|.
  double exact = 0, magnitude = 0;
  for (float v : x) exact += v, magnitude += v < 0 ? -v : v;
  unsigned levels = 0;
  while ((1u << levels) < REDUCE_THREADS) levels++;
  double chain = (n + (double)blocks * REDUCE_THREADS - 1) / ((double)blocks * REDUCE_THREADS) +
                 (blocks + REDUCE_THREADS - 1) / REDUCE_THREADS + 2.0 * levels;
  double err = sum[0] - exact;
  bool close = (err < 0 ? -err : err) <= 1.01 * chain * magnitude / 16777216.0;
  bool same = app_first_difference(sum, want) < 0;
  return app_verdict("reduce", same && close,
                     app_fmt("n %u, %u blocks, seed %llu, sum %.9g (host %.9g, double %.9g)%s", n, blocks,
                             (unsigned long long)seed, sum[0], want[0], exact,
                             same ? (close ? "" : ": far from the double sum") : ": differs from the host's"),
                     app_checksum(sum.data(), sizeof(float)));
}
#endif
