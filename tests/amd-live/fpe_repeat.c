// The end-to-end tests' HSA program for sampling and for programs that do
// not end normally: launches the fpe program's NaN kernel LAUNCHES times
// (each waited for), checks every output against the host's, then ends
// as asked: `exit` (hsa_shut_down, status 0), `abort` (a crash) or `kill`
// (SIGKILL), the last two without shutting the runtime down.
// Usage: fpe_repeat PROGRAMS_DIR LAUNCHES exit|abort|kill
#include "hsa_prog.h"
#include <math.h>
#include <signal.h>

#define N 256

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s PROGRAMS_DIR LAUNCHES exit|abort|kill\n", argv[0]);
    return 2;
  }
  int launches = atoi(argv[2]);
  struct device d;
  open_device(&d);
  hsa_executable_t exe = new_executable();
  load_from_memory(&d, exe, argv[1], "fpe");
  CHECK(hsa_executable_freeze(exe, NULL));
  struct kernel k = find_kernel(&d, exe, "fpe_nan");
  float *x = host_alloc(&d, N * sizeof(float)), *y = host_alloc(&d, N * sizeof(float));
  float *out = host_alloc(&d, N * sizeof(float));
  for (int i = 0; i < N; i++) {
    x[i] = (float)(i % 7) - 3.0f;
    y[i] = 0.5f * (float)(i % 5);
  }
  x[9] = 0.0f;
  y[9] = INFINITY;  // 0 * inf: NaN in every launch
  hsa_queue_t *queue;
  CHECK(hsa_queue_create(d.gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX, &queue));
  struct { float *out; const float *x, *y; uint32_t n; } args = {out, x, y, N};
  void *segment = kernarg(&d, &k, &args, sizeof args);
  int bad = 0;
  for (int l = 0; l < launches; l++) {
    hsa_signal_t done;
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    memset(out, 0, N * sizeof(float));
    dispatch(queue, &k, segment, N, 64, done, 0);
    wait_zero(done);
    CHECK(hsa_signal_destroy(done));
    for (int i = 0; i < N; i++) {
      volatile float want = x[i] * y[i];
      if (!same_f32(out[i], want) && bad++ < 5) fprintf(stderr, "launch %d: out[%d] = %a, expected %a\n", l, i, out[i], want);
    }
  }
  printf("fpe_repeat: %d launches, %s\n", launches, bad ? "results differ from the host's" : "every result equals the host's");
  fflush(stdout);
  if (strcmp(argv[3], "abort") == 0) abort();
  if (strcmp(argv[3], "kill") == 0) raise(SIGKILL);
  CHECK(hsa_queue_destroy(queue));
  CHECK(hsa_shut_down());
  return bad ? 1 : 0;
}
