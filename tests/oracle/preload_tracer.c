/* preload_tracer.c: an LD_PRELOAD tracer of the malloc family, independent of alloctapd, used as
 * the oracle of tests/oracle_cli.sh.
 *
 * Loaded with LD_PRELOAD=preload_tracer.so and ORACLE_LOG=PATH, it interposes malloc, calloc,
 * realloc, free, memalign, posix_memalign, aligned_alloc, valloc, pvalloc and reallocarray,
 * passes every call to the next definition (the C library's), and writes one logalloc raw line
 * ("PID TID func(args)=result") per outermost call, in the form alloctapd writes:
 *   - pvalloc(n) as valloc(n rounded up to the page size), reallocarray(p,n,m) as
 *     realloc(p,n*m) with n*m saturated to 2^64-1;
 *   - aligned_alloc as memalign when the next definitions of the two are one function (as in
 *     glibc, where alloctapd probes that function once, under the name memalign);
 *   - posix_memalign's result is *memptr, or 0 when it failed.
 * Calls that a real allocator function makes to the family through the PLT (glibc's
 * reallocarray calls realloc) are nested and not written, as alloctapd does not write them.
 *
 * Lines go to a per-thread buffer in static TLS, appended to PATH with write(2) in whole lines
 * (the file is opened with O_APPEND for each flush, so the program cannot close or reuse the
 * descriptor). Buffers are flushed when full, when a thread ends (a pthread key destructor; the
 * thread's later calls, e.g. from glibc's __libc_thread_freeres, are written one by one), at
 * exit (a destructor, after which every line is written at once), before exec and _exit. A
 * forked child drops the lines it inherited (its parent writes them) and writes its own with its
 * own pid and tid. The tracer never allocates through the C library: dlsym's own calls during
 * start-up are served from a small static arena and not written; calls that reach the tracer
 * while it is in its own code are counted and reported on stderr at exit ("own calls"), since
 * alloctapd would see them and the oracle would not.
 *
 * With ORACLE_SEQ=1 each line starts with two numbers of one sequence shared by all threads,
 * "ENTRY EFFECT PID TID ...": EFFECT taken when the line is written (a free's before its call,
 * an allocation's after it), ENTRY before a realloc's call (EFFECT for the others). The lines
 * of several threads reach the file in buffers, out of the order the calls ran in; the numbers
 * give a block's story back in that order (tests/oracle/filter_log.py): a free is numbered
 * before another thread can be given its block, an allocation after it has it, a realloc's
 * old block leaves before its call and the new one comes after it. The sequence starts at the
 * monotonic clock's nanoseconds when the tracer starts, so that the numbers of a process's image
 * that an exec started come after those of the image before (a call takes more than a
 * nanosecond); a forked child goes on from its parent's, in a sequence of its own.
 *
 * What it cannot see, by construction: calls the C library makes to its own entry points without
 * the PLT or GOT (glibc's tcache_thread_shutdown frees at thread exit). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

#define LOG_BYTES 8192     /* per-thread buffer */
#define LINE_MAX_BYTES 192 /* "ENTRY EFFECT PID TID posix_memalign(A,N)=0xP\n" fits */
#define MAX_LOGS 4096      /* threads whose buffers exit can flush */
#define ARENA_BYTES 65536  /* dlsym's own allocations during start-up */

/* --- the next definitions -------------------------------------------------------------------- */

static struct {
	void *(*malloc)(size_t);
	void *(*calloc)(size_t, size_t);
	void *(*realloc)(void *, size_t);
	void (*free)(void *);
	void *(*memalign)(size_t, size_t);
	int (*posix_memalign)(void **, size_t, size_t);
	void *(*aligned_alloc)(size_t, size_t);
	void *(*valloc)(size_t);
	void *(*pvalloc)(size_t);
	void *(*reallocarray)(void *, size_t, size_t);
	int (*execve)(const char *, char *const[], char *const[]);
	int (*execv)(const char *, char *const[]);
	int (*execvp)(const char *, char *const[]);
	int (*execvpe)(const char *, char *const[], char *const[]);
	int (*fexecve)(int, char *const[], char *const[]);
	void (*exit_now)(int);
	void (*exit_now_c)(int);
} next;

