/* lines.c: the text path of alloctap-munge, and its messages about dropped lines. */
#include <stdio.h>
#include <string.h>

#include "display.h"
#include "lines.h"
#include "pipeline.h"
#include "progress.h"
#include "text.h"

/* Prints the message for a dropped line (at level 2, or as an error): "Ignored" (or what),
 * the stripped line, cut at AT_MUNGE_ECHO_MAX bytes, bytes outside printable ASCII as \xNN. */
static void report_line(const char *file, uint64_t lineno, const char *line, size_t len,
			const char *what, const char *why, int as_error)
{
	char echo[AT_MUNGE_ECHO_MAX * 4 + 4];
	struct at_span s = at_strip(line, len);
	size_t n = 0;

	for (size_t i = 0; i < s.n && i < AT_MUNGE_ECHO_MAX; i++) {
		unsigned char c = (unsigned char)s.p[i];
		if (c < 0x20 || c >= 0x7f) {
			echo[n++] = '\\';
			echo[n++] = 'x';
			echo[n++] = at_hex_digits[c >> 4];
			echo[n++] = at_hex_digits[c & 15];
		} else {
			echo[n++] = (char)c;
		}
	}
	if (s.n > AT_MUNGE_ECHO_MAX)
		n += (size_t)sprintf(echo + n, "...");
	echo[n] = 0;
	if (as_error)
		at_error_at(file, lineno, "%s \"%s\": %s (--strict)", what, echo, why);
	else
		DISPLAYLEVEL(2, "%s: %s:%llu: %s \"%s\": %s\n", at_program_name, file,
			     (unsigned long long)lineno, what, echo, why);
}

/* What happens to each munged line: it is counted, a dropped one reported, and with strict
 * the run stops at it. */
struct outcome_ctx {
	const char *name;
	int strict;
	struct at_munge_counts c;
	struct at_progress progress;
};

static int on_outcome(void *arg, uint64_t lineno, const char *line, size_t len, int result,
		      const char *why)
{
	struct outcome_ctx *o = arg;

	o->c.read++;
	at_progress_tick(&o->progress, o->c.read);
	switch (result) {
	case AT_MUNGE_WRITTEN:
		o->c.written++;
		if (why) { /* as the reference writes it; --strict drops it instead */
			o->c.unreplayable++;
			report_line(o->name, lineno, line, len, "Written, but not replayable", why,
				    0);
		}
		return 0;
	case AT_MUNGE_FILTERED:
		o->c.filtered++;
		return 0;
	default:
		o->c.ignored++;
		if (!o->strict && at_munge_unseen_pointer(why)) {
			o->c.unseen++; /* counted, said one by one only at -v */
			if (at_display_level < 3)
				return 0;
		}
		report_line(o->name, lineno, line, len, "Ignored", why, o->strict);
		return o->strict;
	}
}

int at_munge_lines(struct at_munge *m, struct at_linereader *r, struct at_output *out,
		   int threads, int strict, struct at_munge_counts *c)
{
	struct outcome_ctx oc = { .name = r->name, .strict = strict };
	int read_errno = 0, rc = 1, run;

	at_progress_start(&oc.progress, r->name, "lines");
	run = at_munge_run(m, r, out, threads, on_outcome, &oc, &read_errno);
	at_progress_end(&oc.progress);
	switch (run) {
	case AT_PIPELINE_DONE:
		rc = 0;
		break;
	case AT_PIPELINE_READ_ERROR:
		at_error("%s: read error: %s", r->name, at_linereader_strerror(read_errno));
		break;
	case AT_PIPELINE_NOMEM:
		at_error("%s: out of memory after line %llu", r->name,
			 (unsigned long long)oc.c.read);
		break;
	default: /* strict stopped at a dropped line, already reported */
		break;
	}
	*c = oc.c;
	return rc;
}
