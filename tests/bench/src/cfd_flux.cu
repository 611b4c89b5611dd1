// Finite-volume 2-D Euler solver on a periodic 2048x2048 grid in double
// precision: per-face HLL fluxes (Davis wave-speed estimates) in x and y,
// then a conservative update, as in the flux stage of a compressible CFD
// code. Self-check: mass, momentum and energy are conserved to round-off
// (the periodic flux differences telescope) and density and pressure stay
// positive; a step on the CPU for 256 sampled cells matches the GPU step.
#include "bench_common.cuh"

constexpr int NX = 2048;
constexpr double GAMMA = 1.4;
constexpr double PI = 3.14159265358979323846;

struct State {
  double r, mx, my, E;
};

__host__ __device__ inline size_t idx(int i, int j) { return (size_t)j * NX + i; }

__host__ __device__ inline double pressure(const State& u) {
  return (GAMMA - 1.0) * (u.E - 0.5 * (u.mx * u.mx + u.my * u.my) / u.r);
}

// HLL flux across a face with unit normal along x (dir 0) or y (dir 1).
__host__ __device__ inline State hll_flux(const State& L, const State& R, int dir) {
  const double pL = pressure(L), pR = pressure(R);
  const double unL = (dir == 0 ? L.mx : L.my) / L.r, unR = (dir == 0 ? R.mx : R.my) / R.r;
  const double cL = sqrt(GAMMA * pL / L.r), cR = sqrt(GAMMA * pR / R.r);
  const double SL = fmin(unL - cL, unR - cR), SR = fmax(unL + cL, unR + cR);
  State FL, FR;
  FL.r = L.r * unL;
  FL.mx = L.mx * unL + (dir == 0 ? pL : 0.0);
  FL.my = L.my * unL + (dir == 1 ? pL : 0.0);
  FL.E = (L.E + pL) * unL;
  FR.r = R.r * unR;
  FR.mx = R.mx * unR + (dir == 0 ? pR : 0.0);
  FR.my = R.my * unR + (dir == 1 ? pR : 0.0);
  FR.E = (R.E + pR) * unR;
  if (SL >= 0.0) return FL;
  if (SR <= 0.0) return FR;
  const double inv = 1.0 / (SR - SL);
  State F;
  F.r = (SR * FL.r - SL * FR.r + SL * SR * (R.r - L.r)) * inv;
  F.mx = (SR * FL.mx - SL * FR.mx + SL * SR * (R.mx - L.mx)) * inv;
  F.my = (SR * FL.my - SL * FR.my + SL * SR * (R.my - L.my)) * inv;
  F.E = (SR * FL.E - SL * FR.E + SL * SR * (R.E - L.E)) * inv;
  return F;
}

struct Fields {
  double *r, *mx, *my, *E;
  __host__ __device__ State get(size_t k) const { return {r[k], mx[k], my[k], E[k]}; }
  __host__ __device__ void set(size_t k, const State& s) const { r[k] = s.r, mx[k] = s.mx, my[k] = s.my, E[k] = s.E; }
};

__host__ __device__ inline State initial_state(int i, int j) {
  const double x = (i + 0.5) / NX, y = (j + 0.5) / NX;
  const double r = 1.0 + 0.2 * sin(2 * PI * x) * sin(2 * PI * y);
  const double u = 0.5 + 0.1 * sin(2 * PI * y), v = 0.3 + 0.1 * cos(2 * PI * x);
  const double p = 1.0 + 0.1 * cos(2 * PI * (x + y));
  return {r, r * u, r * v, p / (GAMMA - 1.0) + 0.5 * r * (u * u + v * v)};
}

__global__ void init_fields(Fields U) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  U.set(idx(i, j), initial_state(i, j));
}

// F[k] is the flux through the low face (i-1/2 or j-1/2) of cell k.
__global__ void __launch_bounds__(256) faces_x(Fields U, Fields F) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  int im = (i + NX - 1) % NX;
  F.set(idx(i, j), hll_flux(U.get(idx(im, j)), U.get(idx(i, j)), 0));
}

__global__ void __launch_bounds__(256) faces_y(Fields U, Fields F) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  int jm = (j + NX - 1) % NX;
  F.set(idx(i, j), hll_flux(U.get(idx(i, jm)), U.get(idx(i, j)), 1));
}

__host__ __device__ inline State updated(const State& u, const State& fxl, const State& fxr, const State& fyl,
                                         const State& fyr, double c) {
  return {u.r - c * ((fxr.r - fxl.r) + (fyr.r - fyl.r)), u.mx - c * ((fxr.mx - fxl.mx) + (fyr.mx - fyl.mx)),
          u.my - c * ((fxr.my - fxl.my) + (fyr.my - fyl.my)), u.E - c * ((fxr.E - fxl.E) + (fyr.E - fyl.E))};
}

