/* probe_conflict.h: why the kernel refused a uprobe with EINVAL, for the message of a failed
 * attach.
 *
 * A uprobe_multi link is refused with EINVAL by a kernel older than 6.6, which has no such
 * links, and, on any kernel, when another probe already sits at one of the link's places
 * (same file, same offset) with another reference counter offset: the kernel keeps one uprobe
 * per place, with one ref_ctr_offset (the 16-bit USDT semaphore it counts up while the probe
 * exists), and refuses a second probe there that names another one; its log then says
 * "ref_ctr_offset mismatch. inode: 0x.. offset: 0x.. ref_ctr_offset(old): 0x..
 * ref_ctr_offset(new): 0x..". alloctapd's probes have none (0), so any tool that probes the
 * same place with a semaphore (a USDT probe through the uprobe PMU, bpftrace's usdt:,
 * perf probe with %sdt, BCC) is in the way. */
#ifndef ALLOCTAP_PROBE_CONFLICT_H
#define ALLOCTAP_PROBE_CONFLICT_H

#include <stddef.h>
#include <stdint.h>

/* Whether a kernel release string ("6.18.44-fc-v657") is major.minor or later. 1 or 0 (0 for
 * a string that does not start with two numbers). */
int at_kernel_release_at_least(const char *release, unsigned major, unsigned minor);

/* The kernel's "ref_ctr_offset mismatch" message (a /dev/kmsg record's text, after the ';'):
 * the file's inode, the probed offset, and the counter offsets of the probe there (old) and
 * of the one refused (new). 0, or -1 for any other text. */
struct at_refctr_mismatch {
	uint64_t inode, offset, old_ref, new_ref;
};
int at_refctr_mismatch_parse(const char *text, struct at_refctr_mismatch *m);

/* Names a probed place of the file by its offset ("malloc"), or NULL when it is none of the
 * functions' sites. */
typedef const char *(*at_site_name_fn)(void *arg, uint64_t offset);

/* The explanation of an EINVAL from attaching probes to the file at path, in parentheses,
 * written to buf (always terminated):
 *   - on a kernel older than 6.6: that uprobe_multi links need 6.6;
 *   - when the kernel's log (/dev/kmsg, read without blocking) holds a "ref_ctr_offset
 *     mismatch" for path's inode and a counter offset 0 refused: the function (name_of), its
 *     offset, the other probe's counter offset, and the processes that hold perf events or
 *     BPF links (the tools that may own it: "bpftrace (1234), ...", this process aside);
 *   - otherwise the same cause, as the likely one, and where to confirm it. */
void at_probe_einval_reason(const char *path, at_site_name_fn name_of, void *arg, char *buf,
			    size_t size);

/* Writes "NAME (PID), ..." of at most max processes other than this one that may hold the
 * probe in the way to buf (always terminated): first those with a uprobe_multi link that has
 * a reference counter at offset (UINT64_MAX: any) of the file of inode ino (its fdinfo says
 * so), then those holding a perf event (whose probes /proc does not show). Returns how many
 * were found in all (past max, buf ends with "and N more"). */
unsigned at_probe_holders(uint64_t ino, uint64_t offset, char *buf, size_t size, unsigned max);

#endif
