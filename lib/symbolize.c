/* symbolize.c: addresses of a trace's processes to frames, with libdwfl; one Dwfl per object,
 * reported at base 0, so that a libdwfl address is the object's virtual address. */
#include <dlfcn.h>
#include <dwarf.h>
#include <elfutils/debuginfod.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "prim.h"
#include "ranges.h"
#include "symbolize.h"

enum object_state {
	OBJECT_UNOPENED = 0,
	OBJECT_READY,
	OBJECT_UNUSABLE, /* missing, unreadable or changed: reported, never named */
};

struct load_segment {
	uint64_t offset, filesz, vaddr;
};

/* The frames of one looked-up address of an object (a return address and the same pc as a
 * first frame are two keys: their lookups differ). */
struct cached_frames {
	uint64_t key; /* virtual address * 2 + return_address; 0: empty */
	int n;
	struct at_frame *frames;
};

/* A function symbol: [start, start + size) in libdwfl addresses. */
struct function_symbol {
	uint64_t start, size;
	const char *name;
	int rank; /* among symbols at one address, the lowest wins: global, weak, local */
};

/* The address range of a function's code or of an inlined call, in one compilation unit. */
struct scope_range {
	Dwarf_Addr low, high;  /* [low, high) */
	Dwarf_Off die;         /* the DIE (subprogram or inlined_subroutine) */
	uint32_t depth;        /* in the CU's tree: an inner scope is deeper */
};

/* Every scope range of one CU, listed once: dwarf_getscopes walks the CU's DIE tree at each
 * lookup, milliseconds per address in a CU of thousands of inlined calls (an interpreter's
 * main loop); the list makes a lookup one scan of plain ranges. */
struct cu_scopes {
	Dwarf_Off cu;
	struct scope_range *r;
	size_t n, cap;
};

struct object {
	char *path;
	const char *base; /* inside path */
	uint8_t build_id_len;
	uint8_t build_id[AT_BUILD_ID_MAX];
	enum object_state state;
	uint64_t trace_start_ns; /* the recording start of the traces naming it (the earliest);
				  * 0 unknown */
	Dwfl *dwfl;
	Dwfl_Module *module;
	GElf_Addr bias;         /* libdwfl address - object virtual address */
	struct load_segment *loads;
	size_t nloads;
	struct at_symbolizer *z; /* its symbolizer, for find_debug_file */
	const char *debug_dir;  /* the symbolizer's, for find_debug_file */
	int debuginfod;         /* as struct at_object_outcome's */
	int debuginfod_errno;
	uint64_t unnamed;       /* stack frames of its addresses given no function name */
	int debug_errno;        /* find_debug_file: its debug file is there, but opening failed */
	int debug_opened;       /* find_debug_file gave libdwfl its debug file */
	int debug_has_dwarf;    /* and that file has a .debug_info section */
	struct function_symbol *symbols; /* sorted by start: the function symbols with a size */
	size_t nsymbols;
	struct cached_frames *cache; /* open addressing, at most half full */
	size_t ncache, cache_slots;
	struct cu_scopes *cus;  /* the CUs whose scopes are listed */
	size_t ncus;
	char **names;           /* demangled symbol names, kept as long as the object */
	char lookup_error[128]; /* why DWARF gave no answer at an address: "" none */
	size_t nnames;
};


struct at_symbolizer {
	char *debug_dir;
	debuginfod_client *debuginfod; /* NULL: not begun (or DEBUGINFOD_URLS unset) */
	int debuginfod_errno;       /* a fetch failed for a reason other than "none there":
				     * the servers are not asked again */
	struct timespec fetch_start; /* of the fetch under way, for its time limit */
	uint64_t trace_start_ns; /* at_symbolizer_trace_start */
	at_symbolize_problem_fn problem;
	void *problem_arg;
	struct object **objects;
	size_t nobjects, cap_objects;
	struct object **index;    /* the objects by at_object_hash, open addressing, half full */
	size_t index_slots;
	struct at_ranges *mappings; /* each pid's mappings, the value its struct object */
	struct frame_name *names;   /* names of frames that are not native, open addressing, at
				     * most half full (NULL: none yet) */
	size_t names_slots, nnames;
	uint32_t names_added;       /* NAMES records taken: the last one's serial */
	char **retired;             /* the strings of names replaced: a caller may still hold
				     * them (at_symbolize_frame's frames), freed with z */
	size_t nretired;
};

/* The name of a process's frames of one kind and value (a NAMES record). */
struct frame_name {
	uint32_t pid;
	uint8_t kind;              /* 0: an empty slot (a native frame is never named so) */
	uint64_t value;
	uint32_t line;
	char *function, *file;     /* owned; file NULL: unknown */
	uint32_t serial;           /* 1, 2, ... over the symbolizer's names: a later name of the
				    * same frames has another */
};

/* Opens a regular file read-only (lib/prim.h): a FIFO, a device, a socket or a directory is
 * refused before any open that could have an effect (a writer blocked on a FIFO released, a
 * device's open run). The fd, or -1 with errno and *why ("a FIFO, not a regular file"). */
static int open_regular(const char *path, const char **why)
{
	return at_open_regular(path, 0, why);
}

static void hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
	out[2 * n] = '\0';
}

/* Whether the ELF file fd has a .debug_info section (compressed or not): its section headers
 * only are read, from a duplicate of fd. */
static int has_debug_info(int fd)
{
	int dup_fd = dup(fd), found = 0;
	Elf *elf = dup_fd >= 0 ? elf_begin(dup_fd, ELF_C_READ, NULL) : NULL;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0)
		while (!found && (scn = elf_nextscn(elf, scn)))
			if (gelf_getshdr(scn, &sh)) {
				const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
				found = name && (!strcmp(name, ".debug_info") ||
						 !strcmp(name, ".zdebug_info"));
			}
	elf_end(elf);
	if (dup_fd >= 0)
		close(dup_fd);
	return found;
}

int at_debug_file_path(const char *debug_dir, const uint8_t *id, size_t n, char *buf,
		       size_t size)
{
	char text[2 * AT_BUILD_ID_MAX + 1];

	if (n < 2 || n > AT_BUILD_ID_MAX) {
		errno = EINVAL;
		return -1;
	}
	hex(id, n, text);
	return snprintf(buf, size, "%s/.build-id/%.2s/%s.debug",
			debug_dir ? debug_dir : AT_SYMBOLIZE_DEBUG_DIR, text, text + 2);
}

/* Whether DEBUGINFOD_URLS names at least one server. */
static int debuginfod_wanted(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && urls[strspn(urls, " \t")];
}

/* libdebuginfod, loaded when a fetch is first wanted (as libdw loads it): linked in, its
 * libcurl and TLS libraries would weigh on every report, DEBUGINFOD_URLS set or not. Loaded
 * once for the process, never unloaded. */
