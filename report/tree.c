/* tree.c: call trees of the bytes live at a moment, as text and as Graphviz (tree.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "finish.h"
#include "sitetext.h"
#include "json.h"
#include "tree.h"
#include "units.h"

/* A frame of the tree: its function (the folded word, which nodes merge by), and where it
 * is (the located word of the first site through it), shown while every site through it
 * agrees; the function alone once two lines of it meet. */
struct node {
	const char *name;
	size_t len;
	const char *where;
	size_t where_len;
	const struct rep_frame *frame; /* the first site's frame here; NULL when two places meet */
	uint64_t bytes, blocks;
	int64_t child, sibling; /* -1: none */
};

struct tree {
	struct node *n;
	size_t count, cap;
	int bottom_up; /* built from the leaves: a node's children are its callers */
};

static int64_t add_node(struct tree *t, const char *name, size_t len)
{
	if (t->count == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct node *n = realloc(t->n, cap * sizeof(*n));
		if (!n)
			return -1;
		t->n = n;
		t->cap = cap;
	}
	t->n[t->count] = (struct node){ name, len, name, len, NULL, 0, 0, -1, -1 };
	return (int64_t)t->count++;
}

/* Node c, new or not, is reached by a site whose located word there is w[0..n), its frame f
 * (NULL: unknown). */
static void place(struct node *c, int is_new, const char *w, size_t n, const struct rep_frame *f)
{
	if (is_new) {
		c->where = w;
		c->where_len = n;
		c->frame = f;
	} else if (c->where_len != n || memcmp(c->where, w, n) != 0) {
		c->where = c->name; /* two places of one function: its name alone */
		c->where_len = c->len;
		c->frame = NULL;
	}
}

/* The child of parent named name (added when new); -1 on ENOMEM. */
static int64_t child_of(struct tree *t, int64_t parent, const char *name, size_t len)
{
	int64_t c;

	for (c = t->n[parent].child; c >= 0; c = t->n[c].sibling)
		if (t->n[c].len == len && memcmp(t->n[c].name, name, len) == 0)
			return c;
	c = add_node(t, name, len);
	if (c >= 0) {
		t->n[c].sibling = t->n[parent].child;
		t->n[parent].child = c;
	}
	return c;
}

static void value_at(const struct rep_site *s, enum rep_moment_kind at, uint64_t *bytes,
		     uint64_t *blocks)
{
	*bytes = at == REP_AT_PEAK ? s->peak_bytes : s->moment_bytes;
	*blocks = at == REP_AT_PEAK ? s->peak_blocks : s->moment_blocks;
}

/* Adds one site's bytes and blocks along its words (folded f, located l, frames fr: all root
 * first, n of each; fr NULL when its frames are not its words), from the root or, bottom_up,
 * from the leaf. 0, or -1 on ENOMEM. */
static int add_site(struct tree *t, const struct rep_site_words *f,
		    const struct rep_site_words *l, const struct rep_frame *const *fr,
		    uint64_t bytes, uint64_t blocks)
{
	int64_t at_node = 0;

	t->n[0].bytes = rep_sat_add(t->n[0].bytes, bytes);
	t->n[0].blocks += blocks;
	for (size_t step = 0; step < f->n; step++) {
		size_t i = t->bottom_up ? f->n - 1 - step : step, before = t->count;
		at_node = child_of(t, at_node, f->at[i], f->len[i]);
		if (at_node < 0)
			return -1;
		place(&t->n[at_node], t->count > before, l->at[i], l->len[i], fr ? fr[i] : NULL);
		t->n[at_node].bytes = rep_sat_add(t->n[at_node].bytes, bytes);
		t->n[at_node].blocks += blocks;
	}
	return 0;
}

/* The tree of process proc: node 0 is the root (all), its total the process's; its first
 * level the outermost frames, or (t->bottom_up) the allocation functions. */
