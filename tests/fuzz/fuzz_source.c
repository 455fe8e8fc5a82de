/* fuzz_source.c: lib/source (at_source_open_fd, at_source_next) over arbitrary bytes.
 *
 * The input is a whole log: text, raw or munged, or an .atz trace, as the sniffer decides.
 * Every event read must be one the event model allows; the events of a text log, printed again
 * in the log's kind (at_format_raw or at_format_munged) and read by a second source, must come
 * back identical. */
#include "display.h"
#include "fuzz_input.h"
#include "source.h"
#include "text.h"

/* Events kept for the round trip; later ones are still read and checked. */
#define ROUND_TRIP_MAX 100000

struct events {
	struct at_event *v;
	size_t n, cap;
};

static void events_push(struct events *e, const struct at_event *ev)
{
	if (e->n == ROUND_TRIP_MAX)
		return;
	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 64;
		e->v = realloc(e->v, e->cap * sizeof(*e->v));
		FUZZ_CHECK(e->v != NULL);
	}
	e->v[e->n++] = *ev;
}

static int same_event(const struct at_event *a, const struct at_event *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->func == b->func &&
	       a->has_result == b->has_result && a->arg[0] == b->arg[0] &&
	       a->arg[1] == b->arg[1] && a->result == b->result;
}

/* What the text reader promises of an event it returns. */
static void check_text_event(const struct at_event *ev)
{
	FUZZ_CHECK(ev->func < AT_FUNC_COUNT);
	FUZZ_CHECK(!ev->has_result || at_func_returns_pointer(ev->func));
	FUZZ_CHECK(ev->has_result || ev->result == 0);
	FUZZ_CHECK(at_func_nargs[ev->func] >= 2 || ev->arg[1] == 0);
	FUZZ_CHECK(at_func_nargs[ev->func] >= 1 || ev->arg[0] == 0);
}

/* Reads every event of fd into *out (text errors on single lines are skipped, as the tools
 * skip them). Returns the source's final munged flag. */
static int read_all(int fd, struct events *out, int *binary)
{
	struct at_source s;
	struct at_event ev;

	if (at_source_open_fd(&s, fd, "<fuzz>") < 0) {
		at_source_close(&s);
		return -1;
	}
	*binary = s.kind == AT_SOURCE_BINARY;
	for (;;) {
		int rc = at_source_next(&s, &ev);
		if (rc == 0)
			break;
		if (rc < 0) {
			if (s.kind == AT_SOURCE_BINARY) {
				const char *m = at_atz_reader_message(s.atz);
				FUZZ_CHECK(m != NULL && strlen(m) > 0);
			} else {
				FUZZ_CHECK(s.why != NULL);
			}
			if (s.fatal)
				break;
			continue;
		}
		FUZZ_CHECK(ev.func < AT_FUNC_COUNT);
		if (s.kind == AT_SOURCE_TEXT)
			check_text_event(&ev);
		events_push(out, &ev);
	}
	FUZZ_CHECK(at_source_next(&s, &ev) <= 0); /* the end or a fatal error stays so */
	int munged = s.munged;
	at_source_close(&s);
	return munged;
}

/* Prints the events as a log of the given kind and reads it back: the same events. */
static void round_trip(const struct events *in, int munged)
{
	char *text = malloc(in->n * AT_LINE_MAX + 1);
	size_t len = 0;

	FUZZ_CHECK(text != NULL);
	for (size_t i = 0; i < in->n; i++) {
		size_t n = munged == 1 ? at_format_munged(text + len, &in->v[i])
				       : at_format_raw(text + len, &in->v[i]);
		FUZZ_CHECK(n > 0 && n <= AT_LINE_MAX && text[len + n - 1] == '\n');
		len += n;
	}
	int fd = fuzz_memfd((const uint8_t *)text, len);
	struct events back = { 0 };
	int binary;
	read_all(fd, &back, &binary);
	FUZZ_CHECK(!binary);
	FUZZ_CHECK(back.n == in->n);
	for (size_t i = 0; i < in->n; i++)
		FUZZ_CHECK(same_event(&back.v[i], &in->v[i]));
	free(back.v);
	close(fd);
	free(text);
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
	int fd = fuzz_memfd(data, size);
	struct events ev = { 0 };
	int binary = 0;
	int munged = read_all(fd, &ev, &binary);

	close(fd);
	if (!binary)
		round_trip(&ev, munged);
	free(ev.v);
	return 0;
}
