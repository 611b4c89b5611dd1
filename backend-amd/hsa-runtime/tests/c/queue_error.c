// A dispatch the GPU cannot complete: vector_add writing through an
// unmapped pointer ("fault"), or a packet naming no kernel ("object").
// With "callback" the queue's error callback reports the status and the
// program exits 3; without it the runtime stops the process, as AMD's does.
// Usage: queue_error PROGRAMS_DIR fault|object callback|none
#define _POSIX_C_SOURCE 200809L
#include "hsa_prog.h"
#include <time.h>

static volatile int reported;
static volatile hsa_status_t reported_status;

static void on_error(hsa_status_t status, hsa_queue_t *q, void *data) {
  (void)q;
  (void)data;
  reported_status = status;
  reported = 1;
}

int main(int argc, char **argv) {
  struct device d;
  start(&d, argc, argv, 3, "PROGRAMS_DIR fault|object callback|none");
  hsa_executable_t exe = load_frozen(&d, argv[1], "vector_add", FROM_FILE);
  struct kernel k = find_kernel(&d, exe, "vector_add");
  if (strcmp(argv[2], "object") == 0) k.object += 8;
  float *a = host_alloc(&d, 256 * sizeof(float));
  hsa_queue_t *q;
  int with_callback = strcmp(argv[3], "callback") == 0;
  CHECK(hsa_queue_create(d.gpu, 64, HSA_QUEUE_TYPE_MULTI, with_callback ? on_error : NULL, NULL, 0, 0, &q));
  hsa_signal_t done = new_signal(1);
  struct { float *c; const float *a, *b; uint32_t n; } args = {(float *)16, a, a, 256};
  dispatch(q, &k, kernarg(&d, &k, &args, sizeof args), 256, 64, done, 0);
  for (int i = 0; i < 2000 && !reported; i++) {
    struct timespec t = {0, 1000000};
    nanosleep(&t, NULL);
  }
  if (reported) {
    printf("queue error callback: status %#x, completion signal %ld\n", (unsigned)reported_status,
           (long)hsa_signal_load_scacquire(done));
    return 3;
  }
  printf("no error reported\n");
  return 0;
}
