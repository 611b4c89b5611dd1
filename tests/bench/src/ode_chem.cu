// Chemistry-style ODE integration: each thread integrates one cell's
// 16-species mass-action kinetics (48 reactions, generated straight-line
// double-precision code, see gen_chem.py) with classical RK4 at the cell's
// own temperature, as a reacting-flow code does between transport steps.
// Self-check: total atoms sum(mass*y) conserved in every cell; 8 cells
// integrated on the CPU with the same expressions; no negative species.
#include "bench_common.cuh"
#include "chem_mech.cuh"


__host__ __device__ inline void rk4_step(const double* kr, double* y, double dt) {
  double acc[CHEM_NS], d[CHEM_NS], t[CHEM_NS];
  chem_rhs(kr, y, d);
#pragma unroll
  for (int s = 0; s < CHEM_NS; ++s) {
    acc[s] = d[s];
    t[s] = y[s] + 0.5 * dt * d[s];
  }
  chem_rhs(kr, t, d);
#pragma unroll
  for (int s = 0; s < CHEM_NS; ++s) {
    acc[s] += 2.0 * d[s];
    t[s] = y[s] + 0.5 * dt * d[s];
  }
  chem_rhs(kr, t, d);
#pragma unroll
  for (int s = 0; s < CHEM_NS; ++s) {
    acc[s] += 2.0 * d[s];
    t[s] = y[s] + dt * d[s];
  }
  chem_rhs(kr, t, d);
#pragma unroll
  for (int s = 0; s < CHEM_NS; ++s) y[s] += (dt / 6.0) * (acc[s] + d[s]);
}

__host__ __device__ inline double cell_temperature(int c) { return 800.0 + 800.0 * bench::unit(31, c); }
__host__ __device__ inline double cell_initial(int c, int s) { return 0.1 + 0.9 * bench::unit(32, (uint64_t)c * CHEM_NS + s); }

__host__ __device__ inline void integrate_cell(int c, int steps, double dt, double* y) {
  double T = cell_temperature(c);
  double kr[CHEM_NR];
  chem_rate_constants(log(T / 1000.0), 1.0 / T, kr);
  for (int s = 0; s < CHEM_NS; ++s) y[s] = cell_initial(c, s);
  for (int n = 0; n < steps; ++n) rk4_step(kr, y, dt);
}

__global__ void __launch_bounds__(128) integrate_cells(int cells, int steps, double dt, double* __restrict__ out) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cells) return;
  double y[CHEM_NS];
  integrate_cell(c, steps, dt, y);
#pragma unroll
  for (int s = 0; s < CHEM_NS; ++s) out[(size_t)s * cells + c] = y[s];
}

int main() {
  const int cells = 65536;
  const int steps = bench::scaled(3000);
  const double dt = 0.005;
  double* y = bench::device_alloc<double>((size_t)cells * CHEM_NS);

  bench::GpuTimer t;
  integrate_cells<<<(cells + 127) / 128, 128>>>(cells, steps, dt, y);
  BENCH_CHECK_LAUNCH();
  double ms = t.stop_ms();

  std::vector<double> hy = bench::download(y, (size_t)cells * CHEM_NS);
  bench::MaxErr mass_err, ref_err;
  double min_species = INFINITY;
  for (int c = 0; c < cells; ++c) {
    double m0 = 0.0, m1 = 0.0;
    for (int s = 0; s < CHEM_NS; ++s) {
      double v = hy[(size_t)s * cells + c];
      m0 += chem_mass(s) * cell_initial(c, s);
      m1 += chem_mass(s) * v;
      if (!(v >= min_species)) min_species = v;  // NaN sticks
    }
    mass_err.add(bench::rel_err(m1, m0));
  }
  for (int i = 0; i < 8; ++i) {
    int c = (int)(bench::mix64(4242 + i) % cells);
    double ref[CHEM_NS];
    integrate_cell(c, steps, dt, ref);
    for (int s = 0; s < CHEM_NS; ++s) ref_err.add(bench::rel_err(hy[(size_t)s * cells + c], ref[s], 1e-6));
  }
  bool ok = mass_err.within(1e-11) && ref_err.within(1e-9) && min_species > -1e-12;
  char detail[200];
  std::snprintf(detail, sizeof detail,
                "atoms conserved to %.2e (tol 1e-11); 8 cells vs CPU max rel err %.2e (tol 1e-9); min species %.2e",
                mass_err.value(), ref_err.value(), min_species);
  return bench::finish("ode_chem", ms, ok, detail, bench::hash_vec(hy));
}
