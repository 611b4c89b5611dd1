// Four host threads, each with its own stream, launch kernels at the same
// time. Thread 1 meets a NaN, thread 3 an overflow (FP64); threads 0 and 2
// stay clean. Every thread checks its own results.
#include "suite.cuh"
#include <cmath>
#include <thread>
#include <vector>

constexpr int N = 1 << 16;
constexpr int THREADS = 4;
constexpr int ROUNDS = 8;

extern "C" __global__ void ms_axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void ms_nan(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * y[i];  // xfpx-expect: nan f32
}

extern "C" __global__ void ms_inf64(const double* x, double* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i];  // xfpx-expect: inf f64
}

struct Worker {
    int index;
    bool ok = false;
    Checksum sum;

    void run() {
        cudaStream_t stream;
        CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        std::vector<float> x(N), y(N);
        for (int i = 0; i < N; ++i) {
            x[i] = runtime_f32("0.001") * static_cast<float>(i % 1000 + index);
            y[i] = 1.0f;
        }
        float *dx, *dy;
        CHECK_CUDA(cudaMalloc(&dx, N * sizeof(float)));
        CHECK_CUDA(cudaMalloc(&dy, N * sizeof(float)));
        CHECK_CUDA(cudaMemcpyAsync(dx, x.data(), N * sizeof(float), cudaMemcpyHostToDevice, stream));
        CHECK_CUDA(cudaMemcpyAsync(dy, y.data(), N * sizeof(float), cudaMemcpyHostToDevice, stream));
        for (int r = 0; r < ROUNDS; ++r) ms_axpy<<<N / 256, 256, 0, stream>>>(0.5f, dx, dy, N);
        bool special_ok = true;
        if (index == 1) {
            // y holds finite values; x[7] becomes +inf and y[7] zero, so x*y is NaN once.
            float inf = runtime_f32("inf"), zero = runtime_f32("0");
            CHECK_CUDA(cudaMemcpyAsync(dx + 7, &inf, sizeof inf, cudaMemcpyHostToDevice, stream));
            CHECK_CUDA(cudaMemcpyAsync(dy + 7, &zero, sizeof zero, cudaMemcpyHostToDevice, stream));
            ms_nan<<<N / 256, 256, 0, stream>>>(dx, dy, N);
        }
        if (index == 3) {
            std::vector<double> xd(256, runtime_f64("1.5"));
            xd[100] = runtime_f64("1e200");
            double* dxd;
            double* dyd;
            CHECK_CUDA(cudaMalloc(&dxd, 256 * sizeof(double)));
            CHECK_CUDA(cudaMalloc(&dyd, 256 * sizeof(double)));
            CHECK_CUDA(cudaMemcpyAsync(dxd, xd.data(), 256 * sizeof(double), cudaMemcpyHostToDevice, stream));
            ms_inf64<<<1, 256, 0, stream>>>(dxd, dyd, 256);
            std::vector<double> yd(256);
            CHECK_CUDA(cudaMemcpyAsync(yd.data(), dyd, 256 * sizeof(double), cudaMemcpyDeviceToHost, stream));
            CHECK_CUDA(cudaStreamSynchronize(stream));
            special_ok = std::isinf(yd[100]) && yd[0] == 2.25;
            sum.add(yd.data(), 256 * sizeof(double));
            CHECK_CUDA(cudaFree(dxd));
            CHECK_CUDA(cudaFree(dyd));
        }
        CHECK_CUDA(cudaMemcpyAsync(y.data(), dy, N * sizeof(float), cudaMemcpyDeviceToHost, stream));
        CHECK_CUDA(cudaStreamSynchronize(stream));
        sum.add(y.data(), N * sizeof(float));
        bool finite_ok = true;
        for (int i = 0; i < N; ++i) {
            bool should_be_nan = index == 1 && i == 7;
            if (should_be_nan != std::isnan(y[i]) || std::isinf(y[i])) finite_ok = false;
        }
        ok = special_ok && finite_ok;
        CHECK_CUDA(cudaFree(dx));
        CHECK_CUDA(cudaFree(dy));
        CHECK_CUDA(cudaStreamDestroy(stream));
    }
};

int main() {
    CHECK_CUDA(cudaFree(nullptr));  // create the context before the threads start
    std::vector<Worker> workers(THREADS);
    std::vector<std::thread> threads;
    for (int t = 0; t < THREADS; ++t) {
        workers[t].index = t;
        threads.emplace_back([&workers, t] { workers[t].run(); });
    }
    for (auto& th : threads) th.join();
    Checksum sum;
    SelfCheck check;
    for (auto& w : workers) {
        sum.add(&w.sum.h, sizeof w.sum.h);
        check.expect(w.ok, "worker results");
    }
    std::printf("checksum %016llx\n", static_cast<unsigned long long>(sum.h));
    if (check.failures) return 1;
    std::printf("self-check ok\n");
    return 0;
}
