/* live.c: top --follow, the live view of a growing trace (live.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "live.h"
#include "prim.h"
#include "sitetext.h"
#include "units.h"

/* How often, in events, a busy pass looks at the clock. */
#define CLOCK_EVERY 1024
/* The longest wait on a regular file before it is read again (ns). */
#define FILE_POLL_NS 100000000u

/* ---- the terminal ---------------------------------------------------------------------- */

/* The terminal's mode before the view changed it, and the view's own, for the signal handlers
 * too. */
static struct termios saved_mode, view_mode;
static volatile sig_atomic_t mode_fd = -1; /* the terminal whose mode is changed, or -1 */
static volatile sig_atomic_t screen_fd = -1; /* the output terminal (cursor hidden), or -1 */
/* Set by a stop and continue (Ctrl-Z, fg) or a change of the window's size: the screen is
 * drawn again at the next tick, and the view's mode set again once in the foreground. */
static volatile sig_atomic_t redraw_due, mode_due;
static int stopped_mode_fd = -1, stopped_screen_fd = -1;

/* Writes s to fd, ignoring a failure (nothing more can be done). Async-signal-safe. */
static void put_raw(int fd, const char *s, size_t n)
{
	if (fd >= 0 && write(fd, s, n) < 0) {
		/* nothing more can be done */
	}
}

/* Puts the terminal back as it was: its mode, and the cursor shown. Async-signal-safe. The
 * mode is set even from the background: at Ctrl-Z the shell may take the terminal before this
 * process's handler has run (its parent, a subshell, stopped first), and SIGTTOU would then stop
 * it inside the handler, to stop again at fg, where nobody would continue it. */
static void restore_terminal(void)
{
	struct sigaction ignore = { .sa_handler = SIG_IGN }, was;

	if (mode_fd >= 0) {
		sigaction(SIGTTOU, &ignore, &was);
		tcsetattr(mode_fd, TCSAFLUSH, &saved_mode);
		sigaction(SIGTTOU, &was, NULL);
	}
	put_raw(screen_fd, "\033[?25h", 6);
	mode_fd = screen_fd = -1;
}

/* The view's mode set again, when the process is in the terminal's foreground (a process in
 * the background that changes the mode is stopped by SIGTTOU): then 1. Async-signal-safe. */
static int take_terminal(void)
{
	if (stopped_mode_fd >= 0 && tcgetpgrp(stopped_mode_fd) != getpgrp())
		return 0;
	if (stopped_mode_fd >= 0)
		tcsetattr(stopped_mode_fd, TCSAFLUSH, &view_mode);
	put_raw(stopped_screen_fd, "\033[?25l", 6);
	mode_fd = stopped_mode_fd;
	screen_fd = stopped_screen_fd;
	return 1;
}

