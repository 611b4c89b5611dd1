// RGB-to-gray: each thread converts one pixel of an interleaved 8-bit RGB
// image with the ITU-R BT.601 luma weights, rounded to 8 bits.
#include "portable.h"
#include "apps.h"

APP_KERNEL void rgb_to_gray(unsigned char *gray, const unsigned char *rgb, unsigned w, unsigned h) {
  unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  size_t p = (size_t)y * w + x;
  float r = rgb[3 * p], g = rgb[3 * p + 1], b = rgb[3 * p + 2];
  float luma = fmaf(0.114f, b, fmaf(0.587f, g, 0.299f * r));
  gray[p] = (unsigned char)(luma + 0.5f);
}

#ifndef __HIP__
#include "cuda_host.h"
#include "reference.h"

int main(int argc, char **argv) {
  AppArgs args("gray", argc, argv);
  uint64_t seed = args.get("--seed", 1);
  unsigned w = (unsigned)args.get("--width", 1920), h = (unsigned)args.get("--height", 1080);
  args.done();
  std::vector<unsigned char> rgb = gray_input(seed, w, h), gray((size_t)w * h);
  DeviceBuffer<unsigned char> d_rgb(rgb), d_gray(gray.size());
  dim3 block(IMAGE_BLOCK, IMAGE_BLOCK), grid((w + IMAGE_BLOCK - 1) / IMAGE_BLOCK, (h + IMAGE_BLOCK - 1) / IMAGE_BLOCK);
  rgb_to_gray<<<grid, block>>>(d_gray.p, d_rgb.p, w, h);
  CUDA_CHECK(cudaGetLastError());
  d_gray.read(gray);
  long long bad = app_first_difference(gray, gray_reference(rgb, w, h));
  return app_verdict("gray", bad < 0,
                     app_fmt("%ux%u image, seed %llu, %s", w, h, (unsigned long long)seed,
                             bad < 0 ? "all pixels equal the host's" : app_fmt("pixel %lld differs", bad).c_str()),
                     app_checksum(gray.data(), gray.size()));
}
#endif
