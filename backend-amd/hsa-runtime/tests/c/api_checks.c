// Checks of the emulated runtime's API beyond what the programs use, each
// against what the HSA and AMD headers specify: statuses of bad calls,
// agent, ISA, region and pool attributes, pointer information, signal
// operations and waits, asynchronous copies with a dependency, the AMD
// loader extension, the deprecated code object path, symbol iteration and
// attributes, and code objects the runtime must refuse. Prints the number
// of checks and exits 0, or names the first failed check and exits 1.
// Usage: api_checks PROGRAMS_DIR
#include "hsa_prog.h"
#include <hsa/hsa_ven_amd_loader.h>

static int checks;

#define EXPECT(cond)                                                     \
  do {                                                                   \
    checks++;                                                            \
    if (!(cond)) {                                                       \
      fprintf(stderr, "api_checks: line %d: %s does not hold\n", __LINE__, #cond); \
      exit(1);                                                           \
    }                                                                    \
  } while (0)

static hsa_status_t count_symbol(hsa_executable_t exe, hsa_executable_symbol_t s, void *data) {
  (void)exe;
  uint32_t kind;
  CHECK(hsa_executable_symbol_get_info(s, HSA_EXECUTABLE_SYMBOL_INFO_TYPE, &kind));
  if (kind == HSA_SYMBOL_KIND_KERNEL) (*(int *)data)++;
  return HSA_STATUS_SUCCESS;
}

static hsa_status_t stop_at_first(hsa_agent_t agent, void *data) {
  *(hsa_agent_t *)data = agent;
  return HSA_STATUS_INFO_BREAK;
}

static hsa_status_t count_loaded(hsa_executable_t exe, hsa_loaded_code_object_t lco, void *data) {
  (void)exe;
  *(hsa_loaded_code_object_t *)data = lco;
  return HSA_STATUS_SUCCESS;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PROGRAMS_DIR\n", argv[0]);
    return 2;
  }
  // Before hsa_init.
  hsa_signal_t sig;
  EXPECT(hsa_signal_create(1, 0, NULL, &sig) == HSA_STATUS_ERROR_NOT_INITIALIZED);
  EXPECT(hsa_shut_down() == HSA_STATUS_ERROR_NOT_INITIALIZED);

  struct device d;
  open_device(&d);
  EXPECT(hsa_amd_register_system_event_handler(NULL, NULL) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
  CHECK(hsa_init());  // a second reference: the runtime stays open after one shut-down
  CHECK(hsa_shut_down());

  // Agents, ISA.
  hsa_agent_t first = {0};
  EXPECT(hsa_iterate_agents(stop_at_first, &first) == HSA_STATUS_INFO_BREAK && first.handle != 0);
  hsa_agent_t bogus = {12345};
  char name[64];
  EXPECT(hsa_agent_get_info(bogus, HSA_AGENT_INFO_NAME, name) == HSA_STATUS_ERROR_INVALID_AGENT);
  EXPECT(hsa_agent_get_info(d.gpu, (hsa_agent_info_t)9999, name) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
  uint32_t wave = 0, queue_max = 0, cus = 0;
  CHECK(hsa_agent_get_info(d.gpu, HSA_AGENT_INFO_WAVEFRONT_SIZE, &wave));
  CHECK(hsa_agent_get_info(d.gpu, HSA_AGENT_INFO_QUEUE_MAX_SIZE, &queue_max));
  CHECK(hsa_agent_get_info(d.gpu, (hsa_agent_info_t)HSA_AMD_AGENT_INFO_COMPUTE_UNIT_COUNT, &cus));
  EXPECT(wave == 64 && queue_max >= 4096 && cus > 0);
  hsa_isa_t isa;
  CHECK(hsa_agent_get_info(d.gpu, HSA_AGENT_INFO_ISA, &isa));
  uint32_t isa_len = 0;
  CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME_LENGTH, &isa_len));
  char isa_name[128] = {0};
  EXPECT(isa_len > 0 && isa_len < sizeof isa_name);
  CHECK(hsa_isa_get_info_alt(isa, HSA_ISA_INFO_NAME, isa_name));
  char want_isa[96];
  snprintf(want_isa, sizeof want_isa, "amdgcn-amd-amdhsa--%s", d.name);
  EXPECT(strncmp(isa_name, want_isa, strlen(want_isa)) == 0);
  hsa_isa_t from_name;
  CHECK(hsa_isa_from_name(isa_name, &from_name));
  EXPECT(from_name.handle == isa.handle);
  EXPECT(hsa_isa_from_name("amdgcn-amd-amdhsa--gfx1234", &from_name) == HSA_STATUS_ERROR_INVALID_ISA_NAME);

  // Regions and pools.
  size_t granule = 0;
  CHECK(hsa_region_get_info(d.kernarg, HSA_REGION_INFO_RUNTIME_ALLOC_GRANULE, &granule));
  EXPECT(granule > 0);
  void *p = NULL;
  EXPECT(hsa_memory_allocate(d.kernarg, 0, &p) == HSA_STATUS_ERROR_INVALID_ARGUMENT);
  hsa_amd_memory_pool_access_t access;
  CHECK(hsa_amd_agent_memory_pool_get_info(d.gpu, d.host_pool, HSA_AMD_AGENT_MEMORY_POOL_INFO_ACCESS, &access));
  EXPECT(access == HSA_AMD_MEMORY_POOL_ACCESS_ALLOWED_BY_DEFAULT);

  // Pointer information.
  float *buf = host_alloc(&d, 1000);
  hsa_amd_pointer_info_t info;
  memset(&info, 0, sizeof info);
  info.size = sizeof info;
  CHECK(hsa_amd_pointer_info(buf + 10, &info, NULL, NULL, NULL));
  EXPECT(info.type == HSA_EXT_POINTER_TYPE_HSA && info.agentBaseAddress == buf && info.sizeInBytes >= 1000);
  int local = 0;
  info.size = sizeof info;
  CHECK(hsa_amd_pointer_info(&local, &info, NULL, NULL, NULL));
  EXPECT(info.type == HSA_EXT_POINTER_TYPE_UNKNOWN);
  CHECK(hsa_amd_pointer_info_set_userdata(buf, (void *)0x1234));
  info.size = sizeof info;
  CHECK(hsa_amd_pointer_info(buf, &info, NULL, NULL, NULL));
  EXPECT(info.userData == (void *)0x1234);
  EXPECT(hsa_amd_memory_pool_free((char *)buf + 4) == HSA_STATUS_ERROR_INVALID_ALLOCATION);
  CHECK(hsa_amd_memory_fill(buf, 0x3f800000u, 250));
  EXPECT(buf[0] == 1.0f && buf[249] == 1.0f);

  // Signals.
  CHECK(hsa_signal_create(10, 0, NULL, &sig));
  EXPECT(hsa_signal_load_relaxed(sig) == 10);
  hsa_signal_add_relaxed(sig, 5);
  hsa_signal_subtract_screlease(sig, 3);
  EXPECT(hsa_signal_load_scacquire(sig) == 12);
  EXPECT(hsa_signal_exchange_scacq_screl(sig, 7) == 12);
  EXPECT(hsa_signal_cas_screlease(sig, 7, 1) == 7 && hsa_signal_load_relaxed(sig) == 1);
  EXPECT(hsa_signal_cas_relaxed(sig, 9, 2) == 1 && hsa_signal_load_relaxed(sig) == 1);
  hsa_signal_or_relaxed(sig, 6);
  hsa_signal_and_relaxed(sig, 5);
  hsa_signal_xor_relaxed(sig, 1);
  EXPECT(hsa_signal_load_relaxed(sig) == 4);
  // A wait that cannot be met returns at its timeout (1 ms) with the value.
  EXPECT(hsa_signal_wait_scacquire(sig, HSA_SIGNAL_CONDITION_EQ, 0, 1000000, HSA_WAIT_STATE_BLOCKED) == 4);
  volatile hsa_signal_value_t *value_ptr = NULL;
  CHECK(hsa_amd_signal_value_pointer(sig, &value_ptr));
  EXPECT(*value_ptr == 4);
  hsa_signal_t group_members[2] = {sig, sig};
  hsa_signal_group_t group;
  CHECK(hsa_signal_group_create(2, group_members, 0, NULL, &group));
  hsa_signal_condition_t conds[2] = {HSA_SIGNAL_CONDITION_EQ, HSA_SIGNAL_CONDITION_GTE};
  hsa_signal_value_t values[2] = {99, 4};
  hsa_signal_t met;
  hsa_signal_value_t met_value;
  CHECK(hsa_signal_group_wait_any_scacquire(group, conds, values, HSA_WAIT_STATE_BLOCKED, &met, &met_value));
  EXPECT(met.handle == sig.handle && met_value == 4);
  CHECK(hsa_signal_group_destroy(group));

  // An asynchronous copy that waits for a dependency.
  hsa_signal_t dep, copied;
  CHECK(hsa_signal_create(1, 0, NULL, &dep));
  CHECK(hsa_signal_create(1, 0, NULL, &copied));
  float *src = host_alloc(&d, 64 * sizeof(float)), *dst = gpu_alloc(&d, 64 * sizeof(float));
  for (int i = 0; i < 64; i++) src[i] = (float)i;
  CHECK(hsa_amd_memory_async_copy(dst, d.gpu, src, d.cpu, 64 * sizeof(float), 1, &dep, copied));
  EXPECT(hsa_signal_wait_scacquire(copied, HSA_SIGNAL_CONDITION_EQ, 0, 20000000, HSA_WAIT_STATE_BLOCKED) == 1);
  hsa_signal_store_screlease(dep, 0);
  wait_zero(copied);
  EXPECT(dst[63] == 63.0f && dst[1] == 1.0f);

  // Executables: symbols, the loader extension, refused code objects.
  hsa_executable_t exe = new_executable();
  load_from_file(&d, exe, argv[1], "fpe");
  CHECK(hsa_executable_freeze(exe, NULL));
  EXPECT(hsa_executable_freeze(exe, NULL) == HSA_STATUS_ERROR_FROZEN_EXECUTABLE);
  int kernels = 0;
  CHECK(hsa_executable_iterate_symbols(exe, count_symbol, &kernels));
  EXPECT(kernels == 3);
  hsa_executable_symbol_t sym;
  EXPECT(hsa_executable_get_symbol_by_name(exe, "fpe_nan", &d.gpu, &sym) == HSA_STATUS_ERROR_INVALID_SYMBOL_NAME);
  CHECK(hsa_executable_get_symbol_by_name(exe, "fpe_div0.kd", &d.gpu, &sym));
  uint32_t len = 0, kernarg_size = 0, align = 0;
  char sym_name[64] = {0};
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME_LENGTH, &len));
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_NAME, sym_name));
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_SIZE, &kernarg_size));
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_KERNARG_SEGMENT_ALIGNMENT, &align));
  EXPECT(len == strlen("fpe_div0.kd") && strcmp(sym_name, "fpe_div0.kd") == 0);
  EXPECT(kernarg_size == 28 && align >= 8);
  uint64_t object = 0;
  CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object));
  EXPECT(object % 64 == 0);

  hsa_ven_amd_loader_1_01_pfn_t loader;
  bool supported = false;
  CHECK(hsa_system_extension_supported(HSA_EXTENSION_AMD_LOADER, 1, 1, &supported));
  EXPECT(supported);
  CHECK(hsa_system_get_extension_table(HSA_EXTENSION_AMD_LOADER, 1, 1, &loader));
  hsa_executable_t owner;
  CHECK(loader.hsa_ven_amd_loader_query_executable((const void *)object, &owner));
  EXPECT(owner.handle == exe.handle);
  const void *host = NULL;
  CHECK(loader.hsa_ven_amd_loader_query_host_address((const void *)object, &host));
  EXPECT(host == (const void *)object);
  hsa_loaded_code_object_t lco = {0};
  CHECK(loader.hsa_ven_amd_loader_executable_iterate_loaded_code_objects(exe, count_loaded, &lco));
  EXPECT(lco.handle != 0);
  uint64_t storage = 0, storage_size = 0, load_base = 0, load_size = 0;
  CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
      lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_BASE, &storage));
  CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(
      lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_CODE_OBJECT_STORAGE_MEMORY_SIZE, &storage_size));
  CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_BASE,
                                                             &load_base));
  CHECK(loader.hsa_ven_amd_loader_loaded_code_object_get_info(lco, HSA_VEN_AMD_LOADER_LOADED_CODE_OBJECT_INFO_LOAD_SIZE,
                                                             &load_size));
  size_t file_size;
  void *file = read_code_object(&d, argv[1], "fpe", &file_size);
  EXPECT(storage_size == file_size && memcmp((const void *)storage, file, file_size) == 0);
  EXPECT(object >= load_base && object < load_base + load_size);

  // The deprecated path: deserialize, load, get_symbol.
  hsa_code_object_t old;
  CHECK(hsa_code_object_deserialize(file, file_size, NULL, &old));
  hsa_executable_t exe2;
  CHECK(hsa_executable_create(HSA_PROFILE_FULL, HSA_EXECUTABLE_STATE_UNFROZEN, NULL, &exe2));
  CHECK(hsa_executable_load_code_object(exe2, d.gpu, old, NULL));
  CHECK(hsa_executable_freeze(exe2, NULL));
  hsa_executable_symbol_t sym2;
  CHECK(hsa_executable_get_symbol(exe2, NULL, "fpe_nan.kd", d.gpu, 0, &sym2));
  uint64_t object2 = 0;
  CHECK(hsa_executable_symbol_get_info(sym2, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &object2));
  EXPECT(object2 != 0 && object2 != object);
  CHECK(hsa_code_object_destroy(old));

  // A damaged code object and one for another GPU are refused.
  hsa_executable_t exe3 = new_executable();
  hsa_code_object_reader_t reader;
  memset(file, 0x5a, 64);
  CHECK(hsa_code_object_reader_create_from_memory(file, file_size, &reader));
  EXPECT(hsa_executable_load_agent_code_object(exe3, d.gpu, reader, NULL, NULL) == HSA_STATUS_ERROR_INVALID_CODE_OBJECT);
  CHECK(hsa_code_object_reader_destroy(reader));
  EXPECT(hsa_code_object_reader_destroy(reader) == HSA_STATUS_ERROR_INVALID_CODE_OBJECT_READER);
  free(file);
  struct device other = d;
  strcpy(other.name, strcmp(d.name, "gfx90a") == 0 ? "gfx942" : "gfx90a");
  file = read_code_object(&other, argv[1], "fpe", &file_size);
  CHECK(hsa_code_object_reader_create_from_memory(file, file_size, &reader));
  EXPECT(hsa_executable_load_agent_code_object(exe3, d.gpu, reader, NULL, NULL) ==
         HSA_STATUS_ERROR_INCOMPATIBLE_ARGUMENTS);
  EXPECT(hsa_executable_load_agent_code_object(exe3, d.cpu, reader, NULL, NULL) == HSA_STATUS_ERROR_INVALID_AGENT);
  free(file);

  // Dispatch times land in the completion signal.
  hsa_queue_t *q;
  CHECK(hsa_queue_create(d.gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q));
  hsa_executable_symbol_t nan_sym;
  CHECK(hsa_executable_get_symbol_by_name(exe, "fpe_nan.kd", &d.gpu, &nan_sym));
  struct kernel knan = {0, 0, 0, 0};
  CHECK(hsa_executable_symbol_get_info(nan_sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &knan.object));
  knan.kernarg_size = 28;
  float *ones = host_alloc(&d, 64 * sizeof(float));
  for (int i = 0; i < 64; i++) ones[i] = 1.0f;
  struct { float *out; const float *x, *y; uint32_t n; } nan_args = {ones, ones, ones, 64};
  hsa_signal_t ran;
  CHECK(hsa_signal_create(1, 0, NULL, &ran));
  uint64_t before = 0, after = 0;
  CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &before));
  dispatch(q, &knan, kernarg(&d, &knan, &nan_args, sizeof nan_args), 64, 64, ran, 0);
  wait_zero(ran);
  CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &after));
  hsa_amd_profiling_dispatch_time_t when;
  CHECK(hsa_amd_profiling_get_dispatch_time(d.gpu, ran, &when));
  EXPECT(before <= when.start && when.start <= when.end && when.end <= after);
  uint64_t system_tick = 0;
  CHECK(hsa_amd_profiling_convert_tick_to_system_domain(d.gpu, when.end, &system_tick));
  EXPECT(system_tick == when.end);
  CHECK(hsa_queue_destroy(q));

  // Queues.
  EXPECT(hsa_queue_create(d.gpu, 100, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q) ==
         HSA_STATUS_ERROR_INVALID_QUEUE_CREATION);
  EXPECT(hsa_queue_create(d.cpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q) ==
         HSA_STATUS_ERROR_INVALID_QUEUE_CREATION);
  CHECK(hsa_queue_create(d.gpu, 64, HSA_QUEUE_TYPE_MULTI, NULL, NULL, 0, 0, &q));
  EXPECT(q->size == 64 && q->base_address != NULL && hsa_queue_load_write_index_relaxed(q) == 0);
  CHECK(hsa_queue_destroy(q));
  EXPECT(hsa_queue_destroy(q) == HSA_STATUS_ERROR_INVALID_QUEUE);

  CHECK(hsa_executable_destroy(exe));
  CHECK(hsa_executable_destroy(exe2));
  CHECK(hsa_executable_destroy(exe3));
  CHECK(hsa_shut_down());
  EXPECT(hsa_shut_down() == HSA_STATUS_ERROR_NOT_INITIALIZED);
  printf("api_checks: %d checks hold\n", checks);
  return 0;
}
