// Gravitational n-body: 65536 softened particles, all-pairs forces with
// shared-memory tiles and rsqrtf in single precision, leapfrog
// (kick-drift-kick) integration for 40 steps.
// Self-check: accelerations of 64 sampled bodies at the start against a CPU
// double sum; total momentum conserved (relative to total |momentum|).
#include "bench_common.cuh"

constexpr int TILE = 256;
constexpr float SOFT2 = 1e-3f;

__global__ void __launch_bounds__(TILE) accelerations(int n, const float4* __restrict__ pos, float3* __restrict__ acc) {
  __shared__ float4 tile[TILE];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 p = pos[i];
  float ax = 0.f, ay = 0.f, az = 0.f;
  for (int t0 = 0; t0 < n; t0 += TILE) {
    tile[threadIdx.x] = pos[t0 + threadIdx.x];
    __syncthreads();
#pragma unroll 8
    for (int j = 0; j < TILE; ++j) {
      float4 q = tile[j];
      float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
      float r2 = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, SOFT2)));
      float inv = rsqrtf(r2);
      float s = q.w * inv * inv * inv;  // q.w: mass
      ax = fmaf(dx, s, ax);
      ay = fmaf(dy, s, ay);
      az = fmaf(dz, s, az);
    }
    __syncthreads();
  }
  acc[i] = make_float3(ax, ay, az);
}

// Half kick then drift (first == true), or the closing half kick.
__global__ void kick_drift(int n, float4* __restrict__ pos, float3* __restrict__ vel, const float3* __restrict__ acc,
                           float dt, bool drift) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float3 v = vel[i], a = acc[i];
  v.x += 0.5f * dt * a.x, v.y += 0.5f * dt * a.y, v.z += 0.5f * dt * a.z;
  vel[i] = v;
  if (drift) {
    float4 p = pos[i];
    p.x += dt * v.x, p.y += dt * v.y, p.z += dt * v.z;
    pos[i] = p;
  }
}

__global__ void init_bodies(int n, float4* pos, float3* vel) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  // A thick disc with a little rotation.
  float rad = (float)(0.1 + bench::unit(51, i)), th = (float)(6.283185307179586 * bench::unit(52, i));
  float z = (float)bench::uniform(53, i, -0.05, 0.05), m = (float)bench::uniform(54, i, 0.5, 1.5) / n;
  pos[i] = make_float4(rad * cosf(th), rad * sinf(th), z, m);
  vel[i] = make_float3(-0.3f * sinf(th), 0.3f * cosf(th), 0.f);
}

int main() {
  const int n = 65536;
  const int steps = bench::scaled(40);
  const float dt = 1e-3f;
  float4* pos = bench::device_alloc<float4>(n);
  float3* vel = bench::device_alloc<float3>(n);
  float3* acc = bench::device_alloc<float3>(n);
  init_bodies<<<n / 256, 256>>>(n, pos, vel);
  BENCH_CHECK_LAUNCH();

  bench::GpuTimer t;
  accelerations<<<n / TILE, TILE>>>(n, pos, acc);
  BENCH_CHECK_LAUNCH();
  std::vector<float4> p0 = bench::download(pos, n);
  std::vector<float3> a0 = bench::download(acc, n), v0 = bench::download(vel, n);
  for (int s = 0; s < steps; ++s) {
    kick_drift<<<n / 256, 256>>>(n, pos, vel, acc, dt, true);
    accelerations<<<n / TILE, TILE>>>(n, pos, acc);
    kick_drift<<<n / 256, 256>>>(n, pos, vel, acc, dt, false);
  }
  BENCH_CHECK_LAUNCH();
  double ms = t.stop_ms();
  std::vector<float4> p1 = bench::download(pos, n);
  std::vector<float3> v1 = bench::download(vel, n);

  bench::MaxErr acc_err;
  for (int k = 0; k < 64; ++k) {
    int i = (int)(bench::mix64(9000 + k) % n);
    double ax = 0, ay = 0, az = 0, mag = 0;
    for (int j = 0; j < n; ++j) {
      double dx = (double)p0[j].x - p0[i].x, dy = (double)p0[j].y - p0[i].y, dz = (double)p0[j].z - p0[i].z;
      double r2 = dx * dx + dy * dy + dz * dz + SOFT2, s = p0[j].w / (r2 * std::sqrt(r2));
      ax += dx * s, ay += dy * s, az += dz * s, mag += std::sqrt(dx * dx + dy * dy + dz * dz) * s;
    }
    acc_err.add(std::fabs(a0[i].x - ax) / mag);
    acc_err.add(std::fabs(a0[i].y - ay) / mag);
    acc_err.add(std::fabs(a0[i].z - az) / mag);
  }
  double pm0[3] = {0, 0, 0}, pm1[3] = {0, 0, 0}, pabs = 0;
  for (int i = 0; i < n; ++i) {
    double m = p0[i].w;
    pm0[0] += m * v0[i].x, pm0[1] += m * v0[i].y, pm0[2] += m * v0[i].z;
    pm1[0] += m * v1[i].x, pm1[1] += m * v1[i].y, pm1[2] += m * v1[i].z;
    pabs += m * (std::fabs(v1[i].x) + std::fabs(v1[i].y) + std::fabs(v1[i].z));
  }
  bench::MaxErr mom;
  for (int q = 0; q < 3; ++q) mom.add(std::fabs(pm1[q] - pm0[q]) / pabs);
  bool ok = acc_err.within(5e-5) && mom.within(1e-4);
  char detail[200];
  std::snprintf(detail, sizeof detail,
                "64 accelerations vs CPU max err %.2e (tol 5e-5); momentum drift %.2e of total |p| (tol 1e-4)",
                acc_err.value(), mom.value());
  uint64_t h = bench::hash_vec(p1);
  return bench::finish("nbody", ms, ok, detail, bench::hash_vec(v1, h));
}
