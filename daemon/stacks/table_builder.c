/* table_builder.c: unwind tables built off the loop (table_builder.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <libelf.h>

#include "prim.h"
#include "table_builder.h"
#include "table_cache.h"

#define BUILDER_NICE 10 /* the loop comes first: a stop waits for it, a table can wait */

struct at_table_builder {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct at_table_build *todo, *todo_tail; /* asked for, not started */
	struct at_table_build *done, *done_tail; /* built, not taken */
	unsigned waiting;  /* asked for and not taken: the loop's count (no lock) */
	int stopping;
	int refs;          /* the loop's and each thread's: the last one frees */
	int efd;
	struct at_table_cache *cache; /* NULL: none */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Drops one reference to b; the last frees it, its lists and their tables. */
static void builder_unref(struct at_table_builder *b)
{
	pthread_mutex_lock(&b->lock);
	int last = --b->refs == 0;
	pthread_mutex_unlock(&b->lock);
	if (!last)
		return;
	at_table_builds_free(b->todo);
	at_table_builds_free(b->done);
	close(b->efd);
	at_table_cache_close(b->cache);
	pthread_cond_destroy(&b->wake);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

/* Whether the table t, built from the file st describes, may be stored in the cache: the
 * object's build-id is the key asked for, and the file is root's (or the daemon's user's) and
 * nobody else may write it. NULL, or why not. */
static const char *not_storable(const struct at_table_build *w, const struct at_unwind_table *t,
				const struct stat *st)
{
	if (w->key_len == 0)
		return "no build-id: not cached";
	if (t->build_id_len != w->key_len || memcmp(t->build_id, w->key, sizeof(w->key)) != 0)
		return "the object changed while it was read: not cached";
	if ((st->st_uid != 0 && st->st_uid != geteuid()) || (st->st_mode & 022))
		return "another user may write the object: its table is not cached";
	return NULL;
}

/* Reads w's table from the cache into w. 1: found; 0: not there, or refused (w->cache_why). */
static int read_cached(struct at_table_builder *b, struct at_table_build *w)
{
	struct at_unwind_table *t = malloc(sizeof(*t));
	const char *why;

	if (!t)
		return 0;
	int rc = at_table_cache_load(b->cache, w->key, w->key_len, t, &why);
	if (rc == 1) {
		w->table = t;
		w->cached = 1;
		return 1;
	}
	if (rc < 0)
		w->cache_why = why;
	free(t);
	return 0;
}

/* Builds w's table from the object's descriptor fd (st its status) into w, and stores it in
 * the cache when it may. */
static void build_from(struct at_table_builder *b, struct at_table_build *w, int fd,
		       const struct stat *st)
{
	struct at_unwind_table *t = malloc(sizeof(*t));
	char self[40];

	w->why = "out of memory";
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd); /* the very file st describes */
	if (!t || at_unwind_table_build(self, t, &w->why) < 0) {
		free(t);
		return;
	}
	w->table = t;
	if (!b->cache)
		return;
	const char *why = not_storable(w, t, st);
	if (!why && at_table_cache_store(b->cache, t, &why) == 0)
		w->stored = 1;
	else if (!w->cache_why)
		w->cache_why = why;
}

/* Makes w's table (from the cache, else built) into w (table, or why and gone). Touches only
 * w, the cache's files and its own handles. */
static void build_one(struct at_table_builder *b, struct at_table_build *w)
{
	uint64_t t0 = now_ns();
	struct stat st;

	if (b->cache && w->key_len && read_cached(b, w)) {
		w->ns = now_ns() - t0;
		return;
	}
	int fd = at_open_regular(w->path, 0, &w->why);
	if (fd >= 0 && fstat(fd, &st) < 0) {
		w->why = strerror(errno);
		close(fd);
		fd = -1;
	}
	if (fd >= 0) {
		build_from(b, w, fd, &st);
		close(fd);
	}
	if (!w->table)
		w->gone = access(w->path, F_OK) < 0;
	w->ns = now_ns() - t0;
}

/* The next request, or NULL once stopping. Called and returns with b->lock held. */
static struct at_table_build *next_request(struct at_table_builder *b)
{
	while (!b->stopping && !b->todo)
		pthread_cond_wait(&b->wake, &b->lock);
	if (b->stopping)
		return NULL;
	struct at_table_build *w = b->todo;
	b->todo = w->next;
	if (!b->todo)
		b->todo_tail = NULL;
	w->next = NULL;
	return w;
}

/* The builder thread: builds what is asked for until stopped. */
static void *builder_main(void *arg)
{
	struct at_table_builder *b = arg;
	uint64_t one = 1;

	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), BUILDER_NICE);
	pthread_mutex_lock(&b->lock);
	for (struct at_table_build *w; (w = next_request(b));) {
		pthread_mutex_unlock(&b->lock);
		build_one(b, w);
		pthread_mutex_lock(&b->lock);
		if (b->stopping) {
			at_table_builds_free(w);
			break;
		}
		if (b->done_tail)
			b->done_tail->next = w;
		else
			b->done = w;
		b->done_tail = w;
		if (write(b->efd, &one, sizeof(one)) < 0) {
			/* the counter cannot overflow at one per build: nothing to do */
		}
	}
	pthread_mutex_unlock(&b->lock);
	builder_unref(b);
	return NULL;
}

