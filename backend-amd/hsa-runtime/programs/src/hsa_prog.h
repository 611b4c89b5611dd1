// Host side shared by the HSA programs: finding the GPU agent and its
// memory, loading code objects, writing AQL packets. Plain HSA 1.1 and AMD
// extension calls, so the programs run on AMD's runtime with a GPU as well
// as on the emulated runtime. Every failure prints one line and exits 1.
#pragma once

#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline void fail(const char *what, hsa_status_t s) {
  const char *text = NULL;
  if (hsa_status_string(s, &text) != HSA_STATUS_SUCCESS || text == NULL) text = "unknown status";
  fprintf(stderr, "error: %s: %s (%#x)\n", what, text, (unsigned)s);
  exit(1);
}

#define CHECK(call)                                   \
  do {                                                \
    hsa_status_t check_status_ = (call);              \
    if (check_status_ != HSA_STATUS_SUCCESS) fail(#call, check_status_); \
  } while (0)

struct device {
  hsa_agent_t gpu, cpu;
  hsa_region_t kernarg;              // fine-grained system memory with the kernarg flag
  hsa_amd_memory_pool_t gpu_pool;    // the GPU's global memory
  hsa_amd_memory_pool_t host_pool;   // fine-grained system memory
  char name[64];                     // the GPU's name: gfx90a, gfx942, ...
  int found_gpu, found_cpu, found_kernarg, found_gpu_pool, found_host_pool;
};

static inline hsa_status_t visit_agent(hsa_agent_t agent, void *data) {
  struct device *d = (struct device *)data;
  hsa_device_type_t type;
  CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_DEVICE, &type));
  if (type == HSA_DEVICE_TYPE_GPU && !d->found_gpu) {
    uint32_t features = 0;
    CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_FEATURE, &features));
    if (features & HSA_AGENT_FEATURE_KERNEL_DISPATCH) {
      d->gpu = agent;
      d->found_gpu = 1;
      CHECK(hsa_agent_get_info(agent, HSA_AGENT_INFO_NAME, d->name));
    }
  } else if (type == HSA_DEVICE_TYPE_CPU && !d->found_cpu) {
    d->cpu = agent;
    d->found_cpu = 1;
  }
  return HSA_STATUS_SUCCESS;
}

static inline hsa_status_t visit_region(hsa_region_t region, void *data) {
  struct device *d = (struct device *)data;
  hsa_region_segment_t segment;
  uint32_t flags = 0;
  CHECK(hsa_region_get_info(region, HSA_REGION_INFO_SEGMENT, &segment));
  if (segment != HSA_REGION_SEGMENT_GLOBAL) return HSA_STATUS_SUCCESS;
  CHECK(hsa_region_get_info(region, HSA_REGION_INFO_GLOBAL_FLAGS, &flags));
  if ((flags & HSA_REGION_GLOBAL_FLAG_KERNARG) && !d->found_kernarg) {
    d->kernarg = region;
    d->found_kernarg = 1;
  }
  return HSA_STATUS_SUCCESS;
}

static inline hsa_status_t visit_pool(hsa_amd_memory_pool_t pool, void *data) {
  struct device *d = (struct device *)data;
  hsa_amd_segment_t segment;
  uint32_t flags = 0;
  bool alloc = false;
  CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &segment));
  CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &alloc));
  if (segment != HSA_AMD_SEGMENT_GLOBAL || !alloc) return HSA_STATUS_SUCCESS;
  CHECK(hsa_amd_memory_pool_get_info(pool, HSA_AMD_MEMORY_POOL_INFO_GLOBAL_FLAGS, &flags));
  if (d->found_gpu_pool < 1 && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED)) {
    d->gpu_pool = pool;
    d->found_gpu_pool = 1;
  }
  if (d->found_host_pool < 1 && (flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED)) {
    d->host_pool = pool;
    d->found_host_pool = 1;
  }
  return HSA_STATUS_SUCCESS;
}

// hsa_init and the GPU agent with its memory.
static inline void open_device(struct device *d) {
  memset(d, 0, sizeof *d);
  CHECK(hsa_init());
  CHECK(hsa_iterate_agents(visit_agent, d));
  if (!d->found_gpu || !d->found_cpu) {
    fprintf(stderr, "error: no GPU agent (or no CPU agent) found\n");
    exit(1);
  }
  CHECK(hsa_agent_iterate_regions(d->gpu, visit_region, d));
  CHECK(hsa_amd_agent_iterate_memory_pools(d->gpu, visit_pool, d));
  int gpu_pool = d->found_gpu_pool;
  d->found_host_pool = 0;
  CHECK(hsa_amd_agent_iterate_memory_pools(d->cpu, visit_pool, d));
  if (!d->found_kernarg || !gpu_pool || !d->found_host_pool) {
    fprintf(stderr, "error: the GPU has no kernarg region or no global memory pools\n");
    exit(1);
  }
}

