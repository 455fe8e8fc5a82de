/* caps.h: the capabilities alloctapd needs, and the ones this process lacks.
 *
 * Measured on kernel 6.18: loading the BPF program needs CAP_BPF and CAP_PERFMON, and so does
 * attaching its uprobes as uprobe_multi links (a perf event of the uprobe PMU would also need
 * CAP_SYS_ADMIN); reading the memory map of a process that is not our own child with the same
 * credentials (--pid, --all) needs CAP_SYS_PTRACE. Root has them all. */
#ifndef ALLOCTAP_CAPS_H
#define ALLOCTAP_CAPS_H

#include <stddef.h>
#include <stdint.h>

#define AT_CAP_SYS_PTRACE 19
#define AT_CAP_SYS_ADMIN 21
#define AT_CAP_PERFMON 38
#define AT_CAP_BPF 39
#define AT_CAP_BIT(c) (1ull << (c))

/* What each step needs. */
#define AT_CAPS_LOAD (AT_CAP_BIT(AT_CAP_BPF) | AT_CAP_BIT(AT_CAP_PERFMON))
#define AT_CAPS_ATTACH AT_CAPS_LOAD
#define AT_CAPS_OTHER_PROCESS AT_CAP_BIT(AT_CAP_SYS_PTRACE)

/* The effective set from the text of /proc/self/status (its CapEff line); ~0 when it has
 * none, so nothing is reported missing that cannot be known. */
uint64_t at_caps_parse_status(const char *status);
uint64_t at_caps_effective(void);

/* Writes the names of the capabilities of need that have lacks ("CAP_BPF, CAP_SYS_ADMIN") to
 * buf; returns how many there are (0: buf is ""). */
unsigned at_caps_names(uint64_t need, uint64_t have, char *buf, size_t size);

/* A hint for a permission error of a step needing `need`: " (this needs CAP_X and CAP_Y,
 * which this process lacks)", or "" when nothing is missing. Returns a static buffer. */
const char *at_caps_hint(uint64_t need);

#endif
