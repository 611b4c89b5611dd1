// Host side of each application: its seeded inputs and its reference result,
// computed in plain C++ with the kernels' operation order (built with FP
// contraction off, like the kernels), so that results compare bit for bit.
// Used by the CUDA programs' self-checks and by the AMD launch generator.
#pragma once
#include "apps.h"
#include "host.h"
#include <cmath>
#include <vector>

// ------------------------------------------------------------ RGB-to-gray
inline std::vector<unsigned char> gray_input(uint64_t seed, unsigned w, unsigned h) {
  AppRng r(seed);
  std::vector<unsigned char> rgb((size_t)w * h * 3);
  for (auto &v : rgb) v = r.byte();
  return rgb;
}
inline std::vector<unsigned char> gray_reference(const std::vector<unsigned char> &rgb, unsigned w, unsigned h) {
  std::vector<unsigned char> g((size_t)w * h);
  for (size_t p = 0; p < g.size(); p++) {
    float r = rgb[3 * p], gr = rgb[3 * p + 1], b = rgb[3 * p + 2];
    float luma = std::fma(0.114f, b, std::fma(0.587f, gr, 0.299f * r));
    g[p] = (unsigned char)(luma + 0.5f);
  }
  return g;
}

// ------------------------------------------------------- matrix multiply
// Operand `which` (0: A, 1: B) of an n x n product, uniform in [-1, 1).
inline std::vector<float> matmul_input(uint64_t seed, unsigned n, unsigned which) {
  AppRng r(seed * 2 + which);
  std::vector<float> m((size_t)n * n);
  for (auto &v : m) v = r.uniform(-1.0f, 1.0f);
  return m;
}
inline std::vector<float> matmul_reference(const std::vector<float> &a, const std::vector<float> &b, unsigned n) {
  std::vector<float> c((size_t)n * n);
  for (size_t row = 0; row < n; row++)
    for (size_t col = 0; col < n; col++) {
      float acc = 0.0f;
      for (size_t k = 0; k < n; k++) acc = std::fma(a[row * n + k], b[k * n + col], acc);
      c[row * n + col] = acc;
    }
  return c;
}

// -------------------------------------------------------------- transpose
inline std::vector<float> transpose_input(uint64_t seed, unsigned w, unsigned h) {
  AppRng r(seed);
  std::vector<float> m((size_t)w * h);
  for (auto &v : m) v = r.uniform(-100.0f, 100.0f);
  return m;
}
inline std::vector<float> transpose_reference(const std::vector<float> &in, unsigned w, unsigned h) {
  std::vector<float> out(in.size());
  for (size_t y = 0; y < h; y++)
    for (size_t x = 0; x < w; x++) out[x * h + y] = in[y * w + x];
  return out;
}

// -------------------------------------------------------------- reduction
inline std::vector<float> reduce_input(uint64_t seed, unsigned n) {
  AppRng r(seed);
  std::vector<float> x(n);
  for (auto &v : x) v = r.uniform(-1.0f, 1.0f);
  return x;
}
// The partial sums `blocks` blocks of `threads` threads write.
inline std::vector<float> reduce_reference(const std::vector<float> &x, unsigned blocks, unsigned threads) {
  std::vector<float> partial(blocks), s(threads);
  size_t n = x.size(), step = (size_t)blocks * threads;
  for (unsigned b = 0; b < blocks; b++) {
    for (unsigned t = 0; t < threads; t++) {
      float acc = 0.0f;
      for (size_t i = (size_t)b * threads + t; i < n; i += step) acc += x[i];
      s[t] = acc;
    }
    for (unsigned stride = threads / 2; stride > 0; stride >>= 1)
      for (unsigned t = 0; t < stride; t++) s[t] += s[t + stride];
    partial[b] = s[0];
  }
  return partial;
}

