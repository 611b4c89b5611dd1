// c = a + b on the GPU: device memory filled and read back with
// hsa_memory_copy, the code object loaded from its file, one dispatch.
// Usage: vector_add PROGRAMS_DIR (the folder holding <gpu>/vector_add.co).
#include "hsa_prog.h"

#define N 4096

int main(int argc, char **argv) {
  struct device d;
  start(&d, argc, argv, 1, "PROGRAMS_DIR");
  hsa_executable_t exe = load_frozen(&d, argv[1], "vector_add", FROM_FILE);
  struct kernel k = find_kernel(&d, exe, "vector_add");

  static float a[N], b[N], c[N];
  for (int i = 0; i < N; i++) {
    a[i] = (float)i * 0.5f - 100.0f;
    b[i] = 1.0f / (float)(i + 1);
  }
  float *da = gpu_alloc(&d, sizeof a), *db = gpu_alloc(&d, sizeof b), *dc = gpu_alloc(&d, sizeof c);
  CHECK(hsa_memory_copy(da, a, sizeof a));
  CHECK(hsa_memory_copy(db, b, sizeof b));

  hsa_queue_t *q = new_queue(&d, 256, HSA_QUEUE_TYPE_SINGLE);
  hsa_signal_t done = new_signal(1);
  struct {
    float *c;
    const float *a, *b;
    uint32_t n;
  } args = {dc, da, db, N};
  dispatch(q, &k, kernarg(&d, &k, &args, sizeof args), N, 256, done, 0);
  wait_zero(done);
  CHECK(hsa_memory_copy(c, dc, sizeof c));

  int bad = 0;
  for (int i = 0; i < N; i++) {
    float want = a[i] + b[i];
    if (!same_f32(c[i], want) && bad++ < 5) fprintf(stderr, "c[%d] = %a, expected %a\n", i, c[i], want);
  }
  CHECK(hsa_signal_destroy(done));
  CHECK(hsa_queue_destroy(q));
  CHECK(hsa_executable_destroy(exe));
  CHECK(hsa_shut_down());
  if (bad) {
    fprintf(stderr, "vector_add: %d of %d elements differ from the host's\n", bad, N);
    return 1;
  }
  printf("vector_add: %d elements equal the host's\n", N);
  return 0;
}
