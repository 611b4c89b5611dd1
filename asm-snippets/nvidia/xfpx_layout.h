/* Memory layout shared by the injected device functions, the NVBit tool
 * shim and (mirrored and tested) the Rust decoder in xfpx-nvidia `record`.
 *
 * Site table: a directory of XFPX_DIRECTORY_LEN chunk pointers in device
 * memory, covering every 32-bit site id; the host allocates a chunk of
 * XFPX_SITES_PER_CHUNK entries when the first site in it is created, so
 * the number of sites has no fixed cap below 2^32.
 *
 * Records: a ring of XFPX_RING_CAPACITY records in mapped pinned host
 * memory. A device function claims a slot with an atomic on `head` (device
 * memory), waits while the ring is full, writes the record and publishes
 * it by writing `seq = slot + 1` last. The host consumes slots in order
 * and publishes how many it consumed in `*host_tail`. */
#ifndef XFPX_LAYOUT_H
#define XFPX_LAYOUT_H
#include <stdint.h>

#define XFPX_SITES_PER_CHUNK 4096u
#define XFPX_DIRECTORY_LEN (1u << 20)
#define XFPX_RING_CAPACITY 65536u

/* meta argument bits (see abi.def) */
#define XFPX_META_FORMAT_MASK 0xffu
#define XFPX_META_KINDS_SHIFT 8
#define XFPX_META_DIVISION (1u << 16)
#define XFPX_META_HIGH_WORD (1u << 17)
/* the value is a reciprocal's source (the divisor): the kinds reported are
 * those of the reciprocal the instruction makes of it (fast mode checks a
 * divisor where it meets the quotient's check instead of right after its
 * MUFU.RCP) */
#define XFPX_META_RECIPROCAL (1u << 18)
/* meta of a grouped slot: the value's instruction was guarded by predicate
 * (meta >> XFPX_META_GUARD_SHIFT) & 7, negated when XFPX_META_GUARD_NEGATED */
#define XFPX_META_GUARDED (1u << 19)
#define XFPX_META_GUARD_NEGATED (1u << 20)
#define XFPX_META_GUARD_SHIFT 21

/* exception kind bits (xfpx_common::fp::ExceptionKind::bit) */
#define XFPX_KIND_NAN 1u
#define XFPX_KIND_INF 2u
#define XFPX_KIND_SUB 4u
#define XFPX_KIND_DIV0 8u

/* format codes (xfpx_common::class::FpFormat::code) */
#define XFPX_FMT_F16 0u
#define XFPX_FMT_F16X2 1u
#define XFPX_FMT_BF16 2u
#define XFPX_FMT_BF16X2 3u
#define XFPX_FMT_F32 4u
#define XFPX_FMT_F64 5u

/* One site's entry: kinds seen, 4 bits per format code (bit 4*format+kind),
 * and warp executions that raised each kind. 40 bytes. The flow tool
 * keeps one entry per (site, state): key site * XFPX_FLOW_KEYS_PER_SITE +
 * state; its `classes` holds, per kind, a byte of the classes the lanes
 * met (xfpx_flow_byte). */
typedef struct XfpxSiteEntry {
    uint32_t seen;
    uint32_t classes;
    unsigned long long count[4];
} XfpxSiteEntry;

/* One new finding sent to the host. 16 bytes.
 * info: bits 0-7 new kind bits, 8-15 format code. */
typedef struct XfpxRecord {
    uint32_t site;
    uint32_t launch;
    uint32_t info;
    uint32_t seq;
} XfpxRecord;

typedef struct XfpxDeviceState {
    unsigned long long directory; /* XfpxSiteEntry *[XFPX_DIRECTORY_LEN], device */
    unsigned long long records;   /* XfpxRecord[capacity], mapped host memory */
    unsigned long long host_tail; /* uint32_t, mapped host memory, written by the host */
    uint32_t head;                /* next slot to claim */
    uint32_t capacity;
} XfpxDeviceState;

/* Counters (xfpx_count_region / xfpx_count_guard(s), see abi.def): one table
 * per counted launch in device memory, its address the launch's per-launch
 * value; the host writes it (header, zero slots) on the launch's stream
 * before the launch and reads it back once the launch has completed.
 * Slots: the slots of the functions the kernel calls (numbered across the
 * program) first, then the kernel's own. Window w of slot s is
 * slot[w * slots + s]; a block's window is its linear index /
 * window_blocks (0: one window), clamped to the last window. The windows'
 * slots are repeated `shards` times, `shard_slots` apart (a 4 KiB multiple
 * when there are several): a warp counts into copy %smid % shards, so
 * that warps of different SMs counting one slot add to different memory
 * instead of queueing on one address; the host adds the copies up.
 * Mirrored in xfpx-nvidia `counts`. */
