// CUDA runtime helpers of the applications' host programs: every call
// checked (one `error:` line and exit status 2 on failure), device buffers
// that free themselves.
#pragma once
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                                  \
  do {                                                                                    \
    cudaError_t err_ = (call);                                                            \
    if (err_ != cudaSuccess) {                                                            \
      fprintf(stderr, "error: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(err_)); \
      exit(2);                                                                            \
    }                                                                                     \
  } while (0)

template <typename T> struct DeviceBuffer {
  T *p = nullptr;
  size_t n = 0;
  explicit DeviceBuffer(size_t count) : n(count) {
    CUDA_CHECK(cudaMalloc((void **)&p, n * sizeof(T)));
    CUDA_CHECK(cudaMemset(p, 0, n * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T> &host) : DeviceBuffer(host.size()) {
    CUDA_CHECK(cudaMemcpy(p, host.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { cudaFree(p); }
  // Waits for the device and copies the buffer into `host` (resized to fit).
  void read(std::vector<T> &host) const {
    CUDA_CHECK(cudaDeviceSynchronize());
    host.resize(n);
    CUDA_CHECK(cudaMemcpy(host.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  }
};
