/* compare.c: one replay per allocator, side by side (compare.h). This process replays nothing,
 * so it may use stdio. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "allocator.h"
#include "compare.h"
#include "display.h"
#include "prim.h"

#define MAX_ROWS 160
#define NAME_SIZE 64
#define VALUE_SIZE 48
#define OUTPUT_MAX ((size_t)8 << 20)

extern char **environ;

/* The figures of every run: a row per figure, a column per allocator, each run's value. A
 * row's text is kept from the first run that gave it (library names, and single runs, which
 * print as the replay printed them). */
struct table {
	int rows, runs;
	char name[MAX_ROWS][NAME_SIZE];
	char text[MAX_ROWS][RP_COMPARE_MAX][VALUE_SIZE];
	double run[MAX_ROWS][RP_COMPARE_MAX][RP_REPEAT_MAX];
	int given[MAX_ROWS][RP_COMPARE_MAX]; /* runs that gave the row a value */
	int numeric[MAX_ROWS];               /* -1: a text row; else decimals of its values */
};

int rp_compare_parse(char *list, const char *names[RP_COMPARE_MAX], const char **bad)
{
	int n = 0;
	char *save = NULL, *name;
	const char *path;

	if (!*list || list[strlen(list) - 1] == ',' || list[0] == ',' || strstr(list, ",,")) {
		*bad = "";
		return -1;
	}
	for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		if (n == RP_COMPARE_MAX || rp_allocator_library(name, &path) < 0) {
			*bad = name;
			return -1;
		}
		names[n++] = name;
	}
	return n;
}

/* The digits after the point of a number's text, or -1 when value is no number. */
static int decimals_of(const char *value, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(value, &end);
	if (end == value || *end || errno)
		return -1;
	const char *point = strchr(value, '.');
	return point ? (int)strlen(point + 1) : 0;
}

/* The row named row (added at the end when new), or -1 when the table is full. */
static int table_row(struct table *t, const char *row)
{
	for (int r = 0; r < t->rows; r++)
		if (strcmp(t->name[r], row) == 0)
			return r;
	if (t->rows == MAX_ROWS)
		return -1;
	snprintf(t->name[t->rows], NAME_SIZE, "%s", row);
	return t->rows++;
}

/* Adds a run's value of a row in column col. */
static void table_set(struct table *t, const char *row, int col, const char *value)
{
	int r = table_row(t, row);
	double v;

	if (r < 0 || t->given[r][col] == RP_REPEAT_MAX)
		return;
	int decimals = decimals_of(value, &v);
	if (!t->given[r][col])
		snprintf(t->text[r][col], VALUE_SIZE, "%s", value);
	if (decimals < 0 || t->numeric[r] < 0)
		t->numeric[r] = -1;
	else if (decimals > t->numeric[r])
		t->numeric[r] = decimals;
	t->run[r][col][t->given[r][col]++] = v;
}

/* A latency line's value "count=N mean=X p50=N ...": one row per figure but the count. */
static void add_latency(struct table *t, const char *what, int col, char *value)
{
	char *save = NULL, row[64];

	for (char *kv = strtok_r(value, " ", &save); kv; kv = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq || strncmp(kv, "count=", 6) == 0)
			continue;
		*eq = 0;
		snprintf(row, sizeof(row), "%s %s ns", what, kv);
		table_set(t, row, col, eq + 1);
	}
}

/* The rows a summary line gives, in column col. */
static void add_line(struct table *t, int col, char *line)
{
	static const char *const keys[] = {
		"operations", "wall time ns", "ns per operation", "peak rss bytes",
		"peak live requested bytes", "final live requested bytes", "final live objects",
		"failed allocations", "threads", "thread waits", "thread wait time ns",
	};
	char *colon = strstr(line, ": ");

	if (!colon)
		return;
	*colon = 0;
	char *value = colon + 2;
	if (strcmp(line, "allocator") == 0) {
		char *space = strchr(value, ' ');
		const char *file = space ? strrchr(space + 1, '/') : NULL;
		table_set(t, "library", col, file ? file + 1 : value);
		return;
	}
	if (strncmp(line, "latency ", 8) == 0 && strcmp(line, "latency clock") != 0) {
		add_latency(t, line + 8, col, value);
		return;
	}
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (strcmp(line, keys[k]) == 0)
			table_set(t, line, col, value);
}