enum { NOT_READY, RESOLVING, READY };
static atomic_int state = NOT_READY;
static TLS int resolving; /* this thread is resolving: the arena serves its calls */

/* The arena: bump allocation, 16-byte aligned, each block preceded by its size. */
static _Alignas(16) char arena[ARENA_BYTES];
static atomic_size_t arena_used;

static int in_arena(const void *p)
{
	return (const char *)p >= arena && (const char *)p < arena + sizeof(arena);
}

static void *arena_alloc(size_t n)
{
	size_t need = ((n + 15) & ~(size_t)15) + 16;
	size_t at = atomic_fetch_add(&arena_used, need);

	if (n > ARENA_BYTES || at + need > sizeof(arena))
		return NULL;
	memcpy(arena + at, &n, sizeof(n));
	return arena + at + 16; /* zeroed: static storage, never reused */
}

static size_t arena_size(const void *p)
{
	size_t n;

	memcpy(&n, (const char *)p - 16, sizeof(n));
	return n;
}

/* --- what the tracer knows about the run ----------------------------------------------------- */

static char log_path[PATH_MAX];
static int enabled;            /* ORACLE_LOG was set */
static size_t page_size;
static int aligned_is_memalign; /* aligned_alloc and memalign are one function */
static pthread_key_t thread_end_key;
static int key_usable;          /* a key whose pthread_setspecific never allocates */
static atomic_uint fork_generation = 1;
static atomic_int exiting;      /* past the exit destructor: write every line at once */
static atomic_ulong own_calls;  /* calls that reached the tracer from its own code */
static atomic_ulong failed_flushes; /* flushes whose lines write(2) refused */
static int seq_on;                  /* ORACLE_SEQ: lines numbered (see above) */
static atomic_ulong seq_last;       /* the last number taken */

/* --- per-thread logs ------------------------------------------------------------------------- */

struct thread_log {
	atomic_int busy;     /* held by the owner while appending, by exit while flushing */
	unsigned generation; /* fork_generation when pid and tid were read */
	pid_t pid, tid;
	int slot;            /* index in logs[], or -1 */
	int write_through;   /* write each line at once (ended thread, no slot) */
	unsigned depth;      /* interposed calls in progress on this thread */
	unsigned in_tracer;  /* the tracer's own code is running on this thread */
	size_t len;
	char buf[LOG_BYTES];
};

static TLS struct thread_log self;
static struct thread_log *_Atomic logs[MAX_LOGS];

static void lock(struct thread_log *t)
{
	while (atomic_exchange_explicit(&t->busy, 1, memory_order_acquire))
		;
}

static void unlock(struct thread_log *t)
{
	atomic_store_explicit(&t->busy, 0, memory_order_release);
}