static int build(struct tree *t, const struct rep_heap *h, size_t proc, enum rep_moment_kind at)
{
	static const struct rep_frame *frames[REP_SITE_WORDS_MAX]; /* a site's, root first */
	static struct rep_site_words folded, located;
	const struct rep_site *sites;
	size_t n = rep_heap_sites(h, &sites);

	t->count = 0;
	if (add_node(t, "all", 3) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint64_t bytes, blocks;
		size_t len, llen;
		if (sites[i].proc != proc)
			continue;
		value_at(&sites[i], at, &bytes, &blocks);
		if (!bytes && !blocks)
			continue;
		const char *text = rep_heap_site_folded(h, &sites[i], &len);
		const char *where = rep_heap_site_text(h, &sites[i], &llen);
		size_t nframes = rep_site_frame_list(h, &sites[i], frames, REP_SITE_WORDS_MAX);
		rep_split_words(text, len, &folded);
		rep_split_words(where, llen, &located);
		if (located.n != folded.n) /* a text cut at its longest: the function alone */
			located = folded;
		if (add_site(t, &folded, &located, nframes == folded.n ? frames : NULL, bytes,
			     blocks) < 0)
			return -1;
	}
	return 0;
}

static const struct tree *sorting;

static int by_bytes(const void *a, const void *b)
{
	const struct node *x = &sorting->n[*(const int64_t *)a], *y = &sorting->n[*(const int64_t *)b];

	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	int c = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The children of a node, ordered (most bytes first); *n of them; NULL with errno. */
static int64_t *children(const struct tree *t, int64_t node, size_t *n)
{
	size_t count = 0;

	for (int64_t c = t->n[node].child; c >= 0; c = t->n[c].sibling)
		count++;
	int64_t *kids = malloc((count ? count : 1) * sizeof(*kids));
	if (!kids)
		return NULL;
	count = 0;
	for (int64_t c = t->n[node].child; c >= 0; c = t->n[c].sibling)
		kids[count++] = c;
	sorting = t;
	qsort(kids, count, sizeof(*kids), by_bytes);
	*n = count;
	return kids;
}

/* What a tree leaves out: the threshold, and the frames under it and their bytes; the depth
 * (0: none), and the frames below it. */
struct left_out {
	unsigned min_percent;
	uint64_t frames, bytes;
	unsigned depth;
	uint64_t deeper;
};

/* The frames below node (of at least 1 byte), as a depth limit leaves them out. */
static uint64_t frames_below(const struct tree *t, int64_t node)
{
	uint64_t n = 0;

	for (int64_t c = t->n[node].child; c >= 0; c = t->n[c].sibling)
		if (t->n[c].bytes)
			n += 1 + frames_below(t, c);
	return n;
}

static int print_node(FILE *out, const struct tree *t, int64_t node, unsigned depth, uint64_t total,
		      struct left_out *l)
{
	const struct node *x = &t->n[node];
	char b[REP_BYTES_SIZE];
	size_t n;

	if (!x->bytes)
		return 0;
	if ((rep_u128)x->bytes * 100 < (rep_u128)total * l->min_percent) {
		l->frames++;
		l->bytes = rep_sat_add(l->bytes, x->bytes);
		return 0;
	}
	fprintf(out, "%6.2f%% %18s %8" PRIu64 " blocks  %*s%.*s\n",
		total ? 100.0 * (double)x->bytes / (double)total : 0.0, rep_bytes_said(x->bytes, b),
		x->blocks,
		(int)(2 * depth), "", (int)x->where_len, x->where);
	if (l->depth && depth == l->depth) {
		l->deeper += frames_below(t, node);
		return 0;
	}
	int64_t *kids = children(t, node, &n);
	if (!kids)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (print_node(out, t, kids[i], depth + 1, total, l) < 0) {
			free(kids);
			return -1;
		}
	free(kids);
	return 0;
}

int rep_write_tree(FILE *out, const struct rep_heap *h, enum rep_moment_kind at, const char *what,
		   const struct rep_tree_options *o)
{
	const struct rep_proc *procs;
	size_t np = rep_heap_procs(h, &procs);
	struct tree t = { .bottom_up = o->bottom_up };
	char b[REP_BYTES_SIZE];
	int rc = 0;

	for (size_t p = 0; p < np && rc == 0; p++) {
		if (np > 1)
			fprintf(out, "== process %" PRIu32 "\n", procs[p].pid);
		if (build(&t, h, p, at) < 0) {
			rc = -1;
			break;
		}
		fprintf(out, "live at %s: %s in %" PRIu64 " blocks%s\n", what,
			rep_bytes_said(t.n[0].bytes, b), t.n[0].blocks,
			o->bottom_up ? " (bottom-up: each allocation function, then its callers)" : "");
		struct left_out l = { .min_percent = o->min_percent, .depth = o->depth };
		if (t.n[0].bytes)
			rc = print_node(out, &t, 0, 0, t.n[0].bytes, &l);
		if (rc == 0 && l.frames)
			fprintf(out, "(%" PRIu64 " frames under %u%% left out, %s; "
				"--min-percent 0 shows them)\n", l.frames, o->min_percent,
				rep_bytes_said(l.bytes, b));
		if (rc == 0 && l.deeper)
			fprintf(out, "(%" PRIu64 " frames deeper than %u levels left out, their bytes "
				"in the frames above them; --depth 0 shows them)\n", l.deeper, o->depth);
	}
	free(t.n);
	return rc < 0 ? -1 : rep_finish_output(out);
}

/* ---- JSON --------------------------------------------------------------------------------- */

/* The callees of node (at least min_percent of total each) as an array of frames, those left
 * out counted in l. */
static int json_callees(struct rep_json *j, const struct tree *t, int64_t node, unsigned depth,
			uint64_t total, struct left_out *l)
{
	size_t n;
	int64_t *kids = children(t, node, &n);
	int rc = 0;

	if (!kids)
		return -1;
	rep_json_array(j);
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct node *x = &t->n[kids[i]];

		if (!x->bytes)
			continue;
		if ((rep_u128)x->bytes * 100 < (rep_u128)total * l->min_percent) {
			l->frames++;
			l->bytes = rep_sat_add(l->bytes, x->bytes);
			continue;
		}
		rep_json_object(j);
		rep_json_key(j, "function");
		rep_json_string(j, x->name, x->len);
		if (x->frame && x->frame->function && x->frame->file && x->frame->line) {
			rep_json_key_cstring(j, "file", x->frame->file);
			rep_json_key_u64(j, "line", x->frame->line);
		}
		if (x->frame && x->frame->kind != AT_FRAME_NATIVE &&
		    at_frame_kind_name(x->frame->kind))
			rep_json_key_cstring(j, "kind", at_frame_kind_name(x->frame->kind));
		rep_json_key_u64(j, "bytes", x->bytes);
		rep_json_key_u64(j, "blocks", x->blocks);
		rep_json_key(j, t->bottom_up ? "callers" : "callees");
		if (l->depth && depth + 1 == l->depth) {
			l->deeper += frames_below(t, kids[i]);
			rep_json_array(j);
			rep_json_array_end(j);
		} else {
			rc = json_callees(j, t, kids[i], depth + 1, total, l);
		}
		rep_json_object_end(j);
	}
	rep_json_array_end(j);
	free(kids);
	return rc;
}

