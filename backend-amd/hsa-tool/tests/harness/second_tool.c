/* A second HSA tool library for the chaining tests: its OnLoad replaces
 * hsa_queue_create and hsa_executable_freeze with counting wrappers that
 * call the entries it found, as tools do. The entries' offsets in
 * CoreApiTable come from the build (-DQUEUE_CREATE=.. -DFREEZE=..). */
#include <stdbool.h>
#include <stdint.h>

typedef uint32_t (*queue_create_fn)(uint64_t, uint32_t, uint32_t, void *, void *, uint32_t, uint32_t, void **);
typedef uint32_t (*freeze_fn)(uint64_t, const char *);

static queue_create_fn next_queue_create;
static freeze_fn next_freeze;
static int queue_creates, freezes;

static uint32_t counting_queue_create(uint64_t agent, uint32_t size, uint32_t type, void *cb, void *data,
                                      uint32_t private_size, uint32_t group_size, void **queue) {
    queue_creates++;
    return next_queue_create(agent, size, type, cb, data, private_size, group_size, queue);
}

static uint32_t counting_freeze(uint64_t executable, const char *options) {
    freezes++;
    return next_freeze(executable, options);
}

bool OnLoad(void *table, uint64_t runtime_version, uint64_t failed_count, const char *const *failed) {
    (void)runtime_version;
    (void)failed_count;
    (void)failed;
    char *core = *(char **)((char *)table + 16);
    void **queue_create = (void **)(core + QUEUE_CREATE);
    void **freeze = (void **)(core + FREEZE);
    next_queue_create = (queue_create_fn)*queue_create;
    next_freeze = (freeze_fn)*freeze;
    *queue_create = (void *)counting_queue_create;
    *freeze = (void *)counting_freeze;
    return true;
}

void OnUnload(void) {}

int second_tool_calls(void) { return queue_creates * 100 + freezes; }
