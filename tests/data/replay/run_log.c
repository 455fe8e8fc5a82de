/* run_log.c: linked with malloc_count.c into an LD_PRELOAD "allocator" for tests/replay_cli.sh's
 * --compare --repeat cases: when loaded it appends "TAG PID" to the file $RUN_LOG, so the test
 * counts the replays that ran against it and sees their order, from outside the replayer.
 * TAG is given at compile time (-DTAG='"a"'). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifndef TAG
#define TAG "x"
#endif

__attribute__((constructor)) static void note_run(void)
{
	const char *path = getenv("RUN_LOG");
	char line[64];

	if (!path)
		return;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	int n = snprintf(line, sizeof(line), "%s %d\n", TAG, (int)getpid());
	if (n > 0 && write(fd, line, (size_t)n) < 0)
		n = 0;
	close(fd);
}
