// A kernel the rewriter refuses (it uses v255, leaving no registers for
// probes): instrumented or not, it must run unmodified. out = 2 * in + 1.
// Usage: unrewritable PROGRAMS_DIR
#include "hsa_prog.h"

#define N 1024

int main(int argc, char **argv) {
  struct device d;
  start(&d, argc, argv, 1, "PROGRAMS_DIR");
  hsa_executable_t exe = load_frozen(&d, argv[1], "unrewritable", FROM_MEMORY);
  struct kernel k = find_kernel(&d, exe, "all_vgprs");
  float *in = host_alloc(&d, N * sizeof(float)), *out = host_alloc(&d, N * sizeof(float));
  for (int i = 0; i < N; i++) in[i] = (float)i * 0.75f - 300.0f;
  hsa_queue_t *q = new_queue(&d, 64, HSA_QUEUE_TYPE_MULTI);
  hsa_signal_t done = new_signal(1);
  struct { float *out; const float *in; uint32_t n; } args = {out, in, N};
  dispatch(q, &k, kernarg(&d, &k, &args, sizeof args), N, 256, done, 0);
  wait_zero(done);
  int bad = 0;
  for (int i = 0; i < N; i++) {
    float want = (in[i] + in[i]) + 1.0f;
    if (!same_f32(out[i], want) && bad++ < 5) fprintf(stderr, "out[%d] = %g, expected %g\n", i, out[i], want);
  }
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_shut_down());
  if (bad) {
    fprintf(stderr, "unrewritable: %d of %d elements differ from the host's\n", bad, N);
    return 1;
  }
  printf("unrewritable: %d elements equal the host's\n", N);
  return 0;
}
