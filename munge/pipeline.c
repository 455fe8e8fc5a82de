/* pipeline.c: the munge loop, single-threaded or as a reader/parser thread feeding the
 * munging thread through a ring of batches. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "prim.h"

#define BATCH_LINES 4096           /* lines per batch */
#define BATCH_BYTES (256u << 10)   /* a batch closes once its text reaches this size */
#define NBATCHES 4                 /* batches in the ring */
#define PREFETCH_AHEAD 8           /* lines ahead whose pointer slot is prefetched */

/* One line of a batch: where its bytes are in the batch text, and its parse. */
struct batch_line {
	size_t off, len;
	struct at_munge_parsed parsed;
};

struct batch {
	struct batch_line lines[BATCH_LINES];
	unsigned n;
	char *text;         /* the lines' bytes, copied out of the reader's buffer */
	size_t used, cap;
	int last;           /* no batch follows: end of input, or an error */
	int err;            /* errno of a read error, ENOMEM, or 0 */
};

struct pipeline {
	struct at_linereader *r;
	struct batch *batches;       /* NBATCHES */
	pthread_mutex_t lock;
	pthread_cond_t filled_cv, freed_cv;
	uint64_t filled, consumed;   /* batches handed over / given back, ever */
	int stop;                    /* the munging side is done: the reader must stop */
};

/* --- single thread ------------------------------------------------------------------------ */

static int run_single(struct at_munge *m, struct at_linereader *r, struct at_output *out,
		      at_munge_outcome_fn outcome, void *ctx, int *read_errno)
{
	const char *line, *why = NULL;
	size_t len;
	int more;

	while ((more = at_linereader_next(r, &line, &len)) > 0) {
		int rc = at_munge_line(m, line, len, out, &why);
		if (rc == AT_MUNGE_NOMEM)
			return AT_PIPELINE_NOMEM;
		if (outcome(ctx, r->lineno, line, len, rc, why))
			return AT_PIPELINE_STOPPED;
		if (out->err)
			return AT_PIPELINE_DONE;
	}
	if (more < 0) {
		*read_errno = errno;
		return AT_PIPELINE_READ_ERROR;
	}
	return AT_PIPELINE_DONE;
}

/* --- the reader thread -------------------------------------------------------------------- */

/* Copies one line into b's text, growing it when the line does not fit (long lines only). */
static int batch_add(struct batch *b, const char *line, size_t len)
{
	if (b->used + len > b->cap) {
		size_t cap = b->cap;
		while (cap < b->used + len)
			cap *= 2;
		void *text = at_remap(b->text, b->cap, cap);
		if (!text)
			return -1;
		b->text = text;
		b->cap = cap;
	}
	struct batch_line *bl = &b->lines[b->n++];
	bl->off = b->used;
	bl->len = len;
	memcpy(b->text + b->used, line, len);
	b->used += len;
	at_munge_parse(b->text + bl->off, len, &bl->parsed);
	return 0;
}

/* Fills b with the next lines of the input. */
static void batch_fill(struct pipeline *p, struct batch *b)
{
	const char *line;
	size_t len;

	b->n = 0;
	b->used = 0;
	b->last = 0;
	b->err = 0;
	while (b->n < BATCH_LINES && b->used < BATCH_BYTES) {
		int more = at_linereader_next(p->r, &line, &len);
		if (more <= 0) {
			b->last = 1;
			b->err = more < 0 ? errno : 0;
			return;
		}
		if (batch_add(b, line, len) < 0) {
			b->last = 1;
			b->err = ENOMEM;
			return;
		}
	}
}

static void *reader_main(void *arg)
{
	struct pipeline *p = arg;

	for (uint64_t k = 0;; k++) {
		struct batch *b = &p->batches[k % NBATCHES];
		pthread_mutex_lock(&p->lock);
		while (p->filled - p->consumed == NBATCHES && !p->stop)
			pthread_cond_wait(&p->freed_cv, &p->lock);
		int stop = p->stop;
		pthread_mutex_unlock(&p->lock);
		if (stop)
			break;
		batch_fill(p, b);
		pthread_mutex_lock(&p->lock);
		p->filled++;
		pthread_cond_signal(&p->filled_cv);
		pthread_mutex_unlock(&p->lock);
		if (b->last)
			break;
	}
	return NULL;
}