static struct {
	int tried;  /* 1: loaded, or not loadable (begin NULL) */
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id, int n, char **path);
	void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t fn);
	void (*set_user_data)(debuginfod_client *c, void *value);
	void *(*get_user_data)(debuginfod_client *c);
	void (*end)(debuginfod_client *c);
} dfd;

/* Loads libdebuginfod (AT_DEBUGINFOD_LIBRARY) the first time: 0, or -1 when it cannot be
 * loaded or lacks a function. */
static int load_debuginfod(void)
{
	void *h;

	if (dfd.tried)
		return dfd.begin ? 0 : -1;
	dfd.tried = 1;
	h = dlopen(AT_DEBUGINFOD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	*(void **)&dfd.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&dfd.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&dfd.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&dfd.get_user_data = dlsym(h, "debuginfod_get_user_data");
	*(void **)&dfd.end = dlsym(h, "debuginfod_end");
	if (dfd.find_debuginfo && dfd.set_progressfn && dfd.set_user_data && dfd.get_user_data &&
	    dfd.end)
		*(void **)&dfd.begin = dlsym(h, "debuginfod_begin");
	return dfd.begin ? 0 : -1;
}

/* libdebuginfod's progress callback, called while a fetch waits or reads: nonzero cancels the
 * fetch once it has taken AT_DEBUGINFOD_FETCH_S seconds. */
static int fetch_progress(debuginfod_client *c, long done, long total)
{
	struct at_symbolizer *z = dfd.get_user_data(c);
	struct timespec now;

	(void)done, (void)total;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec - z->fetch_start.tv_sec >= AT_DEBUGINFOD_FETCH_S;
}

/* z's debuginfod client, begun on first use; NULL when DEBUGINFOD_URLS names no server, when
 * an earlier fetch failed but for "none there" (z->debuginfod_errno), or when the client
 * cannot begin (then z->debuginfod_errno is ELIBACC: libdebuginfod cannot be loaded, or
 * ENOMEM). */
static debuginfod_client *debuginfod_of(struct at_symbolizer *z)
{
	if (z->debuginfod_errno || !debuginfod_wanted())
		return NULL;
	if (!z->debuginfod) {
		if (load_debuginfod() < 0) {
			z->debuginfod_errno = ELIBACC;
			return NULL;
		}
		z->debuginfod = dfd.begin();
		if (!z->debuginfod) {
			z->debuginfod_errno = ENOMEM;
			return NULL;
		}
		dfd.set_user_data(z->debuginfod, z);
		dfd.set_progressfn(z->debuginfod, fetch_progress);
	}
	return z->debuginfod;
}

/* Whether the ELF file fd carries build-id id (n bytes): read from a duplicate of fd. */
static int has_build_id(int fd, const unsigned char *id, int n)
{
	int dup_fd = dup(fd);
	Elf *elf = dup_fd >= 0 ? elf_begin(dup_fd, ELF_C_READ, NULL) : NULL;
	const void *bits;
	ssize_t len = elf ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
	int same = len == n && memcmp(bits, id, (size_t)n) == 0;

	elf_end(elf);
	if (dup_fd >= 0)
		close(dup_fd);
	return same;
}

/* Fetches o's debug file, of build-id (n bytes), from the servers of DEBUGINFOD_URLS into
 * libdebuginfod's cache (DEBUGINFOD_CACHE_PATH): its fd, its path in *path (malloc'ed), or
 * -1 when not asked (no server, or an earlier failure) or failed (o->debuginfod says so;
 * EBADMSG: the file served has another build-id, and is not used). An object is asked for
 * once. */
static int fetch_debug_file(struct object *o, const unsigned char *id, int n, char **path)
{
	debuginfod_client *c;
	int fd;

	if (o->debuginfod)
		return -1; /* asked once (libdwfl asks for symbols, then for DWARF) */
	c = debuginfod_of(o->z);
	if (!c) {
		if (o->z->debuginfod_errno) { /* said as this object's too */
			o->debuginfod = -2;
			o->debuginfod_errno = o->z->debuginfod_errno;
		}
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &o->z->fetch_start);
	fd = dfd.find_debuginfo(c, id, n, path);
	if (fd < 0) {
		o->debuginfod = -1;
		o->debuginfod_errno = -fd;
		if (-fd != ENOENT)
			o->z->debuginfod_errno = -fd;
		return -1;
	}
	if (!has_build_id(fd, id, n)) {
		close(fd);
		free(*path);
		*path = NULL;
		o->debuginfod = -1;
		o->debuginfod_errno = EBADMSG;
		return -1;
	}
	o->debuginfod = 1;
	return fd;
}

/* libdwfl's find_debuginfo callback: DIR/.build-id/ab/cdef....debug of the module's build-id,
 * else, when DEBUGINFOD_URLS names servers, the file they give for it (fetch_debug_file);
 * nothing else (no .gnu_debuglink search next to the object). The module's userdata is its
 * struct object. */
static int find_debug_file(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct object *o = *userdata;
	const unsigned char *bits;
	GElf_Addr vaddr;
	char path[PATH_MAX];
	int n, fd;

	(void)modname, (void)base, (void)file_name, (void)debuglink_file, (void)debuglink_crc;
	if (!o)
		return -1;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	int len = at_debug_file_path(o->debug_dir, bits, n < 0 ? 0 : (size_t)n, path, sizeof(path));
	if (len < 0 || (size_t)len >= sizeof(path))
		return -1;
	const char *why;
	do
		fd = open_regular(path, &why);
	while (fd < 0 && errno == EINTR);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR)) {
		char *fetched = NULL;

		fd = fetch_debug_file(o, bits, n, &fetched);
		if (fd < 0)
			return -1;
		o->debug_opened = 1;
		o->debug_has_dwarf = has_debug_info(fd);
		*debuginfo_file_name = fetched; /* libdwfl frees it */
		return fd;
	}
	if (fd < 0) {
		o->debug_errno = errno; /* there, but not for us now: said, never silent */
		return -1;
	}
	*debuginfo_file_name = strdup(path); /* libdwfl frees it */
	if (!*debuginfo_file_name) {
		close(fd);
		o->debug_errno = ENOMEM;
		return -1;
	}
	o->debug_opened = 1;
	o->debug_has_dwarf = has_debug_info(fd);
	return fd;
}

static char *debuginfo_path_unused;

static const Dwfl_Callbacks object_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debug_file,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path_unused,
};

static void report_problem(struct at_symbolizer *z, struct object *o, const char *why)
{
	o->state = OBJECT_UNUSABLE;
	if (z->problem)
		z->problem(z->problem_arg, o->path, why);
}

