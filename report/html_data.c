/* html_data.c: the page's per-site columns (html_data.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "html_data.h"
#include "u64map.h"

/* A column where a site changed: its values at the column's end, and what happened in it. */
struct col {
	uint32_t col;
	uint64_t live, blocks, allocs, bytes, temps, temp_bytes;
};

struct hsite {
	uint32_t rep;             /* the heap engine's site */
	uint32_t size_class;      /* 0: the site has a stack; k + 1: sizes of rep_bucket_of k */
	uint32_t proc;            /* into the processes below */
	uint64_t live, blocks;
	uint64_t peak, peak_blocks, saved_epoch; /* at the process's peak (saved lazily) */
	uint64_t most, allocs, bytes;            /* for the ranking */
	struct col *c;
	uint32_t n, cap;
};

struct hproc {
	uint32_t pid;
	rep_u128 live, peak;
	uint64_t epoch; /* the number of peaks seen: a site saved for another is saved anew */
};

struct rep_html_data {
	struct rep_heap *h;
	struct hsite *s;
	size_t ns, caps;
	struct hproc *p;
	size_t np, capp;
	struct rep_u64map by_key;  /* site key + 1 -> index + 1 */
	uint64_t *temps_seen;      /* per engine site: its temps counted so far */
	size_t ntemps;
	uint64_t width, x;         /* of a column; the x of the event being applied */
	int touched;               /* an event changed a process: its peak is checked next */
	uint32_t touched_proc;
	int failed;                /* ENOMEM inside a watcher: the page fails at its end */
};

/* The process of pid, added when new; NULL on ENOMEM. */
static struct hproc *proc_of(struct rep_html_data *d, uint32_t pid, uint32_t *index)
{
	for (size_t i = 0; i < d->np; i++)
		if (d->p[i].pid == pid) {
			*index = (uint32_t)i;
			return &d->p[i];
		}
	if (d->np == d->capp) {
		size_t cap = d->capp ? 2 * d->capp : 4;
		struct hproc *p = realloc(d->p, cap * sizeof(*p));
		if (!p)
			return NULL;
		d->p = p;
		d->capp = cap;
	}
	d->p[d->np] = (struct hproc){ .pid = pid };
	*index = (uint32_t)d->np;
	return &d->p[d->np++];
}

/* The site of block b (its engine site, split by size class where it has no stack); NULL on
 * ENOMEM. */
static struct hsite *site_of(struct rep_html_data *d, const struct rep_block *b)
{
	const struct rep_site *sites;
	size_t n = rep_heap_sites(d->h, &sites);
	uint32_t cls = b->site < n && !sites[b->site].stack ? rep_bucket_of(b->size) + 1 : 0;
	int is_new;
	uint64_t *slot = rep_u64map_slot(&d->by_key, ((uint64_t)b->site << 8 | cls) + 1, &is_new);

	if (!slot)
		return NULL;
	if (!is_new)
		return &d->s[*slot - 1];
	uint32_t proc;
	struct hproc *p = proc_of(d, b->pid, &proc);
	if (!p || (d->ns == d->caps && !(d->caps = d->caps ? 2 * d->caps : 64))) {
		rep_u64map_remove(&d->by_key, ((uint64_t)b->site << 8 | cls) + 1);
		return NULL;
	}
	struct hsite *s = realloc(d->s, d->caps * sizeof(*s));
	if (!s) {
		rep_u64map_remove(&d->by_key, ((uint64_t)b->site << 8 | cls) + 1);
		return NULL;
	}
	d->s = s;
	*rep_u64map_find(&d->by_key, ((uint64_t)b->site << 8 | cls) + 1) = d->ns + 1;
	d->s[d->ns] = (struct hsite){ .rep = b->site, .size_class = cls, .proc = proc,
				      .saved_epoch = p->epoch };
	return &d->s[d->ns++];
}

/* The site's entry of the current column, appended when it has none; NULL on ENOMEM. */
static struct col *col_of(struct rep_html_data *d, struct hsite *s)
{
	uint32_t c = (uint32_t)(d->x / d->width);

