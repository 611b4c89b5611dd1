// Geometry the kernels, their CUDA drivers, the host references and the AMD
// launch generator share (one place for each number), and the complex type
// of the FFT.
#pragma once

// Matrix multiply: square tiles of MATMUL_TILE x MATMUL_TILE threads.
#define MATMUL_TILE 16
// Transpose: TRANSPOSE_TILE x TRANSPOSE_TILE tiles, TRANSPOSE_ROWS rows of
// threads per block (each thread moves TRANSPOSE_TILE / TRANSPOSE_ROWS elements).
#define TRANSPOSE_TILE 32
#define TRANSPOSE_ROWS 8
// RGB-to-gray and Sobel: 2D blocks of IMAGE_BLOCK x IMAGE_BLOCK threads.
#define IMAGE_BLOCK 16
// Reduction: threads per block (a power of two).
#define REDUCE_THREADS 256
// Bitonic sort: each block sorts or merges SORT_CHUNK keys in shared memory
// with SORT_CHUNK / 2 threads; the global merge step uses SORT_GLOBAL_THREADS.
#define SORT_CHUNK 1024
#define SORT_GLOBAL_THREADS 256
// FFT: one block of FFT_THREADS threads per signal of at most FFT_MAX points.
#define FFT_THREADS 256
#define FFT_MAX 2048

struct Complex {
  float re, im;
};
