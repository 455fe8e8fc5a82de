/* emit.c: the replayed workload with the allocator's pointers, as raw logalloc text. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "display.h"
#include "emit.h"
#include "prim.h"
#include "sink.h"

/* The line of op i with the pointers it passed and got. */
static void put_op(struct at_sink *sink, const struct rp_oplist *ol, const struct rp_results *res,
		   uint64_t i)
{
	struct at_event ev = ol->ev[i];

	if (ev.func == AT_JEMALLOC_STATS)
		ev.result = 0;
	if (at_func_takes_pointer(ev.func))
		ev.arg[0] = (uintptr_t)res->taken[i];
	if (at_func_returns_pointer(ev.func))
		ev.result = (uintptr_t)res->result[i];
	at_sink_put(sink, &ev);
}

/* Reallocs whose release was numbered and that are not written yet, by the pointer they
 * released: open addressing over a mapped table, deleted entries marked. */
struct pending {
	uintptr_t *key;
	uint64_t *op;
	uint64_t mask;
};
#define DELETED ((uintptr_t)1)

static uint64_t slot_of(const struct pending *p, uintptr_t k)
{
	return (uint64_t)((k >> 4) * UINT64_C(0x9E3779B97F4A7C15)) & p->mask;
}

static void pending_put(struct pending *p, uintptr_t k, uint64_t op)
{
	uint64_t h = slot_of(p, k);

	while (p->key[h] && p->key[h] != DELETED && p->key[h] != k)
		h = (h + 1) & p->mask;
	p->key[h] = k;
	p->op[h] = op;
}

/* Removes k; returns its op, or UINT64_MAX when k is not pending. */
static uint64_t pending_take(struct pending *p, uintptr_t k)
{
	for (uint64_t h = slot_of(p, k); p->key[h]; h = (h + 1) & p->mask)
		if (p->key[h] == k) {
			p->key[h] = DELETED;
			return p->op[h];
		}
	return UINT64_MAX;
}

/* Writes the ops of a threaded replay in the order their calls happened (threads.h): each at
 * its number, except a realloc, which goes at its return unless an allocation returns the
 * block it released first: then just before that allocation, as alloctapd orders them. */
static int put_in_call_order(struct at_sink *sink, const struct rp_oplist *ol,
			     const struct rp_results *res)
{
	uint64_t reallocs = res->numbers - ol->n, cap = 16;
	while (cap < 2 * reallocs + 16)
		cap *= 2;
	size_t at_bytes = (res->numbers ? res->numbers : 1) * sizeof(uint64_t);
	uint64_t *at = at_map(at_bytes, AT_MAP_NORESERVE);
	uint8_t *written = at_map(ol->n ? ol->n : 1, AT_MAP_NORESERVE);
	struct pending p = { at_map(cap * sizeof(uintptr_t), 0), at_map(cap * sizeof(uint64_t), 0),
			     cap - 1 };
	int rc = -1;

	if (!at || !written || !p.key || !p.op)
		goto cleanup;
	for (uint64_t i = 0; i < ol->n; i++) {
		at[res->seq[i]] = i * 2;
		if (at_func_reallocates(ol->ev[i].func))
			at[res->seq_entry[i]] = i * 2 + 1;
	}
	for (uint64_t k = 0; k < res->numbers; k++) {
		uint64_t i = at[k] / 2;
		if (at[k] & 1) { /* a realloc's release */
			if (res->taken[i])
				pending_put(&p, (uintptr_t)res->taken[i], i);
			continue;
		}
		if (written[i])
			continue;
		if (at_func_returns_pointer(ol->ev[i].func) && res->result[i]) {
			uint64_t r = pending_take(&p, (uintptr_t)res->result[i]);
			if (r != UINT64_MAX && r != i) {
				put_op(sink, ol, res, r);
				written[r] = 1;
			}
		}
		if (at_func_reallocates(ol->ev[i].func) && res->taken[i])
			pending_take(&p, (uintptr_t)res->taken[i]);
		put_op(sink, ol, res, i);
		written[i] = 1;
	}
	rc = 0;
cleanup:
	at_unmap(at, at_bytes);
	at_unmap(written, ol->n ? ol->n : 1);
	at_unmap(p.key, cap * sizeof(uintptr_t));
	at_unmap(p.op, cap * sizeof(uint64_t));
	return rc;
}

int rp_emit(const char *path, const struct rp_oplist *ol, const struct rp_results *res)
{
	struct at_sink sink;
	struct at_sink_options opt = { .format = AT_SINK_TEXT, .munged = 0 };
	int err = 0;

	if (at_sink_open(&sink, path, AT_SINK_TRUNCATE) < 0) {
		at_error("%s: %s", path, at_sink_open_why(&sink));
		return -1;
	}
	if (at_sink_start(&sink, &opt) < 0) {
		err = at_sink_error(&sink);
	} else if (res->numbers) {
		if (put_in_call_order(&sink, ol, res) < 0)
			err = errno;
	} else {
		for (uint64_t i = 0; i < ol->n; i++)
			put_op(&sink, ol, res, i);
	}
	if (at_sink_close(&sink) < 0 && !err)
		err = at_sink_error(&sink);
	if (!err)
		return 0;
	at_write_error(at_sink_name(&sink), err);
	return -1;
}