/* Appends the buffered lines to the log file and empties the buffer. errno is preserved. */
static void flush(struct thread_log *t)
{
	int saved = errno;
	size_t done = 0;

	if (t->len == 0)
		return;
	int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

	while (fd >= 0 && done < t->len) {
		ssize_t n = write(fd, t->buf + done, t->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (done < t->len)
		atomic_fetch_add(&failed_flushes, 1);
	if (fd >= 0)
		close(fd);
	t->len = 0;
	errno = saved;
}

static void claim_slot(struct thread_log *t)
{
	t->slot = -1;
	for (int i = 0; i < MAX_LOGS; i++) {
		struct thread_log *none = NULL;

		if (atomic_compare_exchange_strong(&logs[i], &none, t)) {
			t->slot = i;
			return;
		}
	}
}

static void release_slot(struct thread_log *t)
{
	if (t->slot >= 0)
		atomic_store(&logs[t->slot], NULL);
	t->slot = -1;
}

/* Makes this thread's log its own: after a fork the child's copy holds its parent's lines and
 * ids. A thread's first line also arms its end-of-thread flush. */
static void adopt(void)
{
	self.generation = atomic_load(&fork_generation);
	self.pid = (pid_t)syscall(SYS_getpid);
	self.tid = (pid_t)syscall(SYS_gettid);
	self.len = 0;
	atomic_store(&self.busy, 0);
	claim_slot(&self);
	self.write_through = self.slot < 0 || !key_usable;
	if (key_usable)
		pthread_setspecific(thread_end_key, &self);
}

/* Takes another thread's lock, waiting a bounded time (it may be stopped or gone). */
static int try_lock(struct thread_log *t)
{
	for (long spins = 0; spins < (1L << 24); spins++)
		if (!atomic_exchange_explicit(&t->busy, 1, memory_order_acquire))
			return 1;
	return 0;
}

/* Flushes every registered log (exit, exec, _exit): the other threads' lines would be lost.
 * nested: this thread was interrupted inside the tracer (a signal handler), its own buffer is
 * mid-update and is left alone. */
static void flush_all(int nested)
{
	for (int i = 0; i < MAX_LOGS; i++) {
		struct thread_log *t = atomic_load(&logs[i]);

		if (!t || t->slot != i)
			continue; /* a dead thread's TLS now reused by another */
		if ((t == &self && nested) || !try_lock(t))
			continue;
		flush(t);
		unlock(t);
	}
}

/* The pthread key's destructor: the thread is ending; later calls are written one by one. */
static void thread_end(void *unused)
{
	(void)unused;
	self.in_tracer++;
	lock(&self);
	flush(&self);
	self.write_through = 1;
	release_slot(&self);
	unlock(&self);
	self.in_tracer--;
}

static void after_fork_child(void)
{
	for (int i = 0; i < MAX_LOGS; i++)
		atomic_store(&logs[i], NULL);
	atomic_fetch_add(&fork_generation, 1);
}

/* --- start-up -------------------------------------------------------------------------------- */

static void *next_fn(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void set_log_path(void)
{
	const char *p = getenv("ORACLE_LOG");
	size_t n = 0;

	if (!p || !*p)
		return;
	if (*p != '/') {
		if (!getcwd(log_path, sizeof(log_path) - 2))
			return;
		n = strlen(log_path);
		log_path[n++] = '/';
	}
	if (n + strlen(p) >= sizeof(log_path))
		return;
	strcpy(log_path + n, p);
	enabled = 1;
}

/* Resolves the next definitions and reads the settings. The first interposed call runs it;
 * calls it causes on the same thread get the arena. */
static void resolve(void)
{
	int expected = NOT_READY;

	if (!atomic_compare_exchange_strong(&state, &expected, RESOLVING)) {
		while (atomic_load(&state) != READY)
			;
		return;
	}
	resolving = 1;
	self.in_tracer++;
	next.malloc = next_fn("malloc");
	next.calloc = next_fn("calloc");
	next.realloc = next_fn("realloc");
	next.free = next_fn("free");
	next.memalign = next_fn("memalign");
	next.posix_memalign = next_fn("posix_memalign");
	next.aligned_alloc = next_fn("aligned_alloc");
	next.valloc = next_fn("valloc");
	next.pvalloc = next_fn("pvalloc");
	next.reallocarray = next_fn("reallocarray");
	next.execve = next_fn("execve");
	next.execv = next_fn("execv");
	next.execvp = next_fn("execvp");
	next.execvpe = next_fn("execvpe");
	next.fexecve = next_fn("fexecve");
	next.exit_now = next_fn("_exit");
	next.exit_now_c = next_fn("_Exit");
	aligned_is_memalign = next.aligned_alloc && (void *)next.aligned_alloc == (void *)next.memalign;
	page_size = (size_t)sysconf(_SC_PAGESIZE);
	set_log_path();
	seq_on = getenv("ORACLE_SEQ") && strcmp(getenv("ORACLE_SEQ"), "1") == 0;
	if (seq_on) { /* from the clock: an image an exec starts numbers on past the last one's */
		struct timespec now;

		clock_gettime(CLOCK_MONOTONIC, &now);
		atomic_store(&seq_last, (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
	}
	key_usable = pthread_key_create(&thread_end_key, thread_end) == 0 &&
		     thread_end_key < 32; /* glibc's first block of keys: no allocation */
	pthread_atfork(NULL, NULL, after_fork_child);
	self.in_tracer--;
	resolving = 0;
	atomic_store(&state, READY);
}

static inline void ready(void)
{
	if (__builtin_expect(atomic_load_explicit(&state, memory_order_acquire) != READY, 0))
		resolve();
}

/* --- lines ----------------------------------------------------------------------------------- */

enum func { F_MALLOC, F_CALLOC, F_REALLOC, F_FREE, F_MEMALIGN, F_POSIX_MEMALIGN, F_ALIGNED_ALLOC,
	    F_VALLOC };

static const char *const func_name[] = {
	[F_MALLOC] = "malloc", [F_CALLOC] = "calloc", [F_REALLOC] = "realloc", [F_FREE] = "free",
	[F_MEMALIGN] = "memalign", [F_POSIX_MEMALIGN] = "posix_memalign",
	[F_ALIGNED_ALLOC] = "aligned_alloc", [F_VALLOC] = "valloc",
};

static char *put_dec(char *d, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n)
		*d++ = tmp[--n];
	return d;
}

static char *put_ptr(char *d, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	int shift = 60;

	*d++ = '0';
	*d++ = 'x';
	while (shift > 0 && (v >> shift) == 0)
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*d++ = digits[(v >> shift) & 15];
	return d;
}

/* The next number of the lines' sequence (0 when lines are not numbered). */
static uint64_t take_seq(void)
{
	return seq_on ? atomic_fetch_add(&seq_last, 1) + 1 : 0;
}

/* Formats one line: arguments a0 (a pointer for free and realloc) and, for two-argument
 * functions, a1; the result unless the function is free; numbered entry and effect when they
 * are not 0. */
static size_t format_line(char *line, enum func f, uint64_t a0, uint64_t a1, uint64_t result,
			  uint64_t entry, uint64_t effect)
{
	char *d = line;

	if (effect) {
		d = put_dec(d, entry ? entry : effect);
		*d++ = ' ';
		d = put_dec(d, effect);
		*d++ = ' ';
	}
	d = put_dec(d, (uint64_t)self.pid);

	*d++ = ' ';
	d = put_dec(d, (uint64_t)self.tid);
	*d++ = ' ';
	d = stpcpy(d, func_name[f]);
	*d++ = '(';
	d = f == F_FREE || f == F_REALLOC ? put_ptr(d, a0) : put_dec(d, a0);
	if (f == F_CALLOC || f == F_REALLOC || f == F_MEMALIGN || f == F_POSIX_MEMALIGN ||
	    f == F_ALIGNED_ALLOC) {
		*d++ = ',';
		d = put_dec(d, a1);
	}
	*d++ = ')';
	if (f != F_FREE) {
		*d++ = '=';
		d = put_ptr(d, result);
	}
	*d++ = '\n';
	return (size_t)(d - line);
}

/* Writes one line; entry: the number a realloc took before its call (0: none). */
static void write_entered(enum func f, uint64_t a0, uint64_t a1, uint64_t result, uint64_t entry)
{
	char line[LINE_MAX_BYTES];

	if (!enabled)
		return;
	self.in_tracer++;
	if (self.generation != atomic_load_explicit(&fork_generation, memory_order_relaxed))
		adopt();
	size_t n = format_line(line, f, a0, a1, result, entry, take_seq());

	lock(&self);
	if (self.len + n > sizeof(self.buf))
		flush(&self);
	memcpy(self.buf + self.len, line, n);
	self.len += n;
	if (self.write_through || atomic_load_explicit(&exiting, memory_order_relaxed))
		flush(&self);
	unlock(&self);
	self.in_tracer--;
}

static void write_line(enum func f, uint64_t a0, uint64_t a1, uint64_t result)
{
	write_entered(f, a0, a1, result, 0);
}

/* Entering an interposed call: whether it is outermost, i.e. to be written. */
static inline int enter(void)
{
	if (self.in_tracer) {
		atomic_fetch_add(&own_calls, 1);
		self.depth++;
		return 0;
	}
	return self.depth++ == 0;
}

static inline void leave(void)
{
	self.depth--;
}

/* --- the interposed family ------------------------------------------------------------------- */

EXPORT void *malloc(size_t n)
{
	if (resolving)
		return arena_alloc(n);
	ready();
	int outer = enter();
	void *p = next.malloc(n);

	if (outer)
		write_line(F_MALLOC, n, 0, (uintptr_t)p);
	leave();
	return p;
}

EXPORT void *calloc(size_t n, size_t size)
{
	if (resolving)
		return n && size > ARENA_BYTES / n ? NULL : arena_alloc(n * size);
	ready();
	int outer = enter();
	void *p = next.calloc(n, size);

	if (outer)
		write_line(F_CALLOC, n, size, (uintptr_t)p);
	leave();
	return p;
}

/* realloc of an arena block: a new arena block (the C library never saw the old one). */
static void *arena_realloc(void *old, size_t n)
{
	void *p = arena_alloc(n);
	size_t had = arena_size(old);

	if (p)
		memcpy(p, old, had < n ? had : n);
	return p;
}

EXPORT void *realloc(void *old, size_t n)
{
	if (resolving || (old && in_arena(old)))
		return old ? arena_realloc(old, n) : arena_alloc(n);
	ready();
	int outer = enter();
	uint64_t entry = outer && enabled ? take_seq() : 0;
	void *p = next.realloc(old, n);

	if (outer)
		write_entered(F_REALLOC, (uintptr_t)old, n, (uintptr_t)p, entry);
	leave();
	return p;
}

EXPORT void free(void *p)
{
	if (p && in_arena(p))
		return;
	if (resolving)
		return;
	ready();
	int outer = enter();

	/* written before the call, as alloctapd records free at entry: after it, another
	 * thread may get the same address and write its line first */
	if (outer)
		write_line(F_FREE, (uintptr_t)p, 0, 0);
	next.free(p);
	leave();
}

EXPORT void *memalign(size_t align, size_t n)
{
	if (resolving) /* dlsym needs none of these */
		return NULL;
	ready();
	int outer = enter();
	void *p = next.memalign(align, n);

	if (outer)
		write_line(F_MEMALIGN, align, n, (uintptr_t)p);
	leave();
	return p;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
	if (resolving) /* dlsym needs none of these */
		return NULL;
	ready();
	int outer = enter();
	void *p = next.aligned_alloc(align, n);

	if (outer)
		write_line(aligned_is_memalign ? F_MEMALIGN : F_ALIGNED_ALLOC, align, n,
			   (uintptr_t)p);
	leave();
	return p;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
	if (resolving) /* dlsym needs none of these */
		return ENOMEM;
	ready();
	int outer = enter();
	int rc = next.posix_memalign(out, align, n);

	if (outer)
		write_line(F_POSIX_MEMALIGN, align, n, rc == 0 ? (uintptr_t)*out : 0);
	leave();
	return rc;
}

EXPORT void *valloc(size_t n)
{
	if (resolving) /* dlsym needs none of these */
		return NULL;
	ready();
	int outer = enter();
	void *p = next.valloc(n);

	if (outer)
		write_line(F_VALLOC, n, 0, (uintptr_t)p);
	leave();
	return p;
}

EXPORT void *pvalloc(size_t n)
{
	if (resolving) /* dlsym needs none of these */
		return NULL;
	ready();
	int outer = enter();
	void *p = next.pvalloc(n);
	size_t up = (n + page_size - 1) & ~(page_size - 1);

	if (outer)
		write_line(F_VALLOC, up >= n ? up : n, 0, (uintptr_t)p);
	leave();
	return p;
}

EXPORT void *reallocarray(void *old, size_t n, size_t size)
{
	if (resolving) /* dlsym needs none of these */
		return NULL;
	ready();
	int outer = enter();
	uint64_t entry = outer && enabled ? take_seq() : 0;
	void *p = next.reallocarray(old, n, size);
	size_t total;

	if (__builtin_mul_overflow(n, size, &total))
		total = SIZE_MAX;
	if (outer)
		write_entered(F_REALLOC, (uintptr_t)old, total, (uintptr_t)p, entry);
	leave();
	return p;
}

/* --- exec, _exit, exit: lines still buffered would be lost ------------------------------------ */

static void before_image_ends(void)
{
	ready();
	if (!enabled)
		return;
	flush_all(self.in_tracer++ > 0);
	self.in_tracer--;
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	before_image_ends();
	return next.execve(path, argv, envp);
}

EXPORT int execv(const char *path, char *const argv[])
{
	before_image_ends();
	return next.execv(path, argv);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	before_image_ends();
	return next.execvp(file, argv);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	before_image_ends();
	return next.execvpe(file, argv, envp);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	before_image_ends();
	return next.fexecve(fd, argv, envp);
}

/* execl, execlp, execle: the arguments gathered on the stack, then the vector forms. */
static size_t count_args(va_list ap)
{
	size_t n = 1;

	while (va_arg(ap, char *))
		n++;
	return n;
}

#define GATHER(argv, first, last, ap)                                                          \
	va_list ap;                                                                             \
	va_start(ap, last);                                                                     \
	va_list counting;                                                                       \
	va_copy(counting, ap);                                                                  \
	size_t argc_ = count_args(counting);                                                    \
	va_end(counting);                                                                       \
	char *argv[argc_ + 1];                                                                  \
	argv[0] = (char *)(first);                                                              \
	for (size_t i_ = 1; i_ <= argc_; i_++) /* the last one read is the NULL */              \
		argv[i_] = va_arg(ap, char *);

EXPORT int execl(const char *path, const char *arg, ...)
{
	GATHER(argv, arg, arg, ap);
	va_end(ap);
	return execv(path, argv);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	GATHER(argv, arg, arg, ap);
	va_end(ap);
	return execvp(file, argv);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	GATHER(argv, arg, arg, ap);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

EXPORT void _exit(int status)
{
	before_image_ends();
	next.exit_now(status);
	__builtin_unreachable();
}

EXPORT void _Exit(int status)
{
	before_image_ends();
	next.exit_now_c(status);
	__builtin_unreachable();
}

/* Runs late in exit (the preloaded object is finalised after the program's own): flushes every
 * buffer; the calls made after it are written one by one. */
__attribute__((destructor)) static void at_exit_flush(void)
{
	static const char own[] = "preload_tracer: calls of the tracer's own reached the allocator: ";
	static const char lost[] = "preload_tracer: flushes to ORACLE_LOG that failed: ";

	if (atomic_load(&state) != READY || !enabled)
		return;
	atomic_store(&exiting, 1);
	flush_all(self.in_tracer++ > 0);
	for (int i = 0; i < 2; i++) {
		unsigned long n = atomic_load(i ? &failed_flushes : &own_calls);
		char msg[128], *d;

		if (!n)
			continue;
		d = stpcpy(msg, i ? lost : own);
		d = put_dec(d, n);
		*d++ = '\n';
		if (write(2, msg, (size_t)(d - msg)) < 0)
			break;
	}
	self.in_tracer--;
}
