/* probe_conflict.c: why the kernel refused a uprobe with EINVAL (probe_conflict.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "probe_conflict.h"

int at_kernel_release_at_least(const char *release, unsigned major, unsigned minor)
{
	unsigned a, b;

	if (sscanf(release, "%u.%u", &a, &b) != 2)
		return 0;
	return a > major || (a == major && b >= minor);
}

int at_refctr_mismatch_parse(const char *text, struct at_refctr_mismatch *m)
{
	static const char fmt[] = "ref_ctr_offset mismatch. inode: 0x%" SCNx64 " offset: 0x%" SCNx64
				  " ref_ctr_offset(old): 0x%" SCNx64 " ref_ctr_offset(new): 0x%" SCNx64
				  "%n";
	int end = -1;

	if (sscanf(text, fmt, &m->inode, &m->offset, &m->old_ref, &m->new_ref, &end) != 4 || end < 0)
		return -1;
	return text[end] == '\0' || text[end] == '\n' ? 0 : -1;
}

/* The last "ref_ctr_offset mismatch" of the kernel's log for inode with a refused counter
 * offset of 0 (alloctapd's), into *m. 0, or -1 when there is none or the log cannot be read. */
static int last_mismatch(uint64_t inode, struct at_refctr_mismatch *m)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	char rec[8192];
	int found = -1;

	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE) /* a record overwritten while we read: go on */
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		const char *text = strchr(rec, ';');
		struct at_refctr_mismatch r;
		if (text && at_refctr_mismatch_parse(text + 1, &r) == 0 && r.inode == inode &&
		    r.new_ref == 0) {
			*m = r;
			found = 0;
		}
	}
	close(fd);
	return found;
}

/* Whether the uprobe_multi link whose fdinfo is at path has a probe with a reference counter
 * on the file of inode ino, at offset (UINT64_MAX: any). */
static int link_has_refctr(const char *path, uint64_t ino, uint64_t offset)
{
	FILE *f = fopen(path, "re");
	char line[4352];
	int on_file = 0, found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		uint64_t cookie, off, ref;
		struct stat st;
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "path:\t", 6) == 0)
			on_file = stat(line + 6, &st) == 0 && (uint64_t)st.st_ino == ino;
		else if (on_file && sscanf(line, "%" SCNu64 " 0x%" SCNx64 " 0x%" SCNx64, &cookie, &off,
					   &ref) == 3)
			found = ref != 0 && (offset == UINT64_MAX || off == offset);
	}
	fclose(f);
	return found;
}

/* What process pid (a /proc entry's name) holds: 2 for a uprobe_multi link with a reference
 * counter at offset of the file of inode ino, 1 for a perf event, else 0. */
static int probe_fds_of(const char *pid, uint64_t ino, uint64_t offset)
{
	char dir[288], link[560], target[64];
	int holds = 0;

	snprintf(dir, sizeof(dir), "/proc/%s/fd", pid);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	for (struct dirent *e; holds < 2 && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, "anon_inode:[perf_event]") == 0) {
			holds = 1;
		} else if (strcmp(target, "anon_inode:bpf_link") == 0) {
			snprintf(link, sizeof(link), "/proc/%s/fdinfo/%s", pid, e->d_name);
			if (link_has_refctr(link, ino, offset))
				holds = 2;
		}
	}
	closedir(d);
	return holds;
}

/* The command name of process pid into name (its comm; "?" when gone). */
static void comm_of(const char *pid, char *name, size_t size)
{
	char path[288];
	int fd;
	ssize_t n = -1;

	snprintf(path, sizeof(path), "/proc/%s/comm", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, name, size - 1);
		close(fd);
	}
	if (n <= 0) {
		snprintf(name, size, "?");
		return;
	}
	name[n] = '\0';
	name[strcspn(name, "\n")] = '\0';
}

/* Appends "NAME (PID)" of process pid to buf at *len, after ", " unless it is the first. */
static void append_holder(const char *pid, char *buf, size_t size, size_t *len)
{
	char comm[32];

	if (*len >= size)
		return;
	comm_of(pid, comm, sizeof(comm));
	int k = snprintf(buf + *len, size - *len, "%s%s (%s)", *len ? ", " : "", comm, pid);
	*len = k < 0 ? size : *len + (size_t)k;
}

unsigned at_probe_holders(uint64_t ino, uint64_t offset, char *buf, size_t size, unsigned max)
{
	char self[24], perf_only[256][12];
	unsigned found = 0, listed = 0, nperf = 0;
	size_t len = 0;
	DIR *d = opendir("/proc");

	buf[0] = '\0';
	if (!d)
		return 0;
	snprintf(self, sizeof(self), "%d", (int)getpid());
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9' || strlen(e->d_name) >= 12 ||
		    strcmp(e->d_name, self) == 0)
			continue;
		int holds = probe_fds_of(e->d_name, ino, offset);
		if (!holds)
			continue;
		found++;
		if (holds == 2 && listed < max) {
			append_holder(e->d_name, buf, size, &len);
			listed++;
		} else if (holds == 1 && nperf < 256) {
			strcpy(perf_only[nperf++], e->d_name);
		}
	}
	closedir(d);
	for (unsigned i = 0; i < nperf && listed < max; i++, listed++) /* after the sure ones */
		append_holder(perf_only[i], buf, size, &len);
	if (found > listed && len < size)
		snprintf(buf + len, size - len, " and %u more", found - listed);
	return found;
}

void at_probe_einval_reason(const char *path, at_site_name_fn name_of, void *arg, char *buf,
			    size_t size)
{
	struct utsname u;
	struct stat st;
	struct at_refctr_mismatch m;
	char holders[160];

	if (uname(&u) == 0 && !at_kernel_release_at_least(u.release, 6, 6)) {
		snprintf(buf, size, " (uprobe_multi links need Linux 6.6 or later; this is %s)",
			 u.release);
		return;
	}
	int have_st = stat(path, &st) == 0;
	if (have_st && last_mismatch((uint64_t)st.st_ino, &m) == 0) {
		const char *name = name_of ? name_of(arg, m.offset) : NULL;
		if (at_probe_holders(m.inode, m.offset, holders, sizeof(holders), 5) == 0)
			snprintf(holders, sizeof(holders), "none");
		snprintf(buf, size,
			 " (another tool's uprobe is on %s (0x%" PRIx64 ") of this file with a "
			 "reference counter (USDT semaphore) at 0x%" PRIx64 "; the kernel allows one "
			 "counter offset per place, alloctapd's is none (log: \"ref_ctr_offset "
			 "mismatch\"); holders of perf events or such links: %s; stop that probe "
			 "and retry)",
			 name ? name : "an instruction", m.offset, m.old_ref, holders);
		return;
	}
	if (at_probe_holders(have_st ? (uint64_t)st.st_ino : 0, UINT64_MAX, holders,
			     sizeof(holders), 5) == 0)
		snprintf(holders, sizeof(holders), "none");
	snprintf(buf, size,
		 " (likely another tool's uprobe on one of these functions with a reference "
		 "counter (USDT semaphore); the kernel allows one counter offset per place, "
		 "alloctapd's is none (log: \"ref_ctr_offset mismatch\"); holders of perf events "
		 "or such links: %s; stop that probe and retry)",
		 holders);
}
