/* json.h: alloctap-report's machine-readable outputs: a JSON writer (one document, exact
 * integers, strings escaped) and the output formats a command can be asked for.
 *
 * The writer keeps no stack: a comma goes before a key or a value when the token before it
 * ended a value (a number, a string, a null, a closing } or ]), so a writer opens and closes
 * objects and arrays and never counts commas. The caller pairs each open with its close.
 * Strings are written as UTF-8: '"' and '\' escaped, every control byte (below 0x20, and 0x7f)
 * as \u00XX, and each byte that does not begin a valid UTF-8 sequence (a stray continuation
 * byte, a truncated sequence, an overlong form, a surrogate, a code point above U+10FFFF) as
 * \ufffd, the replacement character; valid sequences are copied. */
#ifndef ALLOCTAP_REPORT_JSON_H
#define ALLOCTAP_REPORT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A command's output: its text, one JSON document (--json), or CSV (--csv). */
enum rep_format { REP_FORMAT_TEXT, REP_FORMAT_JSON, REP_FORMAT_CSV };

/* A JSON document being written to out. */
struct rep_json {
	FILE *out;
	int comma; /* the last token ended a value: the next key or value follows a comma */
	int started; /* the document's first value is open */
};

/* A note every document written from now on starts with, as the first key of its top object:
 * "filtered": note (NULL: none). What alloctap-report says of a trace that holds a part of the
 * calls (report/command.c); the caller keeps note alive. */
void rep_json_set_note(const char *note);

/* The n bytes at s as one JSON string, quotes included (above). */
void rep_json_put_string(FILE *out, const char *s, size_t n);

/* Starts a document on out. */
void rep_json_init(struct rep_json *j, FILE *out);
/* Ends the document: a newline. */
void rep_json_done(struct rep_json *j);

/* Opens and closes an object or an array (as a value: after a key, in an array, or at the
 * top). */
void rep_json_object(struct rep_json *j);
void rep_json_object_end(struct rep_json *j);
void rep_json_array(struct rep_json *j);
void rep_json_array_end(struct rep_json *j);

/* A key of the open object; its value comes next. */
void rep_json_key(struct rep_json *j, const char *key);

/* Values. */
void rep_json_u64(struct rep_json *j, uint64_t v);
void rep_json_i64(struct rep_json *j, int64_t v);
/* b - a, exactly, whatever their sizes (a minus sign and the difference when b < a). */
void rep_json_change(struct rep_json *j, uint64_t a, uint64_t b);
void rep_json_null(struct rep_json *j);
void rep_json_true(struct rep_json *j);
void rep_json_false(struct rep_json *j);
void rep_json_string(struct rep_json *j, const char *s, size_t n);
void rep_json_cstring(struct rep_json *j, const char *s);

/* A key and its value. */
void rep_json_key_u64(struct rep_json *j, const char *key, uint64_t v);
void rep_json_key_cstring(struct rep_json *j, const char *key, const char *s);

/* A site's stack from its folded text (frames root first, separated by ';'): an array of one
 * object per frame, leaf first, {"function": NAME}. */
void rep_json_stack(struct rep_json *j, const char *text, size_t len);

#endif
