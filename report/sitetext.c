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
	put_leaf_first(out, &w, 0);
	fputc('\n', out);
}

void rep_site_frames(const struct rep_heap *h, const struct rep_site *s, rep_frame_fn fn,
		     void *arg)
{
	const struct rep_sites *x = rep_heap_namer(h);
	struct rep_frame named = { .function = at_func_name[x->origins[s->key].func] };
	const uint32_t *locs = NULL;
	size_t n = 0;
	unsigned flags = 0;

	fn(arg, &named);
	if (s->stack)
		locs = rep_stacks_locations(x->stacks, s->stack, &n, &flags);
	for (size_t i = n; i-- > 0;) {
		const struct rep_location *l = rep_frames_location(&x->frames, locs[i]);
		for (uint32_t k = 0; k < l->count; k++)
			fn(arg, rep_frames_line(&x->frames, l, k));
	}
	if (flags & AT_STACK_TRUNCATED) {
		named.function = "[truncated]";
		fn(arg, &named);
	}
	if (flags & AT_STACK_INCOMPLETE) {
		named.function = "[incomplete]";
		fn(arg, &named);
	}
}