/* Reads the PT_LOAD segments of the module's ELF file. 0, or -1. */
static int read_loads(struct object *o)
{
	Elf *elf = dwfl_module_getelf(o->module, &o->bias);
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n) != 0)
		return -1;
	o->loads = calloc(n ? n : 1, sizeof(*o->loads));
	if (!o->loads)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			o->loads[o->nloads++] = (struct load_segment){ ph.p_offset, ph.p_filesz,
								       ph.p_vaddr };
	}
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct function_symbol *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	return strcmp(x->name, y->name);
}

/* Reads the module's function symbols (from its best table: .symtab, its debug file's, or
 * .dynsym) into a sorted array: libdwfl's own address lookup scans every symbol. 0, or -1. */
static int read_symbols(struct object *o)
{
	int n = dwfl_module_getsymtab(o->module);
	size_t kept = 0, unique = 0;

	if (n <= 0)
		return 0; /* no symbols: no names */
	o->symbols = malloc((size_t)n * sizeof(*o->symbols));
	if (!o->symbols)
		return -1;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(o->module, i, &sym, &addr, &shndx, NULL,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);

		if (!name || !*name || sym.st_size == 0 || shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		o->symbols[kept++] = (struct function_symbol){
			addr, sym.st_size, name,
			bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2,
		};
	}
	qsort(o->symbols, kept, sizeof(*o->symbols), by_start);
	/* one symbol per address: the best ranked, first after the sort */
	for (size_t i = 0; i < kept; i++)
		if (unique == 0 || o->symbols[unique - 1].start != o->symbols[i].start)
			o->symbols[unique++] = o->symbols[i];
	o->nsymbols = unique;
	return 0;
}

/* libstdc++'s demangler (extern "C" in <cxxabi.h>): the Itanium C++ ABI's names. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

/* Keeps the allocated name d with the object and returns it; when d is NULL or cannot be
 * kept, frees it and returns fallback. */
static const char *kept_name(struct object *o, char *d, const char *fallback)
{
	char **a = d ? realloc(o->names, (o->nnames + 1) * sizeof(*a)) : NULL;

	if (!a) {
		free(d);
		return fallback;
	}
	o->names = a;
	o->names[o->nnames++] = d;
	return d;
}

/* A symbol's name as people read it: a C++ name (_Z...) demangled ("ns::f(int)"), any other
 * as it is; the demangled text is kept with the object. NULL stays NULL. */
static const char *demangled(struct object *o, const char *name)
{
	int status = -1;

	if (!name || strncmp(name, "_Z", 2) != 0)
		return name;
	char *d = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0 || !d) {
		free(d);
		return name;
	}
	return kept_name(o, d, name);
}

