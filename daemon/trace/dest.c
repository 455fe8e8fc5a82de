/* dest.c: the -o DEST argument and the output it names. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "dest.h"
#include "display.h"

int at_dest_parse(const char *s, struct at_dest *d)
{
	d->fd = -1;
	d->path = NULL;
	if (!s || !*s)
		return -1;
	if (strcmp(s, "-") == 0) {
		d->fd = 1;
		return 0;
	}
	size_t n = strspn(s, "0123456789");
	if (s[n] == '\0' && n <= 5) {
		long v = 0;
		for (size_t i = 0; i < n; i++)
			v = v * 10 + (s[i] - '0');
		if (v < 10000) {
			d->fd = (int)v;
			return 0;
		}
	}
	d->path = s;
	return 0;
}

/* The name of descriptor DEST in messages, kept by the sink: one output per daemon. */
static const char *fd_name(const struct at_dest *d)
{
	static char name[16];

	snprintf(name, sizeof(name), d->fd == 1 ? "<stdout>" : "fd %d", d->fd);
	return name;
}

int at_dest_check(const struct at_dest *d)
{
	if (d->path)
		return 0;
	int flags = fcntl(d->fd, F_GETFL);
	if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY) {
		at_error("cannot write to %s: %s", fd_name(d),
			 flags < 0 ? "it is not open" : "it is open read-only");
		return -1;
	}
	return 0;
}

/* Opens a descriptor DEST after checking that it is open for writing. 0, or -1 after a
 * message. */
static int open_fd(const struct at_dest *d, struct at_sink *s)
{
	const char *name = fd_name(d);

	if (at_dest_check(d) < 0)
		return -1;
	if (at_sink_open_fd(s, d->fd, name) < 0) {
		at_error("cannot set up output: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int start(struct at_sink *s, const struct at_sink_options *opt)
{
	if (at_sink_start(s, opt) < 0) {
		at_error("cannot start the binary trace on %s: %s", at_sink_name(s),
			 strerror(errno));
		return -1;
	}
	return 0;
}

int at_dest_open(const struct at_dest *d, struct at_sink *s, const struct at_sink_options *opt)
{
	if (d->path) {
		unsigned mode = at_format_whole(opt->format) ? AT_SINK_TRUNCATE : AT_SINK_APPEND;
		if (at_sink_open(s, d->path, mode | AT_SINK_GUARDED) < 0) {
			at_error("cannot open output %s: %s", d->path, at_sink_open_why(s));
			return -1;
		}
	} else if (open_fd(d, s) < 0) {
		return -1;
	}
	return start(s, opt);
}

int at_dest_reopen(const struct at_dest *d, struct at_sink *s)
{
	if (!d->path) {
		if (at_sink_flush(s) < 0) {
			at_dest_report(s);
			return -1;
		}
		return 0;
	}
	int rc = at_sink_reopen(s, d->path);
	if (rc == 1) {
		DISPLAYLEVEL(3, "%s: %s is still the file being written: flushed, not reopened\n",
			     at_program_name, d->path);
		return 0;
	}
	if (rc == 0) {
		DISPLAYLEVEL(3, "%s: reopened %s\n", at_program_name, d->path);
		return 1;
	}
	if (!at_sink_error(s)) { /* the path cannot be opened: the old file goes on */
		at_error("cannot reopen output %s: %s; still writing to the file opened before",
			 d->path, at_sink_open_why(s));
		return 0;
	}
	if (s->out.buf && s->started == 0) /* opened, but the trace's header could not be written */
		at_error("cannot start the binary trace on %s: %s", d->path,
			 strerror(at_sink_error(s)));
	else
		at_dest_report(s);
	return -1;
}

void at_dest_report(const struct at_sink *s)
{
	at_write_error(at_sink_name(s), at_sink_error(s));
}