/* The moment's name in JSON. */
static const char *moment_name(enum rep_moment_kind at)
{
	return at == REP_AT_PEAK ? "heap-peak" : at == REP_AT_RSS_PEAK ? "rss-peak"
					       : at == REP_AT_END    ? "end"
								     : "time";
}

int rep_write_tree_json(FILE *out, const struct rep_heap *h, enum rep_moment_kind at,
			uint64_t at_ns, const struct rep_tree_options *o)
{
	const struct rep_proc *procs;
	size_t np = rep_heap_procs(h, &procs);
	struct tree t = { .bottom_up = o->bottom_up };
	struct rep_json j;
	int rc = 0;

	rep_json_init(&j, out);
	rep_json_object(&j);
	rep_json_key_cstring(&j, "at", moment_name(at));
	rep_json_key(&j, "time_ns");
	if (at == REP_AT_TIME)
		rep_json_u64(&j, at_ns);
	else
		rep_json_null(&j);
	rep_json_key_u64(&j, "min_percent", o->min_percent);
	rep_json_key_u64(&j, "depth", o->depth);
	rep_json_key(&j, "bottom_up");
	if (o->bottom_up)
		rep_json_true(&j);
	else
		rep_json_false(&j);
	rep_json_key(&j, "processes");
	rep_json_array(&j);
	for (size_t p = 0; p < np && rc == 0; p++) {
		struct left_out l = { .min_percent = o->min_percent, .depth = o->depth };
		if (build(&t, h, p, at) < 0) {
			rc = -1;
			break;
		}
		rep_json_object(&j);
		rep_json_key_u64(&j, "pid", procs[p].pid);
		rep_json_key_u64(&j, "bytes", t.n[0].bytes);
		rep_json_key_u64(&j, "blocks", t.n[0].blocks);
		rep_json_key(&j, o->bottom_up ? "callers" : "callees");
		rc = json_callees(&j, &t, 0, 0, t.n[0].bytes, &l);
		rep_json_key(&j, "left_out");
		rep_json_object(&j);
		rep_json_key_u64(&j, "frames", l.frames);
		rep_json_key_u64(&j, "bytes", l.bytes);
		rep_json_key_u64(&j, "deeper", l.deeper);
		rep_json_object_end(&j);
		rep_json_object_end(&j);
	}
	rep_json_array_end(&j);
	rep_json_object_end(&j);
	rep_json_done(&j);
	free(t.n);
	return rc < 0 ? -1 : rep_finish_output(out);
}

