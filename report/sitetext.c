/* sitetext.c: sites leaf first, their shared callers said once (sitetext.h). */
#include <string.h>

#include "sitetext.h"
#include "stacks.h"

void rep_split_words(const char *text, size_t len, struct rep_site_words *w)
{
	size_t start = 0;

	w->n = 0;
	for (size_t i = 0; i <= len && w->n < REP_SITE_WORDS_MAX; i++) {
		if (i < len && text[i] != ';')
			continue;
		w->at[w->n] = text + start;
		w->len[w->n++] = i - start;
		start = i + 1;
	}
}

/* The words of site s of h into w. */
static void words_of(const struct rep_heap *h, const struct rep_site *s,
		     struct rep_site_words *w)
{
	size_t len;
	const char *text = rep_heap_site_text(h, s, &len);

	rep_split_words(text, len, w);
}

size_t rep_shared_callers(const struct rep_heap *h, const struct rep_site *sites,
			  const uint32_t *idx, size_t n)
{
	static struct rep_site_words first, other; /* large: not on the stack */
	size_t shared;

	if (n == 0)
		return 0;
	words_of(h, &sites[idx[0]], &first);
	shared = first.n > 2 ? first.n - 2 : 0;
	for (size_t k = 1; k < n && shared; k++) {
		words_of(h, &sites[idx[k]], &other);
		size_t same = 0;
		while (same < shared && same + 2 <= other.n && first.len[same] == other.len[same] &&
		       memcmp(first.at[same], other.at[same], first.len[same]) == 0)
			same++;
		shared = same;
	}
	return shared;
}

/* Writes words [skip, w->n) leaf first, " < " between them. */
static void put_leaf_first(FILE *out, const struct rep_site_words *w, size_t skip)
{
	for (size_t i = w->n; i > skip; i--)
		fprintf(out, "%s%.*s", i == w->n ? "" : " < ", (int)w->len[i - 1], w->at[i - 1]);
}

void rep_put_site(FILE *out, const struct rep_heap *h, const struct rep_site *s, size_t skip)
{
	static struct rep_site_words w;

	words_of(h, s, &w);
	put_leaf_first(out, &w, skip);
}

void rep_put_called_from(FILE *out, const struct rep_heap *h, const struct rep_site *s,
			 size_t shared, int indent)
{
	static struct rep_site_words w;

	if (!shared)
		return;
	words_of(h, s, &w);
	if (w.n > shared)
		w.n = shared;
	fprintf(out, "%*severy site above is called from: ", indent, "");
	size_t skip = w.n > REP_CALLERS_SHOWN ? w.n - REP_CALLERS_SHOWN : 0;
	put_leaf_first(out, &w, skip);
	if (skip)
		fprintf(out, " < (%zu frames more, to the root: --json gives them)", skip);
	fputc('\n', out);
}

/* The frames of a site that are not the stack's own (the allocation function, the marks of
 * a cut stack), kept for rep_site_frame_list. */
static struct rep_frame func_frames[AT_FUNC_COUNT];
static const struct rep_frame truncated = { .function = "[truncated]" };
static const struct rep_frame incomplete = { .function = "[incomplete]" };

void rep_site_frames(const struct rep_heap *h, const struct rep_site *s, rep_frame_fn fn,
		     void *arg)
{
	const struct rep_sites *x = rep_heap_namer(h);
	unsigned func = x->origins[s->key].func;
	const uint32_t *locs = NULL;
	size_t n = 0;
	unsigned flags = 0;

	func_frames[func].function = at_func_name[func];
	fn(arg, &func_frames[func]);
	if (s->stack)
		locs = rep_stacks_locations(x->stacks, s->stack, &n, &flags);
	for (size_t i = n; i-- > 0;) {
		const struct rep_location *l = rep_frames_location(&x->frames, locs[i]);
		for (uint32_t k = 0; k < l->count; k++)
			fn(arg, rep_frames_line(&x->frames, l, k));
	}
	if (flags & AT_STACK_TRUNCATED)
		fn(arg, &truncated);
	if (flags & AT_STACK_INCOMPLETE)
		fn(arg, &incomplete);
}

struct frame_list {
	const struct rep_frame **at;
	size_t n, max;
};

static void list_frame(void *arg, const struct rep_frame *f)
{
	struct frame_list *l = arg;

	if (l->n < l->max)
		l->at[l->n++] = f;
}

size_t rep_site_frame_list(const struct rep_heap *h, const struct rep_site *s,
			   const struct rep_frame **at, size_t max)
{
	struct frame_list l = { at, 0, max };

	rep_site_frames(h, s, list_frame, &l);
	for (size_t i = 0; i < l.n / 2; i++) { /* root first */
		const struct rep_frame *f = at[i];
		at[i] = at[l.n - 1 - i];
		at[l.n - 1 - i] = f;
	}
	return l.n;
}

static void json_frame(void *arg, const struct rep_frame *f)
{
	struct rep_json *j = arg;
	char word[1024];
	int n = rep_frame_word(f, 0, word, sizeof(word));

	rep_json_object(j);
	rep_json_key(j, "function");
	rep_json_string(j, word, n < (int)sizeof(word) ? (size_t)n : sizeof(word) - 1);
	if (f->file)
		rep_json_key_cstring(j, "file", f->file);
	if (f->line)
		rep_json_key_u64(j, "line", f->line);
	if (f->inlined) {
		rep_json_key(j, "inlined");
		rep_json_true(j);
	}
	if (f->kind != AT_FRAME_NATIVE && at_frame_kind_name(f->kind))
		rep_json_key_cstring(j, "kind", at_frame_kind_name(f->kind));
	rep_json_object_end(j);
}

void rep_json_site(struct rep_json *j, const struct rep_heap *h, const struct rep_site *s)
{
	rep_json_array(j);
	rep_site_frames(h, s, json_frame, j);
	rep_json_array_end(j);
}