/* The function symbol holding libdwfl address a, or NULL. */
static const struct function_symbol *symbol_holding(const struct object *o, uint64_t a)
{
	size_t lo = 0, hi = o->nsymbols;

	while (lo < hi) { /* first symbol starting after a */
		size_t mid = lo + (hi - lo) / 2;

		if (o->symbols[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the nearest symbols starting at or before a; one of them may be larger and hold it */
	for (size_t i = lo, tries = 0; i-- > 0 && tries < 8; tries++)
		if (a - o->symbols[i].start < o->symbols[i].size)
			return &o->symbols[i];
	return NULL;
}

/* The name of the function symbol holding libdwfl address a, or NULL. */
static const char *symbol_at(const struct object *o, uint64_t a)
{
	const struct function_symbol *f = symbol_holding(o, a);

	return f ? f->name : NULL;
}

/* Writes ns (since the Unix epoch) as "2026-11-26 19:40:01.123 UTC" into out. */
static void utc_text(uint64_t ns, char *out, size_t size)
{
	time_t t = (time_t)(ns / 1000000000u);
	struct tm tm;
	char day[32];

	if (!gmtime_r(&t, &tm) || !strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(day, sizeof(day), "%llu s", (unsigned long long)t);
	snprintf(out, size, "%s.%03u UTC", day, (unsigned)(ns % 1000000000u / 1000000u));
}

/* The slack of a file's change time: the kernel stamps it from a clock that may lag the
 * real time by a tick, so a change just after the trace began can read as just before. */
#define CTIME_SLACK_NS 20000000u

/* Whether the file of an object without a build-id (st: its status) can be the one traced:
 * nothing in the trace identifies it, so it must not have changed (content, name, links:
 * its ctime) since the trace began. 1 yes; 0 no, with the reason in why. */
static int unchanged_since_trace(const struct object *o, const struct stat *st, char *why,
				 size_t size)
{
	uint64_t ctime_ns = (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;
	char changed[48], began[48];

	if (!o->trace_start_ns) {
		snprintf(why, size, "no build-id, and the trace has no start time: nothing tells "
				    "whether this file is the one traced");
		return 0;
	}
	if (ctime_ns + CTIME_SLACK_NS < o->trace_start_ns)
		return 1;
	utc_text(ctime_ns, changed, sizeof(changed));
	utc_text(o->trace_start_ns, began, sizeof(began));
	snprintf(why, size, "no build-id, and the file changed at %s, after the trace began (%s): "
			    "it may not be the one traced", changed, began);
	return 0;
}

/* Whether the reason why says this process lacked a resource (descriptors, memory), not
 * that the object is wrong: the same report with more would name it. */
static int resource_error(const char *why)
{
	return strstr(why, strerror(EMFILE)) || strstr(why, strerror(ENFILE)) ||
	       strstr(why, strerror(ENOMEM)) || strstr(why, "out of memory");
}

/* How recent a change makes a file possibly still being written. */
#define WRITING_NS 1000000000ull

/* Whether the file at path may have been read in the middle of a change: it is no longer the
 * one st describes (another inode, size, content or status change time), or st says it
 * changed less than WRITING_NS ago (a writer rewriting it in place, as cp over it does, leaves
 * it empty or partial for as long as it writes). */
static int changed_since(const char *path, const struct stat *st)
{
	struct stat now;
	struct timespec clock;
	uint64_t changed = (uint64_t)st->st_ctim.tv_sec * 1000000000u + (uint64_t)st->st_ctim.tv_nsec;

	if (clock_gettime(CLOCK_REALTIME, &clock) == 0 &&
	    (uint64_t)clock.tv_sec * 1000000000u + (uint64_t)clock.tv_nsec < changed + WRITING_NS)
		return 1;
	return stat(path, &now) < 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino ||
	       now.st_size != st->st_size || now.st_mtim.tv_sec != st->st_mtim.tv_sec ||
	       now.st_mtim.tv_nsec != st->st_mtim.tv_nsec || now.st_ctim.tv_sec != st->st_ctim.tv_sec ||
	       now.st_ctim.tv_nsec != st->st_ctim.tv_nsec;
}

/* Undoes a failed try_open: o as it was before it. */
static void close_object(struct object *o)
{
	if (o->dwfl)
		dwfl_end(o->dwfl);
	o->dwfl = NULL;
	o->module = NULL;
	free(o->loads);
	free(o->symbols);
	o->loads = NULL;
	o->symbols = NULL;
	o->nloads = o->nsymbols = 0;
	o->debug_errno = o->debug_opened = o->debug_has_dwarf = 0;
	if (o->debuginfod == 1)
		o->debuginfod = 0; /* fetched again (from the cache) at the next try */
}

/* Where o's debug file came from, for its messages: "from debuginfod", or "under DIR" as
 * two parts (*dir: "" or the debug directory). */
static const char *debug_place(const struct object *o, const char **dir)
{
	*dir = o->debuginfod == 1 ? "" : o->debug_dir;
	return o->debuginfod == 1 ? "from debuginfod" : "under ";
}

/* Reads o's symbols and checks that its debug file, if there is one, was opened and read: a
 * debug file there but not opened or read (no descriptor or memory left) would give fewer
 * names, silently (libdwfl falls back on .dynsym). 0, or -1 with the reason in why. */
static int read_names(struct object *o, char *why, size_t size)
{
	Dwarf_Addr bias;
	Dwarf *dw;
	const char *dir, *place = debug_place(o, &dir);

	if (read_loads(o) < 0 || read_symbols(o) < 0) {
		snprintf(why, size, "cannot read its program headers: %s", elf_errmsg(-1));
		return -1;
	}
	if (o->debug_errno) {
		snprintf(why, size, "its debug file (by build-id under %s) cannot be opened: %s",
			 o->debug_dir, strerror(o->debug_errno));
		return -1;
	}
	if (!o->debug_opened)
		return 0;
	dw = dwfl_module_getdwarf(o->module, &bias);
	int err = dw ? 0 : dwfl_errno(); /* reading it clears it */
	if (err && strstr(dwfl_errmsg(err), "No DWARF") && o->debug_has_dwarf) {
		/* libdwfl says so when it could not load the DWARF the file holds */
		snprintf(why, size, "its debug file (by build-id %s%s) holds DWARF that cannot "
				    "be read (out of memory? a limit of this process, not a fault of "
				    "the object)", place, dir);
		return -1;
	}
	if (err && !strstr(dwfl_errmsg(err), "No DWARF")) {
		snprintf(why, size, "its debug file (by build-id %s%s) cannot be read: %s",
			 place, dir, dwfl_errmsg(err));
		return -1;
	}
	return 0;
}

/* Whether the ELF file's section header table and segments lie within its size bytes: a file
 * read while it is written is shorter, and its symbols would be missing, silently. */
static int elf_whole(Elf *elf, uint64_t size)
{
	GElf_Ehdr eh;
	size_t n = 0;

	if (!gelf_getehdr(elf, &eh))
		return 0;
	if (eh.e_shoff && (eh.e_shoff > size || (uint64_t)eh.e_shnum * eh.e_shentsize > size - eh.e_shoff))
		return 0;
	if (elf_getphdrnum(elf, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
		    (ph.p_offset > size || ph.p_filesz > size - ph.p_offset))
			return 0;
	}
	return 1;
}

/* One try at opening o: 0 ready; -1 failed, with the reason in why and *again set when the
 * failure may pass (a signal, the file changing or just changed: changed_since). */
static int try_open(struct object *o, char *why, size_t size, int *again)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	char want[2 * AT_BUILD_ID_MAX + 1], have[2 * AT_BUILD_ID_MAX + 1];
	struct stat st;
	int fd, n;

	const char *reason = NULL;
	*again = 0;
	fd = open_regular(o->path, &reason);
	if (fd < 0 || fstat(fd, &st) < 0) {
		*again = errno == EINTR || errno == EAGAIN;
		snprintf(why, size, "cannot open: %s", fd < 0 ? reason : strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	o->dwfl = dwfl_begin(&object_callbacks);
	if (!o->dwfl) {
		close(fd);
		snprintf(why, size, "cannot read: %s", dwfl_errmsg(-1));
		return -1;
	}
	/* on success libdwfl owns fd and closes it with the Dwfl */
	o->module = dwfl_report_elf(o->dwfl, o->base, o->path, fd, 0, false);
	dwfl_report_end(o->dwfl, NULL, NULL);
	if (!o->module) {
		close(fd);
		snprintf(why, size, "not an ELF object: %s", dwfl_errmsg(-1));
		*again = changed_since(o->path, &st);
		return -1;
	}
	GElf_Addr elf_bias;
	if (!elf_whole(dwfl_module_getelf(o->module, &elf_bias), (uint64_t)st.st_size)) {
		snprintf(why, size, "not an ELF object: its headers say more than its %llu bytes",
			 (unsigned long long)st.st_size);
		*again = changed_since(o->path, &st);
		return -1;
	}
	n = dwfl_module_build_id(o->module, &bits, &vaddr);
	if (n < 0)
		n = 0;
	if ((size_t)n != o->build_id_len || memcmp(bits, o->build_id, (size_t)n) != 0) {
		hex(o->build_id, o->build_id_len, want);
		hex(bits, (size_t)(n > AT_BUILD_ID_MAX ? AT_BUILD_ID_MAX : n), have);
		snprintf(why, size, "build-id %s in the trace, %s on disk: the object changed",
			 o->build_id_len ? want : "(none)", n ? have : "(none)");
		*again = changed_since(o->path, &st);
		return -1;
	}
	if (n == 0 && !unchanged_since_trace(o, &st, why, size))
		return -1;
	void **userdata;
	dwfl_module_info(o->module, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = o;
	if (read_names(o, why, size) < 0) {
		*again = changed_since(o->path, &st);
		return -1;
	}
	return 0;
}

/* The tries open_object makes, and the wait between two: a file rewritten in place (cp over
 * it) reads short or empty for as long as its writer takes. A file that stays as it is gets
 * its last try's reason. */
#define OPEN_TRIES 5
#define OPEN_RETRY_NS 100000000L

/* Opens o with libdwfl and checks its build-id against the trace's (without one, that the
 * file has not changed since the trace began); a failure that may pass is tried again. On
 * failure o becomes unusable and is reported (once: it is never opened again), saying when
 * the cause is this process's limits rather than the object. */
static void open_object(struct at_symbolizer *z, struct object *o)
{
	char why[320];
	int again = 0;

	o->state = OBJECT_UNUSABLE;
	if (o->path[0] != '/')
		return; /* [vdso] and the like: no file, nothing to report */
	for (int i = 0; i < OPEN_TRIES; i++) {
		if (i) {
			struct timespec wait = { 0, OPEN_RETRY_NS };

			close_object(o);
			nanosleep(&wait, NULL);
		}
		if (try_open(o, why, sizeof(why) - 96, &again) == 0) {
			o->state = OBJECT_READY;
			return;
		}
		if (!again) {
			if (resource_error(why))
				strcat(why, " (a limit of this process, not a fault of the object)");
			break;
		}
	}
	report_problem(z, o, why);
}

/* The index slot of the object of (path, build-id): the object's, or the empty slot where it
 * would go. The index must have an empty slot. */
static struct object **index_slot(struct at_symbolizer *z, const char *path, const uint8_t *id,
				  size_t id_len)
{
	size_t mask = z->index_slots - 1;
	uint64_t h = at_object_hash(path, id, id_len);
	size_t i = (size_t)((h ^ h >> 29) * 0xbf58476d1ce4e5b9ull >> 32) & mask; /* high bits mixed down */

	for (;; i = (i + 1) & mask) {
		struct object *o = z->index[i];
		if (!o || (o->build_id_len == id_len && memcmp(o->build_id, id, id_len) == 0 &&
			   strcmp(o->path, path) == 0))
			return &z->index[i];
	}
}

/* Makes room in the index for one more object (at most half full). 0, or -1 (ENOMEM). */
static int index_room(struct at_symbolizer *z)
{
	if (2 * (z->nobjects + 1) <= z->index_slots)
		return 0;
	size_t slots = z->index_slots ? 2 * z->index_slots : 64;
	struct object **old = z->index;
	size_t nold = z->index_slots;
	z->index = calloc(slots, sizeof(*z->index));
	if (!z->index) {
		z->index = old;
		return -1;
	}
	z->index_slots = slots;
	for (size_t i = 0; i < nold; i++)
		if (old[i])
			*index_slot(z, old[i]->path, old[i]->build_id, old[i]->build_id_len) = old[i];
	free(old);
	return 0;
}

/* The cache entry of (path, build-id), made if new. NULL on allocation failure. */
static struct object *object_of(struct at_symbolizer *z, const struct at_mapping *m)
{
	struct object *o, **slot;
	const char *slash;
	size_t id_len = m->build_id_len > AT_BUILD_ID_MAX ? AT_BUILD_ID_MAX : m->build_id_len;

	if (index_room(z) < 0)
		return NULL;
	slot = index_slot(z, m->path, m->build_id, id_len);
	if (*slot) {
		o = *slot;
		if (!z->trace_start_ns || z->trace_start_ns < o->trace_start_ns)
			o->trace_start_ns = z->trace_start_ns; /* the earliest; unknown wins */
		return o;
	}
	if (z->nobjects == z->cap_objects) {
		size_t cap = z->cap_objects ? 2 * z->cap_objects : 16;
		struct object **a = realloc(z->objects, cap * sizeof(*a));

		if (!a)
			return NULL;
		z->objects = a;
		z->cap_objects = cap;
	}
	o = calloc(1, sizeof(*o));
	if (!o || !(o->path = strdup(m->path))) {
		free(o);
		return NULL;
	}
	slash = strrchr(o->path, '/');
	o->base = slash ? slash + 1 : o->path;
	o->build_id_len = m->build_id_len > AT_BUILD_ID_MAX ? AT_BUILD_ID_MAX : m->build_id_len;
	memcpy(o->build_id, m->build_id, o->build_id_len);
	o->z = z;
	o->debug_dir = z->debug_dir;
	o->trace_start_ns = z->trace_start_ns;
	z->objects[z->nobjects++] = o;
	*slot = o;
	return o;
}

struct at_symbolizer *at_symbolizer_new(const char *debug_dir, at_symbolize_problem_fn problem,
					void *arg)
{
	struct at_symbolizer *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->debug_dir = strdup(debug_dir ? debug_dir : AT_SYMBOLIZE_DEBUG_DIR);
	if (!z->debug_dir) {
		free(z);
		return NULL;
	}
	z->mappings = at_ranges_new();
	if (!z->mappings) {
		free(z->debug_dir);
		free(z);
		return NULL;
	}
	z->problem = problem;
	z->problem_arg = arg;
	return z;
}

void at_symbolizer_free(struct at_symbolizer *z)
{
	if (!z)
		return;
	for (size_t i = 0; i < z->nobjects; i++) {
		struct object *o = z->objects[i];

		if (o->dwfl)
			dwfl_end(o->dwfl);
		for (size_t c = 0; c < o->cache_slots; c++)
			free(o->cache[c].frames);
		free(o->cache);
		for (size_t c = 0; c < o->ncus; c++)
			free(o->cus[c].r);
		for (size_t c = 0; c < o->nnames; c++)
			free(o->names[c]);
		free(o->names);
		free(o->cus);
		free(o->symbols);
		free(o->loads);
		free(o->path);
		free(o);
	}
	free(z->objects);
	for (size_t i = 0; i < z->names_slots; i++) {
		free(z->names[i].function);
		free(z->names[i].file);
	}
	free(z->names);
	for (size_t i = 0; i < z->nretired; i++)
		free(z->retired[i]);
	free(z->retired);
	at_ranges_free(z->mappings);
	free(z->index);
	free(z->debug_dir);
	if (z->debuginfod)
		dfd.end(z->debuginfod);
	free(z);
}

void at_symbolizer_trace_start(struct at_symbolizer *z, uint64_t unix_ns)
{
	z->trace_start_ns = unix_ns;
}

int at_symbolizer_add_mapping(struct at_symbolizer *z, const struct at_mapping *m)
{
	struct object *o;

	if (!m->path || m->end <= m->start) {
		errno = EINVAL;
		return -1;
	}
	o = object_of(z, m);
	if (!o)
		return -1;
	/* the mappings of the pid this one overlaps go (lib/ranges.h): O(log n) */
	struct at_range r = { m->pid, m->start, m->end, m->offset, o };
	return at_ranges_put(z->mappings, &r);
}

/* The mapping of pid holding pc (its value the struct object), or NULL. */
static const struct at_range *mapping_of(const struct at_symbolizer *z, uint32_t pid,
					 uint64_t pc)
{
	return at_ranges_find(z->mappings, pid, pc);
}

int at_symbolizer_mapping(const struct at_symbolizer *z, uint32_t pid, uint64_t pc,
			  struct at_mapping *m)
{
	const struct at_range *r = mapping_of(z, pid, pc);
	const struct object *o;

	if (!r)
		return 0;
	o = r->value;
	*m = (struct at_mapping){ .pid = pid, .build_id_len = o->build_id_len, .start = r->start,
				  .end = r->end, .offset = r->offset, .path = o->path };
	memcpy(m->build_id, o->build_id, o->build_id_len);
	return 1;
}

/* The virtual address of file offset off through the PT_LOAD segments; 1 found, 0 not. */
static int vaddr_of(const struct object *o, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < o->nloads; i++) {
		const struct load_segment *l = &o->loads[i];

		if (l->offset <= off && off - l->offset < l->filesz) {
			*vaddr = off - l->offset + l->vaddr;
			return 1;
		}
	}
	return 0;
}

/* The DIE that gives die its DW_AT_name, through DW_AT_abstract_origin and
 * DW_AT_specification (an inlined call's abstract function, a member function's declaration
 * in its class); 1 found, 0 not. */
static int named_die(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Die d = *die;

	for (int hops = 0; hops < 8; hops++) {
		Dwarf_Attribute attr;

		if (dwarf_hasattr(&d, DW_AT_name)) {
			*out = d;
			return 1;
		}
		if (!dwarf_attr(&d, DW_AT_abstract_origin, &attr) &&
		    !dwarf_attr(&d, DW_AT_specification, &attr))
			return 0;
		if (!dwarf_formref_die(&attr, &d))
			return 0;
	}
	return 0;
}

/* Appends the name of scope s ("ns", "vector<int, std::allocator<int> >", "(anonymous
 * namespace)") and "::" to the n bytes of buf (size bytes); the new length. */
static size_t add_scope(Dwarf_Die *s, char *buf, size_t size, size_t n)
{
	const char *name = dwarf_diename(s);
	int w = snprintf(buf + n, size - n, "%s::",
			 name ? name : dwarf_tag(s) == DW_TAG_namespace ? "(anonymous namespace)"
									: "{unnamed}");

	return w < 0 || (size_t)w >= size - n ? size - 1 : n + (size_t)w;
}

/* The qualified name of a C++ function without a linkage name: DW_AT_name after the
 * namespaces, classes, structures and unions holding the DIE that names it ("ns::C::f"),
 * kept with the object; the bare name when its scopes cannot be read. */
static const char *qualified_name(struct object *o, Dwarf_Die *die)
{
	Dwarf_Die named, *scopes = NULL;
	char buf[1024];
	size_t len = 0;
	int n;

	if (!named_die(die, &named))
		return NULL;
	const char *name = dwarf_diename(&named);
	n = dwarf_getscopes_die(&named, &scopes); /* named, its parents, ..., its CU */
	for (int i = n - 1; i > 0; i--) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		    tag == DW_TAG_structure_type || tag == DW_TAG_union_type)
			len = add_scope(&scopes[i], buf, sizeof(buf), len);
	}
	free(scopes);
	if (len == 0 || !name)
		return name;
	snprintf(buf + len, sizeof(buf) - len, "%s", name);
	return kept_name(o, strdup(buf), name);
}

/* A function DIE's name as the symbol table gives it once demangled ("std::vector<int,
 * std::allocator<int> >::push_back(int const&)"): its linkage name (looking through the
 * abstract function of an inlined call and a member's declaration), demangled; a linkage name
 * that is no mangled C++ name is an assembler label (glibc's "__GI_raise" for raise) and is
 * passed over. In C++
 * without one (main, an extern "C" function, a function of an anonymous namespace): for the
 * function holding libdwfl address a (a subprogram), the symbol at its entry (its DWARF
 * address + bias), demangled, else the name qualified by its scopes. In other languages its DW_AT_name. Kept with the object; NULL
 * without a name. */
static const char *die_name(struct object *o, Dwarf_Die *cu, Dwarf_Die *die, Dwarf_Addr a,
			    Dwarf_Addr bias)
{
	const struct function_symbol *f;
	Dwarf_Addr entry;
	Dwarf_Attribute attr;
	const char *linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));

	if (!linkage)
		linkage = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr));
	if (linkage && strncmp(linkage, "_Z", 2) == 0)
		return demangled(o, linkage);
	switch (dwarf_srclang(cu)) {
	case DW_LANG_C_plus_plus:
	case DW_LANG_C_plus_plus_03:
	case DW_LANG_C_plus_plus_11:
	case DW_LANG_C_plus_plus_14:
		/* the symbol of this function, not of a part of it moved away (f.cold) */
		if (dwarf_tag(die) == DW_TAG_subprogram && (f = symbol_holding(o, a)) &&
		    dwarf_entrypc(die, &entry) == 0 && f->start == entry + bias)
			return demangled(o, f->name);
		return qualified_name(o, die);
	default:
		return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	}
}

