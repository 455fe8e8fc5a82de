/* processes.c: the traced processes, and their change records. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atz.h"
#include "processes.h"
#include "procfs.h"
#include "sink.h"

struct at_process_slot {
	pid_t pid; /* 0: empty */
	pid_t parent;
};

struct at_process_note {
	struct at_process_note *next;
	uint64_t seq;
	struct at_atz_process change;
	char *text; /* the executable, then the command line (owned) */
};

static unsigned slot_of(pid_t pid, unsigned cap)
{
	return ((uint32_t)pid * 2654435761u) & (cap - 1);
}

int at_processes_init(struct at_processes *p, int records)
{
	memset(p, 0, sizeof(*p));
	p->records = records;
	p->proc = "/proc";
	p->cap = 256;
	p->slots = calloc(p->cap, sizeof(*p->slots));
	return p->slots ? 0 : -1;
}

void at_processes_free(struct at_processes *p)
{
	while (p->head) {
		struct at_process_note *n = p->head;
		p->head = n->next;
		free(n->text);
		free(n);
	}
	p->tail = NULL;
	free(p->slots);
	p->slots = NULL;
	p->count = 0;
}

static struct at_process_slot *find(const struct at_processes *p, pid_t pid)
{
	for (unsigned i = slot_of(pid, p->cap);; i = (i + 1) & (p->cap - 1)) {
		if (p->slots[i].pid == pid)
			return &p->slots[i];
		if (!p->slots[i].pid)
			return NULL;
	}
}

static void insert(struct at_process_slot *slots, unsigned cap, pid_t pid, pid_t parent)
{
	unsigned i = slot_of(pid, cap);

	while (slots[i].pid)
		i = (i + 1) & (cap - 1);
	slots[i].pid = pid;
	slots[i].parent = parent;
}

int at_processes_add(struct at_processes *p, pid_t pid, pid_t parent)
{
	if (pid <= 0 || find(p, pid))
		return 0;
	if ((p->count + 1) * 2 > p->cap) {
		unsigned cap = p->cap * 2;
		struct at_process_slot *s = calloc(cap, sizeof(*s));
		if (!s)
			return -1;
		for (unsigned i = 0; i < p->cap; i++)
			if (p->slots[i].pid)
				insert(s, cap, p->slots[i].pid, p->slots[i].parent);
		free(p->slots);
		p->slots = s;
		p->cap = cap;
	}
	insert(p->slots, p->cap, pid, parent);
	p->count++;
	return 1;
}

int at_processes_has(const struct at_processes *p, pid_t pid)
{
	return pid > 0 && find(p, pid) != NULL;
}

int at_processes_remove(struct at_processes *p, pid_t pid)
{
	struct at_process_slot *s = pid > 0 ? find(p, pid) : NULL;
	unsigned mask = p->cap - 1;

	if (!s)
		return 0;
	unsigned hole = (unsigned)(s - p->slots);
	p->slots[hole].pid = 0;
	p->count--;
	/* entries after the hole in its run move back when their home allows it */
	for (unsigned i = (hole + 1) & mask; p->slots[i].pid; i = (i + 1) & mask) {
		unsigned home = slot_of(p->slots[i].pid, p->cap);
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			p->slots[hole] = p->slots[i];
			p->slots[i].pid = 0;
			hole = i;
		}
	}
	return 1;
}

void at_processes_each(const struct at_processes *p, void (*fn)(void *arg, pid_t pid),
		       void *arg)
{
	for (unsigned i = 0; i < p->cap; i++)
		if (p->slots[i].pid)
			fn(arg, p->slots[i].pid);
}

/* The executable's path and the command line of pid, as one owned buffer: path, NUL,
 * arguments each followed by a NUL. NULL if the process is gone. */
static char *read_image(const char *proc, pid_t pid, size_t *exe_len, size_t *args_len)
{
	char link[64], exe[4096];
	char *args = NULL, *text;
	size_t n = 0;

	snprintf(link, sizeof(link), "%s/%d/exe", proc, (int)pid);
	ssize_t k = readlink(link, exe, sizeof(exe) - 1);
	if (k < 0)
		k = 0;
	exe[k] = '\0';
	at_proc_read(proc, pid, "cmdline", &args, &n);
	text = malloc((size_t)k + 1 + n + 1);
	if (text) {
		memcpy(text, exe, (size_t)k + 1);
		if (n)
			memcpy(text + k + 1, args, n);
		text[k + 1 + n] = '\0';
	}
	free(args);
	*exe_len = (size_t)k;
	*args_len = n;
	return text;
}

void at_processes_note(struct at_processes *p, unsigned change, pid_t pid, pid_t parent,
		       unsigned flags, uint64_t status, uint64_t time_ns, uint64_t seq)
{
	if (!p->records)
		return;
	const struct at_process_slot *known = parent > 0 ? NULL : find(p, pid);
	if (known)
		parent = known->parent;
	struct at_process_note *n = calloc(1, sizeof(*n));
	if (!n)
		return;
	n->seq = seq;
	n->change = (struct at_atz_process){ .change = change, .flags = flags, .pid = (uint32_t)pid,
					     .parent = (uint32_t)(parent > 0 ? parent : 0),
					     .time_ns = time_ns ? time_ns : at_realtime_ns(),
					     .status = status };
	if (change != AT_ATZ_PROCESS_EXIT) {
		n->text = read_image(p->proc, pid, &n->change.exe_len, &n->change.args_len);
		if (n->text) {
			n->change.exe = n->text;
			n->change.args = n->text + n->change.exe_len + 1;
		} else {
			n->change.exe_len = n->change.args_len = 0;
		}
	}
	if (p->tail)
		p->tail->next = n;
	else
		p->head = n;
	p->tail = n;
}

void at_processes_flush(struct at_processes *p, struct at_sink *s, uint64_t seq)
{
	while (p->head && p->head->seq <= seq) {
		struct at_process_note *n = p->head;
		struct at_sink_record r = { .kind = AT_SINK_PROCESS_CHANGE, .change = n->change };

		at_sink_put_record(s, &r);
		p->head = n->next;
		if (!p->head)
			p->tail = NULL;
		free(n->text);
		free(n);
	}
}