	if (s->n && s->c[s->n - 1].col == c)
		return &s->c[s->n - 1];
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? 2 * s->cap : 4;
		struct col *v = realloc(s->c, cap * sizeof(*v));
		if (!v)
			return NULL;
		s->c = v;
		s->cap = cap;
	}
	s->c[s->n] = (struct col){ .col = c, .live = s->live, .blocks = s->blocks };
	return &s->c[s->n++];
}

/* Before a site changes: what it held at its process's last peak is saved if not yet. */
static void save_peak(struct rep_html_data *d, struct hsite *s)
{
	const struct hproc *p = &d->p[s->proc];

	if (s->saved_epoch != p->epoch) {
		s->peak = s->live;
		s->peak_blocks = s->blocks;
		s->saved_epoch = p->epoch;
	}
}

/* Whether the engine counted a temporary at site since the last look. */
static int new_temp(struct rep_html_data *d, uint32_t site)
{
	const struct rep_site *sites;
	size_t n = rep_heap_sites(d->h, &sites);

	if (site >= n)
		return 0;
	if (site >= d->ntemps) {
		size_t cap = n > 2 * d->ntemps ? n : 2 * d->ntemps;
		uint64_t *v = realloc(d->temps_seen, cap * sizeof(*v));
		if (!v) {
			d->failed = 1;
			return 0;
		}
		memset(v + d->ntemps, 0, (cap - d->ntemps) * sizeof(*v));
		d->temps_seen = v;
		d->ntemps = cap;
	}
	int is_new = sites[site].temps != d->temps_seen[site];
	d->temps_seen[site] = sites[site].temps;
	return is_new;
}

static void on_block(void *arg, const struct rep_block *b, int released)
{
	struct rep_html_data *d = arg;
	struct hsite *s = site_of(d, b);
	struct col *c;

	if (!s || !(c = col_of(d, s))) {
		d->failed = 1;
		return;
	}
	save_peak(d, s);
	struct hproc *p = &d->p[s->proc];
	if (!released) {
		s->live += b->size;
		s->blocks++;
		c->allocs++;
		c->bytes += b->size;
		s->allocs++;
		s->bytes += b->size;
		p->live += b->size;
	} else {
		s->live -= b->size;
		s->blocks--;
		p->live -= b->size;
		if (new_temp(d, b->site)) {
			c->temps++;
			c->temp_bytes += b->size;
		}
	}
	c->live = s->live;
	c->blocks = s->blocks;
	s->most = s->live > s->most ? s->live : s->most;
	d->touched = 1;
	d->touched_proc = s->proc;
}

/* After an event: a process above its peak has a new one (its sites' values now). */
static void check_peak(struct rep_html_data *d)
{
	if (!d->touched)
		return;
	struct hproc *p = &d->p[d->touched_proc];
	if (p->live > p->peak) {
		p->peak = p->live;
		p->epoch++;
	}
	d->touched = 0;
}

/* The columns merged in pairs, the width doubled. */
static void halve(struct rep_html_data *d)
{
	for (size_t i = 0; i < d->ns; i++) {
		struct hsite *s = &d->s[i];
		uint32_t k = 0;
		for (uint32_t j = 0; j < s->n; j++) {
			struct col c = s->c[j];
			c.col /= 2;
			if (k && s->c[k - 1].col == c.col) {
				struct col *m = &s->c[k - 1];
				m->live = c.live;
				m->blocks = c.blocks;
				m->allocs += c.allocs;
				m->bytes += c.bytes;
				m->temps += c.temps;
				m->temp_bytes += c.temp_bytes;
			} else {
				s->c[k++] = c;
			}
		}
		s->n = k;
	}
	d->width *= 2;
}

void rep_html_data_event(struct rep_html_data *d, uint64_t x)
{
	check_peak(d);
	while (x / d->width >= REP_HTML_COLS)
		halve(d);
	d->x = x;
}

