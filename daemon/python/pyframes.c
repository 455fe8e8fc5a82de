/* pyframes.c: a live CPython's Python frames, read from /proc/PID/mem. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsym.h"
#include "procmaps.h"
#include "pyframes.h"
#include "pylinetable.h"

/* The most steps of the search for a thread's state (a thread state or an interpreter each):
 * bpf/pywalk.bpf.c's bound, which ends a list made circular in a hostile process's memory. */
#define MAX_SEARCH_STEPS 4096

/* Reads n bytes at addr of the process: 0, or -1 (unmapped, or the process is gone). */
static int rd(const struct at_py_proc *p, uint64_t addr, void *buf, size_t n)
{
	ssize_t got = pread(p->mem_fd, buf, n, (off_t)addr);

	return got == (ssize_t)n ? 0 : -1;
}

int at_py_read(const struct at_py_proc *p, uint64_t addr, void *buf, size_t n)
{
	return rd(p, addr, buf, n);
}

/* Reads a 64-bit word at addr into *v: 0 or -1. */
static int rd64(const struct at_py_proc *p, uint64_t addr, uint64_t *v)
{
	return rd(p, addr, v, sizeof(*v));
}

/* ---- finding the interpreter ------------------------------------------------------------ */

/* What the scan of the maps found. */
struct scan {
	pid_t pid;
	enum at_py_found found;
	uint64_t runtime, version_addr, eval_start, eval_end, code_type;
	int has_version;
	char object[128];
	char why[512];
};

/* Whether a file name is an interpreter's: python* or libpython*. */
static int python_named(const char *base)
{
	return strncmp(base, "python", 6) == 0 || strncmp(base, "libpython", 9) == 0;
}

/* The load bias of an ELF file mapped at start from offset 0: start less its first PT_LOAD's
 * page. 0, or -1 for a file without one. */
static int load_bias(struct at_elf *e, uint64_t start, uint64_t *bias)
{
	size_t n;

	if (elf_getphdrnum(e->elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph))
			return -1;
		if (ph.p_type == PT_LOAD) {
			*bias = start - (ph.p_vaddr & ~(uint64_t)0xFFF);
			return 0;
		}
	}
	return -1;
}

/* Looks at one object: a CPython 3 defines _PyRuntime (and from 3.11 Py_Version), any CPython
 * Py_Initialize; the evaluation loop is _PyEval_EvalFrameDefault. Returns 1 when it is an
 * interpreter (s filled), else 0. */
static int look_at(struct scan *s, const struct at_procmaps_entry *m, struct at_elf *e)
{
	uint64_t runtime, version, bias, init, eval, size;

	if (at_elf_find_function(e, "Py_Initialize", &init) != 1)
		return 0;
	if (load_bias(e, m->start, &bias) != 0)
		return 0;
	s->found = AT_PY_UNKNOWN;
	if (at_elf_find_object(e, "_PyRuntime", &runtime) == 1) {
		s->runtime = bias + runtime;
		s->found = AT_PY_KNOWN;
	}
	if (at_elf_find_function_extent(e, "_PyEval_EvalFrameDefault", &eval, &size) == 1) {
		s->eval_start = bias + eval;
		s->eval_end = bias + eval + size;
	}
	if (at_elf_find_object(e, "PyCode_Type", &s->code_type) == 1)
		s->code_type += bias;
	if (at_elf_find_object(e, "Py_Version", &version) == 1) {
		s->version_addr = bias + version;
		s->has_version = 1;
	}
	return 1;
}

/* at_procmaps_for_each_file()'s callback: stops at the first interpreter. */
static int scan_one(const struct at_procmaps_entry *m, void *arg)
{
	struct scan *s = arg;
	const char *base = strrchr(m->path, '/');
	char path[4096 + 64];
	struct at_elf e;
	const char *why;
	int found;

	base = base ? base + 1 : m->path;
	if (m->offset != 0 || m->path_truncated || !python_named(base))
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)s->pid, m->path);
	if (at_elf_open(&e, path, &why) != 0)
		return 0;
	found = look_at(s, m, &e);
	at_elf_close(&e);
	if (found)
		snprintf(s->object, sizeof(s->object), "%s", base);
	return found;
}

