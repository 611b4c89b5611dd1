// Kernels whose results are NaN (0 * inf), infinite (an overflowing
// product) and a division by zero (f64) at chosen elements, at the lines
// kernels/fpe.expect.json names. The program checks every output against
// the host's IEEE results (NaN equal to NaN).
// Usage: fpe PROGRAMS_DIR
#include "hsa_prog.h"
#include <math.h>

#define N 256

int main(int argc, char **argv) {
  struct device d;
  start(&d, argc, argv, 1, "PROGRAMS_DIR");
  hsa_executable_t exe = load_frozen(&d, argv[1], "fpe", FROM_FILE);
  struct kernel knan = find_kernel(&d, exe, "fpe_nan"), kinf = find_kernel(&d, exe, "fpe_overflow"),
                kdiv = find_kernel(&d, exe, "fpe_div0");

  float *x = host_alloc(&d, N * sizeof(float)), *y = host_alloc(&d, N * sizeof(float));
  float *out_nan = host_alloc(&d, N * sizeof(float)), *out_inf = host_alloc(&d, N * sizeof(float));
  double *p = host_alloc(&d, N * sizeof(double)), *q = host_alloc(&d, N * sizeof(double));
  double *out_div = host_alloc(&d, N * sizeof(double));
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 13) * 0.125f - 0.75f;
    y[i] = 2.0f + (float)(i % 3);
    p[i] = (double)i - 100.0;
    q[i] = (double)(i % 11) + 1.0;
  }
  x[5] = 0.0f;
  y[5] = INFINITY;  // 0 * inf: NaN
  float big = 1.0e37f;
  x[7] = 1.0e10f;  // 1e10 * 1e37 overflows: inf
  q[3] = 0.0;      // p[3] / 0: -inf, division by zero
  q[11] = -0.0;    // p[11] / -0: +inf, division by zero

  hsa_queue_t *queue = new_queue(&d, 64, HSA_QUEUE_TYPE_MULTI);
  hsa_signal_t done = new_signal(3);
  struct { float *out; const float *x, *y; uint32_t n; } a_nan = {out_nan, x, y, N};
  struct { float *out; const float *x; float s; uint32_t n; } a_inf = {out_inf, x, big, N};
  struct { double *out; const double *x, *y; uint32_t n; } a_div = {out_div, p, q, N};
  dispatch(queue, &knan, kernarg(&d, &knan, &a_nan, sizeof a_nan), N, 64, done, 0);
  dispatch(queue, &kinf, kernarg(&d, &kinf, &a_inf, sizeof a_inf), N, 64, done, 0);
  dispatch(queue, &kdiv, kernarg(&d, &kdiv, &a_div, sizeof a_div), N, 64, done, 0);
  wait_zero(done);

  int bad = 0;
  for (int i = 0; i < N; i++) {
    volatile float wn = x[i] * y[i], wi = x[i] * big;
    volatile double wd = p[i] / q[i];
    if (!same_f32(out_nan[i], wn) && bad++ < 5) fprintf(stderr, "fpe_nan[%d] = %a, expected %a\n", i, out_nan[i], wn);
    if (!same_f32(out_inf[i], wi) && bad++ < 5) fprintf(stderr, "fpe_overflow[%d] = %a, expected %a\n", i, out_inf[i], wi);
    if (!same_f64(out_div[i], wd) && bad++ < 5) fprintf(stderr, "fpe_div0[%d] = %a, expected %a\n", i, out_div[i], wd);
  }
  if (!isnan(out_nan[5]) || !isinf(out_inf[7]) || !isinf(out_div[3]) || !isinf(out_div[11])) {
    fprintf(stderr, "fpe: the planted NaN, overflow and divisions by zero did not happen\n");
    bad++;
  }
  CHECK(hsa_queue_destroy(queue));
  CHECK(hsa_shut_down());
  if (bad) {
    fprintf(stderr, "fpe: %d results differ from the host's\n", bad);
    return 1;
  }
  printf("fpe: NaN, overflow and division by zero where planted; %d results equal the host's\n", 3 * N);
  return 0;
}