/* A Graphviz string: quotes and backslashes escaped, control bytes as '_'. */
static void put_dot_string(FILE *out, const char *s, size_t len)
{
	fputc('"', out);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fputc('\\', out);
		fputc(c < 0x20 || c == 0x7f ? '_' : c, out);
	}
	fputc('"', out);
}

/* A graph's figure: "N B" exact, else in units (units.h). Returns buf (REP_BYTES_SIZE). */
static const char *dot_bytes(uint64_t bytes, char *buf)
{
	if (rep_units_exact())
		snprintf(buf, REP_BYTES_SIZE, "%" PRIu64 " B", bytes);
	else
		rep_bytes(bytes, buf);
	return buf;
}

static void dot_node(FILE *out, const struct tree *t, int64_t node, unsigned depth,
		     uint64_t total, size_t p, struct left_out *l)
{
	const struct node *x = &t->n[node];
	char b[REP_BYTES_SIZE];
	size_t n;

	fprintf(out, "  p%zun%" PRId64 " [label=", p, node);
	put_dot_string(out, x->where, x->where_len);
	fprintf(out, ", xlabel=\"%s (%.1f%%)\", penwidth=%.2f];\n", dot_bytes(x->bytes, b),
		100.0 * (double)x->bytes / (double)total, 1.0 + 4.0 * (double)x->bytes / (double)total);
	if (l->depth && depth == l->depth) {
		l->deeper += frames_below(t, node);
		return;
	}
	int64_t *kids = children(t, node, &n);
	if (!kids)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct node *c = &t->n[kids[i]];
		if (100 * c->bytes < total) { /* under 1% */
			if (c->bytes)
				l->frames++;
			continue;
		}
		fprintf(out, "  p%zun%" PRId64 " -> p%zun%" PRId64 " [penwidth=%.2f, label=\"%s\"];\n",
			p, node, p, kids[i], 1.0 + 8.0 * (double)c->bytes / (double)total,
			dot_bytes(c->bytes, b));
		dot_node(out, t, kids[i], depth + 1, total, p, l);
	}
	free(kids);
}

int rep_write_dot(FILE *out, const struct rep_heap *h, enum rep_moment_kind at, const char *what,
		  const struct rep_tree_options *o)
{
	const struct rep_proc *procs;
	size_t np = rep_heap_procs(h, &procs);
	struct tree t = { .bottom_up = o->bottom_up };
	char b[REP_BYTES_SIZE];

	fprintf(out, "digraph alloctap {\n  node [shape=box, fontname=\"monospace\"];\n"
		"  rankdir=TB;\n");
	for (size_t p = 0; p < np; p++) {
		struct left_out l = { .min_percent = 1, .depth = o->depth };
		if (build(&t, h, p, at) < 0) {
			free(t.n);
			return -1;
		}
		if (!t.n[0].bytes)
			continue;
		fprintf(out, "  subgraph cluster_%zu {\n  label=\"process %" PRIu32 ": %s live at %s\";\n",
			p, procs[p].pid, rep_bytes_said(t.n[0].bytes, b), what);
		dot_node(out, &t, 0, 0, t.n[0].bytes, p, &l);
		if (l.frames)
			fprintf(out, "  p%zudropped [shape=plaintext, label=\"%" PRIu64
				" nodes under 1%% left out\"];\n", p, l.frames);
		if (l.deeper)
			fprintf(out, "  p%zudeeper [shape=plaintext, label=\"%" PRIu64
				" nodes deeper than %u levels left out\"];\n", p, l.deeper, o->depth);
		fputs("  }\n", out);
	}
	fputs("}\n", out);
	free(t.n);
	return rep_finish_output(out);
}

/* ---- XML text --------------------------------------------------------------------------- */

/* XML text: the five special characters as entities, control bytes as '_'. */
void rep_put_xml_text(FILE *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '&')
			fputs("&amp;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else if (c == '\'')
			fputs("&#39;", out);
		else
			fputc(c < 0x20 || c == 0x7f ? '_' : c, out);
	}
}