__global__ void __launch_bounds__(256) update(Fields U, Fields Fx, Fields Fy, double c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  size_t k = idx(i, j);
  U.set(k, updated(U.get(k), Fx.get(k), Fx.get(idx((i + 1) % NX, j)), Fy.get(k), Fy.get(idx(i, (j + 1) % NX)), c));
}

Fields alloc_fields(size_t n) {
  return {bench::device_alloc<double>(n), bench::device_alloc<double>(n), bench::device_alloc<double>(n),
          bench::device_alloc<double>(n)};
}

struct HostFields {
  std::vector<double> r, mx, my, E;
  explicit HostFields(const Fields& f, size_t n)
      : r(bench::download(f.r, n)), mx(bench::download(f.mx, n)), my(bench::download(f.my, n)), E(bench::download(f.E, n)) {}
  State get(size_t k) const { return {r[k], mx[k], my[k], E[k]}; }
  State get(int i, int j) const { return get(idx((i + NX) % NX, (j + NX) % NX)); }
};

// Totals of the conserved quantities and of their magnitudes.
void totals(const HostFields& h, double out[4], double mag[4]) {
  for (int q = 0; q < 4; ++q) out[q] = mag[q] = 0.0;
  for (size_t k = 0; k < h.r.size(); ++k) {
    const double v[4] = {h.r[k], h.mx[k], h.my[k], h.E[k]};
    for (int q = 0; q < 4; ++q) out[q] += v[q], mag[q] += std::fabs(v[q]);
  }
}

int main() {
  const size_t n = (size_t)NX * NX;
  const int steps = bench::scaled(150);
  Fields U = alloc_fields(n), Fx = alloc_fields(n), Fy = alloc_fields(n);
  dim3 grid(NX / 256, NX);
  init_fields<<<grid, 256>>>(U);
  BENCH_CHECK_LAUNCH();
  HostFields h0(U, n);
  double smax = 0.0;
  for (size_t k = 0; k < n; ++k) {
    State s = h0.get(k);
    double c = std::sqrt(GAMMA * pressure(s) / s.r);
    smax = std::fmax(smax, std::fabs(s.mx / s.r) + std::fabs(s.my / s.r) + c);
  }
  const double dx = 1.0 / NX, dt = 0.3 * dx / smax, c = dt / dx;

  bench::GpuTimer t;
  for (int s = 0; s < steps; ++s) {
    faces_x<<<grid, 256>>>(U, Fx);
    faces_y<<<grid, 256>>>(U, Fy);
    if (s == steps - 1) break;  // keep the last fluxes and the state they came from
    update<<<grid, 256>>>(U, Fx, Fy, c);
  }
  BENCH_CHECK_LAUNCH();
  double ms = t.stop_ms();
  HostFields before(U, n);
  bench::GpuTimer t_last;
  update<<<grid, 256>>>(U, Fx, Fy, c);
  BENCH_CHECK_LAUNCH();
  ms += t_last.stop_ms();
  HostFields h1(U, n);

  double t0[4], m0[4], t1[4], m1[4];
  totals(h0, t0, m0);
  totals(h1, t1, m1);
  bench::MaxErr cons;
  for (int q = 0; q < 4; ++q) cons.add(std::fabs(t1[q] - t0[q]) / m0[q]);
  double rmin = 1e300, pmin = 1e300;
  for (size_t k = 0; k < n; ++k) {
    rmin = std::fmin(rmin, h1.r[k]);
    pmin = std::fmin(pmin, pressure(h1.get(k)));
  }
  // The last step recomputed on the CPU for sampled cells.
  bench::MaxErr step;
  for (int s = 0; s < 256; ++s) {
    int i = (int)(bench::mix64(60 + s) % NX), j = (int)(bench::mix64(600 + s) % NX);
    State want = updated(before.get(i, j), hll_flux(before.get(i - 1, j), before.get(i, j), 0),
                         hll_flux(before.get(i, j), before.get(i + 1, j), 0),
                         hll_flux(before.get(i, j - 1), before.get(i, j), 1),
                         hll_flux(before.get(i, j), before.get(i, j + 1), 1), c);
    State got = h1.get(i, j);
    step.add(std::fabs(got.r - want.r) / want.r);
    step.add(std::fabs(got.mx - want.mx) / want.r);
    step.add(std::fabs(got.my - want.my) / want.r);
    step.add(std::fabs(got.E - want.E) / want.E);
  }
  bool ok = cons.within(1e-12) && step.within(1e-12) && rmin > 0.0 && pmin > 0.0;
  char detail[240];
  std::snprintf(detail, sizeof detail,
                "%d steps: conservation err %.2e (tol 1e-12); last step vs CPU on 256 cells %.2e (tol 1e-12); "
                "min density %.3f, min pressure %.3f",
                steps, cons.value(), step.value(), rmin, pmin);
  uint64_t hsh = bench::hash_vec(h1.r);
  hsh = bench::hash_vec(h1.mx, hsh);
  hsh = bench::hash_vec(h1.my, hsh);
  return bench::finish("cfd_flux", ms, ok, detail, bench::hash_vec(h1.E, hsh));
}
