/* fuzz_replay.c: alloctap-replay's reader (replay/feed.c) over an arbitrary input.
 *
 * The first input byte chooses the slot limit: bit 0 set, 4096 slots (so that slot numbers
 * past the limit are easy to reach), else the replayer's own (RP_SLOT_LIMIT). The rest is the
 * input, text or .atz as lib/source sniffs it. It is read as alloctap-replay --load reads it:
 * every event admitted by the engine and loaded into an op list (replay/oplist.h), which calls
 * no allocator, so that nothing the input asks for is allocated here. The feed must end with
 * 0 or -1; after 0, the op list must keep its promises: each op's thread known (or a marker),
 * each dependency an earlier op of another thread, every instance numbered within the count
 * handed out, and a free or realloc naming an instance an earlier allocation made, or none. */
#include "display.h"
#include "fuzz_input.h"
#include "replay/feed.h"
#include "replay/oplist.h"
#include "source.h"

#define SMALL_SLOT_LIMIT 4096

/* Checks the list's promises once rp_oplist_finish has numbered the instances. */
static void check_oplist(const struct rp_oplist *ol)
{
	uint8_t *made = calloc(ol->instances + 1, 1);

	FUZZ_CHECK(made != NULL);
	FUZZ_CHECK(ol->nthreads <= RP_MAX_THREADS);
	for (uint64_t i = 0; i < ol->n; i++) {
		const struct at_event *ev = &ol->ev[i];
		if (ol->thread[i] == RP_NO_OP) {
			FUZZ_CHECK(ev->func == AT_JEMALLOC_STATS);
			continue;
		}
		FUZZ_CHECK(ol->thread[i] < ol->nthreads);
		FUZZ_CHECK(ol->tid[ol->thread[i]] == ev->tid);
		if (ol->dep[i] != RP_NO_OP) {
			FUZZ_CHECK(ol->dep[i] < i && ol->awaited[ol->dep[i]]);
			FUZZ_CHECK(ol->thread[ol->dep[i]] != ol->thread[i]);
		}
		if (at_func_takes_pointer(ev->func))
			FUZZ_CHECK(ev->arg[0] == 0 || (ev->arg[0] <= ol->instances && made[ev->arg[0]]));
		if (at_func_returns_pointer(ev->func)) {
			FUZZ_CHECK(ev->result >= 1 && ev->result <= ol->instances);
			FUZZ_CHECK(!made[ev->result]);
			made[ev->result] = 1;
		}
	}
	free(made);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	at_display_level = 0;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint64_t limit = data[0] & 1 ? SMALL_SLOT_LIMIT : RP_SLOT_LIMIT;
	int fd = fuzz_memfd(data + 1, size - 1);
	struct at_source src = { .kind = AT_SOURCE_TEXT };
	struct rp_engine e;
	struct rp_oplist ol;

	FUZZ_CHECK(rp_engine_init(&e, limit, 0) == 0);
	FUZZ_CHECK(rp_oplist_init(&ol, limit) == 0);
	if (at_source_open_fd(&src, fd, "<fuzz>") == 0) {
		int rc = rp_feed(&src, &e, &ol);
		FUZZ_CHECK(rc == 0 || rc == -1);
		if (rc == 0) {
			FUZZ_CHECK(rp_oplist_finish(&ol) == 0);
			check_oplist(&ol);
		}
	}
	at_source_close(&src);
	rp_oplist_fini(&ol);
	rp_engine_fini(&e);
	close(fd);
	return 0;
}
