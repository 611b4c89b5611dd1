// Transpose of a w x h single-precision matrix (row-major, h rows) into an
// h x w one, through a shared-memory tile padded by one column so that the
// column-wise reads hit distinct banks; reads and writes of global memory
// are both along rows (coalesced).
#include "portable.h"
#include "apps.h"

APP_KERNEL void transpose(float *out, const float *in, unsigned w, unsigned h) {
  __shared__ float tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];
  unsigned x = blockIdx.x * TRANSPOSE_TILE + threadIdx.x;
  unsigned y = blockIdx.y * TRANSPOSE_TILE + threadIdx.y;
  for (unsigned r = 0; r < TRANSPOSE_TILE; r += TRANSPOSE_ROWS)
    if (x < w && y + r < h) tile[threadIdx.y + r][threadIdx.x] = in[(size_t)(y + r) * w + x];
  __syncthreads();
  x = blockIdx.y * TRANSPOSE_TILE + threadIdx.x;
  y = blockIdx.x * TRANSPOSE_TILE + threadIdx.y;
  for (unsigned r = 0; r < TRANSPOSE_TILE; r += TRANSPOSE_ROWS)
    if (x < h && y + r < w) out[(size_t)(y + r) * h + x] = tile[threadIdx.x][threadIdx.y + r];
}

#ifndef __HIP__
#include "cuda_host.h"
#include "reference.h"

int main(int argc, char **argv) {
  AppArgs args("transpose", argc, argv);
  uint64_t seed = args.get("--seed", 1);
  unsigned w = (unsigned)args.get("--width", 4096), h = (unsigned)args.get("--height", 2048);
  args.done();
  std::vector<float> in = transpose_input(seed, w, h), out;
  DeviceBuffer<float> d_in(in), d_out((size_t)w * h);
  dim3 block(TRANSPOSE_TILE, TRANSPOSE_ROWS);
  dim3 grid((w + TRANSPOSE_TILE - 1) / TRANSPOSE_TILE, (h + TRANSPOSE_TILE - 1) / TRANSPOSE_TILE);
  transpose<<<grid, block>>>(d_out.p, d_in.p, w, h);
  CUDA_CHECK(cudaGetLastError());
  d_out.read(out);
  long long bad = app_first_difference(out, transpose_reference(in, w, h));
  return app_verdict("transpose", bad < 0,
                     app_fmt("%ux%u, seed %llu, %s", w, h, (unsigned long long)seed,
                             bad < 0 ? "all elements equal the host's" : app_fmt("element %lld differs", bad).c_str()),
                     app_checksum(out.data(), out.size() * sizeof(float)));
}
#endif
