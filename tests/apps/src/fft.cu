// Batched complex FFT, radix 2, decimation in time: one block per signal of
// n = 2^log2n points (n <= FFT_MAX). The block loads its signal into shared
// memory in bit-reversed order, then runs log2n butterfly stages in place;
// twiddle factors exp(-2 pi i k / n), k < n/2, come from a table the host
// computes once (as FFT libraries do), so both vendors multiply by the same
// numbers.
#include "portable.h"
#include "apps.h"

APP_KERNEL void fft_radix2(Complex *data, const Complex *twiddle, unsigned log2n) {
  __shared__ Complex s[FFT_MAX];
  unsigned n = 1u << log2n, t = threadIdx.x;
  size_t base = (size_t)blockIdx.x * n;
  for (unsigned i = t; i < n; i += blockDim.x) s[__brev(i) >> (32 - log2n)] = data[base + i];
  __syncthreads();
  for (unsigned half = 1; half < n; half <<= 1) {
    unsigned stride = n / (2 * half);
    for (unsigned b = t; b < n / 2; b += blockDim.x) {
      unsigned pos = b & (half - 1);
      unsigned i0 = (b - pos) * 2 + pos, i1 = i0 + half;
      Complex w = twiddle[pos * stride], u = s[i0], v = s[i1];
      Complex p = {v.re * w.re - v.im * w.im, v.re * w.im + v.im * w.re};
      s[i0] = Complex{u.re + p.re, u.im + p.im};
      s[i1] = Complex{u.re - p.re, u.im - p.im};
    }
    __syncthreads();
  }
  for (unsigned i = t; i < n; i += blockDim.x) data[base + i] = s[i];
}

#ifndef __HIP__
#include "cuda_host.h"
#include "reference.h"

int main(int argc, char **argv) {
  AppArgs args("fft", argc, argv);
  uint64_t seed = args.get("--seed", 1);
  unsigned log2n = (unsigned)args.get("--log2n", 10), batch = (unsigned)args.get("--batch", 2048);
  args.done();
  if (log2n < 1 || (1u << log2n) > FFT_MAX) args.usage(app_fmt("--log2n must be 1..%d", __builtin_ctz(FFT_MAX)));
  unsigned n = 1u << log2n;
  std::vector<Complex> x = fft_input(seed, n, batch), tw = fft_twiddles(n), y;
  DeviceBuffer<Complex> d_x(x), d_tw(tw);
  fft_radix2<<<batch, FFT_THREADS>>>(d_x.p, d_tw.p, log2n);
  CUDA_CHECK(cudaGetLastError());
  d_x.read(y);
  long long bad = app_first_difference(y, fft_reference(x, tw, log2n));
  // The host reference runs the same butterflies; a direct DFT in double of
  // the first signal shows they compute the transform.
  double err = fft_dft_error(x, y, n);
  bool close = err <= 1e-5 * log2n;
  return app_verdict("fft", bad < 0 && close,
                     app_fmt("%u signals of %u points, seed %llu, %s, relative error vs DFT %.2e%s", batch, n,
                             (unsigned long long)seed,
                             bad < 0 ? "bit-identical to the host's" : app_fmt("value %lld differs", bad).c_str(), err,
                             close ? "" : " (too large)"),
                     app_checksum(y.data(), y.size() * sizeof(Complex)));
}
#endif