/* Runs one replay with its stderr into out (at most OUTPUT_MAX bytes, NUL-ended). Returns the
 * wait status, or -1 with errno when it could not be started. */
static int run_replay(const char *const argv[], char *out, size_t *len)
{
	posix_spawn_file_actions_t fa;
	int pipefd[2], status = -1;
	pid_t pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], STDERR_FILENO);
	int err = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, (char *const *)argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	*len = 0;
	if (err == 0) {
		ssize_t n;
		while ((n = at_read_some(pipefd[0], out + *len, OUTPUT_MAX - 1 - *len)) > 0)
			*len += (size_t)n;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close(pipefd[0]);
	out[*len] = 0;
	if (err) {
		errno = err;
		return -1;
	}
	return status;
}

int rp_compare_exact(const char *name)
{
	static const char *const exact[] = {
		"library", "operations", "peak live requested bytes", "final live requested bytes",
		"final live objects", "failed allocations", "threads",
	};

	for (size_t k = 0; k < sizeof(exact) / sizeof(exact[0]); k++)
		if (strcmp(name, exact[k]) == 0)
			return 1;
	return 0;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int rp_compare_figure(const double *runs, int n, int decimals, char *median, size_t msize,
		      char *spread, size_t ssize)
{
	double v[RP_REPEAT_MAX];

	memcpy(v, runs, (size_t)n * sizeof(double));
	qsort(v, (size_t)n, sizeof(double), by_value);
	double m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	snprintf(median, msize, "%.*f", decimals, m);
	double shown = strtod(median, NULL); /* a mean between two values: one decimal more */
	if (shown - m > 1e-9 * (m > 1 ? m : 1) || m - shown > 1e-9 * (m > 1 ? m : 1))
		snprintf(median, msize, "%.*f", decimals + 1, m);
	snprintf(spread, ssize, "%.*f-%.*f", decimals, v[0], decimals, v[n - 1]);
	return v[0] != v[n - 1];
}

/* Cell r, c of a table of several runs (rp_compare_figure); an exact figure that differed
 * between runs is said. */
static void figure(const struct table *t, int r, int c, char *cell, char *spread)
{
	int varied = rp_compare_figure(t->run[r][c], t->given[r][c], t->numeric[r], cell,
				       VALUE_SIZE, spread, 2 * VALUE_SIZE);

	if (varied && rp_compare_exact(t->name[r]))
		at_warn("%s differed between the runs of an allocator (%s): the median is shown",
			t->name[r], spread);
}

/* The table as printed: rows of cells, a min-max row after each measured figure when there
 * were several runs. */
struct shown {
	int rows;
	char name[2 * MAX_ROWS + 1][NAME_SIZE + 8];
	char cell[2 * MAX_ROWS + 1][RP_COMPARE_MAX][2 * VALUE_SIZE];
};

/* Adds a shown row named name (its cells empty: "-" when printed). Returns its index. */
static int shown_row(struct shown *s, const char *name)
{
	snprintf(s->name[s->rows], sizeof(s->name[0]), "%s", name);
	return s->rows++;
}

/* Renders t's runs into s: with one run each value as the replay printed it; with several,
 * the runs per allocator first, then each figure's median and, for a measured one, its
 * min-max. */
static void render(const struct table *t, int count, struct shown *s)
{
	char spread[2 * VALUE_SIZE];

	s->rows = 0;
	if (t->runs > 1) {
		int k = shown_row(s, "runs");
		for (int c = 0; c < count; c++)
			snprintf(s->cell[k][c], sizeof(s->cell[0][0]), "%d", t->runs);
	}
	for (int r = 0; r < t->rows; r++) {
		int k = shown_row(s, t->name[r]), several = t->runs > 1 && t->numeric[r] >= 0;
		int m = several && !rp_compare_exact(t->name[r]) ? shown_row(s, "") : -1;
		if (m >= 0)
			snprintf(s->name[m], sizeof(s->name[0]), "%s min-max", t->name[r]);
		for (int c = 0; c < count; c++) {
			if (!t->given[r][c])
				continue;
			if (!several) {
				snprintf(s->cell[k][c], sizeof(s->cell[0][0]), "%s", t->text[r][c]);
				continue;
			}
			figure(t, r, c, s->cell[k][c], spread);
			if (m >= 0)
				snprintf(s->cell[m][c], sizeof(s->cell[0][0]), "%s", spread);
		}
	}
}

/* One row a figure, a column an allocator, each column as wide as its longest value. 0, or
 * -1 with errno when stdout could not be written. */
static int print_table(const struct shown *s, const char *const names[], int count)
{
	int width[RP_COMPARE_MAX];

	for (int c = 0; c < count; c++) {
		width[c] = (int)strlen(names[c]) > 12 ? (int)strlen(names[c]) : 12;
		for (int r = 0; r < s->rows; r++)
			if ((int)strlen(s->cell[r][c]) > width[c])
				width[c] = (int)strlen(s->cell[r][c]);
	}
	printf("%-30s", "allocator");
	for (int c = 0; c < count; c++)
		printf(" %*s", width[c], names[c]);
	putchar('\n');
	for (int r = 0; r < s->rows; r++) {
		printf("%-30s", s->name[r]);
		for (int c = 0; c < count; c++)
			printf(" %*s", width[c], s->cell[r][c][0] ? s->cell[r][c] : "-");
		putchar('\n');
	}
	return fflush(stdout) != 0 || ferror(stdout) ? -1 : 0;
}

/* Runs the replay argv (its allocator at argv[name_at]) against names[c], its summary added to
 * t's column c. 0, or -1 after showing its messages and status. */
static int replay_one(struct table *t, const char *argv[], int name_at, const char *name, int c,
		      char *out)
{
	size_t len = 0;

	argv[name_at] = name;
	int status = run_replay(argv, out, &len);
	if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (len)
			at_write_all(STDERR_FILENO, out, len);
		if (status < 0)
			at_error("%s: cannot run the replay: %s", name, strerror(errno));
		else
			at_error("%s: the replay failed (%s %d)", name,
				 WIFEXITED(status) ? "exit status" : "signal",
				 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return -1;
	}
	for (char *save = NULL, *line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		add_line(t, c, line);
	return 0;
}

int rp_compare_run(const char *const names[], int count, int repeat, const char *input,
		   const char *const options[])
{
	const char *argv[64];
	int argc = 0, rc = 1;
	struct table *t = at_map(sizeof(*t), 0);
	struct shown *s = at_map(sizeof(*s), 0);
	char *out = at_map(OUTPUT_MAX, AT_MAP_NORESERVE);

	if (!t || !s || !out) {
		at_error("cannot map the comparison's buffers: %s", strerror(errno));
		goto cleanup;
	}
	argv[argc++] = "alloctap-replay";
	argv[argc++] = "--summary";
	argv[argc++] = "--allocator";
	int name_at = argc++;
	for (int i = 0; options[i] && argc < 60; i++)
		argv[argc++] = options[i];
	argv[argc++] = input;
	argv[argc] = NULL;
	t->runs = repeat;
	for (int run = 1; run <= repeat; run++) /* interleaved: drift hits every allocator */
		for (int c = 0; c < count; c++) {
			at_verbose("replaying %s against %s (run %d of %d)", input, names[c], run,
				   repeat);
			if (replay_one(t, argv, name_at, names[c], c, out) < 0)
				goto cleanup;
		}
	render(t, count, s);
	rc = 0;
	if (print_table(s, names, count) < 0) {
		at_write_error("<stdout>", errno);
		rc = 1;
	}
cleanup:
	at_unmap(t, sizeof(*t));
	at_unmap(s, sizeof(*s));
	at_unmap(out, OUTPUT_MAX);
	return rc;
}
