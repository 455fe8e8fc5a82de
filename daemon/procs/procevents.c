/* procevents.c: fork, exec and exit of every process, from the process events connector. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/netlink.h>

#include "procevents.h"

int at_procevents_open(struct at_procevents *pe)
{
	struct sockaddr_nl addr = { .nl_family = AF_NETLINK, .nl_groups = CN_IDX_PROC };
	struct {
		struct nlmsghdr h;
		struct cn_msg m;
		enum proc_cn_mcast_op op;
	} __attribute__((packed)) msg;

	pe->overflows = 0;
	pe->fd = socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
	if (pe->fd < 0)
		return -1;
	if (bind(pe->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0)
		goto fail;
	memset(&msg, 0, sizeof(msg));
	msg.h.nlmsg_len = sizeof(msg);
	msg.h.nlmsg_type = NLMSG_DONE;
	msg.m.id.idx = CN_IDX_PROC;
	msg.m.id.val = CN_VAL_PROC;
	msg.m.len = sizeof(msg.op);
	msg.op = PROC_CN_MCAST_LISTEN;
	if (send(pe->fd, &msg, sizeof(msg), 0) != (ssize_t)sizeof(msg))
		goto fail;
	return 0;
fail:;
	int e = errno;
	close(pe->fd);
	pe->fd = -1;
	errno = e;
	return -1;
}

/* One connector message: its event, if it is one of ours. 1 if e was filled. */
static int decode(const struct proc_event *ev, struct at_procevent *e)
{
	memset(e, 0, sizeof(*e));
	switch (ev->what) {
	case PROC_EVENT_FORK:
		e->kind = AT_PROCEVENT_FORK;
		e->pid = ev->event_data.fork.child_tgid;
		e->tid = ev->event_data.fork.child_pid;
		e->parent = ev->event_data.fork.parent_tgid;
		return 1;
	case PROC_EVENT_EXEC:
		e->kind = AT_PROCEVENT_EXEC;
		e->pid = ev->event_data.exec.process_tgid;
		e->tid = ev->event_data.exec.process_pid;
		return 1;
	case PROC_EVENT_EXIT:
		e->kind = AT_PROCEVENT_EXIT;
		e->pid = ev->event_data.exit.process_tgid;
		e->tid = ev->event_data.exit.process_pid;
		e->status = (int)ev->event_data.exit.exit_code;
		return 1;
	default:
		return 0;
	}
}

int at_procevents_read(struct at_procevents *pe,
		       void (*fn)(void *arg, const struct at_procevent *e), void *arg)
{
	char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	int events = 0;

	for (;;) {
		ssize_t n = recv(pe->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) { /* the kernel dropped messages */
			pe->overflows++;
			continue;
		}
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? events : -1;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			const struct cn_msg *m = NLMSG_DATA(h);
			struct proc_event ev; /* the payload is not aligned for it: copied */
			struct at_procevent e;

			if (h->nlmsg_type != NLMSG_DONE || m->id.idx != CN_IDX_PROC ||
			    m->len < offsetof(struct proc_event, event_data))
				continue;
			memset(&ev, 0, sizeof(ev));
			memcpy(&ev, m->data, m->len < sizeof(ev) ? m->len : sizeof(ev));
			if (!decode(&ev, &e))
				continue;
			e.time_ns = ev.timestamp_ns;
			fn(arg, &e);
			events++;
		}
	}
}

void at_procevents_close(struct at_procevents *pe)
{
	if (pe->fd >= 0)
		close(pe->fd);
	pe->fd = -1;
}