void rep_html_data_finish(struct rep_html_data *d)
{
	check_peak(d);
	for (size_t i = 0; i < d->ns; i++)
		save_peak(d, &d->s[i]);
}

struct rep_html_data *rep_html_data_new(struct rep_heap *h)
{
	struct rep_html_data *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->h = h;
	d->width = 1;
	rep_heap_on_block(h, on_block, d);
	return d;
}

void rep_html_data_free(struct rep_html_data *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->ns; i++)
		free(d->s[i].c);
	free(d->s);
	free(d->p);
	free(d->temps_seen);
	rep_u64map_free(&d->by_key);
	free(d);
}

void rep_html_data_totals(const struct rep_html_data *d, uint64_t *peak, uint64_t *end)
{
	*peak = *end = 0;
	for (size_t i = 0; i < d->ns; i++) {
		*peak = rep_sat_add(*peak, d->s[i].peak);
		*end = rep_sat_add(*end, d->s[i].live);
	}
}

/* ---- writing ----------------------------------------------------------------------------- */

/* A JSON string of s (n bytes), '<', '>' and '&' escaped for a script element. */
static void put_string(FILE *out, const char *s, size_t n)
{
	putc('"', out);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == '<' || c == '>' || c == '&')
			fprintf(out, "\\u%04x", c);
		else
			putc(c, out);
	}
	putc('"', out);
}

/* Interned frames: text -> id, in the order first met. */
struct frames {
	struct rep_u64map ids; /* hash -> id + 1 (probing on by rehash where texts differ) */
	char **text;
	size_t n, cap;
};

static uint64_t hash_of(const char *s, size_t n)
{
	uint64_t v = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		v = (v ^ (unsigned char)s[i]) * 1099511628211ull;
	return v | 1;
}

/* The id of frame text s (n bytes), interned when new; -1 on ENOMEM. */
static int64_t intern(struct frames *f, const char *s, size_t n)
{
	for (uint64_t k = hash_of(s, n);; k = rep_u64map_mix(k) | 1) {
		int is_new;
		uint64_t *slot = rep_u64map_slot(&f->ids, k, &is_new);
		if (!slot)
			return -1;
		if (!is_new) {
			const char *t = f->text[*slot - 1];
			if (strlen(t) == n && memcmp(t, s, n) == 0)
				return (int64_t)*slot - 1;
			continue;
		}
		if (f->n == f->cap) {
			size_t cap = f->cap ? 2 * f->cap : 256;
			char **v = realloc(f->text, cap * sizeof(*v));
			if (!v) {
				rep_u64map_remove(&f->ids, k);
				return -1;
			}
			f->text = v;
			f->cap = cap;
		}
		if (!(f->text[f->n] = strndup(s, n))) {
			rep_u64map_remove(&f->ids, k);
			return -1;
		}
		*rep_u64map_find(&f->ids, k) = f->n + 1;
		return (int64_t)f->n++;
	}
}

static void frames_free(struct frames *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->text[i]);
	free(f->text);
	rep_u64map_free(&f->ids);
}

/* A frame as [name, where]: "function (file:line)" split at its last " (" when the text ends
 * with ")" after a ':' and digits; where is "" otherwise. */
static void put_frame(FILE *out, const char *t)
{
	size_t n = strlen(t);
	const char *open = NULL;

	if (n > 3 && t[n - 1] == ')')
		for (const char *p = t + n - 1; p > t + 1; p--)
			if (p[-1] == ' ' && p[0] == '(') {
				open = p;
				break;
			}
	const char *colon = open ? memrchr(open, ':', (size_t)(t + n - open)) : NULL;
	int digits = colon && colon + 1 < t + n - 1;
	for (const char *p = colon ? colon + 1 : t; digits && p < t + n - 1; p++)
		digits = *p >= '0' && *p <= '9';
	putc('[', out);
	if (digits) {
		put_string(out, t, (size_t)(open - 1 - t));
		putc(',', out);
		put_string(out, open + 1, (size_t)(t + n - 1 - open - 1));
	} else {
		put_string(out, t, n);
		fputs(",\"\"", out);
	}
	putc(']', out);
}