unsigned at_table_builder_default_threads(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > AT_TABLE_BUILDER_MAX_THREADS ? AT_TABLE_BUILDER_MAX_THREADS : (unsigned)n;
}

/* Starts one detached builder thread holding a reference to b. 0, or an errno. */
static int start_thread(struct at_table_builder *b)
{
	pthread_attr_t attr;
	pthread_t thread;
	sigset_t all, old;

	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_mutex_lock(&b->lock);
	b->refs++;
	pthread_mutex_unlock(&b->lock);
	/* every signal (SIGCHLD, SIGINT) goes to the loop, whose waits they end */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&thread, &attr, builder_main, b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		pthread_mutex_lock(&b->lock);
		b->refs--;
		pthread_mutex_unlock(&b->lock);
	}
	return rc;
}

struct at_table_builder *at_table_builder_start(struct at_table_cache *cache, unsigned threads)
{
	struct at_table_builder *b = calloc(1, sizeof(*b));

	if (!b) {
		at_table_cache_close(cache);
		return NULL;
	}
	b->cache = cache;
	elf_version(EV_CURRENT); /* libelf's one global, set before a second thread uses it */
	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->efd < 0) {
		at_table_cache_close(cache);
		free(b);
		return NULL;
	}
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->wake, NULL);
	b->refs = 1; /* the loop's; each thread adds its own */
	if (threads == 0)
		threads = at_table_builder_default_threads();
	int rc = 0;
	for (unsigned i = 0; i < threads && rc == 0; i++)
		rc = start_thread(b);
	if (rc != 0) {
		at_table_builder_stop(b);
		errno = rc;
		return NULL;
	}
	return b;
}

int at_table_builder_fd(const struct at_table_builder *b)
{
	return b->efd;
}

int at_table_builder_request(struct at_table_builder *b, const char *path,
			     const uint8_t key[AT_UNWIND_BUILD_ID_MAX], uint8_t key_len)
{
	struct at_table_build *w = calloc(1, sizeof(*w));

	if (!w)
		return -1;
	snprintf(w->path, sizeof(w->path), "%s", path);
	memcpy(w->key, key, AT_UNWIND_BUILD_ID_MAX);
	w->key_len = key_len;
	pthread_mutex_lock(&b->lock);
	if (b->todo_tail)
		b->todo_tail->next = w;
	else
		b->todo = w;
	b->todo_tail = w;
	pthread_cond_signal(&b->wake);
	pthread_mutex_unlock(&b->lock);
	b->waiting++;
	return 0;
}

struct at_table_build *at_table_builder_take(struct at_table_builder *b)
{
	uint64_t n;

	if (read(b->efd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return NULL;
	pthread_mutex_lock(&b->lock);
	struct at_table_build *list = b->done;
	b->done = b->done_tail = NULL;
	pthread_mutex_unlock(&b->lock);
	for (struct at_table_build *w = list; w; w = w->next)
		b->waiting--;
	return list;
}

unsigned at_table_builder_waiting(const struct at_table_builder *b)
{
	return b->waiting;
}

void at_table_builder_stop(struct at_table_builder *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&b->lock);
	b->stopping = 1;
	pthread_cond_broadcast(&b->wake);
	pthread_mutex_unlock(&b->lock);
	builder_unref(b);
}

void at_table_builds_free(struct at_table_build *list)
{
	while (list) {
		struct at_table_build *next = list->next;

		if (list->table) {
			at_unwind_table_free(list->table);
			free(list->table);
		}
		free(list);
		list = next;
	}
}