// The start of a program: a command line of `args` arguments (`usage`
// names them, PROGRAMS_DIR first; otherwise exit 2), then `open_device`.
static inline void start(struct device *d, int argc, char **argv, int args, const char *usage) {
  if (argc != args + 1) {
    fprintf(stderr, "usage: %s %s\n", argv[0], usage);
    exit(2);
  }
  open_device(d);
}

// Bytes of <dir>/<gpu name>/<name>.co.
static inline void *read_code_object(const struct device *d, const char *dir, const char *name, size_t *size) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s/%s.co", dir, d->name, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "error: cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *bytes = malloc((size_t)n);
  if (n <= 0 || !bytes || fread(bytes, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "error: cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  *size = (size_t)n;
  return bytes;
}

// Loads <dir>/<gpu name>/<name>.co into `exe` through a reader of its
// bytes in memory.
static inline void load_from_memory(const struct device *d, hsa_executable_t exe, const char *dir, const char *name) {
  size_t size;
  void *bytes = read_code_object(d, dir, name, &size);
  hsa_code_object_reader_t reader;
  CHECK(hsa_code_object_reader_create_from_memory(bytes, size, &reader));
  CHECK(hsa_executable_load_agent_code_object(exe, d->gpu, reader, NULL, NULL));
  CHECK(hsa_code_object_reader_destroy(reader));
  free(bytes);
}

#include <fcntl.h>
#include <unistd.h>

// Loads <dir>/<gpu name>/<name>.co into `exe` through a reader of the file.
static inline void load_from_file(const struct device *d, hsa_executable_t exe, const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s/%s.co", dir, d->name, name);
  int fd = open(path, O_RDONLY);
  if (fd < 0) {
    fprintf(stderr, "error: cannot open %s\n", path);
    exit(1);
  }
  hsa_code_object_reader_t reader;
  CHECK(hsa_code_object_reader_create_from_file(fd, &reader));
  CHECK(hsa_executable_load_agent_code_object(exe, d->gpu, reader, NULL, NULL));
  CHECK(hsa_code_object_reader_destroy(reader));
  close(fd);
}

static inline hsa_executable_t new_executable(void) {
  hsa_executable_t exe;
  CHECK(hsa_executable_create_alt(HSA_PROFILE_FULL, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL, &exe));
  return exe;
}

// How a code object reaches the runtime: a reader of its file or of its
// bytes in memory.
enum code_from { FROM_FILE, FROM_MEMORY };

// A frozen executable holding <dir>/<gpu name>/<name>.co.
static inline hsa_executable_t load_frozen(const struct device *d, const char *dir, const char *name,
                                           enum code_from from) {
  hsa_executable_t exe = new_executable();
  if (from == FROM_FILE) {
    load_from_file(d, exe, dir, name);
  } else {
    load_from_memory(d, exe, dir, name);
  }
  CHECK(hsa_executable_freeze(exe, NULL));
  return exe;
}

struct kernel {
  uint64_t object;
  uint32_t kernarg_size, group_size, private_size;
};

// The kernel `name` of a frozen executable (its symbol is `name.kd`).
static inline struct kernel find_kernel(const struct device *d, hsa_executable_t exe, const char *name) {
  char symbol_name[256];
  snprintf(symbol_name, sizeof symbol_name, "%s.kd", name);
  hsa_executable_symbol_t symbol;
  hsa_status_t s = hsa_executable_get_symbol_by_name(exe, symbol_name, &d->gpu, &symbol);
  if (s != HSA_STATUS_SUCCESS) {
    fprintf(stderr, "error: kernel %s not found\n", symbol_name);
    exit(1);
  }
  struct kernel k;
  CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &k.object));
  CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE,
                                       &k.kernarg_size));
  CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_GROUP_SEGMENT_SIZE, &k.group_size));
  CHECK(hsa_executable_symbol_get_info(symbol, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_PRIVATE_SEGMENT_SIZE,
                                       &k.private_size));
  return k;
}

// A queue of `size` packets on the GPU with no error callback.
static inline hsa_queue_t *new_queue(const struct device *d, uint32_t size, hsa_queue_type32_t type) {
  hsa_queue_t *q;
  CHECK(hsa_queue_create(d->gpu, size, type, NULL, NULL, UINT32_MAX, UINT32_MAX, &q));
  return q;
}