/* SIGINT, SIGTERM: the terminal restored, then the signal's own end. */
static void on_signal(int sig)
{
	restore_terminal();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* SIGTSTP (Ctrl-Z): the terminal restored and the process stopped; when it is continued
 * (SIGCONT), the view's mode is set again and the screen drawn again. */
static void on_stop(int sig)
{
	int saved = errno;
	sigset_t this;

	if (mode_fd >= 0 || screen_fd >= 0) { /* not already given back by an earlier stop */
		stopped_mode_fd = mode_fd;
		stopped_screen_fd = screen_fd;
	}
	restore_terminal();
	signal(sig, SIG_DFL);
	raise(sig); /* pending while the handler runs: unblocked, it stops the process */
	sigemptyset(&this);
	sigaddset(&this, sig);
	sigprocmask(SIG_UNBLOCK, &this, NULL);
	/* continued */
	signal(sig, on_stop);
	mode_due = !take_terminal();
	redraw_due = 1;
	errno = saved;
}

/* SIGCONT after a stop the view did not see (SIGTTIN, SIGSTOP): the same as after Ctrl-Z. */
static void on_continue(int sig)
{
	(void)sig;
	if (mode_fd < 0 && stopped_mode_fd >= 0)
		mode_due = 1;
	redraw_due = 1;
}

/* SIGWINCH: the screen drawn again at its new size. */
static void on_resize(int sig)
{
	(void)sig;
	redraw_due = 1;
}

/* Keys from /dev/tty, read a byte at a time as they come (no echo); the cursor hidden. */
static void open_keys(struct rep_live *l)
{
	l->keys = open("/dev/tty", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (l->keys < 0 || tcgetattr(l->keys, &saved_mode) < 0) {
		if (l->keys >= 0)
			close(l->keys);
		l->keys = -1;
		return;
	}
	view_mode = saved_mode;
	view_mode.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	view_mode.c_cc[VMIN] = 0;
	view_mode.c_cc[VTIME] = 0;
	mode_fd = l->keys;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGTSTP, on_stop);
	signal(SIGCONT, on_continue);
	tcsetattr(l->keys, TCSAFLUSH, &view_mode);
}

/* The terminal's rows and columns (24 by 80 when it does not say; 3 rows at least). */
static void screen_size(const struct rep_live *l, unsigned *rows, unsigned *cols)
{
	struct winsize w;

	*rows = 24;
	*cols = 80;
	if (ioctl(fileno(l->out), TIOCGWINSZ, &w) == 0 && w.ws_row && w.ws_col) {
		*rows = w.ws_row < 3 ? 3 : w.ws_row;
		*cols = w.ws_col;
	}
}

/* ---- the figures ----------------------------------------------------------------------- */

/* Room for the figures of n sites (new ones zeroed). 0, or -1 with errno. */
static int reserve(struct rep_live *l, size_t n)
{
	if (n <= l->cap) {
		if (n > l->n)
			memset(l->sites + l->n, 0, (n - l->n) * sizeof(*l->sites));
		l->n = n;
		return 0;
	}
	size_t cap = l->cap ? l->cap : 256;
	while (cap < n)
		cap *= 2;
	struct rep_live_site *p = realloc(l->sites, cap * sizeof(*p));
	if (!p)
		return -1;
	memset(p + l->n, 0, (cap - l->n) * sizeof(*p));
	l->sites = p;
	l->cap = cap;
	l->n = n;
	return 0;
}

/* Takes the engine's state as the next snapshot: each site's growth and rate. */
static int take(struct rep_live *l, uint64_t now)
{
	const struct rep_site *sites;
	size_t n = rep_heap_sites(l->h, &sites);
	uint64_t span = rep_heap_span(l->h);

	if (reserve(l, n) < 0)
		return -1;
	/* the rates over trace time; over the wall clock when the trace has none */
	uint64_t dt = span > l->last_span_ns ? span - l->last_span_ns : now - l->last_wall_ns;
	l->interval_s = dt ? (double)dt / 1e9 : 0;
	for (size_t i = 0; i < n; i++) {
		struct rep_live_site *s = &l->sites[i];

		if (!l->snapshots)
			s->first_live = sites[i].live_bytes;
		s->growth = (int64_t)(sites[i].live_bytes - s->prev_live);
		s->since_first = (int64_t)(sites[i].live_bytes - s->first_live);
		s->rate = dt ? (double)(sites[i].allocs - s->prev_allocs) / l->interval_s : 0;
		s->prev_live = sites[i].live_bytes;
		s->prev_allocs = sites[i].allocs;
	}
	l->last_span_ns = span;
	l->last_wall_ns = now;
	l->snapshots++;
	return 0;
}

/* ---- the table ------------------------------------------------------------------------- */

static const struct rep_live *sorting;
static const struct rep_site *sorting_sites;

/* The order's value of site i, compared: more first; then more live bytes, then the text. */
static int by_order(const void *a, const void *b)
{
	uint32_t i = *(const uint32_t *)a, k = *(const uint32_t *)b;
	const struct rep_live_site *x = &sorting->sites[i], *y = &sorting->sites[k];
	const struct rep_site *s = &sorting_sites[i], *t = &sorting_sites[k];

	if (sorting->order == REP_LIVE_BY_GROWTH && x->growth != y->growth)
		return x->growth > y->growth ? -1 : 1;
	if (sorting->order == REP_LIVE_BY_RATE && x->rate != y->rate)
		return x->rate > y->rate ? -1 : 1;
	if (s->live_bytes != t->live_bytes)
		return s->live_bytes > t->live_bytes ? -1 : 1;
	size_t m, n;
	const char *u = rep_heap_site_text(sorting->h, s, &m), *v = rep_heap_site_text(sorting->h, t, &n);
	int c = memcmp(u, v, m < n ? m : n);
	if (c || m != n)
		return c ? c : m < n ? -1 : 1;
	return s->pid < t->pid ? -1 : s->pid > t->pid;
}

/* The sites to show (live bytes, a change or allocations), in the order: an array of *count
 * indexes (the caller frees it), or NULL with errno. */
static uint32_t *ranked(const struct rep_live *l, const struct rep_site *sites, size_t *count)
{
	uint32_t *idx = malloc((l->n ? l->n : 1) * sizeof(*idx));

	*count = 0;
	if (!idx)
		return NULL;
	for (size_t i = 0; i < l->n; i++)
		if (sites[i].live_bytes || l->sites[i].growth || l->sites[i].rate > 0)
			idx[(*count)++] = (uint32_t)i;
	sorting = l;
	sorting_sites = sites;
	qsort(idx, *count, sizeof(*idx), by_order);
	return idx;
}

static const char *const order_words[] = {
	[REP_LIVE_BY_LIVE] = "live bytes",
	[REP_LIVE_BY_GROWTH] = "growth",
	[REP_LIVE_BY_RATE] = "allocations per second",
};

/* "3.0 s" of ns, tenths rounded down, into buf (32 bytes). */
static const char *tenths(uint64_t ns, char *buf)
{
	snprintf(buf, 32, "%" PRIu64 ".%" PRIu64 " s", ns / 1000000000u, ns / 100000000u % 10);
	return buf;
}

/* The snapshot's heading: "== at 3.0 s: 1.2 MiB live in 340 blocks" (", the end" at it). */
static void put_heading(FILE *f, const struct rep_live *l, int end)
{
	uint64_t bytes, blocks;
	char t[32], b[REP_BYTES_SIZE];

	rep_heap_live(l->h, &bytes, &blocks);
	rep_human_bytes(bytes, l->exact, b, sizeof(b));
	fprintf(f, "== at %s%s: %s live in %" PRIu64 " block%s", tenths(l->last_span_ns, t),
		end ? ", the end of the trace" : "", b, blocks, blocks == 1 ? "" : "s");
	if (rep_heap_sample_bytes(l->h)) /* alloctapd --sample-bytes: every figure estimated */
		fprintf(f, " (estimated from a sample, 1 in %" PRIu64 " bytes)",
			rep_heap_sample_bytes(l->h));
	fputc('\n', f);
}

/* One row: live bytes, growth, since the first snapshot, allocations per second, the site. */
static void put_row(FILE *f, const struct rep_live *l, const struct rep_site *s, size_t i,
		    size_t shared, int pids)
{
	char live[REP_BYTES_SIZE], g[REP_BYTES_SIZE], since[REP_BYTES_SIZE];

	rep_human_bytes(s->live_bytes, l->exact, live, sizeof(live));
	rep_human_bytes_signed(l->sites[i].growth, l->exact, g, sizeof(g));
	rep_human_bytes_signed(l->sites[i].since_first, l->exact, since, sizeof(since));
	fprintf(f, "%12s %12s %12s %10.1f  ", live, g, since, l->sites[i].rate);
	if (pids)
		fprintf(f, "[%" PRIu32 "] ", s->pid);
	rep_put_site(f, l->h, s, shared);
	fputc('\n', f);
}

/* The table of at most rows sites: its header, the rows, the callers they share. 0, or -1
 * with errno. */
static int put_table(FILE *f, const struct rep_live *l, size_t rows)
{
	const struct rep_site *sites;
	const struct rep_proc *procs;
	size_t count;

	rep_heap_sites(l->h, &sites);
	uint32_t *idx = ranked(l, sites, &count);
	if (!idx)
		return -1;
	size_t shown = count < rows ? count : rows;
	size_t shared = rep_shared_callers(l->h, sites, idx, shown);
	fprintf(f, "%12s %12s %12s %10s  sites by %s: %zu of %zu shown\n", "live", "growth",
		"since 1st", "allocs/s", order_words[l->order], shown, count);
	for (size_t k = 0; k < shown; k++)
		put_row(f, l, &sites[idx[k]], idx[k], shared, rep_heap_procs(l->h, &procs) > 1);
	if (shown)
		rep_put_called_from(f, l->h, &sites[idx[0]], shared, 53);
	free(idx);
	return 0;
}

/* A snapshot on a pipe or a file: the heading, the table, flushed. */
static int put_text(struct rep_live *l, int end)
{
	put_heading(l->out, l, end);
	if (put_table(l->out, l, l->limit) < 0)
		return -1;
	fputc('\n', l->out);
	return fflush(l->out) == 0 && !ferror(l->out) ? 0 : -1;
}

/* Writes text[0..len) to the terminal, each line cut at cols and at most rows lines. */
static void put_clipped(FILE *out, const char *text, size_t len, unsigned rows, unsigned cols)
{
	const char *p = text, *end = text + len;

	for (unsigned r = 0; r < rows && p < end; r++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		fwrite(p, 1, n < cols ? n : cols, out);
		fputs("\033[K\n", out);
		p = nl ? nl + 1 : end;
	}
}

/* The screen on a terminal: home, the heading, the table fitted to the screen, the keys. */
static int put_screen(struct rep_live *l, int end)
{
	unsigned rows, cols;
	char *text = NULL, t[32];
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return -1;
	screen_size(l, &rows, &cols);
	fprintf(m, "alloctap-report top --follow %s (every %s)\n", l->trace,
		tenths(l->interval_ns, t));
	put_heading(m, l, end);
	size_t fit = rows > 6 ? rows - 6 : 1;
	int rc = put_table(m, l, fit < l->limit ? fit : l->limit);
	if (fclose(m) != 0 || rc < 0) {
		free(text);
		return -1;
	}
	fputs("\033[H\033[2J", l->out);
	put_clipped(l->out, text, len, rows - 2, cols);
	free(text);
	/* the keys on the last row; at the end, the row above it, the newline after it left to
	 * rep_live_end (which then scrolls nothing away) */
	fprintf(l->out, "\033[%u;1H%s\033[K", end ? rows - 1 : rows,
		end ? "the end of the trace" : "q quit   l by live bytes   g by growth   a by allocations/s");
	return fflush(l->out) == 0 && !ferror(l->out) ? 0 : -1;
}

/* The view drawn: on a terminal the screen (nothing while the process is in the background:
 * it is drawn again when it is back), elsewhere a snapshot's text. */
static int draw(struct rep_live *l, int end)
{
	if (l->tty && mode_due && !end)
		return 0;
	return l->tty ? put_screen(l, end) : put_text(l, end);
}

/* ---- the clock and the keys ------------------------------------------------------------ */

/* Reads the keys typed: q quits (the terminal restored, status 0), l, g, a change the order
 * and redraw. */
static void read_keys(struct rep_live *l)
{
	char c;

	while (l->keys >= 0 && read(l->keys, &c, 1) == 1) {
		if (c == 'q' || c == 'Q') {
			fputs("\n", l->out);
			fflush(l->out);
			restore_terminal();
			exit(0);
		}
		enum rep_live_order o = c == 'l' ? REP_LIVE_BY_LIVE : c == 'g' ? REP_LIVE_BY_GROWTH
				       : c == 'a' ? REP_LIVE_BY_RATE : l->order;
		if (o != l->order && l->snapshots) {
			l->order = o;
			if (draw(l, 0) < 0 && !l->failed)
				l->failed = errno ? errno : EIO;
		}
	}
}

/* A snapshot taken and drawn when one is due. */
static void tick(struct rep_live *l)
{
	uint64_t now = at_now_ns();

	if (mode_due && take_terminal())
		mode_due = 0;
	if (!mode_due) /* a read of the terminal from the background would stop the process */
		read_keys(l);
	if (redraw_due && l->tty && !l->failed) {
		redraw_due = 0;
		if (l->snapshots && draw(l, 0) < 0)
			l->failed = errno ? errno : EIO;
	}
	if (now < l->next_ns || l->failed)
		return;
	while (l->next_ns <= now)
		l->next_ns += l->interval_ns;
	if (rep_live_snapshot(l, now) < 0)
		l->failed = errno ? errno : EIO;
}

int rep_live_snapshot(struct rep_live *l, uint64_t now_ns)
{
	return take(l, now_ns) < 0 || draw(l, 0) < 0 ? -1 : 0;
}

int rep_live_start(struct rep_live *l, struct rep_heap *h, FILE *out)
{
	l->out = out;
	l->h = h;
	l->keys = -1;
	l->last_wall_ns = at_now_ns();
	l->next_ns = l->last_wall_ns + l->interval_ns;
	l->tty = isatty(fileno(out));
	if (l->tty) {
		open_keys(l);
		screen_fd = fileno(out);
		signal(SIGWINCH, on_resize);
		fputs("\033[?25l\033[H\033[2J", out);
		fflush(out);
	}
	return 0;
}

int rep_live_event(void *arg, const struct at_event *ev)
{
	struct rep_live *l = arg;

	if (rep_heap_event(l->h, ev) < 0)
		return -1;
	if (++l->events >= CLOCK_EVERY) {
		l->events = 0;
		tick(l);
	}
	return 0;
}

int rep_live_wait(void *arg, int fd)
{
	struct rep_live *l = arg;
	struct stat st;
	struct pollfd p[2] = { { .fd = mode_due ? -1 : l->keys, .events = POLLIN },
			       { .fd = fd, .events = POLLIN } };

	tick(l);
	uint64_t now = at_now_ns(), left = l->next_ns > now ? l->next_ns - now : 0;
	int regular = fd < 0 || (fstat(fd, &st) == 0 && S_ISREG(st.st_mode));
	if (regular && left > FILE_POLL_NS)
		left = FILE_POLL_NS;
	/* a pipe is waited on with the keys; a regular file is always readable */
	poll(p, regular ? 1 : 2, (int)(left / 1000000u) + 1);
	return 0;
}

int rep_live_end(struct rep_live *l)
{
	if (l->failed) {
		errno = l->failed;
		return -1;
	}
	if (take(l, at_now_ns()) < 0 || draw(l, 1) < 0)
		return -1;
	if (l->tty) {
		fputs("\n", l->out);
		restore_terminal();
	}
	return fflush(l->out) == 0 ? 0 : -1;
}

void rep_live_free(struct rep_live *l)
{
	if (l->tty)
		restore_terminal();
	if (l->keys >= 0)
		close(l->keys);
	l->keys = -1;
	free(l->sites);
	l->sites = NULL;
}