/* The size class k + 1 as a frame's text: "size 0 B", "size 16 B to 31 B". */
static void class_text(uint32_t cls, char *buf, size_t size)
{
	unsigned k = cls - 1;

	if (k == 0)
		snprintf(buf, size, "size 0 B");
	else if (k == 1)
		snprintf(buf, size, "size 1 B");
	else
		snprintf(buf, size, "size %" PRIu64 " B to %" PRIu64 " B", UINT64_C(1) << (k - 1),
			 k == 64 ? UINT64_MAX : (UINT64_C(1) << k) - 1);
}

/* Site s's frames as ids, root first, into *ids (grown as needed: the caller frees it, *cap
 * its entries); their count, or -1 (ENOMEM). */
static int frame_ids(struct rep_html_data *d, struct frames *f, const struct hsite *s,
		     int64_t **ids, size_t *cap)
{
	const struct rep_site *sites;
	size_t n = 0, len, need = 2;

	rep_heap_sites(d->h, &sites);
	const char *t = rep_heap_site_text(d->h, &sites[s->rep], &len);
	for (size_t i = 0; i < len; i++)
		need += t[i] == ';';
	if (need > *cap) {
		int64_t *v = realloc(*ids, need * sizeof(*v));
		if (!v)
			return -1;
		*ids = v;
		*cap = need;
	}
	while (len) {
		const char *semi = memchr(t, ';', len);
		size_t k = semi ? (size_t)(semi - t) : len;
		if (((*ids)[n++] = intern(f, t, k)) < 0)
			return -1;
		t += semi ? k + 1 : k;
		len -= semi ? k + 1 : k;
	}
	if (s->size_class) {
		char b[64];
		class_text(s->size_class, b, sizeof(b));
		if (((*ids)[n++] = intern(f, b, strlen(b))) < 0)
			return -1;
	}
	return (int)n;
}

static void put_cols(FILE *out, const struct col *c, uint32_t n)
{
	fputs("\"c\":[", out);
	for (uint32_t i = 0; i < n; i++)
		fprintf(out, "%s%" PRIu32 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64, i ? "," : "", c[i].col, c[i].live, c[i].blocks, c[i].allocs,
			c[i].bytes, c[i].temps, c[i].temp_bytes);
	putc(']', out);
}

static void put_site(FILE *out, uint32_t pid, const int64_t *ids, int n, const struct hsite *s,
		     const struct col *c, uint32_t nc, int first)
{
	fprintf(out, "%s{\"pid\":%" PRIu32 ",\"s\":[", first ? "" : ",\n", pid);
	for (int i = 0; i < n; i++)
		fprintf(out, "%s%" PRId64, i ? "," : "", ids[i]);
	fprintf(out, "],\"peak\":[%" PRIu64 ",%" PRIu64 "],\"end\":[%" PRIu64 ",%" PRIu64 "],",
		s->peak, s->peak_blocks, s->live, s->blocks);
	put_cols(out, c, nc);
	putc('}', out);
}

/* Ranking: sites by one figure, most first. */
static const struct hsite *rank_sites;
static int rank_by;

static uint64_t figure(const struct hsite *s)
{
	uint64_t most = s->peak > s->most ? s->peak : s->most;

	return rank_by == 0 ? most : rank_by == 1 ? s->allocs : s->bytes;
}

static int by_figure(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint64_t x = figure(&rank_sites[i]), y = figure(&rank_sites[j]);

	return x != y ? (x > y ? -1 : 1) : (i > j) - (i < j);
}

