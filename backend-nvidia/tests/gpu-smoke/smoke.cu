// Smoke program for the NVBit tool: FP32 and FP64 NaN, Inf, subnormal and
// division by zero at known lines (marked `EXPECT kind format`; lines
// marked ALLOW may have findings too), and a clean kernel. Inputs come from the host so nothing is folded at compile
// time. Prints its results as bits on stdout (compared between
// instrumented and plain runs) and phase times on stderr.
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <chrono>
#include <thread>
#include <cuda_runtime.h>

__global__ void smoke_f32(const float *in, float *out) {
    int i = threadIdx.x;
    float zero = in[0], one = in[1], big = in[2], tiny = in[3];
    float a = big * big;   // EXPECT inf f32
    float n = a - a;       // EXPECT nan f32
    float s = tiny * tiny; // EXPECT sub f32
    float d = one / zero;  // EXPECT div0 f32
    out[4 * i + 0] = a;
    out[4 * i + 1] = n;
    out[4 * i + 2] = s;
    out[4 * i + 3] = d;
}

__global__ void smoke_f64(const double *in, double *out) {
    int i = threadIdx.x;
    double zero = in[0], one = in[1], big = in[2], tiny = in[3];
    double a = big * big;   // EXPECT inf f64
    double n = a - a;       // EXPECT nan f64
    double s = tiny * tiny; // EXPECT sub f64
    double d = one / zero;  // EXPECT div0 f64
    out[4 * i + 0] = a;
    out[4 * i + 1] = n;
    out[4 * i + 2] = s;
    out[4 * i + 3] = d;
} // ALLOW: the compiler attributes the f64 division slow path to this line

__global__ void clean(const float *in, float *out) {
    int i = threadIdx.x;
    out[i] = in[1] * 2.0f + in[1] * (float)i;
}

static long long now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

int main() {
    const int threads = 64;
    float hf[4] = {0.0f, 1.0f, 3.0e38f, 1.0e-20f};
    double hd[4] = {0.0, 1.0, 1.0e300, 1.0e-160};
    float *df, *of, *oc;
    double *dd, *od;
    cudaMalloc(&df, sizeof(hf));
    cudaMalloc(&dd, sizeof(hd));
    cudaMalloc(&of, sizeof(float) * 4 * threads);
    cudaMalloc(&od, sizeof(double) * 4 * threads);
    cudaMalloc(&oc, sizeof(float) * threads);
    cudaMemcpy(df, hf, sizeof(hf), cudaMemcpyHostToDevice);
    cudaMemcpy(dd, hd, sizeof(hd), cudaMemcpyHostToDevice);

    fprintf(stderr, "phase f32 %lld\n", now_ms());
    smoke_f32<<<1, threads>>>(df, of);
    smoke_f32<<<1, threads>>>(df, of);
    cudaDeviceSynchronize();
    // the same kernel once more, through a CUDA graph
    cudaStream_t stream;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    cudaStreamCreate(&stream);
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
    smoke_f32<<<1, threads, 0, stream>>>(df, of);
    cudaStreamEndCapture(stream, &graph);
    cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphLaunch(exec, stream);
    cudaStreamSynchronize(stream);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    fprintf(stderr, "phase f64 %lld\n", now_ms());
    smoke_f64<<<1, threads>>>(dd, od);
    clean<<<1, threads>>>(df, oc);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(e));
        return 1;
    }

    float rf[4 * threads];
    double rd[4 * threads];
    float rc[threads];
    cudaMemcpy(rf, of, sizeof(rf), cudaMemcpyDeviceToHost);
    cudaMemcpy(rd, od, sizeof(rd), cudaMemcpyDeviceToHost);
    cudaMemcpy(rc, oc, sizeof(rc), cudaMemcpyDeviceToHost);
    for (int k = 0; k < 4; k++) {
        uint32_t b;
        uint64_t c;
        memcpy(&b, &rf[k], 4);
        memcpy(&c, &rd[k], 8);
        printf("f32[%d] %08x  f64[%d] %016llx\n", k, b, k, (unsigned long long)c);
    }
    for (int i = 0; i < threads; i += 16) printf("clean[%d] %g\n", i, rc[i]);
    fprintf(stderr, "phase end %lld\n", now_ms());
    return 0;
}
