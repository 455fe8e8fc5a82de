/* csv.h: alloctap-report's CSV outputs (--csv), as RFC 4180 writes them: a header row, then
 * one record per row, each ended by CRLF; a field holding a comma, a double quote, a CR or an
 * LF is enclosed in double quotes, with each double quote in it doubled; other fields are
 * written as they are. Numbers are exact integers. */
#ifndef ALLOCTAP_REPORT_CSV_H
#define ALLOCTAP_REPORT_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A record being written to out. */
struct rep_csv {
	FILE *out;
	int fields; /* fields of the record so far */
};

void rep_csv_init(struct rep_csv *c, FILE *out);
/* One field: the n bytes at s, quoted when they need it. */
void rep_csv_field(struct rep_csv *c, const char *s, size_t n);
void rep_csv_cstring(struct rep_csv *c, const char *s);
void rep_csv_u64(struct rep_csv *c, uint64_t v);
void rep_csv_i64(struct rep_csv *c, int64_t v);
/* b - a, exactly (as rep_json_change). */
void rep_csv_change(struct rep_csv *c, uint64_t a, uint64_t b);
/* An empty field (a value that does not apply). */
void rep_csv_empty(struct rep_csv *c);
/* A site's stack from its folded text (root first, ';'): its frames leaf first, separated by
 * ';', as one field. */
void rep_csv_stack(struct rep_csv *c, const char *text, size_t len);
/* Ends the record. */
void rep_csv_end(struct rep_csv *c);
/* The header row: the names of a NULL-terminated list. */
void rep_csv_header(struct rep_csv *c, const char *const *names);

#endif
