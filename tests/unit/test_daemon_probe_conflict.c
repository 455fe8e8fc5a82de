/* test_daemon_probe_conflict.c: unit tests of daemon/probes/probe_conflict.c: the kernel release
 * compared with the one uprobe_multi links need, and the kernel's "ref_ctr_offset mismatch"
 * message read back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../daemon/probes/probe_conflict.h"

static void test_release(void **state)
{
	static const struct {
		const char *release;
		int at_least_6_6;
	} cases[] = {
		{ "6.18.44-fc-v657", 1 }, { "6.6.0", 1 },   { "6.5.13-amd64", 0 },
		{ "5.14.0-427.el9", 0 },  { "7.0", 1 },     { "6.10", 1 },
		{ "6", 0 },               { "linux", 0 },   { "", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int got = at_kernel_release_at_least(cases[i].release, 6, 6);
		if (got != cases[i].at_least_6_6)
			fail_msg("%s: %d, want %d", cases[i].release, got, cases[i].at_least_6_6);
	}
}

static void test_mismatch(void **state)
{
	static const struct {
		const char *text;
		int rc;
		struct at_refctr_mismatch m;
	} cases[] = {
		/* the kernel's words (kernel/events/uprobes.c), as seen on 6.18 */
		{ "ref_ctr_offset mismatch. inode: 0x51423 offset: 0x98930 ref_ctr_offset(old): 0x100 "
		  "ref_ctr_offset(new): 0x0\n",
		  0, { 0x51423, 0x98930, 0x100, 0 } },
		{ "ref_ctr_offset mismatch. inode: 0x1 offset: 0x0 ref_ctr_offset(old): 0x0 "
		  "ref_ctr_offset(new): 0xfffe",
		  0, { 1, 0, 0, 0xfffe } },
		{ "ref_ctr_offset mismatch. inode: 0x51423 offset: 0x98930", -1, { 0 } },
		{ "ref_ctr_offset mismatch. inode: 0x51423 offset: 0x98930 ref_ctr_offset(old): 0x100 "
		  "ref_ctr_offset(new): 0x0 and more",
		  -1, { 0 } },
		{ "uprobe: something else", -1, { 0 } },
		{ "", -1, { 0 } },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct at_refctr_mismatch m = { 0 };
		int rc = at_refctr_mismatch_parse(cases[i].text, &m);
		if (rc != cases[i].rc)
			fail_msg("case %zu: %d, want %d", i, rc, cases[i].rc);
		if (rc == 0 && memcmp(&m, &cases[i].m, sizeof(m)) != 0)
			fail_msg("case %zu: inode %lx offset %lx old %lx new %lx", i,
				 (unsigned long)m.inode, (unsigned long)m.offset,
				 (unsigned long)m.old_ref, (unsigned long)m.new_ref);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_mismatch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