#define XFPX_COUNT_BRANCH 1u
#define XFPX_COUNT_PRED_SHIFT 1
#define XFPX_COUNT_NEGATED (1u << 4)
/* the region's call also counts its branch's guard: the lanes where it
 * held go to slot `slot + (meta >> XFPX_COUNT_HELD_SHIFT)` */
#define XFPX_COUNT_HELD (1u << 5)
#define XFPX_COUNT_HELD_SHIFT 6

typedef struct XfpxCountSlot {
    unsigned long long warps;
    unsigned long long lanes;
    unsigned long long divergent;
    unsigned long long reserved;
} XfpxCountSlot;

typedef struct XfpxCountTable {
    uint32_t slots;
    uint32_t windows;
    uint32_t window_blocks;
    uint32_t shards;      /* copies of the windows' slots, one per %smid % shards */
    uint32_t shard_slots; /* slots from one copy's start to the next's */
    uint32_t reserved[3];
    XfpxCountSlot slot[1]; /* shards * shard_slots */
} XfpxCountTable;
#define XFPX_COUNT_HEADER_BYTES 32

/* Fault injection (xfpx_inject, see abi.def): one XfpxInjectState per
 * run in device memory, made by the host before the first launch and read
 * back at the end. Mirrored in xfpx-nvidia `inject`.
 *
 * A thread is selected when it runs on SM `sm` (%smid), on sub-partition
 * %warpid % 4 (when one is named), in warp slot %warpid / 4 of the
 * sub-partition (bit of `warps`), in a lane of `lanes`. Changes made in two
 * halves (a value saved before the instruction, used after it) keep it in
 * the thread's scratch words, indexed by (%warpid, %laneid) on that SM. */
#define XFPX_INJECT_XOR 1u           /* after: registers ^= mask */
#define XFPX_INJECT_INVERT_PRED 2u   /* after: predicate ^= 1 */
#define XFPX_INJECT_SAVE 3u          /* before: scratch = registers */
#define XFPX_INJECT_DISCARD 4u       /* after: registers = scratch */
#define XFPX_INJECT_REDIRECT 5u      /* after: other = registers; registers = scratch */
#define XFPX_INJECT_SUBSTITUTE 6u    /* before: scratch = registers; registers = other */
#define XFPX_INJECT_RESTORE 7u       /* after: registers = scratch (no activation) */
#define XFPX_INJECT_OTHER_OP 8u      /* before: scratch = other operation of (a, b) */
#define XFPX_INJECT_WRITE_SCRATCH 9u /* after: register = scratch */
#define XFPX_INJECT_FORCE_SET 10u    /* before the guarded instruction: guard forced on */
#define XFPX_INJECT_FORCE_RESTORE 11u /* after it: the forced guard restored */
#define XFPX_INJECT_TRAP 12u         /* before: the thread traps */
#define XFPX_INJECT_XOR_SAVE 13u     /* before: scratch = registers; registers ^= mask */
#define XFPX_INJECT_XOR_UNIFORM 14u  /* after: uniform register ^= mask, once for the warp */

/* op argument: bits 0-7 the operation, 8-15 the register (or predicate),
 * 16-23 the register count, 24-31 the other register, 32-39 the detail
 * (OTHER_OP: 0 integer xor, 1 f32 multiply, 2 f32 add; FORCE_*: 1 when
 * the guard is negated). */
#define XFPX_INJECT_MAX_WARPS 64u
#define XFPX_INJECT_WORDS 8u
#define XFPX_INJECT_OTHER_XOR 0u
#define XFPX_INJECT_OTHER_FMUL 1u
#define XFPX_INJECT_OTHER_FADD 2u

typedef struct XfpxInjectState {
    unsigned long long activations; /* thread instances corrupted */
    unsigned long long fired_host;  /* uint32_t in mapped host memory: 1 once the fault fired */
    uint32_t fired;                 /* device copy of that flag */
    uint32_t reserved[3];
    uint32_t scratch[XFPX_INJECT_MAX_WARPS * 32u * XFPX_INJECT_WORDS];
} XfpxInjectState;

/* Launch screening (the scan kernel of xfpx_screen.cuh, launched by the
 * shim on the program's stream before and after a launch; host side in
 * xfpx-nvidia `screen`, which mirrors and tests these structures).
 *
 * A scan counts the NaN and infinite elements of up to
 * XFPX_SCREEN_MAX_BUFFERS device buffers, each read as one format (f16,
 * bf16, f32 or f64; a partial element at the end is not read), and sets the
 * buffer's counter (slot) to the counts; a reporting scan sends a record
 * when a count grew. Blocks add into the scan's scratch entry; the last
 * block to finish settles every buffer and clears the entry for reuse. */
#define XFPX_SCREEN_MAX_BUFFERS 16u
#define XFPX_SCREEN_SLOTS 65536u
#define XFPX_SCREEN_SCRATCH 1024u
#define XFPX_SCREEN_RING 4096u
#define XFPX_SCREEN_THREADS 256u

