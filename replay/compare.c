/* compare.c: one replay per allocator, side by side (compare.h). This process replays nothing,
 * so it may use stdio. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "allocator.h"
#include "compare.h"
#include "display.h"
#include "prim.h"

#define MAX_ROWS 160
#define VALUE_SIZE 40
#define OUTPUT_MAX ((size_t)8 << 20)

extern char **environ;

struct table {
	int rows, cols;
	char name[MAX_ROWS][64];
	char value[MAX_ROWS][RP_COMPARE_MAX][VALUE_SIZE];
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

/* Sets the value of a row (added at the end when new) in column col. */
static void table_set(struct table *t, const char *row, int col, const char *value)
{
	int r;

	for (r = 0; r < t->rows; r++)
		if (strcmp(t->name[r], row) == 0)
			break;
	if (r == t->rows) {
		if (t->rows == MAX_ROWS)
			return;
		snprintf(t->name[t->rows++], sizeof(t->name[0]), "%s", row);
	}
	snprintf(t->value[r][col], VALUE_SIZE, "%s", value);
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

/* One row a figure, a column an allocator, each column as wide as its longest value. 0, or
 * -1 with errno when stdout could not be written. */
static int print_table(const struct table *t, const char *const names[], int count)
{
	int width[RP_COMPARE_MAX];

	for (int c = 0; c < count; c++) {
		width[c] = (int)strlen(names[c]) > 12 ? (int)strlen(names[c]) : 12;
		for (int r = 0; r < t->rows; r++)
			if ((int)strlen(t->value[r][c]) > width[c])
				width[c] = (int)strlen(t->value[r][c]);
	}
	printf("%-30s", "allocator");
	for (int c = 0; c < count; c++)
		printf(" %*s", width[c], names[c]);
	putchar('\n');
	for (int r = 0; r < t->rows; r++) {
		printf("%-30s", t->name[r]);
		for (int c = 0; c < count; c++)
			printf(" %*s", width[c], t->value[r][c][0] ? t->value[r][c] : "-");
		putchar('\n');
	}
	return fflush(stdout) != 0 || ferror(stdout) ? -1 : 0;
}

int rp_compare_run(const char *const names[], int count, const char *input,
		   const char *const options[])
{
	const char *argv[64];
	int argc = 0, rc = 0;
	struct table *t = at_map(sizeof(*t), 0);
	char *out = at_map(OUTPUT_MAX, AT_MAP_NORESERVE);

	if (!t || !out) {
		at_error("cannot map the comparison's buffers: %s", strerror(errno));
		rc = 1;
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
	for (int c = 0; c < count; c++) {
		size_t len = 0;
		argv[name_at] = names[c];
		at_verbose("replaying %s against %s", input, names[c]);
		int status = run_replay(argv, out, &len);
		if (status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			if (len)
				at_write_all(STDERR_FILENO, out, len);
			if (status < 0)
				at_error("%s: cannot run the replay: %s", names[c], strerror(errno));
			else
				at_error("%s: the replay failed (%s %d)", names[c],
					 WIFEXITED(status) ? "exit status" : "signal",
					 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			rc = 1;
			goto cleanup;
		}
		for (char *save = NULL, *line = strtok_r(out, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save))
			add_line(t, c, line);
	}
	if (print_table(t, names, count) < 0) {
		at_write_error("<stdout>", errno);
		rc = 1;
	}
cleanup:
	at_unmap(t, sizeof(*t));
	at_unmap(out, OUTPUT_MAX);
	return rc;
}