/* File name number idx of the CU's line table; NULL if none. */
static const char *cu_file(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t n;

	if (dwarf_getsrcfiles(cu, &files, &n) != 0 || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static int add_range(struct cu_scopes *c, Dwarf_Addr low, Dwarf_Addr high, Dwarf_Off die,
		     uint32_t depth)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct scope_range *r = realloc(c->r, cap * sizeof(*r));
		if (!r)
			return -1;
		c->r = r;
		c->cap = cap;
	}
	c->r[c->n++] = (struct scope_range){ low, high, die, depth };
	return 0;
}

/* Lists the scope ranges of the CU's tree under die (depth first, iterative: CUs nest
 * deeply). 0, or -1 when out of memory or when libdw could not read the tree (a partial list
 * would name some addresses from the symbols instead, silently). */
static int list_scopes(struct cu_scopes *c, Dwarf_Die *cu_die)
{
	enum { MAX_DEPTH = 256 };
	Dwarf_Die stack[MAX_DEPTH];
	int depth = 0, rc = dwarf_child(cu_die, &stack[0]);

	if (rc != 0)
		return rc < 0 ? -1 : 0;
	for (;;) {
		Dwarf_Die *d = &stack[depth];
		int tag = dwarf_tag(d);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			Dwarf_Addr base, start, end;
			ptrdiff_t off = 0;
			while ((off = dwarf_ranges(d, off, &base, &start, &end)) > 0)
				if (start < end &&
				    add_range(c, start, end, dwarf_dieoffset(d), (uint32_t)depth) < 0)
					return -1;
			if (off < 0 && strstr(dwarf_errmsg(-1), "memory"))
				return -1;
		}
		if (depth + 1 < MAX_DEPTH && (rc = dwarf_child(d, &stack[depth + 1])) == 0) {
			depth++;
			continue;
		}
		if (rc < 0)
			return -1;
		while ((rc = dwarf_siblingof(&stack[depth], &stack[depth])) != 0) {
			if (rc < 0)
				return -1;
			if (depth == 0)
				return 0;
			depth--;
		}
	}
}