/* Fills p->off from the version: 0, or -1 with s->why set. */
static int take_offsets(struct at_py_proc *p, struct scan *s)
{
	const struct at_py_offsets *t = at_py_offsets_table(p->version);
	uint8_t buf[AT_PY_DEBUG_OFFSETS_SIZE];
	const char *why;

	if (t) {
		p->off = *t;
		return 0;
	}
	if (!at_py_offsets_published(p->version)) {
		snprintf(s->why, sizeof(s->why), "%s is Python %u.%u: Python frames are read for "
			 "3.11 to 3.13 only", s->object, p->version >> 24, (p->version >> 16) & 0xFF);
		return -1;
	}
	why = "unreadable";
	if (rd(p, p->runtime, buf, sizeof(buf)) != 0 ||
	    at_py_offsets_decode(buf, sizeof(buf), p->version, &p->off, &why) != 0) {
		snprintf(s->why, sizeof(s->why), "%s: _PyRuntime's debug offsets: %s", s->object,
			 why);
		return -1;
	}
	return 0;
}

/* Copies a message into why. */
static void say(char *why, size_t whylen, const char *msg)
{
	if (whylen)
		snprintf(why, whylen, "%s", msg);
}

enum at_py_found at_py_open(struct at_py_proc *p, pid_t pid, char *why, size_t whylen)
{
	struct scan s = { .pid = pid, .found = AT_PY_NOT_PYTHON };
	char maps[64], mem[64];
	uint64_t version;

	memset(p, 0, sizeof(*p));
	p->mem_fd = -1;
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	if (at_procmaps_for_each_file(maps, scan_one, &s, NULL) < 0) {
		snprintf(why, whylen, "%s: %s", maps, strerror(errno));
		return AT_PY_ERROR;
	}
	if (s.found == AT_PY_NOT_PYTHON)
		return AT_PY_NOT_PYTHON;
	if (s.found == AT_PY_UNKNOWN || !s.has_version) {
		snprintf(why, whylen, "%s is a Python before 3.11: Python frames are read for 3.11 "
			 "to 3.13 only", s.object);
		return AT_PY_UNKNOWN;
	}
	snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)pid);
	p->pid = pid;
	p->runtime = s.runtime;
	p->eval_start = s.eval_start;
	p->eval_end = s.eval_end;
	p->code_type = s.code_type;
	snprintf(p->object, sizeof(p->object), "%s", s.object);
	p->mem_fd = open(mem, O_RDONLY | O_CLOEXEC);
	if (p->mem_fd < 0 || rd64(p, s.version_addr, &version) != 0) {
		snprintf(why, whylen, "%s: %s", mem, strerror(errno));
		at_py_close(p);
		return AT_PY_ERROR;
	}
	p->version = (uint32_t)version;
	if (take_offsets(p, &s) != 0) {
		say(why, whylen, s.why);
		at_py_close(p);
		return AT_PY_UNKNOWN;
	}
	return AT_PY_KNOWN;
}

void at_py_close(struct at_py_proc *p)
{
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	p->mem_fd = -1;
}

/* ---- a thread's frames ------------------------------------------------------------------ */

#define AT_PY_STATE_EXTRA const struct at_py_proc *proc;
#define AT_PY_READ(w, dst, n, addr) rd((w)->proc, addr, dst, n)
#include "py_walk.h"

int at_py_thread_frames(const struct at_py_proc *p, pid_t tid, struct at_py_frame *f, int max)
{
	struct py_walk_state w = {
		.off = &p->off, .runtime = p->runtime, .tid = (__u32)tid, .out = f, .proc = p,
		.max = max < 0 ? 0 : max > AT_PY_WALK_MAX ? AT_PY_WALK_MAX : (__u32)max,
	};
	int steps = 0;

	if (py_find_start(&w) != 0)
		return -1;
	while (steps++ < MAX_SEARCH_STEPS && !py_find_step(&w))
		;
	if (w.bad)
		return -1;
	if (!w.found)
		return 0;
	if (py_frames_start(&w) != 0)
		return -1;
	for (steps = 0; steps < 2 * AT_PY_WALK_MAX + 2 && !py_frame_step(&w); steps++)
		;
	return w.bad ? -1 : (int)w.count;
}

/* ---- code objects ----------------------------------------------------------------------- */

/* Appends code point cp as UTF-8 to out[*at..outlen - 1): 0, or 1 when it does not fit. */
static int put_utf8(uint32_t cp, char *out, size_t outlen, size_t *at)
{
	uint8_t b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (uint8_t)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (uint8_t)(0xC0 | cp >> 6);
		b[1] = (uint8_t)(0x80 | (cp & 63));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (uint8_t)(0xE0 | cp >> 12);
		b[1] = (uint8_t)(0x80 | ((cp >> 6) & 63));
		b[2] = (uint8_t)(0x80 | (cp & 63));
		n = 3;
	} else {
		b[0] = (uint8_t)(0xF0 | cp >> 18);
		b[1] = (uint8_t)(0x80 | ((cp >> 12) & 63));
		b[2] = (uint8_t)(0x80 | ((cp >> 6) & 63));
		b[3] = (uint8_t)(0x80 | (cp & 63));
		n = 4;
	}
	if (*at + n >= outlen)
		return 1;
	memcpy(out + *at, b, n);
	*at += n;
	return 0;
}