/* --- the munging side --------------------------------------------------------------------- */

/* Munges the lines of b. Returns an AT_PIPELINE_* code, or -3 to go on with the next batch. */
static int munge_batch(struct at_munge *m, const struct batch *b, struct at_output *out,
		       at_munge_outcome_fn outcome, void *ctx, uint64_t *lineno)
{
	const char *why = NULL;

	for (unsigned i = 0; i < b->n; i++) {
		if (i + PREFETCH_AHEAD < b->n)
			at_munge_prefetch(m, &b->lines[i + PREFETCH_AHEAD].parsed);
		const struct batch_line *bl = &b->lines[i];
		const char *line = b->text + bl->off;
		int rc = at_munge_apply(m, line, bl->len, &bl->parsed, out, &why);
		if (rc == AT_MUNGE_NOMEM)
			return AT_PIPELINE_NOMEM;
		if (outcome(ctx, ++*lineno, line, bl->len, rc, why))
			return AT_PIPELINE_STOPPED;
		if (out->err)
			return AT_PIPELINE_DONE;
	}
	return -3;
}

static void free_batches(struct batch *batches)
{
	if (!batches)
		return;
	for (unsigned i = 0; i < NBATCHES; i++)
		at_unmap(batches[i].text, batches[i].cap);
	at_unmap(batches, NBATCHES * sizeof(*batches));
}

/* Batches are populated mappings: one call maps all their pages, where first touches would
 * take a page fault each. */
static struct batch *alloc_batches(void)
{
	struct batch *batches = at_map(NBATCHES * sizeof(*batches), AT_MAP_POPULATE);

	for (unsigned i = 0; batches && i < NBATCHES; i++) {
		batches[i].cap = BATCH_BYTES * 2;
		batches[i].text = at_map(batches[i].cap, AT_MAP_POPULATE);
		if (!batches[i].text) {
			free_batches(batches);
			return NULL;
		}
	}
	return batches;
}

int at_munge_run(struct at_munge *m, struct at_linereader *r, struct at_output *out,
		 int threads, at_munge_outcome_fn outcome, void *ctx, int *read_errno)
{
	struct pipeline p = { .r = r };
	pthread_t reader;
	uint64_t lineno = r->lineno;
	int rc = AT_PIPELINE_DONE;

	if (threads < 2 || !(p.batches = alloc_batches()))
		return run_single(m, r, out, outcome, ctx, read_errno);
	pthread_mutex_init(&p.lock, NULL);
	pthread_cond_init(&p.filled_cv, NULL);
	pthread_cond_init(&p.freed_cv, NULL);
	if (pthread_create(&reader, NULL, reader_main, &p) != 0) {
		rc = run_single(m, r, out, outcome, ctx, read_errno);
		goto cleanup;
	}
	for (uint64_t k = 0;; k++) {
		const struct batch *b = &p.batches[k % NBATCHES];
		pthread_mutex_lock(&p.lock);
		while (p.consumed == p.filled)
			pthread_cond_wait(&p.filled_cv, &p.lock);
		pthread_mutex_unlock(&p.lock);
		rc = munge_batch(m, b, out, outcome, ctx, &lineno);
		int done = rc != -3 || b->last;
		if (rc == -3) {
			rc = AT_PIPELINE_DONE;
			if (b->err == ENOMEM) {
				rc = AT_PIPELINE_NOMEM;
			} else if (b->err) {
				*read_errno = b->err;
				rc = AT_PIPELINE_READ_ERROR;
			}
		}
		pthread_mutex_lock(&p.lock);
		p.consumed++;
		if (done)
			p.stop = 1;
		pthread_cond_signal(&p.freed_cv);
		pthread_mutex_unlock(&p.lock);
		if (done)
			break;
	}
	pthread_join(reader, NULL);
cleanup:
	pthread_cond_destroy(&p.freed_cv);
	pthread_cond_destroy(&p.filled_cv);
	pthread_mutex_destroy(&p.lock);
	free_batches(p.batches);
	return rc;
}