/* The listed scopes of CU cu_die (listed now if new); NULL when out of memory. */
static struct cu_scopes *scopes_of(struct object *o, Dwarf_Die *cu_die)
{
	Dwarf_Off off = dwarf_dieoffset(cu_die);

	for (size_t i = 0; i < o->ncus; i++)
		if (o->cus[i].cu == off)
			return &o->cus[i];
	struct cu_scopes *a = realloc(o->cus, (o->ncus + 1) * sizeof(*a));
	if (!a) {
		snprintf(o->lookup_error, sizeof(o->lookup_error), "%s", strerror(ENOMEM));
		return NULL;
	}
	o->cus = a;
	struct cu_scopes *c = &o->cus[o->ncus];
	*c = (struct cu_scopes){ .cu = off };
	if (list_scopes(c, cu_die) < 0) {
		free(c->r);
		snprintf(o->lookup_error, sizeof(o->lookup_error), "%s",
			 dwarf_errno() ? dwarf_errmsg(-1) : strerror(ENOMEM));
		return NULL;
	}
	o->ncus++;
	return c;
}

static int deeper_first(const void *a, const void *b)
{
	const struct scope_range *x = a, *y = b;
	return (x->depth < y->depth) - (x->depth > y->depth);
}

/* The scopes of the CU holding address a (CU-relative), innermost first, up to the first
 * subprogram: *n of them in a malloc'ed array, or NULL (none, or out of memory). */