/* Marks in keep the sites among the top REP_HTML_SITES by any figure. 0, or -1 (ENOMEM). */
static int choose(const struct rep_html_data *d, char *keep)
{
	uint32_t *idx = malloc((d->ns ? d->ns : 1) * sizeof(*idx));

	if (!idx)
		return -1;
	rank_sites = d->s;
	for (rank_by = 0; rank_by < 3; rank_by++) {
		for (size_t i = 0; i < d->ns; i++)
			idx[i] = (uint32_t)i;
		qsort(idx, d->ns, sizeof(*idx), by_figure);
		for (size_t i = 0; i < d->ns && i < REP_HTML_SITES; i++)
			keep[idx[i]] = 1;
	}
	free(idx);
	return 0;
}

/* The folded sites as one: their columns summed (live by the change of each entry), in
 * REP_HTML_COLS dense columns. 0, or -1 (ENOMEM). */
static int fold(const struct rep_html_data *d, const char *keep, struct hsite *o, struct col *c)
{
	int64_t delta[REP_HTML_COLS][2] = { { 0 } };

	memset(c, 0, REP_HTML_COLS * sizeof(*c));
	for (size_t i = 0; i < d->ns; i++) {
		const struct hsite *s = &d->s[i];
		uint64_t live = 0, blocks = 0;
		if (keep[i])
			continue;
		for (uint32_t j = 0; j < s->n; j++) {
			const struct col *e = &s->c[j];
			delta[e->col][0] += (int64_t)(e->live - live);
			delta[e->col][1] += (int64_t)(e->blocks - blocks);
			live = e->live;
			blocks = e->blocks;
			c[e->col].allocs += e->allocs;
			c[e->col].bytes += e->bytes;
			c[e->col].temps += e->temps;
			c[e->col].temp_bytes += e->temp_bytes;
		}
		o->peak += s->peak;
		o->peak_blocks += s->peak_blocks;
		o->live += s->live;
		o->blocks += s->blocks;
	}
	int64_t live = 0, blocks = 0;
	for (uint32_t k = 0; k < REP_HTML_COLS; k++) {
		live += delta[k][0];
		blocks += delta[k][1];
		c[k].col = k;
		c[k].live = (uint64_t)live;
		c[k].blocks = (uint64_t)blocks;
	}
	return 0;
}

/* The frames' table. */
static void put_frames(FILE *out, const struct frames *f)
{
	fputs("\"frames\":[", out);
	for (size_t i = 0; i < f->n; i++) {
		if (i)
			fputs(",\n", out);
		put_frame(out, f->text[i]);
	}
	fputs("]", out);
}

int rep_html_data_write(FILE *out, struct rep_html_data *d)
{
	struct frames f = { 0 };
	char *keep = calloc(d->ns ? d->ns : 1, 1);
	int64_t *ids = malloc(64 * sizeof(*ids));
	size_t cap = 64;
	int rc = -1, first = 1, folded = 0;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (d->failed)
		errno = ENOMEM;
	if (!keep || !ids || !m || d->failed || choose(d, keep) < 0)
		goto out;
	fputs("\"sites\":[", m);
	for (size_t i = 0; i < d->ns; i++) {
		if (!keep[i]) {
			folded = 1;
			continue;
		}
		int n = frame_ids(d, &f, &d->s[i], &ids, &cap);
		if (n < 0)
			goto out;
		put_site(m, d->p[d->s[i].proc].pid, ids, n, &d->s[i], d->s[i].c, d->s[i].n, first);
		first = 0;
	}
	if (folded) {
		struct hsite o = { 0 };
		struct col c[REP_HTML_COLS];
		fold(d, keep, &o, c);
		if ((ids[0] = intern(&f, "other sites", 11)) < 0)
			goto out;
		put_site(m, 0, ids, 1, &o, c, REP_HTML_COLS, first);
	}
	fputs("]", m);
	if (fflush(m) != 0)
		goto out;
	fprintf(out, "{\"width\":%" PRIu64 ",\"ncols\":%" PRIu64 ",", d->width,
		d->x / d->width + 1);
	put_frames(out, &f);
	fputs(",\n", out);
	fwrite(text, 1, len, out);
	fputs("}", out);
	rc = 0;
out:
	if (m)
		fclose(m);
	free(text);
	free(keep);
	free(ids);
	frames_free(&f);
	return rc;
}