int at_py_str_utf8(unsigned kind, const uint8_t *data, size_t n, char *out, size_t outlen)
{
	size_t at = 0;

	if ((kind != 1 && kind != 2 && kind != 4) || outlen == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint32_t cp = 0;

		memcpy(&cp, data + i * kind, kind);   /* little-endian: the low bytes first */
		if (cp > 0x10FFFF)
			return -1;
		if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
			cp = 0xFFFD;    /* no NUL inside a name, no surrogate in UTF-8 */
		if (put_utf8(cp, out, outlen, &at))
			break;
	}
	out[at] = 0;
	return (int)at;
}

/* Reads the str at addr into out (outlen bytes, UTF-8, cut where it does not fit): 0 or -1. */
static int read_str(const struct at_py_proc *p, uint64_t addr, char *out, size_t outlen)
{
	const struct at_py_offsets *o = &p->off;
	uint8_t data[AT_PY_MAX_STR * 4];
	uint64_t length;
	uint32_t state;
	unsigned kind;

	if (!addr || rd64(p, addr + o->unicode_length, &length) != 0 ||
	    rd(p, addr + o->unicode_state, &state, sizeof(state)) != 0)
		return -1;
	kind = (state >> 2) & 7;
	if (!((state >> 5) & 1) || (kind != 1 && kind != 2 && kind != 4) ||
	    (((state >> 6) & 1) && kind != 1))
		return -1;
	if (length > AT_PY_MAX_STR)
		length = AT_PY_MAX_STR;
	addr += ((state >> 6) & 1) ? o->unicode_ascii_size : o->unicode_compact_size;
	if (rd(p, addr, data, length * kind) != 0)
		return -1;
	return at_py_str_utf8(kind, data, length, out, outlen) < 0 ? -1 : 0;
}

/* Reads the bytes object at addr into a new buffer: 0 or -1. */
static int read_bytes(const struct at_py_proc *p, uint64_t addr, uint8_t **buf, size_t *len)
{
	int64_t size;

	if (!addr || rd(p, addr + p->off.bytes_size, &size, sizeof(size)) != 0 || size < 0 ||
	    size > (int64_t)AT_PY_MAX_LINETABLE)
		return -1;
	*buf = malloc(size ? (size_t)size : 1);
	if (!*buf)
		return -1;
	if (rd(p, addr + p->off.bytes_sval, *buf, (size_t)size) != 0) {
		free(*buf);
		*buf = NULL;
		return -1;
	}
	*len = (size_t)size;
	return 0;
}

int at_py_code_read(const struct at_py_proc *p, uint64_t code, struct at_py_code *c)
{
	const struct at_py_offsets *o = &p->off;
	uint64_t name, qualname, file, table, type;
	int32_t first;

	memset(c, 0, sizeof(*c));
	/* every object's type follows its reference count (PyObject: ob_refcnt, ob_type) */
	if (p->code_type && (rd64(p, code + 8, &type) != 0 || type != p->code_type))
		return -1;
	if (rd64(p, code + o->code_name, &name) != 0 ||
	    rd64(p, code + o->code_qualname, &qualname) != 0 ||
	    rd64(p, code + o->code_filename, &file) != 0 ||
	    rd64(p, code + o->code_linetable, &table) != 0 ||
	    rd(p, code + o->code_firstlineno, &first, sizeof(first)) != 0)
		return -1;
	if (read_str(p, name, c->name, sizeof(c->name)) != 0 ||
	    read_str(p, qualname, c->qualname, sizeof(c->qualname)) != 0 ||
	    read_str(p, file, c->file, sizeof(c->file)) != 0 ||
	    read_bytes(p, table, &c->linetable, &c->linetable_len) != 0)
		return -1;
	c->firstlineno = first;
	return 0;
}

int at_py_code_line(const struct at_py_code *c, uint32_t offset)
{
	if (offset == AT_PY_OFFSET_START)
		return c->firstlineno >= 0 ? c->firstlineno : -1;
	return at_py_line(c->linetable, c->linetable_len, c->firstlineno, offset);
}
