/* csv.c: RFC 4180 records for alloctap-report's --csv (csv.h). */
#include <inttypes.h>
#include <string.h>

#include "csv.h"

void rep_csv_init(struct rep_csv *c, FILE *out)
{
	c->out = out;
	c->fields = 0;
}

/* Before a field: the separator when it is not the record's first. */
static void next_field(struct rep_csv *c)
{
	if (c->fields++)
		fputc(',', c->out);
}

/* Whether the n bytes at s need quotes. */
static int needs_quotes(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n')
			return 1;
	return 0;
}

void rep_csv_field(struct rep_csv *c, const char *s, size_t n)
{
	next_field(c);
	if (!needs_quotes(s, n)) {
		fwrite(s, 1, n, c->out);
		return;
	}
	fputc('"', c->out);
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			fputc('"', c->out);
		fputc(s[i], c->out);
	}
	fputc('"', c->out);
}

void rep_csv_cstring(struct rep_csv *c, const char *s)
{
	rep_csv_field(c, s, strlen(s));
}

void rep_csv_u64(struct rep_csv *c, uint64_t v)
{
	next_field(c);
	fprintf(c->out, "%" PRIu64, v);
}

void rep_csv_i64(struct rep_csv *c, int64_t v)
{
	next_field(c);
	fprintf(c->out, "%" PRId64, v);
}

void rep_csv_change(struct rep_csv *c, uint64_t a, uint64_t b)
{
	next_field(c);
	if (b >= a)
		fprintf(c->out, "%" PRIu64, b - a);
	else
		fprintf(c->out, "-%" PRIu64, a - b);
}

void rep_csv_empty(struct rep_csv *c)
{
	next_field(c);
}

void rep_csv_stack(struct rep_csv *c, const char *text, size_t len)
{
	int quote = needs_quotes(text, len);
	size_t end = len, first = 1;

	next_field(c);
	if (quote)
		fputc('"', c->out);
	for (size_t i = len + 1; i-- > 0;) {
		if (i > 0 && text[i - 1] != ';')
			continue;
		if (!first)
			fputc(';', c->out);
		first = 0;
		for (size_t k = i; k < end; k++) {
			if (quote && text[k] == '"')
				fputc('"', c->out);
			fputc(text[k], c->out);
		}
		end = i ? i - 1 : 0;
	}
	if (quote)
		fputc('"', c->out);
}

void rep_csv_end(struct rep_csv *c)
{
	fputs("\r\n", c->out);
	c->fields = 0;
}

void rep_csv_header(struct rep_csv *c, const char *const *names)
{
	for (size_t i = 0; names[i]; i++)
		rep_csv_cstring(c, names[i]);
	rep_csv_end(c);
}
