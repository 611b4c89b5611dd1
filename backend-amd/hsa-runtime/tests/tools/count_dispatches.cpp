// A test tool for HSA_TOOLS_LIB, built against the real hsa_api_trace.h:
// OnLoad checks the table's layout (versions and sizes as the headers
// define them, entries present), replaces hsa_queue_create so that every
// queue the program creates is an intercept queue with this tool's handler
// (chaining with the entry it found, so several such tools stack), and the
// handler counts kernel dispatch and barrier packets before passing them on.
// OnUnload prints the counts. Built with -DTOOL_NAME="..." (and -DREFUSE
// for a tool whose OnLoad returns false).
#include <hsa/hsa.h>
#include <hsa/hsa_api_trace.h>
#include <atomic>
#include <cstdio>

#ifndef TOOL_NAME
#define TOOL_NAME "tool"
#endif

static CoreApiTable *core;
static AmdExtTable *amd;
static decltype(hsa_queue_create) *next_queue_create;
static std::atomic<unsigned> dispatches{0}, barriers{0}, queues{0};

static void handler(const void *packets, uint64_t count, uint64_t, void *,
                    hsa_amd_queue_intercept_packet_writer writer) {
  const hsa_kernel_dispatch_packet_t *p = static_cast<const hsa_kernel_dispatch_packet_t *>(packets);
  for (uint64_t i = 0; i < count; i++) {
    unsigned type = p[i].header & 0xFF;
    if (type == HSA_PACKET_TYPE_KERNEL_DISPATCH) dispatches++;
    if (type == HSA_PACKET_TYPE_BARRIER_AND || type == HSA_PACKET_TYPE_BARRIER_OR) barriers++;
  }
  writer(packets, count);
}

static hsa_status_t queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                                 void (*callback)(hsa_status_t, hsa_queue_t *, void *), void *data,
                                 uint32_t private_size, uint32_t group_size, hsa_queue_t **queue) {
  hsa_status_t s = next_queue_create(agent, size, type, callback, data, private_size, group_size, queue);
  if (s != HSA_STATUS_SUCCESS) return s;
  s = amd->hsa_amd_queue_intercept_register_fn(*queue, handler, nullptr);
  if (s == HSA_STATUS_ERROR_INVALID_QUEUE) {
    // A plain queue (no tool before this one made it an intercept queue).
    core->hsa_queue_destroy_fn(*queue);
    s = amd->hsa_amd_queue_intercept_create_fn(agent, size, type, callback, data, private_size, group_size, queue);
    if (s == HSA_STATUS_SUCCESS) s = amd->hsa_amd_queue_intercept_register_fn(*queue, handler, nullptr);
  }
  if (s == HSA_STATUS_SUCCESS) queues++;
  return s;
}

static const char *check_layout(const HsaApiTable *t) {
  if (t->version.major_id != HSA_API_TABLE_MAJOR_VERSION) return "root major version";
  if (t->version.minor_id != sizeof(HsaApiTable)) return "root size";
  if (!t->core_ || t->core_->version.major_id != HSA_CORE_API_TABLE_MAJOR_VERSION) return "core major version";
  if (t->core_->version.minor_id != sizeof(CoreApiTable)) return "core size";
  if (!t->amd_ext_ || t->amd_ext_->version.major_id != HSA_AMD_EXT_API_TABLE_MAJOR_VERSION) return "amd major version";
  if (t->amd_ext_->version.minor_id != sizeof(AmdExtTable)) return "amd size";
  if (!t->finalizer_ext_ || t->finalizer_ext_->version.minor_id != sizeof(FinalizerExtTable)) return "finalizer size";
  if (!t->image_ext_ || t->image_ext_->version.minor_id != sizeof(ImageExtTable)) return "image size";
  if (!t->core_->hsa_init_fn || !t->core_->hsa_queue_create_fn || !t->core_->hsa_executable_iterate_program_symbols_fn)
    return "core entries";
  if (!t->amd_ext_->hsa_amd_queue_intercept_create_fn || !t->amd_ext_->hsa_amd_queue_cu_get_mask_fn)
    return "amd entries";
  if (!t->image_ext_->hsa_ext_image_create_with_layout_fn) return "image entries";
  return nullptr;
}

extern "C" bool OnLoad(HsaApiTable *table, uint64_t runtime_version, uint64_t failed_tool_count,
                       const char *const *failed_tool_names) {
  fprintf(stderr, "tool " TOOL_NAME ": OnLoad runtime_version=%llu failed=%llu", (unsigned long long)runtime_version,
          (unsigned long long)failed_tool_count);
  for (uint64_t i = 0; i < failed_tool_count; i++) fprintf(stderr, " [%s]", failed_tool_names[i]);
  fprintf(stderr, "\n");
  if (const char *bad = check_layout(table)) {
    fprintf(stderr, "tool " TOOL_NAME ": bad table layout: %s\n", bad);
    return false;
  }
#ifdef REFUSE
  return false;
#endif
  core = table->core_;
  amd = table->amd_ext_;
  next_queue_create = core->hsa_queue_create_fn;
  core->hsa_queue_create_fn = queue_create;
  return true;
}

extern "C" void OnUnload() {
  fprintf(stderr, "tool " TOOL_NAME ": OnUnload queues=%u dispatches=%u barriers=%u\n", queues.load(),
          dispatches.load(), barriers.load());
}
