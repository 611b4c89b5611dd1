// Checks of guarded instructions grouped into one call (fast mode): each
// slot counts only on the lanes where its instruction's guard held.
//
// On even lanes the guard holds and the two guarded multiplications make a
// subnormal and an infinity; on odd lanes it does not, and their
// destination registers keep the NaN they were given before. The results
// leave through integer operations only, so nothing later sees them: the
// multiplications' own checks must report `sub` and `inf` there, and
// never `nan` (a NaN there would be a stale register of a lane whose guard
// was false). guarded-check.sh compares what xfpx reports in both modes.
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

__global__ void guarded_pair(const float *x, const float *z, const float *init, unsigned *out) {
    unsigned i = threadIdx.x;
    float y1 = init[i], y2 = init[i];
    unsigned on = (i & 1u) == 0u;
    float a = x[i], b = z[i];
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "setp.ne.u32 p, %2, 0;\n\t"
        "@p mul.rn.f32 %0, %3, %3;\n\t"  // GUARDED-SUB
        "@p mul.rn.f32 %1, %4, %4;\n\t"  // GUARDED-INF
        "}"
        : "+f"(y1), "+f"(y2)
        : "r"(on), "f"(a), "f"(b));
    out[i] = __float_as_uint(y1) ^ (__float_as_uint(y2) << 1);
}

int main() {
    const int n = 64;
    float hx[n], hz[n], hinit[n];
    for (int i = 0; i < n; i++) {
        hx[i] = 1e-20f;      // squared: 1e-40, subnormal
        hz[i] = 1e30f;       // squared: infinity
        hinit[i] = __builtin_nanf("");
    }
    float *x, *z, *init;
    unsigned *out;
    cudaMalloc(&x, sizeof hx);
    cudaMalloc(&z, sizeof hz);
    cudaMalloc(&init, sizeof hinit);
    cudaMalloc(&out, n * sizeof(unsigned));
    cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
    cudaMemcpy(z, hz, sizeof hz, cudaMemcpyHostToDevice);
    cudaMemcpy(init, hinit, sizeof hinit, cudaMemcpyHostToDevice);
    guarded_pair<<<1, n>>>(x, z, init, out);
    unsigned h[n];
    if (cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess) {
        fprintf(stderr, "error: CUDA failed\n");
        return 2;
    }
    unsigned sum = 0;
    for (int i = 0; i < n; i++) sum = sum * 31u + h[i];
    printf("guarded checksum %08x\n", sum);
    return 0;
}