/* One buffer of a scan. 24 bytes. */
typedef struct XfpxScreenBuffer {
    unsigned long long base;  /* device address, 16-byte aligned */
    unsigned long long bytes; /* size of the allocation */
    uint32_t slot;            /* its counter */
    uint16_t param;           /* the kernel parameter that pointed into it */
    uint8_t format;           /* XFPX_FMT_F16, _BF16, _F32 or _F64 */
    uint8_t reserved;
} XfpxScreenBuffer;

/* One scan, passed to the scan kernel by value; grid grid_x by count. */
typedef struct XfpxScreenLaunch {
    uint32_t serial;  /* the program's launch it follows (or precedes) */
    uint32_t report;  /* 1: send a record when a count grew */
    uint32_t scratch; /* its scratch entry */
    uint32_t count;   /* buffers (0: no scan) */
    uint32_t grid_x;  /* blocks per buffer */
    uint32_t reserved;
    XfpxScreenBuffer buffer[XFPX_SCREEN_MAX_BUFFERS];
} XfpxScreenLaunch;

/* The scans of one launch: before it (buffers not counted yet), after it. */
typedef struct XfpxScreenPlan {
    XfpxScreenLaunch before;
    XfpxScreenLaunch after;
} XfpxScreenPlan;

/* A buffer's counter: its counts at its last scan. 32 bytes. */
typedef struct XfpxScreenSlot {
    unsigned long long nan;
    unsigned long long inf;
    uint32_t serial; /* the launch that scan followed */
    uint32_t reserved[3];
} XfpxScreenSlot;

/* What one scan's blocks add up; first holds ~(lowest element index). */
typedef struct XfpxScreenScratch {
    unsigned long long nan[XFPX_SCREEN_MAX_BUFFERS];
    unsigned long long inf[XFPX_SCREEN_MAX_BUFFERS];
    unsigned long long first[XFPX_SCREEN_MAX_BUFFERS];
    uint32_t done; /* blocks finished */
    uint32_t reserved;
} XfpxScreenScratch;

/* A count that grew, sent to the host. 64 bytes; first is ~0 when no
 * element is NaN or infinite. */
typedef struct XfpxScreenRecord {
    uint32_t seq; /* slot + 1, written last */
    uint32_t serial;
    uint32_t previous; /* the launch the buffer's scan before followed */
    uint16_t param;
    uint8_t format;
    uint8_t reserved;
    unsigned long long nan_before;
    unsigned long long nan_after;
    unsigned long long inf_before;
    unsigned long long inf_after;
    unsigned long long first;
    unsigned long long bytes;
} XfpxScreenRecord;

typedef struct XfpxScreenState {
    unsigned long long slots;     /* XfpxScreenSlot[XFPX_SCREEN_SLOTS], device */
    unsigned long long scratch;   /* XfpxScreenScratch[XFPX_SCREEN_SCRATCH], device */
    unsigned long long records;   /* XfpxScreenRecord[capacity], mapped host memory */
    unsigned long long host_tail; /* uint32_t, mapped host memory, written by the host */
    uint32_t head;                /* next record slot to claim */
    uint32_t capacity;
} XfpxScreenState;
/* The flow tool (xfpx_flow, xfpx_flow_hold, xfpx_flow_held; abi.def).
 * A lane word (xfpx_common::flow::lane): the classes of the sources, of
 * the result (shifted by 5), and two facts of the instruction. */
#define XFPX_FLOW_SRC_NAN 1u
#define XFPX_FLOW_SRC_INF 2u
#define XFPX_FLOW_SRC_SUB 4u
#define XFPX_FLOW_SRC_ZERO 8u
#define XFPX_FLOW_SRC_NORMAL 16u
#define XFPX_FLOW_RESULT_SHIFT 5
#define XFPX_FLOW_DIVISION 1024u
#define XFPX_FLOW_NO_RESULT 2048u
#define XFPX_FLOW_KEYS_PER_SITE 4u
/* meta: bits 0-7 the result's format code, 8-15 the sources', 16-17 how
 * many sources the call carries, 18 the instruction writes a value, 19 it
 * divides */
#define XFPX_FLOW_META_SOURCE_SHIFT 8
#define XFPX_FLOW_META_SOURCES_SHIFT 16
#define XFPX_FLOW_META_RESULT (1u << 18)
#define XFPX_FLOW_META_DIVISION (1u << 19)
/* Sources held from before an instruction to after it (xfpx_flow_hold):
 * one word per (SM, warp slot, lane), in the run's tool-state memory
 * after the bytes the shim uses at its start. */
#define XFPX_FLOW_SCRATCH_OFFSET 32u
#define XFPX_FLOW_MAX_SMS 1024u
#define XFPX_FLOW_MAX_WARPS 64u

#endif
