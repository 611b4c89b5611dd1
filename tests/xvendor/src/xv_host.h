// Host side of the cross-vendor programs (CUDA only): inputs, launches of
// 64-thread blocks, and every output printed as bit patterns on stdout,
// so that a run under `xfpx run --capture` can be checked against a
// plain one byte for byte. The inputs are those of the AMD launch files
// in ../launches/ (explicit values, or `start + step * i` as their
// `range` init gives).
#pragma once
#include "cuda_host.h"
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

// Threads per block of every launch (one AMD wave).
#define XV_BLOCK 64

// `start + step * i` for i < n, rounded once to T.
template <typename T> std::vector<T> xv_range(size_t n, double start, double step) {
  std::vector<T> v(n);
  for (size_t i = 0; i < n; i++) v[i] = (T)(start + step * (double)i);
  return v;
}

inline unsigned xv_blocks(size_t n) { return (unsigned)((n + XV_BLOCK - 1) / XV_BLOCK); }

// One line: `NAME: bits bits ...` (hexadecimal bit patterns).
template <typename T> void xv_print(const char *name, const std::vector<T> &v) {
  printf("%s:", name);
  for (const T &x : v) {
    uint64_t bits = 0;
    memcpy(&bits, &x, sizeof(T));
    printf(" %0*llx", (int)(2 * sizeof(T)), (unsigned long long)bits);
  }
  printf("\n");
}

template <typename T> std::vector<T> xv_read(const DeviceBuffer<T> &b) {
  std::vector<T> host;
  b.read(host);
  return host;
}
