/* caps.c: the capabilities alloctapd needs, and the ones this process lacks. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "caps.h"
#include "prim.h"

static const struct {
	unsigned cap;
	const char *name;
} cap_names[] = {
	{ AT_CAP_BPF, "CAP_BPF" },
	{ AT_CAP_PERFMON, "CAP_PERFMON" },
	{ AT_CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
	{ AT_CAP_SYS_PTRACE, "CAP_SYS_PTRACE" },
};

uint64_t at_caps_parse_status(const char *status)
{
	const char *p = strstr(status, "\nCapEff:");
	unsigned long long v;

	if (!p || sscanf(p + 8, " %llx", &v) != 1)
		return ~0ull;
	return v;
}

uint64_t at_caps_effective(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return ~0ull;
	n = at_read_all(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return ~0ull;
	buf[n] = '\0';
	return at_caps_parse_status(buf);
}

unsigned at_caps_names(uint64_t need, uint64_t have, char *buf, size_t size)
{
	unsigned count = 0;
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]); i++) {
		if (!(need & AT_CAP_BIT(cap_names[i].cap)) || (have & AT_CAP_BIT(cap_names[i].cap)))
			continue;
		int n = snprintf(buf + len, size > len ? size - len : 0, "%s%s", count ? ", " : "",
				 cap_names[i].name);
		if (n > 0 && len + (size_t)n < size)
			len += (size_t)n;
		count++;
	}
	return count;
}

const char *at_caps_hint(uint64_t need)
{
	static char hint[256];
	char all[96], missing[96];

	if (!at_caps_names(need, at_caps_effective(), missing, sizeof(missing)))
		return "";
	at_caps_names(need, 0, all, sizeof(all));
	snprintf(hint, sizeof(hint), " (this needs %s; this process lacks %s)", all, missing);
	return hint;
}
