/* alloctap.h: the interface between the BPF program and alloctapd.
 *
 * Fixed-width fields only, so the same bytes mean the same thing on both sides. This header is
 * compiled by clang for BPF and by cc for the daemon; it must stay valid for both. It is the one
 * definition of everything that crosses the boundary: the record, the unwind tables' rows and
 * bounds, the mappings, a stack, the stack hash (at_stack_hash_*), the per-thread state the
 * daemon rewrites (struct at_thread); through the headers it includes, the rule kinds
 * (unwind_rule.h), the registers and layouts of the architecture (arch/x86_64.h) and the stack
 * flags (stack_flags.h). The walk itself is one source too, stack_walk.h, compiled into the program and, for the daemon, in
 * daemon/stacks/unwind_walk.c.
 *
 * The BPF object is built into alloctapd as a skeleton (build/alloctap.skel.h), so both sides
 * always come from the same tree and the layout needs no version number; the assertions below
 * and in lib/functions.h stop a build whose two sides disagree.
 *
 * Besides the record, the daemon relies on these names in the object (the skeleton's fields;
 * all defined in prog/maps.h):
 *   rodata  trace_all, self_tgid, floor_only, wakeup_records, ring_slots, stacks_on,
 *           probes_bound, thread_slot_mask, filter_on, min_size, sample_bytes (prog/filter.h):
 *           set before load
 *   bss     mappings_gen: bumped after each store in proc_mappings (struct
 *           at_bpf_rule_cache). No global counter: every record carries its time, and the
 *           rings' records are merged by it (daemon/trace/reorder.h). recording,
 *           allocator_check, allocators_gen (written by the daemon), leaders_gone (read before
 *           a link is closed), threads_in_storage (read for -vv's summary)
 *   maps    event_data, event_pos (the event rings, one per possible CPU, sized before load:
 *           AT_RING_STEP, struct at_ring_pos), ring_wake (the wakeups), targets (traced tgids, when
 *           trace_all is 0), lost (per-CPU counters, enum at_lost_counter), counts (per-CPU
 *           counters of what is no loss, enum at_count); with --stacks
 *           unwind_rules, unwind_pages, unwind_entries, unwind_tables (the unwind tables of
 *           every object, mmapable arrays the daemon fills), proc_mappings (tgid -> struct
 *           at_bpf_mappings), stacks (stack hash -> struct at_bpf_stack, read and deleted by
 *           the daemon), stack_scratch (per-CPU), stack_counts (enum at_stack_counter), held
 *           (struct at_bpf_held), hold_after (per process, the holds' token bucket); with
 *           --min-size or --sample-bytes blocks (struct at_block_key: the recorded blocks)
 *   maps    thread_slots (struct at_thread, sized before load; read by the daemon at a hold),
 *           slot_claims (who holds each slot, counted: sized with thread_slots),
 *           threads (task storage: the state of a thread whose slot another holds)
 *   progs   alloc_entry (any allocation function: the cookie says which), malloc_entry,
 *           calloc_entry, realloc_entry (not loaded with --stacks or a filter), free_entry,
 *           alloc_return, internal_call, thread_exit, thread_exec */
#ifndef ALLOCTAP_BPF_H
#define ALLOCTAP_BPF_H

#include <linux/types.h>

#include "arch/x86_64.h" /* the architecture: its registers, the layouts its rules read */
#include "unwind_rule.h" /* the rule kinds of struct at_unwind_rule */
#include "stack_flags.h"

/* The probed functions (enum at_probe_func), their kinds (at_probe_kind, at_probe_frees,
 * at_probe_reallocates) and symbols: AT_FUNCTIONS of lib/functions.h, which the format's
 * codes come from too; a function of the format keeps its code there, the daemon rewrites the
 * others as calls the logalloc format has (see doc/LOGALLOC.md). */
#include "../lib/functions.h"
/* The kinds of a stack's frames (enum at_frame_kind): AT_FRAME_KINDS of lib/frames.h. */
#include "../lib/frames.h"

/* The funcs of records that are no call, above every function's code (a record's func is a
 * byte). AT_PROBE_THREAD_END: a thread of a traced process ended (not its last; the record
 * carries only time, pid and tid); the daemon writes an END record for it.
 * AT_PROBE_REALLOC_ENTRY: a recorded realloc (or reallocarray) entered at time; its own record,
 * at its return, carries the same time_entry. The daemon holds the output at this record until
 * that return arrives (decision 4 of doc/DESIGN.md). */
