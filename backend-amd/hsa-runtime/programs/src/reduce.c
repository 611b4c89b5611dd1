// Sum of 4096 floats in two dispatches: 16 workgroups write partial sums,
// a barrier-AND packet waits for them, one workgroup adds the partial sums.
// Fine-grained system memory, the code object read from memory.
// Usage: reduce PROGRAMS_DIR
#include "hsa_prog.h"

#define GROUP 256
#define GROUPS 16
#define N (GROUP * GROUPS)

int main(int argc, char **argv) {
  struct device d;
  start(&d, argc, argv, 1, "PROGRAMS_DIR");
  hsa_executable_t exe = load_frozen(&d, argv[1], "reduce", FROM_MEMORY);
  struct kernel k = find_kernel(&d, exe, "reduce_sum");

  // Quarters of small integers: every partial sum is exact in float, so
  // the GPU's order of additions gives the host's sums bit for bit.
  float *in = host_alloc(&d, N * sizeof(float));
  float *partial = host_alloc(&d, GROUPS * sizeof(float));
  float *total = host_alloc(&d, sizeof(float));
  for (int i = 0; i < N; i++) in[i] = (float)(i % 17) * 0.25f - 2.0f;

  hsa_queue_t *q = new_queue(&d, 64, HSA_QUEUE_TYPE_MULTI);
  hsa_signal_t first = new_signal(1), gate = new_signal(1), done = new_signal(1);
  struct {
    float *out;
    const float *in;
    uint32_t n;
  } a1 = {partial, in, N}, a2 = {total, partial, GROUPS};
  dispatch(q, &k, kernarg(&d, &k, &a1, sizeof a1), N, GROUP, first, 0);
  barrier_and(q, first, gate);
  dispatch(q, &k, kernarg(&d, &k, &a2, sizeof a2), GROUP, GROUP, done, 0);
  wait_zero(done);
  if (hsa_signal_load_scacquire(first) != 0 || hsa_signal_load_scacquire(gate) != 0) {
    fprintf(stderr, "reduce: the first dispatch or the barrier did not complete before the last one\n");
    return 1;
  }

  int bad = 0;
  float sum = 0.0f;
  for (int g = 0; g < GROUPS; g++) {
    float want = 0.0f;
    for (int i = g * GROUP; i < (g + 1) * GROUP; i++) want += in[i];
    sum += want;
    if (!same_f32(partial[g], want) && bad++ < 5) fprintf(stderr, "partial[%d] = %g, expected %g\n", g, partial[g], want);
  }
  if (!same_f32(*total, sum)) {
    fprintf(stderr, "total = %g, expected %g\n", *total, sum);
    bad++;
  }
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_shut_down());
  if (bad) {
    fprintf(stderr, "reduce: %d sums differ from the host's\n", bad);
    return 1;
  }
  printf("reduce: %d partial sums and the total (%g) equal the host's\n", GROUPS, sum);
  return 0;
}
