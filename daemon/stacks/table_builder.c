/* table_builder.c: unwind tables built off the loop (table_builder.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <libelf.h>

#include "table_builder.h"

#define BUILDER_NICE 10 /* the loop comes first: a stop waits for it, a table can wait */

struct at_table_builder {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct at_table_build *todo, *todo_tail; /* asked for, not started */
	struct at_table_build *done, *done_tail; /* built, not taken */
	unsigned waiting;  /* asked for and not taken: the loop's count (no lock) */
	int stopping;
	int refs;          /* the loop's and the thread's: the last one frees */
	int efd;
	pthread_t thread;
};

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
	pthread_cond_destroy(&b->wake);
	pthread_mutex_destroy(&b->lock);
	free(b);
}

/* Builds w's table into w (table, or why and gone). Touches only w and its own handles. */
static void build_one(struct at_table_build *w)
{
	struct at_unwind_table *t = malloc(sizeof(*t));

	w->why = "out of memory";
	if (t && at_unwind_table_build(w->path, t, &w->why) == 0) {
		w->table = t;
		return;
	}
	free(t);
	w->gone = access(w->path, F_OK) < 0;
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
		build_one(w);
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

struct at_table_builder *at_table_builder_start(void)
{
	struct at_table_builder *b = calloc(1, sizeof(*b));
	pthread_attr_t attr;

	if (!b)
		return NULL;
	elf_version(EV_CURRENT); /* libelf's one global, set before a second thread uses it */
	b->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (b->efd < 0) {
		free(b);
		return NULL;
	}
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->wake, NULL);
	b->refs = 2;
	sigset_t all, old;
	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* every signal (SIGCHLD, SIGINT) goes to the loop, whose waits they end */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&b->thread, &attr, builder_main, b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		b->refs = 1;
		builder_unref(b);
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
	pthread_cond_signal(&b->wake);
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