#define AT_PROBE_THREAD_END 0xf0u
#define AT_PROBE_REALLOC_ENTRY 0xf1u

/* The cookie of an alloc_entry site: the function's code (enum at_probe_func) in the low byte;
 * when the site lies past a copy of an argument to another register (the probe-site walk of
 * daemon/arch/), the AT_COOKIE_ARGS_MOVED bit and, 4 bits each from AT_COOKIE_ARG_SHIFT, the
 * registers that hold the first three arguments there, by the architecture's own numbers
 * (daemon/arch/arch.h; bpf/arch/NAME.h's at_arch_register reads them). */
#define AT_COOKIE_FUNC_MASK 0xffu
/* The code of an internal call site in alloc_entry's link (internal_call's, when every entry of
 * an object goes in one link): no function's. */
#define AT_COOKIE_INTERNAL_CALL 0xffu
#define AT_COOKIE_ARGS_MOVED 0x100u
#define AT_COOKIE_ARG_SHIFT 12
/* Every probe of the family carries, from this bit on, the id of its object (1 to
 * AT_PROBED_OBJECTS, the daemon's numbering of the files it probes), which the BPF program
 * compares with the id of the process's allocator in the targets map; and, at
 * AT_COOKIE_FAMILY_SHIFT, the family its object was probed for (enum at_family), which says
 * which of the process's allocators that is. */
#define AT_COOKIE_OBJECT_SHIFT 32
#define AT_COOKIE_FAMILY_SHIFT 24
#define AT_COOKIE_FAMILY_MASK 1u

/* The dynamic loader's struct r_debug (<link.h>): r_state's offset, and its value once the
 * objects are mapped (RT_CONSISTENT; RT_ADD while they are being added). */
#define AT_R_DEBUG_STATE 24
#define AT_RT_CONSISTENT 0

/* A process's allocator of one family: the object's id in the low 16 bits, and the functions
 * it defines (bit 1 << enum at_probe_func) in the high 16; 0: any object. */
#define AT_TARGET(object, funcs) ((__u32)(object) | (__u32)(funcs) << 16)
#define AT_TARGET_OBJECT(v) ((v) & 0xffffu)
#define AT_TARGET_FUNCS(v) ((v) >> 16)
/* A process in the targets map (and struct at_thread's allocators): its allocator of each
 * family (enum at_family) in a __u64, family f's AT_TARGET in bits 32 * f to 32 * f + 31 (the C
 * family's in the low half, the whole value as it was with one family). */
#define AT_TARGET_FAMILIES 2
#define AT_TARGET_IN(family, target) ((__u64)(__u32)(target) << 32 * (family))
#define AT_TARGET_OF(family, v) ((__u32)((__u64)(v) >> 32 * (family)))
_Static_assert(AT_FAMILY_COUNT <= AT_TARGET_FAMILIES, "a family has a half of a target");
_Static_assert(AT_TARGET_IN(AT_FAMILY_C, AT_TARGET(1, 0x9)) == AT_TARGET(1, 0x9) &&
		       AT_TARGET_OF(1, AT_TARGET_IN(1, AT_TARGET(2, 0x30)) |
						AT_TARGET_IN(0, AT_TARGET(1, 0x9))) ==
			       AT_TARGET(2, 0x30),
	       "the C family's allocator is the low half of a target, each family's its own half");
_Static_assert(AT_PROBE_FUNC_COUNT < AT_COOKIE_INTERNAL_CALL, "no function has the internal call's code");
_Static_assert(AT_FAMILY_COUNT - 1 <= AT_COOKIE_FAMILY_MASK &&
		       (AT_COOKIE_FAMILY_MASK << AT_COOKIE_FAMILY_SHIFT) < (1ull << 32) &&
		       AT_COOKIE_ARG_SHIFT + 4 * 3 <= AT_COOKIE_FAMILY_SHIFT,
	       "a cookie's family lies between its argument registers and its object");

/* Flags of a record. */
#define AT_REC_OVERFLOW 1u /* reallocarray: n*m overflowed; arg[1] is the saturated product */
#define AT_REC_NO_ENTRY 2u /* a realloc whose AT_PROBE_REALLOC_ENTRY record found no room */
#define AT_REC_OLD_KNOWN 4u /* a filtered trace: the realloc's old block was recorded
			     * (prog/filter.h); the program's own, the daemon ignores it */

