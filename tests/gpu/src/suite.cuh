// Shared host helpers of the GPU suite programs: error checks, runtime
// inputs the compiler cannot fold, and the output checksum every program
// prints so that instrumented and plain runs can be compared.
#pragma once
#include <cuda_runtime.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK_CUDA(call)                                                        \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            std::fprintf(stderr, "%s:%d: CUDA error: %s\n", __FILE__, __LINE__, \
                         cudaGetErrorString(err_));                             \
            std::exit(2);                                                       \
        }                                                                       \
    } while (0)

// FNV-1a over raw bytes: bit-exact, so NaN payloads and signed zeros count.
struct Checksum {
    uint64_t h = 1469598103934665603ull;
    void add(const void* p, size_t n) {
        const unsigned char* b = static_cast<const unsigned char*>(p);
        for (size_t i = 0; i < n; ++i) {
            h ^= b[i];
            h *= 1099511628211ull;
        }
    }
};

// A float from text at run time (strtof), so nothing can be folded.
static inline float runtime_f32(const char* text) { return std::strtof(text, nullptr); }
static inline double runtime_f64(const char* text) { return std::strtod(text, nullptr); }

// Counts failed self-checks; the program exits 1 when any failed.
struct SelfCheck {
    int failures = 0;
    void expect(bool ok, const char* what) {
        if (!ok) {
            std::fprintf(stderr, "self-check failed: %s\n", what);
            ++failures;
        }
    }
};
