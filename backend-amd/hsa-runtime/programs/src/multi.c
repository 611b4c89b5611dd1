// Several code objects and two queues. Executable A holds vector_add.co
// (read from its file) and scale.co (read from memory); executable B holds
// reduce.co. Queue 1 scales x and then adds y to it (the second dispatch
// has the barrier bit); queue 2 runs axpy on other buffers meanwhile, then
// a barrier-AND packet waits for queue 1's last dispatch before reducing
// its output. Every result is checked against the host's.
// Usage: multi PROGRAMS_DIR
#include "hsa_prog.h"

#define N 2048
#define GROUP 256

int main(int argc, char **argv) {
  struct device d;
  start(&d, argc, argv, 1, "PROGRAMS_DIR");
  hsa_executable_t a = new_executable(), b = new_executable();
  load_from_file(&d, a, argv[1], "vector_add");
  load_from_memory(&d, a, argv[1], "scale");
  load_from_memory(&d, b, argv[1], "reduce");
  CHECK(hsa_executable_freeze(a, NULL));
  CHECK(hsa_executable_freeze(b, NULL));
  struct kernel add = find_kernel(&d, a, "vector_add"), scale = find_kernel(&d, a, "scale"),
                axpy = find_kernel(&d, a, "axpy"), sum = find_kernel(&d, b, "reduce_sum");

  float *x = host_alloc(&d, N * sizeof(float)), *y = host_alloc(&d, N * sizeof(float));
  float *c = host_alloc(&d, N * sizeof(float)), *u = host_alloc(&d, N * sizeof(float));
  float *v = host_alloc(&d, N * sizeof(float)), *partial = host_alloc(&d, (N / GROUP) * sizeof(float));
  static float x0[N];
  for (int i = 0; i < N; i++) {
    x0[i] = x[i] = (float)(i % 9) - 4.0f;
    y[i] = (float)(i % 5) * 0.5f;
    u[i] = (float)(i % 7);
    v[i] = 1.0f;
  }

  hsa_queue_t *q1 = new_queue(&d, 64, HSA_QUEUE_TYPE_MULTI), *q2 = new_queue(&d, 64, HSA_QUEUE_TYPE_MULTI);
  hsa_signal_t s_scale = new_signal(1), s_add = new_signal(1), s_axpy = new_signal(1), s_gate = new_signal(1),
               s_sum = new_signal(1);

  struct { float *x; float s; uint32_t n; } scale_args = {x, 3.0f, N};
  struct { float *c; const float *a, *b; uint32_t n; } add_args = {c, x, y, N};
  struct { float *y; const float *x; float a; uint32_t n; } axpy_args = {v, u, -2.0f, N};
  struct { float *out; const float *in; uint32_t n; } sum_args = {partial, c, N};

  dispatch(q1, &scale, kernarg(&d, &scale, &scale_args, sizeof scale_args), N, GROUP, s_scale, 0);
  dispatch(q1, &add, kernarg(&d, &add, &add_args, sizeof add_args), N, GROUP, s_add, 1);
  dispatch(q2, &axpy, kernarg(&d, &axpy, &axpy_args, sizeof axpy_args), N, GROUP, s_axpy, 0);
  barrier_and(q2, s_add, s_gate);
  dispatch(q2, &sum, kernarg(&d, &sum, &sum_args, sizeof sum_args), N, GROUP, s_sum, 0);
  wait_zero(s_sum);
  wait_zero(s_axpy);

  int bad = 0;
  for (int i = 0; i < N; i++) {
    float xs = 3.0f * x0[i], ci = xs + y[i], vi = -2.0f * u[i] + 1.0f;
    if (!same_f32(x[i], xs) && bad++ < 5) fprintf(stderr, "x[%d] = %g, expected %g\n", i, x[i], xs);
    if (!same_f32(c[i], ci) && bad++ < 5) fprintf(stderr, "c[%d] = %g, expected %g\n", i, c[i], ci);
    if (!same_f32(v[i], vi) && bad++ < 5) fprintf(stderr, "v[%d] = %g, expected %g\n", i, v[i], vi);
  }
  for (int g = 0; g < N / GROUP; g++) {
    float want = 0.0f;
    for (int i = g * GROUP; i < (g + 1) * GROUP; i++) want += 3.0f * x0[i] + y[i];
    if (!same_f32(partial[g], want) && bad++ < 5) fprintf(stderr, "partial[%d] = %g, expected %g\n", g, partial[g], want);
  }
  CHECK(hsa_queue_destroy(q1));
  CHECK(hsa_queue_destroy(q2));
  CHECK(hsa_executable_destroy(a));
  CHECK(hsa_executable_destroy(b));
  CHECK(hsa_shut_down());
  if (bad) {
    fprintf(stderr, "multi: %d results differ from the host's\n", bad);
    return 1;
  }
  printf("multi: 4 kernels of 3 code objects on 2 queues equal the host's\n");
  return 0;
}