// ------------------------------------------------------------------ Sobel
// A synthetic scene: a flat background with filled rectangles and discs of
// flat shades, and sparse noise, so that the image has both flat regions
// (zero gradient) and edges.
inline std::vector<unsigned char> sobel_input(uint64_t seed, unsigned w, unsigned h) {
  AppRng r(seed);
  std::vector<unsigned char> img((size_t)w * h, (unsigned char)(40 + r.byte() % 40));
  unsigned shapes = 8 + (unsigned)(((uint64_t)w * h) >> 14);
  for (unsigned s = 0; s < shapes; s++) {
    long cx = (long)(r.next() % w), cy = (long)(r.next() % h);
    long rx = 2 + (long)(r.next() % (w / 4 + 1)), ry = 2 + (long)(r.next() % (h / 4 + 1));
    bool disc = r.next() & 1;
    unsigned char shade = r.byte();
    for (long y = cy - ry; y <= cy + ry; y++)
      for (long x = cx - rx; x <= cx + rx; x++) {
        if (x < 0 || y < 0 || x >= (long)w || y >= (long)h) continue;
        double dx = (double)(x - cx) / rx, dy = (double)(y - cy) / ry;
        if (!disc || dx * dx + dy * dy <= 1.0) img[(size_t)y * w + x] = shade;
      }
  }
  for (size_t i = 0; i < img.size() / 64; i++) img[r.next() % img.size()] = r.byte();
  return img;
}
inline std::vector<float> sobel_reference(const std::vector<unsigned char> &img, unsigned w, unsigned h) {
  std::vector<float> out((size_t)w * h);
  auto at = [&](long x, long y) -> float {
    x = x < 0 ? 0 : x >= (long)w ? (long)w - 1 : x;
    y = y < 0 ? 0 : y >= (long)h ? (long)h - 1 : y;
    return img[(size_t)y * w + x];
  };
  for (long y = 0; y < (long)h; y++)
    for (long x = 0; x < (long)w; x++) {
      float gx = (at(x + 1, y - 1) + 2.0f * at(x + 1, y) + at(x + 1, y + 1)) -
                 (at(x - 1, y - 1) + 2.0f * at(x - 1, y) + at(x - 1, y + 1));
      float gy = (at(x - 1, y + 1) + 2.0f * at(x, y + 1) + at(x + 1, y + 1)) -
                 (at(x - 1, y - 1) + 2.0f * at(x, y - 1) + at(x + 1, y - 1));
      out[(size_t)y * w + x] = std::sqrt(gx * gx + gy * gy);
    }
  return out;
}

// ------------------------------------------------------------------- sort
inline std::vector<float> sort_input(uint64_t seed, unsigned n) {
  AppRng r(seed);
  std::vector<float> k(n);
  for (auto &v : k) v = r.uniform(-1000.0f, 1000.0f);
  return k;
}
// One step (k, j) of the bitonic network over all keys.
inline void bitonic_step(std::vector<float> &keys, unsigned k, unsigned j) {
  for (size_t i = 0; i < keys.size(); i++) {
    if (i & j) continue;
    float a = keys[i], b = keys[i + j];
    if ((i & k) == 0 ? a > b : a < b) keys[i] = b, keys[i + j] = a;
  }
}

// -------------------------------------------------------------------- FFT
inline std::vector<Complex> fft_input(uint64_t seed, unsigned n, unsigned batch) {
  AppRng r(seed);
  std::vector<Complex> x((size_t)n * batch);
  for (auto &v : x) v = Complex{r.uniform(-1.0f, 1.0f), r.uniform(-1.0f, 1.0f)};
  return x;
}
// exp(-2 pi i k / n) for k < n / 2, computed in double and rounded.
inline std::vector<Complex> fft_twiddles(unsigned n) {
  std::vector<Complex> tw(n / 2 > 0 ? n / 2 : 1);
  const double pi = 3.14159265358979323846;
  for (unsigned k = 0; k < n / 2; k++)
    tw[k] = Complex{(float)std::cos(-2.0 * pi * k / n), (float)std::sin(-2.0 * pi * k / n)};
  return tw;
}
inline std::vector<Complex> fft_reference(const std::vector<Complex> &x, const std::vector<Complex> &tw, unsigned log2n) {
  size_t n = (size_t)1 << log2n;
  std::vector<Complex> y(x.size()), s(n);
  for (size_t base = 0; base < x.size(); base += n) {
    for (size_t i = 0; i < n; i++) {
      size_t r = 0;
      for (unsigned bit = 0; bit < log2n; bit++) r |= ((i >> bit) & 1) << (log2n - 1 - bit);
      s[r] = x[base + i];
    }
    for (size_t half = 1; half < n; half <<= 1)
      for (size_t b = 0; b < n / 2; b++) {
        size_t pos = b & (half - 1), i0 = (b - pos) * 2 + pos, i1 = i0 + half;
        Complex w = tw[pos * (n / (2 * half))], u = s[i0], v = s[i1];
        Complex p = {v.re * w.re - v.im * w.im, v.re * w.im + v.im * w.re};
        s[i0] = Complex{u.re + p.re, u.im + p.im};
        s[i1] = Complex{u.re - p.re, u.im - p.im};
      }
    for (size_t i = 0; i < n; i++) y[base + i] = s[i];
  }
  return y;
}
// Largest difference between `y`'s first signal and a direct DFT (in double)
// of `x`'s, relative to the DFT's largest magnitude.
inline double fft_dft_error(const std::vector<Complex> &x, const std::vector<Complex> &y, unsigned n) {
  const double pi = 3.14159265358979323846;
  double worst = 0, peak = 0;
  for (unsigned k = 0; k < n; k++) {
    double re = 0, im = 0;
    for (unsigned j = 0; j < n; j++) {
      double a = -2.0 * pi * (double)((uint64_t)j * k % n) / n;
      re += x[j].re * std::cos(a) - x[j].im * std::sin(a);
      im += x[j].re * std::sin(a) + x[j].im * std::cos(a);
    }
    double dr = y[k].re - re, di = y[k].im - im;
    worst = std::fmax(worst, std::sqrt(dr * dr + di * di));
    peak = std::fmax(peak, std::sqrt(re * re + im * im));
  }
  return peak > 0 ? worst / peak : worst;
}
