/* py_fixture.h: for the unit drivers of daemon/python: the interpreters they run, and
 * tests/fixtures/py_stacks.py started under one of them and waited for at its stop. Each
 * driver includes it once (static functions), after cmocka.h. */
#ifndef ALLOCTAP_PY_FIXTURE_H
#define ALLOCTAP_PY_FIXTURE_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PYENV "/root/.pyenv/versions/"

/* Debian's interpreter and pyenv's of each minor version the reader knows. */
static const char *const py_interpreters[] = {
	"/usr/bin/python3.11",
	PYENV "3.11.7/bin/python3.11",
	PYENV "3.12.1/bin/python3.12",
	PYENV "3.13.0/bin/python3.13",
};
#define PY_INTERPRETERS (sizeof(py_interpreters) / sizeof(py_interpreters[0]))

/* Calls run with each of py_interpreters installed, saying the others are not (pyenv's are
 * not Debian packages: Debian's python3.11, which make deps installs, always runs). Returns
 * how many ran. */
static int py_each_interpreter(void (*run)(const char *python))
{
	int ran = 0;

	for (size_t i = 0; i < PY_INTERPRETERS; i++) {
		if (access(py_interpreters[i], X_OK) != 0) {
			print_message("%s not installed\n", py_interpreters[i]);
			continue;
		}
		run(py_interpreters[i]);
		ran++;
	}
	return ran;
}

/* Starts scenario of tests/fixtures/py_stacks.py under python; waits (20 s at most, failing if
 * the fixture ends first) until it has written out at its stop, whose first line names the
 * stopped thread: that id in *tid. Returns the fixture's pid; out is left for the caller. */
static pid_t py_fixture_start(const char *python, const char *scenario, const char *out,
			      pid_t *tid)
{
	char script[PATH_MAX];
	pid_t pid;
	FILE *f;
	int t;

	assert_non_null(realpath("tests/fixtures/py_stacks.py", script));
	unlink(out);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(python, python, script, scenario, out, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 2000 && access(out, R_OK) != 0; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		assert_int_equal(waitpid(pid, NULL, WNOHANG), 0);
		nanosleep(&ts, NULL);
	}
	f = fopen(out, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "tid %d", &t), 1);
	fclose(f);
	*tid = t;
	return pid;
}

#endif