static Dwarf_Die *scopes_at(struct object *o, Dwarf_Die *cu_die, Dwarf_Addr a, int *n)
{
	struct cu_scopes *c = scopes_of(o, cu_die);
	struct scope_range hit[AT_SYMBOLIZE_MAX_INLINE * 2];
	int k = 0;

	*n = 0;
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n; i++)
		if (c->r[i].low <= a && a < c->r[i].high && k < (int)(sizeof(hit) / sizeof(hit[0])))
			hit[k++] = c->r[i];
	if (!k)
		return NULL;
	qsort(hit, (size_t)k, sizeof(hit[0]), deeper_first);
	Dwarf_Die *dies = malloc((size_t)k * sizeof(*dies));
	if (!dies)
		return NULL;
	Dwarf *dw = dwarf_cu_getdwarf(cu_die->cu);
	for (int i = 0; i < k; i++) {
		if (!dwarf_offdie(dw, hit[i].die, &dies[*n]))
			continue;
		(*n)++;
		if (dwarf_tag(&dies[*n - 1]) == DW_TAG_subprogram)
			break;
	}
	return dies;
}

/* The frames DWARF gives at libdwfl address a (the inlined calls at a, innermost first, then
 * the subprogram holding them): how many, 0 without DWARF there. */
static int dwarf_frames(struct object *o, Dwarf_Addr a, struct at_frame *frames, int max)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(o->module, a, &bias);
	Dwarf_Die *scopes = NULL;
	Dwfl_Line *line;
	const char *file = NULL;
	int lineno = 0, nscopes, n = 0;

	if (!cu) {
		int err = dwfl_errno();
		const char *msg = err ? dwfl_errmsg(err) : NULL;

		/* no CU holds a, or the object has no DWARF: a name from the symbols; anything
		 * else (libdw out of memory reads "invalid DWARF") is no answer at all */
		if (msg && !strstr(msg, "address out of range") && !strstr(msg, "DWARF information"))
			snprintf(o->lookup_error, sizeof(o->lookup_error), "%s", msg);
		return 0;
	}
	line = dwfl_module_getsrc(o->module, a);
	if (line)
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	/* the concrete scopes holding a: inlined calls innermost first, then their subprogram */
	scopes = scopes_at(o, cu, a - bias, &nscopes);
	for (int i = 0; i < nscopes && n < max; i++) {
		Dwarf_Die *s = &scopes[i];
		int tag = dwarf_tag(s);
		Dwarf_Attribute attr;
		Dwarf_Word call_file = 0, call_line = 0;

		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		int decl = 0;

		(void)dwarf_decl_line(s, &decl); /* through the abstract origin of an inline */
		frames[n] = (struct at_frame){ .function = die_name(o, cu, s, a, bias), .file = file,
					       .line = lineno > 0 ? (unsigned)lineno : 0,
					       .decl_line = decl > 0 ? (unsigned)decl : 0,
					       .inlined = tag == DW_TAG_inlined_subroutine };
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the caller's place is where this inline was called */
		if (dwarf_formudata(dwarf_attr(s, DW_AT_call_file, &attr), &call_file) == 0)
			file = cu_file(cu, call_file);
		else
			file = NULL;
		if (dwarf_formudata(dwarf_attr(s, DW_AT_call_line, &attr), &call_line) != 0)
			call_line = 0;
		lineno = (int)call_line;
	}
	free(scopes);
	return n;
}

/* The frames of virtual address vaddr of a ready object (return_address: look up vaddr - 1),
 * into frames (AT_SYMBOLIZE_MAX_INLINE of them): how many, at least 1; 0 when its DWARF
 * could not be read there (o->lookup_error says why). */
static int lookup(struct object *o, uint64_t vaddr, int return_address, struct at_frame *frames)
{
	Dwarf_Addr a = vaddr + o->bias - (return_address && vaddr > 0 ? 1 : 0);
	const char *name = NULL;
	int n;

	n = dwarf_frames(o, a, frames, AT_SYMBOLIZE_MAX_INLINE);
	if (o->lookup_error[0])
		return 0; /* a name from the symbols would differ from DWARF's: none */
	if (n == 0 || !frames[n - 1].function)
		name = demangled(o, symbol_at(o, a));
	if (n == 0) {
		Dwfl_Line *line = dwfl_module_getsrc(o->module, a);
		int lineno = 0;

		frames[0] = (struct at_frame){ .function = name };
		frames[0].file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
		frames[0].line = lineno > 0 ? (unsigned)lineno : 0;
		n = 1;
	} else if (!frames[n - 1].function) {
		frames[n - 1].function = name;
	}
	for (int i = 0; i < n; i++) {
		frames[i].object = o->base;
		frames[i].object_address = vaddr;
	}
	return n;
}

/* The cache slot of key in o: its entry, or the empty slot where it goes. */
static struct cached_frames *cache_slot(struct object *o, uint64_t key)
{
	size_t i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 20) & (o->cache_slots - 1);

	while (o->cache[i].key && o->cache[i].key != key)
		i = (i + 1) & (o->cache_slots - 1);
	return &o->cache[i];
}

/* Makes room for one more cache entry: 0, or -1 (the cache is then not used). */
static int cache_room(struct object *o)
{
	struct cached_frames *old = o->cache;
	size_t nold = o->cache_slots;

	if (2 * (o->ncache + 1) <= o->cache_slots)
		return 0;
	o->cache_slots = nold ? 2 * nold : 1024;
	o->cache = calloc(o->cache_slots, sizeof(*o->cache));
	if (!o->cache) {
		o->cache = old;
		o->cache_slots = nold;
		return -1;
	}
	for (size_t i = 0; i < nold; i++)
		if (old[i].key)
			*cache_slot(o, old[i].key) = old[i];
	free(old);
	return 0;
}

/* Adds to o's count the frames of the n given that have no function name; returns n. */
static int count_unnamed(struct object *o, const struct at_frame *frames, int n)
{
	for (int i = 0; i < n; i++)
		o->unnamed += !frames[i].function;
	return n;
}

