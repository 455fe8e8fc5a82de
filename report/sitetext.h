/* sitetext.h: a site as people read it, leaf first.
 *
 * A site's text (rep_heap_site_text: its located line, root first) is split into its frames'
 * words, and written leaf first joined by " < ": "malloc < keep_blocks (app.c:24) < main
 * (app.c:78) < ...". A list of sites leaves out the root frames they all share, which are said
 * once after it ("every site above is called from: ..."). top, leaks and sizes write their
 * sites this way. Not for use from two threads (the words are split into static storage). */
#ifndef ALLOCTAP_REPORT_SITETEXT_H
#define ALLOCTAP_REPORT_SITETEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "frames.h"
#include "heap.h"
#include "json.h"

/* The most frames of a site split; a deeper site's root frames past it are left out. */
#define REP_SITE_WORDS_MAX 1024

/* The frames of a site's text, root first: each a pointer into the text and a length. */
struct rep_site_words {
	const char *at[REP_SITE_WORDS_MAX];
	size_t len[REP_SITE_WORDS_MAX];
	size_t n;
};

/* Splits text[0..len) at ';' into w. */
void rep_split_words(const char *text, size_t len, struct rep_site_words *w);

/* How many root frames the sites idx[0..n) of h all share, leaving each at least its
 * allocation function and one frame. */
size_t rep_shared_callers(const struct rep_heap *h, const struct rep_site *sites,
			  const uint32_t *idx, size_t n);

/* Writes site s leaf first, " < " between frames, its skip root frames left out. */
void rep_put_site(FILE *out, const struct rep_heap *h, const struct rep_site *s, size_t skip);

/* The most shared callers said (the nearest the sites); the rest are counted. */
#define REP_CALLERS_SHOWN 12

/* Writes, when shared is not 0, indent spaces and "every site above is called from: " and the
 * shared root frames of s, leaf first, at most REP_CALLERS_SHOWN of them (then "(N frames
 * more, to the root: --json gives them)"), and a newline. */
void rep_put_called_from(FILE *out, const struct rep_heap *h, const struct rep_site *s,
			 size_t shared, int indent);

/* Calls fn(arg, frame) for each frame of site s, leaf first, as records: the allocation
 * function (a frame with its name only), the frames of its stack's locations (each location's
 * innermost first: an inlined function before the function it was inlined into), then
 * "[truncated]" and "[incomplete]" (names only) when its stack was cut. The frame is valid
 * for the call only. */
typedef void (*rep_frame_fn)(void *arg, const struct rep_frame *f);
void rep_site_frames(const struct rep_heap *h, const struct rep_site *s, rep_frame_fn fn,
		     void *arg);

/* The frames of site s root first (rep_site_frames' order reversed), into at[0..max): how
 * many, at most max (the frames nearest the leaf kept). Pointers valid as long as the
 * sites' namer. */
size_t rep_site_frame_list(const struct rep_heap *h, const struct rep_site *s,
			   const struct rep_frame **at, size_t max);

/* Site s's stack as a JSON array (rep_site_frames' order, leaf first) of one object per frame:
 * {"function": its word (rep_frame_word: an unnamed frame's object and address)}, with "file"
 * and "line" where known and "inlined": true for a function inlined into the next frame. */
void rep_json_site(struct rep_json *j, const struct rep_heap *h, const struct rep_site *s);

#endif