/* A filtered trace's recorded block (the key of the blocks map, prog/filter.h). */
struct at_block_key {
	__u32 tgid;
	__u32 pad;
	__u64 addr;
};

/* One event in the ring of its CPU: 64 bytes, one slot, one cache line.
 * time is bpf_ktime_get_ns() (CLOCK_MONOTONIC) read just before the record is reserved: frees
 * at entry, allocations at return. A realloc (and reallocarray) has time_entry, the time of its
 * entry (and of its AT_PROBE_REALLOC_ENTRY record); every other record has time_entry == time.
 * The daemon orders records by time (doc/DESIGN.md, decision 4). The last 8 bytes (func,
 * flags, state, number) are the record's commit word, which a program writes last, in one
 * store: state says the record is written (AT_RECORD_WRITTEN) or given up
 * (AT_RECORD_DISCARDED), number is the low 32 bits of the record's number in its ring. A slot
 * whose commit word does not carry its record's number (an older lap's, or the zeros of a new
 * ring) is a record reserved and not yet written. Only the programs write commit words, and
 * only there: nothing a traced process passes (sizes, pointers) can be read as one. */
struct at_record {
	__u64 time;
	__u64 time_entry;
	__u32 pid;      /* tgid */
	__u32 tid;
	__u64 arg[2];   /* as the format prints them; for reallocarray arg[1] = n*m */
	__u64 result;   /* returned pointer; posix_memalign: *memptr, or 0 on error */
	__u64 stack;    /* hash of the stack taken at the call's entry (key of the stacks map);
			 * 0: none (a free, --stacks off, or the stacks map was full) */
	__u8 func;      /* enum at_probe_func */
	__u8 flags;     /* AT_REC_* */
	__u16 state;    /* AT_RECORD_WRITTEN, AT_RECORD_DISCARDED */
	__u32 number;
};

_Static_assert(sizeof(struct at_record) == 64, "struct at_record is 64 bytes on both sides");
_Static_assert(AT_PROBE_FUNC_COUNT < AT_PROBE_THREAD_END && AT_PROBE_REALLOC_ENTRY <= 0xff,
	       "a record's func is a byte, its marks above every function");

/* A record's state in its commit word: neither is 0, so the zeros of a new ring read as not
 * written even where the number matches (record 0). */
#define AT_RECORD_WRITTEN 0x5757
#define AT_RECORD_DISCARDED 0x4444 /* a call recorded at its entry whose reservation found
				     * recording off (prog/emit.h): the reader passes over it */

/* The event rings (prog/emit.h writes them, daemon/trace/ring.h reads them): one per possible
 * CPU, each a power of two of slots of AT_RING_STEP bytes, element c of the mmapable array
 * event_data for CPU c. A slot holds one struct at_record. */
#define AT_RING_STEP 64

_Static_assert(sizeof(struct at_record) == AT_RING_STEP, "a record is a slot");

/* A ring's positions, in records (numbers): element c of the mmapable array event_pos, the
 * producers' line (written by the programs of CPU c only) apart from the daemon's. */
struct at_ring_pos {
	__u64 producer;       /* the next record's number: records below it are reserved */
	__u64 woken_consumer; /* the consumer plus 1 at the last wakeup asked for (0: none) */
	__u64 woken_producer; /* the producer then */
	__u64 producer_line[5];
	__u64 consumer;       /* written by the daemon: every record below it has been read */
	__u64 consumer_line[7];
};

_Static_assert(sizeof(struct at_ring_pos) == 128, "a ring's positions are two cache lines");

/* Indices of the per-CPU "lost" array: records the program could not deliver. */
enum at_lost_counter {
	AT_LOST_RECORDS = 0,  /* ring reservations that failed (one event each) */
	AT_LOST_REALLOCS,     /* of those, realloc returns whose entry record was written: the
			       * daemon gives up on that entry, and must not count it again */
	AT_LOST_NO_STATE,     /* entries with no room for per-thread state */
	/* Records that are no event the ring had no room for: thread ends, realloc entries (the
	 * realloc's own record then says so, AT_REC_NO_ENTRY). */
	AT_LOST_THREAD_ENDS,
	AT_LOST_REALLOC_ENTRIES,
	/* A filtered trace: recorded blocks the blocks map had no room for (an allocation then
	 * not recorded; a realloc that had to be recorded, its block's release then missing). */
	AT_LOST_BLOCKS,
	AT_LOST_COUNT
};

