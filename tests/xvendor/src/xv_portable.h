// The cross-vendor programs' dialect: tests/apps/src/portable.h's CUDA,
// except that the AMD side is built with HIP's own headers and device
// libraries (the math functions a HIP user gets), which then define the
// CUDA names themselves.
#pragma once
#if defined(__HIP__) && !defined(__CUDACC__)
#include <hip/hip_runtime.h>
#else
#include "portable.h"
#endif
