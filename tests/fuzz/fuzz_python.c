/* fuzz_python.c: the reader of Python frames (daemon/python/pyframes.c, pylinetable.c,
 * pyoffsets.c), whose every byte comes from a process the daemon does not trust.
 *
 * The input is the process's memory: an in-memory file read in place of /proc/PID/mem, every
 * address an offset into the input. Its first byte picks the offsets (3.11's table, 3.12's, or
 * 3.13's _Py_DebugOffsets decoded from the input at _PyRuntime), the next four the thread id;
 * _PyRuntime is at offset 64. The thread's frames are walked, each code object read and each
 * frame's line looked up; the input is also a location table and a str's characters. Whatever
 * the bytes, the walk ends within its bounds and every name is a NUL-terminated string. */
#include "daemon/python/pyframes.h"
#include "daemon/python/pylinetable.h"
#include "fuzz_input.h"

#define RUNTIME 64

/* The offsets the input's first byte picks into *o: 0, or -1 for none. */
static int pick_offsets(const uint8_t *data, size_t size, struct at_py_offsets *o)
{
	const char *why;

	switch (data[0] % 3) {
	case 0:
		*o = *at_py_offsets_table(0x030b07f0);
		return 0;
	case 1:
		*o = *at_py_offsets_table(0x030c01f0);
		return 0;
	default:
		if (size < RUNTIME + AT_PY_DEBUG_OFFSETS_SIZE)
			return -1;
		return at_py_offsets_decode(data + RUNTIME, size - RUNTIME, 0x030d00f0, o, &why);
	}
}

/* Walks the thread and names its frames. */
static void walk(const struct at_py_proc *p, pid_t tid)
{
	struct at_py_frame f[64];
	int n = at_py_thread_frames(p, tid, f, 64);

	FUZZ_CHECK(n >= -1 && n <= 64);
	for (int i = 0; i < n; i++) {
		struct at_py_code c;

		if (at_py_code_read(p, f[i].code, &c) != 0)
			continue;
		FUZZ_CHECK(strlen(c.name) < sizeof(c.name) && strlen(c.file) < sizeof(c.file) &&
			   strlen(c.qualname) < sizeof(c.qualname));
		FUZZ_CHECK(at_py_code_line(&c, f[i].offset) >= -1);
		free(c.linetable);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct at_py_proc p = { .pid = 1, .runtime = RUNTIME };
	char out[64];
	uint32_t tid;

	if (size < 5)
		return 0;
	for (uint32_t off = 0; off < 64; off += 7)
		FUZZ_CHECK(at_py_line(data, size, 1, off) >= -1);
	for (unsigned kind = 1; kind <= 4; kind *= 2) {
		int n = at_py_str_utf8(kind, data, size / kind, out, sizeof(out));

		FUZZ_CHECK(n < (int)sizeof(out) && (n < 0 || strlen(out) == (size_t)n));
	}
	if (pick_offsets(data, size, &p.off) != 0)
		return 0;
	memcpy(&tid, data + 1, sizeof(tid));
	p.mem_fd = fuzz_memfd(data, size);
	walk(&p, (pid_t)tid);
	close(p.mem_fd);
	return 0;
}