void at_symbolizer_objects(const struct at_symbolizer *z, at_symbolize_object_fn fn, void *arg)
{
	for (size_t i = 0; i < z->nobjects; i++) {
		const struct object *o = z->objects[i];

		if (o->state != OBJECT_READY)
			continue;
		struct at_object_outcome out = {
			.path = o->path,
			.build_id = o->build_id,
			.build_id_len = o->build_id_len,
			.unnamed = o->unnamed,
			.debug_file = o->debug_opened,
			.debuginfod = o->debuginfod,
			.debuginfod_errno = o->debuginfod_errno,
		};
		fn(arg, &out);
	}
}

int at_symbolize(struct at_symbolizer *z, uint32_t pid, uint64_t pc, int return_address,
		 struct at_frame *frames, int max)
{
	const struct at_range *m = mapping_of(z, pid, pc);
	struct at_frame all[AT_SYMBOLIZE_MAX_INLINE];
	struct cached_frames *c = NULL;
	struct object *o;
	uint64_t off, vaddr, key;
	int n;

	frames[0] = (struct at_frame){ 0 };
	if (!m)
		return 1;
	o = m->value;
	off = pc - m->start + m->offset;
	frames[0].object = o->base;
	frames[0].object_address = off;
	if (o->state == OBJECT_UNOPENED)
		open_object(z, o);
	if (o->state != OBJECT_READY || !vaddr_of(o, off, &vaddr))
		return 1;
	key = vaddr * 2 + (return_address ? 1 : 0) + 2; /* never 0 */
	if (cache_room(o) == 0) {
		c = cache_slot(o, key);
		if (c->key) {
			n = c->n < max ? c->n : max;
			memcpy(frames, c->frames, (size_t)n * sizeof(*frames));
			return count_unnamed(o, frames, n);
		}
	}
	n = lookup(o, vaddr, return_address, all);
	if (n == 0) { /* from here on its frames are offsets, and that is said */
		char why[256];

		snprintf(why, sizeof(why), "its DWARF cannot be read at 0x%" PRIx64 ", from this frame "
			 "on: %s%s", vaddr, o->lookup_error,
			 resource_error(o->lookup_error) || strstr(o->lookup_error, "invalid DWARF")
				 ? " (out of memory? a limit of this process, not a fault of the object)"
				 : "");
		report_problem(z, o, why);
		return 1;
	}
	if (c && (c->frames = malloc((size_t)n * sizeof(*all)))) {
		memcpy(c->frames, all, (size_t)n * sizeof(*all));
		c->n = n;
		c->key = key;
		o->ncache++;
	}
	if (n > max)
		n = max;
	memcpy(frames, all, (size_t)n * sizeof(*frames));
	return count_unnamed(o, frames, n);
}

int at_frame_text(const struct at_frame *f, char *buf, size_t size)
{
	if (f->function)
		return snprintf(buf, size, "%s", f->function);
	if (f->object)
		return snprintf(buf, size, "%s+0x%" PRIx64, f->object, f->object_address);
	return snprintf(buf, size, "[unknown]");
}

/* The slot of (pid, kind, value) in names (slots of them, a power of two, never full): its
 * entry, or the empty slot where it goes. */
static struct frame_name *name_slot(struct frame_name *names, size_t slots, uint32_t pid,
				    uint8_t kind, uint64_t value)
{
	uint64_t h = (value ^ ((uint64_t)pid << 8 | kind)) * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 20) & (slots - 1);

	while (names[i].kind && (names[i].pid != pid || names[i].kind != kind ||
				 names[i].value != value))
		i = (i + 1) & (slots - 1);
	return &names[i];
}

/* Doubles z's table of names (or makes its first). 0, or -1 with errno (ENOMEM). */
static int grow_names(struct at_symbolizer *z)
{
	size_t slots = z->names_slots ? 2 * z->names_slots : 64;
	struct frame_name *v = calloc(slots, sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; i < z->names_slots; i++)
		if (z->names[i].kind)
			*name_slot(v, slots, z->names[i].pid, z->names[i].kind,
				   z->names[i].value) = z->names[i];
	free(z->names);
	z->names = v;
	z->names_slots = slots;
	return 0;
}

int at_symbolizer_add_name(struct at_symbolizer *z, const struct at_frame_name *n)
{
	if (at_frame_naming(n->kind) != AT_NAMED_NAMES || !n->function) {
		errno = EINVAL;
		return -1;
	}
	if (2 * (z->nnames + 1) > z->names_slots && grow_names(z) < 0)
		return -1;
	char *function = strdup(n->function);
	char *file = n->file && n->file[0] ? strdup(n->file) : NULL;
	if (!function || (n->file && n->file[0] && !file)) {
		free(function);
		free(file);
		errno = ENOMEM;
		return -1;
	}
	struct frame_name *e = name_slot(z->names, z->names_slots, n->pid, n->kind, n->value);
	if (e->kind) { /* a later record of the same frames replaces the earlier */
		char **v = realloc(z->retired, (z->nretired + 2) * sizeof(*v));

		if (!v) {
			free(function);
			free(file);
			errno = ENOMEM;
			return -1;
		}
		z->retired = v;
		z->retired[z->nretired++] = e->function;
		z->retired[z->nretired++] = e->file;
	} else {
		z->nnames++;
	}
	*e = (struct frame_name){ n->pid, n->kind, n->value, n->line, function, file,
				  ++z->names_added };
	return 0;
}

uint32_t at_symbolizer_name_serial(const struct at_symbolizer *z, uint32_t pid, unsigned kind,
				   uint64_t value)
{
	const struct frame_name *e =
		z->names_slots ? name_slot(z->names, z->names_slots, pid, (uint8_t)kind, value)
			       : NULL;

	return e && e->kind ? e->serial : 0;
}

/* The one frame of value of pid's kind, named by its NAMES record: the function, its file and
 * line; without a record, the kind's name as its object and the value as its address. */
static int symbolize_named(struct at_symbolizer *z, uint32_t pid, unsigned kind,
			   uint64_t value, struct at_frame *f)
{
	const struct frame_name *e =
		z->names_slots ? name_slot(z->names, z->names_slots, pid, (uint8_t)kind, value)
			       : NULL;

	*f = (struct at_frame){ .object = at_frame_kind_name(kind), .object_address = value };
	if (e && e->kind) {
		f->function = e->function;
		f->file = e->file;
		f->line = e->line;
	}
	return 1;
}

int at_symbolize_frame(struct at_symbolizer *z, uint32_t pid, unsigned kind, uint64_t value,
		       int return_address, struct at_frame *frames, int max)
{
	switch (at_frame_naming(kind)) {
	case AT_NAMED_ADDRESS:
		return at_symbolize(z, pid, value, return_address, frames, max);
	case AT_NAMED_NAMES:
		return symbolize_named(z, pid, kind, value, frames);
	case AT_NAMED_NONE:
		break;
	}
	frames[0] = (struct at_frame){ .object_address = value };
	return 1;
}
