// Sobel edge detector on an 8-bit grayscale image: each block stages its
// IMAGE_BLOCK square plus a one-pixel halo in shared memory (edges clamped),
// then each thread applies the two 3x3 kernels and writes the gradient
// magnitude sqrt(gx^2 + gy^2). At flat pixels (gx = gy = 0) the correctly
// rounded square-root sequence meets an exceptional value before it selects
// the exact result 0: on gfx90a/gfx942 its correction FMAs yield NaN (what
// xfpx's detect mode reports there); on NVIDIA the reciprocal square root
// of 0 is +Inf (expected, not yet observed).
#include "portable.h"
#include "apps.h"

#define SOBEL_SPAN (IMAGE_BLOCK + 2)

APP_KERNEL void sobel(float *out, const unsigned char *img, unsigned w, unsigned h) {
  __shared__ float tile[SOBEL_SPAN][SOBEL_SPAN];
  unsigned t = threadIdx.y * IMAGE_BLOCK + threadIdx.x;
  int x0 = (int)(blockIdx.x * IMAGE_BLOCK) - 1, y0 = (int)(blockIdx.y * IMAGE_BLOCK) - 1;
  for (unsigned i = t; i < SOBEL_SPAN * SOBEL_SPAN; i += IMAGE_BLOCK * IMAGE_BLOCK) {
    int sx = x0 + (int)(i % SOBEL_SPAN), sy = y0 + (int)(i / SOBEL_SPAN);
    sx = sx < 0 ? 0 : sx >= (int)w ? (int)w - 1 : sx;
    sy = sy < 0 ? 0 : sy >= (int)h ? (int)h - 1 : sy;
    tile[i / SOBEL_SPAN][i % SOBEL_SPAN] = img[(size_t)sy * w + sx];
  }
  __syncthreads();
  unsigned x = blockIdx.x * IMAGE_BLOCK + threadIdx.x, y = blockIdx.y * IMAGE_BLOCK + threadIdx.y;
  if (x >= w || y >= h) return;
  unsigned cx = threadIdx.x + 1, cy = threadIdx.y + 1;
  float gx = (tile[cy - 1][cx + 1] + 2.0f * tile[cy][cx + 1] + tile[cy + 1][cx + 1]) -
             (tile[cy - 1][cx - 1] + 2.0f * tile[cy][cx - 1] + tile[cy + 1][cx - 1]);
  float gy = (tile[cy + 1][cx - 1] + 2.0f * tile[cy + 1][cx] + tile[cy + 1][cx + 1]) -
             (tile[cy - 1][cx - 1] + 2.0f * tile[cy - 1][cx] + tile[cy - 1][cx + 1]);
  out[(size_t)y * w + x] = sqrtf(gx * gx + gy * gy);
}

#ifndef __HIP__
#include "cuda_host.h"
#include "reference.h"

int main(int argc, char **argv) {
  AppArgs args("sobel", argc, argv);
  uint64_t seed = args.get("--seed", 1);
  unsigned w = (unsigned)args.get("--width", 1920), h = (unsigned)args.get("--height", 1080);
  args.done();
  std::vector<unsigned char> img = sobel_input(seed, w, h);
  std::vector<float> out;
  DeviceBuffer<unsigned char> d_img(img);
  DeviceBuffer<float> d_out((size_t)w * h);
  dim3 block(IMAGE_BLOCK, IMAGE_BLOCK), grid((w + IMAGE_BLOCK - 1) / IMAGE_BLOCK, (h + IMAGE_BLOCK - 1) / IMAGE_BLOCK);
  sobel<<<grid, block>>>(d_out.p, d_img.p, w, h);
  CUDA_CHECK(cudaGetLastError());
  d_out.read(out);
  long long bad = app_first_difference(out, sobel_reference(img, w, h));
  return app_verdict("sobel", bad < 0,
                     app_fmt("%ux%u image, seed %llu, %s", w, h, (unsigned long long)seed,
                             bad < 0 ? "all pixels bit-identical to the host's" : app_fmt("pixel %lld differs", bad).c_str()),
                     app_checksum(out.data(), out.size() * sizeof(float)));
}
#endif