// A signal of initial value `value`, seen by every agent.
static inline hsa_signal_t new_signal(hsa_signal_value_t value) {
  hsa_signal_t s;
  CHECK(hsa_signal_create(value, 0, NULL, &s));
  return s;
}

// Global memory of the GPU, reachable from the CPU agent too.
static inline void *gpu_alloc(const struct device *d, size_t size) {
  void *p = NULL;
  CHECK(hsa_amd_memory_pool_allocate(d->gpu_pool, size, 0, &p));
  CHECK(hsa_amd_agents_allow_access(1, &d->cpu, NULL, p));
  return p;
}

// Fine-grained system memory, reachable from the GPU.
static inline void *host_alloc(const struct device *d, size_t size) {
  void *p = NULL;
  CHECK(hsa_amd_memory_pool_allocate(d->host_pool, size, 0, &p));
  CHECK(hsa_amd_agents_allow_access(1, &d->gpu, NULL, p));
  return p;
}

// A kernarg segment holding `args` (the kernel's explicit arguments).
static inline void *kernarg(const struct device *d, const struct kernel *k, const void *args, size_t size) {
  void *p = NULL;
  size_t n = k->kernarg_size > size ? k->kernarg_size : size;
  CHECK(hsa_memory_allocate(d->kernarg, n, &p));
  memset(p, 0, n);
  memcpy(p, args, size);
  return p;
}

// Publishes a 64-byte packet whose first 32 bits (header, setup) are
// written last, atomically; rings the doorbell. Returns its index.
static inline uint64_t submit(hsa_queue_t *q, const void *packet) {
  uint64_t index = hsa_queue_add_write_index_screlease(q, 1);
  while (index - hsa_queue_load_read_index_scacquire(q) >= q->size) {
  }
  char *slot = (char *)q->base_address + 64 * (index & (q->size - 1));
  memcpy(slot + 4, (const char *)packet + 4, 60);
  uint32_t first;
  memcpy(&first, packet, 4);
  __atomic_store_n((uint32_t *)slot, first, __ATOMIC_RELEASE);
  hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)index);
  return index;
}

static inline uint16_t header(hsa_packet_type_t type, int barrier) {
  return (uint16_t)((type << HSA_PACKET_HEADER_TYPE) | ((barrier ? 1 : 0) << HSA_PACKET_HEADER_BARRIER) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
                    (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE));
}

// A 1-D dispatch of `items` work-items in workgroups of `group`.
static inline void dispatch(hsa_queue_t *q, const struct kernel *k, void *args, uint32_t items, uint16_t group,
                     hsa_signal_t done, int barrier) {
  hsa_kernel_dispatch_packet_t p;
  memset(&p, 0, sizeof p);
  p.header = header(HSA_PACKET_TYPE_KERNEL_DISPATCH, barrier);
  p.setup = 1 << HSA_KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS;
  p.workgroup_size_x = group;
  p.workgroup_size_y = 1;
  p.workgroup_size_z = 1;
  p.grid_size_x = items;
  p.grid_size_y = 1;
  p.grid_size_z = 1;
  p.kernel_object = k->object;
  p.kernarg_address = args;
  p.group_segment_size = k->group_size;
  p.private_segment_size = k->private_size;
  p.completion_signal = done;
  submit(q, &p);
}

// A barrier-AND packet: waits for `dep` to reach 0, then decrements `done`.
static inline void barrier_and(hsa_queue_t *q, hsa_signal_t dep, hsa_signal_t done) {
  hsa_barrier_and_packet_t p;
  memset(&p, 0, sizeof p);
  p.header = header(HSA_PACKET_TYPE_BARRIER_AND, 1);
  p.dep_signal[0] = dep;
  p.completion_signal = done;
  submit(q, &p);
}

static inline void wait_zero(hsa_signal_t s) {
  while (hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_EQ, 0, UINT64_MAX, HSA_WAIT_STATE_BLOCKED) != 0) {
  }
}

// Bit-equal, or both NaN.
static inline int same_f32(float a, float b) {
  uint32_t x, y;
  memcpy(&x, &a, 4);
  memcpy(&y, &b, 4);
  return x == y || (a != a && b != b);
}

static inline int same_f64(double a, double b) {
  uint64_t x, y;
  memcpy(&x, &a, 8);
  memcpy(&y, &b, 8);
  return x == y || (a != a && b != b);
}
