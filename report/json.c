/* json.c: the JSON writer of alloctap-report's machine-readable outputs (json.h). */
#include <inttypes.h>
#include <string.h>

#include "json.h"

/* The length of the valid UTF-8 sequence of a code point above U+007F at s (n bytes left),
 * or 0 when the byte at s begins none (RFC 3629's table: no overlong form, no surrogate,
 * nothing above U+10FFFF). */
static size_t utf8_length(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* overlong below */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates above */
	else if (c == 0xf0)
		lo = 0x90; /* overlong below */
	else if (c == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

void rep_json_put_string(FILE *out, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	fputc('"', out);
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		size_t len;

		if (c == '"' || c == '\\') {
			fprintf(out, "\\%c", c);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
			i++;
		} else if (c < 0x80) {
			fputc(c, out);
			i++;
		} else if ((len = utf8_length(u + i, n - i)) != 0) {
			fwrite(u + i, 1, len, out);
			i += len;
		} else {
			fputs("\\ufffd", out);
			i++;
		}
	}
	fputc('"', out);
}

static const char *document_note;

void rep_json_set_note(const char *note)
{
	document_note = note;
}

void rep_json_init(struct rep_json *j, FILE *out)
{
	j->out = out;
	j->comma = 0;
	j->started = 0;
}

void rep_json_done(struct rep_json *j)
{
	fputc('\n', j->out);
	j->comma = 0;
}

/* Before a key or a value: the comma when one is due. */
static void item(struct rep_json *j)
{
	if (j->comma)
		fputc(',', j->out);
}

void rep_json_object(struct rep_json *j)
{
	item(j);
	fputc('{', j->out);
	j->comma = 0;
	if (!j->started && document_note)
		rep_json_key_cstring(j, "filtered", document_note);
	j->started = 1;
}

void rep_json_object_end(struct rep_json *j)
{
	fputc('}', j->out);
	j->comma = 1;
}

void rep_json_array(struct rep_json *j)
{
	item(j);
	fputc('[', j->out);
	j->comma = 0;
}

void rep_json_array_end(struct rep_json *j)
{
	fputc(']', j->out);
	j->comma = 1;
}

void rep_json_key(struct rep_json *j, const char *key)
{
	item(j);
	rep_json_put_string(j->out, key, strlen(key));
	fputc(':', j->out);
	j->comma = 0;
}

void rep_json_u64(struct rep_json *j, uint64_t v)
{
	item(j);
	fprintf(j->out, "%" PRIu64, v);
	j->comma = 1;
}

void rep_json_i64(struct rep_json *j, int64_t v)
{
	item(j);
	fprintf(j->out, "%" PRId64, v);
	j->comma = 1;
}

void rep_json_change(struct rep_json *j, uint64_t a, uint64_t b)
{
	item(j);
	if (b >= a)
		fprintf(j->out, "%" PRIu64, b - a);
	else
		fprintf(j->out, "-%" PRIu64, a - b);
	j->comma = 1;
}

/* A value written as it is: null, true or false. */
static void literal(struct rep_json *j, const char *word)
{
	item(j);
	fputs(word, j->out);
	j->comma = 1;
}

void rep_json_null(struct rep_json *j)
{
	literal(j, "null");
}

void rep_json_true(struct rep_json *j)
{
	literal(j, "true");
}

void rep_json_false(struct rep_json *j)
{
	literal(j, "false");
}

void rep_json_string(struct rep_json *j, const char *s, size_t n)
{
	item(j);
	rep_json_put_string(j->out, s, n);
	j->comma = 1;
}

void rep_json_cstring(struct rep_json *j, const char *s)
{
	rep_json_string(j, s, strlen(s));
}

void rep_json_key_u64(struct rep_json *j, const char *key, uint64_t v)
{
	rep_json_key(j, key);
	rep_json_u64(j, v);
}

void rep_json_key_cstring(struct rep_json *j, const char *key, const char *s)
{
	rep_json_key(j, key);
	rep_json_cstring(j, s);
}

void rep_json_stack(struct rep_json *j, const char *text, size_t len)
{
	size_t end = len;

	rep_json_array(j);
	for (size_t i = len + 1; i-- > 0;) {
		if (i > 0 && text[i - 1] != ';')
			continue;
		/* a frame from i to end (the leaf first: scanning from the end) */
		rep_json_object(j);
		rep_json_key(j, "function");
		rep_json_string(j, text + i, end - i);
		rep_json_object_end(j);
		end = i ? i - 1 : 0;
	}
	rep_json_array_end(j);
}