/* Indices of the per-CPU "counts" array: what the program counts that is no loss. */
enum at_count {
	AT_COUNT_STATE_SLOT = 0, /* threads that claimed their slot for their state (at_thread) */
	AT_COUNT_STATE_STORAGE,  /* threads given task storage: another thread held their slot */
	AT_COUNT_WAKEUPS,        /* wakeups of the daemon asked for: a ring held wakeup_records,
				  * and its consumer had moved or as many records come since the
				  * last (prog/emit.h) */
	AT_COUNTS_COUNT
};

/* The calls in flight, summed over the per-CPU "inflight" array: a call recorded at its return
 * counts from its outermost entry until its record is reserved (a free, recorded at its entry,
 * does not count: prog/emit.h, window_reserve). A realloc (or
 * reallocarray) adds AT_INFLIGHT_REALLOC, every other call AT_INFLIGHT_CALL, so the sum says
 * both how many calls and how many of them are reallocs (each per-CPU slot alone may wrap). */
#define AT_INFLIGHT_CALL 1ull
#define AT_INFLIGHT_REALLOC ((1ull << 32) | 1ull)

/* ---- stacks (--stacks) -------------------------------------------------------------------
 * The unwind tables (built by daemon/stacks/unwind_table.c), every object's in the same three
 * arrays: a table (unwind_tables[i]) says where its pages, entries and rules start in them.
 *
 *   rules    unique 8-byte rules (struct at_unwind_rule); a table's rules[0] is AT_UNWIND_NONE.
 *   pages    one 8-byte descriptor per 64 KiB page of the object's addresses, from first_page
 *            on: the run of entries that covers the page (count 0: no code there).
 *   entries  4 bytes each, sorted by address within their page: the page offset where a rule
 *            starts and the rule's index. Every page with code has an entry at offset 0 (the
 *            rule in effect where the page starts), so the rule for an address is the one of
 *            the last entry at or below it: one binary search of at most
 *            AT_UNWIND_SEARCH_STEPS steps.
 *
 * The daemon keeps each table in these layouts (struct at_unwind_table) and copies it as it is
 * into the maps (daemon/stacks/stack_tables.c). */
#define AT_UNWIND_PAGE_SHIFT 16
#define AT_UNWIND_PAGE_SIZE (1u << AT_UNWIND_PAGE_SHIFT)
#define AT_UNWIND_SEARCH_STEPS 17 /* enough for 65536 entries in one page */
#define AT_BPF_MAX_TABLES 1024
#define AT_BPF_NO_TABLE 0xffffffffu  /* a mapping whose object has no table (yet) */
#define AT_BPF_OPAQUE 0xfffffffeu    /* code no scan will give a table: anonymous executable
				      * memory (a JIT's), an object whose table could not be built;
				      * a stack ends there, incomplete, and holds nothing */
#define AT_BPF_MAX_MAPPINGS 512      /* executable mappings per process */
#define AT_BPF_MAPPING_STEPS 10      /* binary search steps over them */
#define AT_BPF_MAX_FRAMES AT_STACK_MAX_FRAMES /* stack_flags.h: the format's bound too */
/* The frames of a stack as the program stores it: its native frames (AT_BPF_MAX_FRAMES at
 * most), then its Python frames (prog/python.h), which the daemon splices into one stack of
 * AT_STACK_MAX_FRAMES at most. A power of two, for the masks of the Python frames' indexes. */
#define AT_BPF_STACK_FRAMES (2 * AT_BPF_MAX_FRAMES)

/* The walk remembers, per CPU, the rule it found for recent (process, address) pairs: the same
 * return addresses come back in call after call, and a hit skips both binary searches. An entry
 * holds for one generation of the mappings (mappings_gen), and names the mapping, whose check
 * (struct at_bpf_mapping) a hit still passes; a slot is chosen by hashing the address.
 * mappings_gen goes up after every store of a process's mappings in proc_mappings (the daemon's
 * scan: after the store, so that a walk that read the old generation with the new mappings meets
 * the check of a new mapping) and at every deletion by the program (a traced process executes or
 * exits). Not at the daemon's deletion of a gone process's mappings: a walk that finds no
 * mappings reads no entry, and the next store bumps it. */
#define AT_BPF_RULE_CACHE 1024 /* 24 KiB: a per-CPU value holds at most 32 */
struct at_bpf_rule_cache {
	struct {
		__u64 pc;
		__u32 tgid;
		__u32 rule;    /* index in unwind_rules */
		__u32 gen;     /* the low half of mappings_gen */
		__u32 mapping; /* index in the process's mappings of the one the pc lies in */
	} e[AT_BPF_RULE_CACHE];
};

/* The walk reads the stack a page at a time (struct at_bpf_window): one read of the page that
 * holds a frame's return address serves every frame on that page. */
#define AT_BPF_WINDOW 4096
struct at_bpf_window {
	__u8 bytes[AT_BPF_WINDOW];
} __attribute__((aligned(8))); /* its words are read whole (stack_walk.h) */

struct at_unwind_rule {
	__u8 kind;          /* enum at_unwind_kind (unwind_rule.h) */
	__u8 fp;            /* enum at_unwind_fp */
	__s16 fp_offset;
	__s32 cfa_offset;
};

struct at_unwind_page {
	__u32 first;   /* index of the page's first entry, relative to the table's entry_base */
	__u32 count;   /* its entries; 0 when the page has no code */
};

struct at_unwind_entry {
	__u16 offset;  /* address & 0xffff where the rule starts */
	__u16 rule;    /* index of its rule, relative to the table's rule_base */
};

_Static_assert(sizeof(struct at_unwind_rule) == 8 && sizeof(struct at_unwind_page) == 8 &&
		       sizeof(struct at_unwind_entry) == 4,
	       "the unwind rows have the sizes the daemon's copies assume");

/* The entries map holds two entries per element: an array map's elements are 8-byte
 * aligned, and the daemon writes the entries one after the other into its mapped memory. */
struct at_bpf_entry_pair {
	struct at_unwind_entry e[2];
};

/* A table in unwind_tables: its object's first page (address >> AT_UNWIND_PAGE_SHIFT), its
 * page count, and where its pages, entries and rules start in the three arrays. */
struct at_bpf_table {
	__u64 first_page;
	__u32 page_count;
	__u32 page_base, entry_base, rule_base;
};

/* A mapping as the daemon read it. The walk checks that it is still there before it trusts its
 * table: when the process's address space changed since the last check (the kernel's
 * mm_lock_seq moved), the VMA at the pc must still map the same file (inode) with the same
 * offset (file_delta), or no file for an anonymous mapping; else the walk forgets the mapping
 * (table AT_BPF_NO_TABLE, serial 0) and the daemon scans again. */
#define AT_BPF_SEQ_NONE 1u /* valid_seq of a mapping never checked (an odd, locked value) */
struct at_bpf_mapping {
	__u64 start, end;
	__s64 bias;    /* process address - bias = object address */
	__u64 inode;   /* of the mapped file, 0: none */
	__u64 file_delta; /* file offset - address, modulo 2^64 */
	__u32 table;   /* index in unwind_tables, AT_BPF_NO_TABLE or AT_BPF_OPAQUE */
	__u32 serial;  /* the daemon's name for this mapping (daemon/stacks/stack_procs.h), 0: none */
	__u32 valid_seq; /* mm_lock_seq when the walk last found it still mapped */
	__u32 pad;
	__u64 vma;     /* the kernel's VMA that check found, as a number (0: none yet): read again
			* without the address space's lock while another thread holds it */
};

/* A process's executable mappings, sorted by start, not overlapping. */
struct at_bpf_mappings {
	__u32 count;
	__u32 hold_on_miss;  /* the daemon ptraces the process: a walk that meets a pc in no
			      * known mapping holds the thread (see struct at_bpf_held), as often
			      * as AT_BPF_HOLD_BURST and AT_BPF_HOLD_GAP_NS allow (the program's
			      * hold_after map) */
	struct at_bpf_mapping m[AT_BPF_MAX_MAPPINGS];
};

/* A thread whose walk met a pc in no known mapping, in a process the daemon ptraces: the
 * program sends the thread AT_BPF_HOLD_SIGNAL, and the daemon, at the signal's ptrace stop, reads the process's mappings again, walks the stack itself from the registers the entry
 * had (held map, key: tid), stores the whole stack under its hash, points the thread's call at
 * it and suppresses the signal. ra is the return address at the entry (a return probe replaces
 * it on the stack right after the entry program). */
struct at_bpf_held {
	__u64 pc, sp, fp, ra;
	__u64 hash;  /* of the incomplete stack the program stored */
	__u32 slot;  /* the thread's state: 1 + its index in thread_slots; 0: in task storage */
	__u32 why;   /* enum at_bpf_hold_why */
};

/* Why a thread is held: a pc in no known mapping (above), or a new stack with the frame of a
 * module's code (or a class body's: code with locals of its own, AT_BPF_FRAME_PYTHON_MODULE)
 * that the daemon has not named yet (bpf/prog/python.h): such a code object is freed when its
 * import ends, so the daemon names it while the thread waits. */
enum at_bpf_hold_why {
	AT_BPF_HOLD_TABLES = 0,
	AT_BPF_HOLD_PYTHON = 1,
};
/* Holds per process: at most AT_BPF_HOLD_BURST in a row (a program that loads several
 * libraries at once), then one per AT_BPF_HOLD_GAP_NS (code that keeps appearing, a JIT's new
 * pages), as a token bucket. */
#define AT_BPF_HOLD_GAP_NS 50000000ull
#define AT_BPF_HOLD_BURST 16
/* The holds for Python modules, a bucket of their own per process: an interpreter's start
 * imports hundreds of modules, each held once (exec'd code, once per code object). */
#define AT_BPF_PY_HOLD_GAP_NS 1000000ull
#define AT_BPF_PY_HOLD_BURST 1024
#define AT_BPF_PY_HOLD_KEY 0x80000000u /* its key in hold_after: the tgid with this bit */

/* A module's code object the daemon has named (the BPF program's py_named map): its address,
 * its frame's globals folded (as a Python frame's serial) and its process. */
struct at_bpf_py_code {
	__u64 code;
	__u32 globals;
	__u32 pid;
};
/* The signal of a hold: SIGURG, ignored by default, and whose generation, unlike SIGCONT's,
 * touches nothing else (no pending stop signal flushed, no stopped group continued). The
 * program sends it only when the thread does not block it and it is not pending already (it
 * would merge with the program's own, which the daemon would then suppress). */
#define AT_BPF_HOLD_SIGNAL 23

/* Per-thread call state. A thread's state is a slot of the array thread_slots, chosen by a hash
 * of the address of the thread's saved user registers (the probes' context, fixed for the
 * thread's life; the key is that address less the address of a global of the program), and so found without a
 * call. The thread claims it at its first call; it is released when the thread exits. A thread
 * whose slot another thread holds keeps its state in task storage (the threads map) instead,
 * for life. The daemon sizes thread_slots (a power of two, AT_THREAD_SLOTS unless told) and
 * rewrites stack at a hold. */
#define AT_THREAD_SLOTS 32768
struct at_thread {
	__u64 owner;    /* a slot's thread (its registers' key), 0: free; unused in task storage */
	__u64 id;       /* the thread: tgid << 32 | tid (set again when it execs) */
	__u64 time_entry; /* a realloc's entry time */
	__u64 arg[2];
	__u64 memptr;   /* posix_memalign's out-parameter */
	__u32 func;
	__u32 depth;
	__u32 flags;
	__u32 recorded; /* the outermost call in progress belongs to the window */
	__u64 stack;    /* hash of the stack taken at its entry, 0: none */
	__u64 internal_sp; /* the stack pointer at which an entry point is being called by the
			    * allocator itself (probe internal_call), 0: none */
	__u64 allocators;    /* its process's allocators (targets: AT_TARGET_IN each family's),
			      * 0: any object */
	__u32 allocator_gen; /* allocators_gen when they were looked up */
	__u32 pad;
	__s64 sample_left;   /* --sample-bytes: bytes to the thread's next sample point; 0 before
			      * its first allocation (prog/filter.h) */
};

/* How a walk ended, in a stack's flags (enum at_stack_flags, stack_flags.h). */

/* The hash of a stack, the key of the stacks map, computed the same way by the BPF walk, frame
 * by frame, and by the daemon for a stack it walks itself. A walk mixes in the process, then
 * each frame's pc and its mapping's serial (and its kind, when not native), then the flags; a
 * stack that was not walked (its process's mappings not known yet) is its process and first
 * pc. 0 is no key: a
 * hash of 0 is stored as 1 (at_stack_hash_key). The daemon's at_stacks_hash
 * (daemon/stacks/stacks.c) composes these for a whole stack. */
#define AT_STACK_HASH_PRIME 0x100000001b3ull
static inline __attribute__((always_inline)) __u64 at_stack_hash_begin(__u32 tgid)
{
	return tgid * 0x9e3779b97f4a7c15ull;
}

static inline __attribute__((always_inline)) __u64 at_stack_hash_frame(__u64 h, __u64 pc,
									__u32 serial)
{
	h = (h ^ pc) * AT_STACK_HASH_PRIME;
	h = (h ^ serial) * AT_STACK_HASH_PRIME;
	return h ^ (h >> 29);
}

/* A frame's kind (enum at_frame_kind, lib/frames.h) joins the hash after its pc and serial
 * only when it is not native: a native stack's hash is the same with or without kinds. */
static inline __attribute__((always_inline)) __u64 at_stack_hash_kind(__u64 h, __u8 kind)
{
	return kind == AT_FRAME_NATIVE ? h : (h ^ kind) * AT_STACK_HASH_PRIME;
}

static inline __attribute__((always_inline)) __u64 at_stack_hash_flags(__u64 h, __u32 flags)
{
	return h ^ (__u64)flags << 48;
}

static inline __attribute__((always_inline)) __u64 at_stack_hash_unwalked(__u32 tgid, __u64 pc)
{
	return (tgid ^ pc) * AT_STACK_HASH_PRIME;
}

static inline __attribute__((always_inline)) __u64 at_stack_hash_key(__u64 h)
{
	return h ? h : 1;
}

/* A stack: its frames' values (pcs for native frames), for each the serial of the mapping it
 * lay in (0: none) and its kind (enum at_frame_kind of lib/frames.h: the walk writes
 * AT_FRAME_NATIVE; another runtime's walker, its own kind). Its hash mixes pcs and serials, so
 * the same addresses in two objects mapped in turn are two stacks, and the kinds that are not
 * native (at_stack_hash_kind). */
struct at_bpf_stack {
	__u32 pid;
	__u16 count;
	__u16 flags;
	__u64 pcs[AT_BPF_STACK_FRAMES];
	__u32 serials[AT_BPF_STACK_FRAMES];
	__u8 kinds[AT_BPF_STACK_FRAMES];
};

/* The kind of a Python frame in the BPF program's stacks: AT_FRAME_PYTHON with marks the daemon
 * uses and writes as AT_FRAME_PYTHON alone: ENTRY, the frame begins a run of the evaluation
 * loop (the splice needs it, daemon/python/pysplice.h); MODULE, code run with locals of its own
 * (a module's, a class body's, exec's), which runs once and whose code object goes with the
 * module's when the import ends. */
#define AT_BPF_FRAME_PYTHON_ENTRY 0x80
#define AT_BPF_FRAME_PYTHON_MODULE 0x40
static inline __attribute__((always_inline)) int at_bpf_kind_python(__u8 k)
{
	return (k & ~(AT_BPF_FRAME_PYTHON_ENTRY | AT_BPF_FRAME_PYTHON_MODULE)) == AT_FRAME_PYTHON;
}

/* The kind of Python frame f in the program's stacks (bpf/py_layout.h's struct at_py_frame:
 * its globals' low bit marks a frame with locals of its own). */
#define AT_BPF_PYTHON_KIND(f)                                                               \
	(__u8)(AT_FRAME_PYTHON | ((f)->entry ? AT_BPF_FRAME_PYTHON_ENTRY : 0) |                 \
	       (((f)->globals & 1) ? AT_BPF_FRAME_PYTHON_MODULE : 0))

/* Indices of the per-CPU stack_counts array. */
enum at_stack_counter {
	AT_STACKS_WALKED = 0,  /* stacks taken */
	AT_STACKS_NOT_STORED,  /* the stacks map was full: the event carries no stack */
	AT_STACKS_NO_PROCESS,  /* the process had no mappings in proc_mappings yet */
	AT_STACKS_HELD,        /* threads held for the daemon to read new mappings */
	AT_STACKS_PYTHON,      /* stacks given Python frames (prog/python.h) */
	AT_STACKS_PY_NO_THREAD, /* of a Python process, but the thread had no Python state */
	AT_STACKS_PY_BAD,      /* the Python walk met memory it could not read or a chain that
				* made no sense (its frames up to there are kept) */
	AT_STACKS_PY_NOT_ANNOUNCED, /* new stacks with Python frames the py_news ring had no
				     * room to announce */
	AT_STACKS_COUNT
};

#endif
