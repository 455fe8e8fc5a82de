/* test_munge_munge.c: unit tests of munge/munge.c (the reference munge algorithm).
 *
 * Each case feeds raw lines to at_munge_line() and compares the munged output and the list of
 * dropped lines ("LINE:REASON") byte for byte. The expected outputs were derived by hand from
 * Firefox's logalloc_munge.py and checked against it under Python 2.7. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "../../munge/munge.h"
#include "output.h"
#include "text.h"

/* What a run produced: the munged text and the dropped lines as "N:REASON|" pieces. */
struct run {
	char *out;
	size_t out_len;
	char drops[4096];
	char odd[4096]; /* lines written that a replay cannot read: "N:REASON|" pieces */
	unsigned written, ignored, filtered;
};

/* Munges the lines of input (split on '\n'; a last line without '\n' counts) into r. */
static void run_munge(const struct at_munge_options *opt, const char *input, size_t len,
		      struct run *r)
{
	struct at_output o;
	struct at_munge m;
	int fd = memfd_create("munge-test", 0);

	assert_true(fd >= 0);
	assert_int_equal(at_output_open_fd(&o, fd, "memfd"), 0);
	at_munge_init(&m, opt);
	memset(r, 0, sizeof(*r));
	const char *p = input, *end = input + len;
	unsigned lineno = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *why = NULL;
		lineno++;
		int rc = at_munge_line(&m, p, n, &o, &why);
		if (rc == AT_MUNGE_WRITTEN) {
			r->written++;
			size_t k = strlen(r->odd);
			if (why)
				snprintf(r->odd + k, sizeof(r->odd) - k, "%u:%s|", lineno, why);
		} else if (rc == AT_MUNGE_FILTERED) {
			r->filtered++;
		} else {
			assert_int_equal(rc, AT_MUNGE_IGNORED);
			r->ignored++;
			size_t k = strlen(r->drops);
			snprintf(r->drops + k, sizeof(r->drops) - k, "%u:%s|", lineno, why);
		}
		p += n + (nl != NULL);
	}
	assert_int_equal(at_output_flush(&o), 0);
	off_t size = lseek(fd, 0, SEEK_CUR);
	r->out = malloc((size_t)size + 1);
	assert_non_null(r->out);
	assert_int_equal(pread(fd, r->out, (size_t)size, 0), size);
	r->out[size] = 0;
	r->out_len = (size_t)size;
	at_output_close(&o);
	close(fd);
	at_munge_free(&m);
}

struct munge_case {
	const char *name;
	struct at_munge_options opt;
	const char *in;
	const char *out;
	const char *drops;
};

#define NOOPT { 0, 0, 0, 0, 0 }
#define NUL_SAFE(s) s, sizeof(s) - 1

static const struct munge_case cases[] = {
	{ "FIFO reuse: the first released id is reused first", NOOPT,
	  "1 1 malloc(1)=0x10\n1 1 malloc(2)=0x20\n1 1 malloc(3)=0x30\n"
	  "1 1 free(0x20)\n1 1 free(0x10)\n"
	  "1 1 malloc(4)=0x40\n1 1 malloc(5)=0x50\n1 1 malloc(6)=0x60\n",
	  "1 1 malloc(1)=#1\n1 1 malloc(2)=#2\n1 1 malloc(3)=#3\n"
	  "1 1 free(#2)\n1 1 free(#1)\n"
	  "1 1 malloc(4)=#2\n1 1 malloc(5)=#1\n1 1 malloc(6)=#4\n", "" },
	{ "address 0 takes an id once and keeps it", NOOPT,
	  "1 1 free(0x0)\n1 1 malloc(8)=0x10\n1 1 free(0x0)\n1 1 free(0x10)\n1 1 free(0x0)\n"
	  "1 1 malloc(8)=0x20\n1 1 realloc(0x0,8)=0x30\n",
	  "1 1 free(#1)\n1 1 malloc(8)=#2\n1 1 free(#1)\n1 1 free(#2)\n1 1 free(#1)\n"
	  "1 1 malloc(8)=#2\n1 1 realloc(#1,8)=#3\n", "" },
	{ "free(0x0) takes the oldest released id", NOOPT,
	  "1 1 malloc(8)=0x10\n1 1 free(0x10)\n1 1 free(0x0)\n1 1 malloc(8)=0x20\n"
	  "1 1 free(0x0)\n",
	  "1 1 malloc(8)=#1\n1 1 free(#1)\n1 1 free(#1)\n1 1 malloc(8)=#2\n1 1 free(#1)\n", "" },
	{ "realloc to the same address releases, then takes the oldest id", NOOPT,
	  "1 1 malloc(8)=0x10\n1 1 malloc(8)=0x20\n1 1 free(0x20)\n"
	  "1 1 realloc(0x10,16)=0x10\n1 1 realloc(0x10,32)=0x10\n",
	  "1 1 malloc(8)=#1\n1 1 malloc(8)=#2\n1 1 free(#2)\n"
	  "1 1 realloc(#1,16)=#2\n1 1 realloc(#2,32)=#1\n", "" },
	{ "realloc returning 0x0 is dropped after releasing the old pointer", NOOPT,
	  "1 1 malloc(8)=0x10\n1 1 realloc(0x10,99)=0x0\n1 1 free(0x10)\n1 1 malloc(8)=0x30\n",
	  "1 1 malloc(8)=#1\n1 1 malloc(8)=#1\n",
	  "2:Result is NULL|3:Did not see an alloc for pointer|" },
	{ "a bad result of realloc drops it after the release too", NOOPT,
	  "1 1 malloc(8)=0x10\n1 1 realloc(0x10,9)=zz\n1 1 malloc(8)=0x20\n",
	  "1 1 malloc(8)=#1\n1 1 malloc(8)=#1\n", "2:Malformed result|" },
	{ "unknown pointers are dropped and change nothing", NOOPT,
	  "1 1 free(0x99)\n1 1 realloc(0x99,5)=0x10\n1 1 malloc(8)=0x20\n1 1 free(0x20)\n",
	  "1 1 malloc(8)=#1\n1 1 free(#1)\n",
	  "1:Did not see an alloc for pointer|2:Did not see an alloc for pointer|" },
	{ "failed allocations are dropped", NOOPT,
	  "1 1 malloc(8)=0x0\n1 1 posix_memalign(64,8)=0x0\n1 1 calloc(1,8)=0x10\n",
	  "1 1 calloc(1,8)=#1\n", "1:Result is NULL|2:Result is NULL|" },
	{ "old lines without a tid use the pid as tid", NOOPT,
	  "7 malloc(8)=0x10\n7 7 free(0x10)\n7 8 malloc(1)=0x20\n7 free(0x20)\n",
	  "1 1 malloc(8)=#1\n1 1 free(#1)\n1 2 malloc(1)=#1\n1 1 free(#1)\n", "" },
	{ "unknown functions are dropped after their pid and tid are numbered", NOOPT,
	  "1 5 mallocx(8)=0x10\n2 1 foo()\n1 6 malloc(8)=0x10\n3 1 malloc(1)=0x10\n"
	  "1 2 Malloc(8)=0x10\n1 1 free (0x10)\n",
	  "1 2 malloc(8)=#1\n3 1 malloc(1)=#1\n",
	  "1:Unknown function|2:Unknown function|5:Unknown function|6:Unknown function|" },
	{ "wrong argument counts", NOOPT,
	  "1 1 malloc()=0x10\n1 1 malloc(1,2)=0x10\n1 1 calloc(1)=0x10\n1 1 free()\n"
	  "1 1 jemalloc_stats(1)\n1 1 realloc(0x0)=0x10\n1 1 valloc(,)=0x10\n"
	  "1 1 jemalloc_stats( )\n1 1 memalign(1,2,3)=0x10\n",
	  "",
	  "1:Malformed input|2:Malformed input|3:Malformed input|4:Malformed input|"
	  "5:Malformed input|6:Malformed input|7:Malformed input|8:Malformed input|"
	  "9:Malformed input|" },
	{ "free and jemalloc_stats with a result; empty results", NOOPT,
	  "1 1 malloc(8)=0x10\n1 1 free(0x10)=0x20\n1 1 jemalloc_stats()=0x1\n"
	  "1 1 free(0x10)=\n1 1 malloc(32)=\n1 1 malloc(32)\n1 1 jemalloc_stats()=\n",
	  "1 1 malloc(8)=#1\n1 1 free(#1)\n1 1 malloc(32)\n1 1 malloc(32)\n"
	  "1 1 jemalloc_stats()\n",
	  "2:Malformed input|3:Malformed input|" },
	{ "malformed shapes", NOOPT,
	  "\n   \nfoo\n1\n1 1 malloc(8=0x10\n1 1 malloc 8)=0x10\n1 1 malloc((8)=0x10\n"
	  "1 1 malloc(8))=0x10\n1 1 malloc(8)0x10\n1 1 malloc(8)x=0x10\n1 1 malloc)8(=0x1\n",
	  "",
	  "1:Malformed input|2:Malformed input|3:Malformed input|4:Malformed input|"
	  "5:Malformed input|6:Malformed input|7:Malformed input|8:Malformed input|"
	  "9:Malformed input|10:Malformed input|11:Malformed input|" },
	{ "negative pids, tids and pointers are distinct keys; -0 is 0", NOOPT,
	  "-5 1 malloc(1)=0x10\n5 1 malloc(1)=0x10\n-5 -1 malloc(1)=-0x10\n-5 1 free(-0x10)\n"
	  "-0 1 malloc(1)=0x10\n0 1 free(0x10)\n-5 1 free(0x10)\n",
	  "1 1 malloc(1)=#1\n2 1 malloc(1)=#1\n1 2 malloc(1)=#2\n1 1 free(#2)\n"
	  "3 1 malloc(1)=#1\n3 1 free(#1)\n1 1 free(#1)\n", "" },
	{ "hex in any case, with or without 0x; leading zeros", NOOPT,
	  "1 1 malloc(1)=0X1A\n1 1 free(0x1a)\n1 1 malloc(1)=ABC\n1 1 free(0x0abc)\n"
	  "01 001 malloc(1)=0x00ff\n1 1 free(FF)\n",
	  "1 1 malloc(1)=#1\n1 1 free(#1)\n1 1 malloc(1)=#1\n1 1 free(#1)\n"
	  "1 1 malloc(1)=#1\n1 1 free(#1)\n", "" },
	{ "whitespace: around the line, in arguments, after a sign (Python 2); CRLF", NOOPT,
	  " \t1 1 calloc( 1 , 2 )=0x10 \r\n1 1 free( 0x10\t)\r\n1\t 1 malloc(x)=- 0x20\v\n"
	  "1 1\tmalloc(1)=0x30\n1 1 free(-\t0x20)\n1 1 malloc(1)= 0x40\n1  1 malloc(1)=0x50\n",
	  "1 1 calloc( 1 , 2 )=#1\n1 1 free(#1)\n1 1 malloc(x)=#1\n1 1 free(#1)\n"
	  "1 1 malloc(1)=#1\n",
	  "4:Unknown function|7:Malformed thread id|" },
	{ "bad numbers", NOOPT,
	  "x 1 malloc(1)=0x10\n9 y malloc(1)=0x10\n8 1 malloc(1)=0x10\n9 1 malloc(1)=0x10\n"
	  "9 1 free(0x)\n9 1 free(0xg)\n9 1 free(00x10)\n9 1 malloc(1)=0x-1\n9 1 malloc(1)=1e\n"
	  "9 1 free(--0x10)\n9 1 free(0x 10)\n",
	  "2 1 malloc(1)=#1\n1 1 malloc(1)=#1\n1 1 malloc(1)=#2\n",
	  "1:Malformed process id|2:Malformed thread id|5:Malformed pointer|6:Malformed pointer|"
	  "7:Malformed pointer|8:Malformed result|10:Malformed pointer|11:Malformed pointer|" },
	{ "numbers beyond 64 bits are the one known difference", NOOPT,
	  "1 1 malloc(1)=0xffffffffffffffff\n1 1 malloc(1)=0x10000000000000000\n"
	  "18446744073709551616 1 malloc(1)=0x10\n1 18446744073709551616 malloc(1)=0x10\n"
	  "1 1 free(0x10000000000000000)\n1 1 free(-0xffffffffffffffff)\n",
	  "1 1 malloc(1)=#1\n",
	  "2:Result beyond 64 bits (the reference accepts it, alloctap-munge does not)|"
	  "3:Process id beyond 64 bits (the reference accepts it, alloctap-munge does not)|"
	  "4:Thread id beyond 64 bits (the reference accepts it, alloctap-munge does not)|"
	  "5:Pointer beyond 64 bits (the reference accepts it, alloctap-munge does not)|"
	  "6:Did not see an alloc for pointer|" },
	{ "processes interleaved: ids per process", NOOPT,
	  "100 100 malloc(1)=0x10\n200 200 malloc(1)=0x10\n100 101 malloc(2)=0x20\n"
	  "200 200 free(0x10)\n100 100 free(0x20)\n200 201 malloc(3)=0x30\n"
	  "100 101 malloc(4)=0x30\n300 300 free(0x10)\n",
	  "1 1 malloc(1)=#1\n2 1 malloc(1)=#1\n1 2 malloc(2)=#2\n"
	  "2 1 free(#1)\n1 1 free(#2)\n2 2 malloc(3)=#1\n1 2 malloc(4)=#2\n",
	  "8:Did not see an alloc for pointer|" },
	{ "--pid keeps one process, printed as 1, tids numbered within it",
	  { 1, 0, 200, 0, 0 },
	  "100 100 malloc(1)=0x10\n200 207 malloc(1)=0x10\n100 101 malloc(2)=0x20\n"
	  "200 205 malloc(1)=0x20\n200 207 free(0x20)\n100 100 free(0x10)\n200 205 free(0x10)\n"
	  "200 205 free(0x99)\n",
	  "1 1 malloc(1)=#1\n1 2 malloc(1)=#2\n1 1 free(#2)\n1 2 free(#1)\n",
	  "8:Did not see an alloc for pointer|" },
	{ "--pid with a negative pid", { 1, 1, 5, 0, 0 },
	  "5 1 malloc(1)=0x10\n-5 1 malloc(1)=0x20\n", "1 1 malloc(1)=#1\n", "" },
	{ "--stats-every 2 counts written lines per process", { 0, 0, 0, 2, 0 },
	  "10 10 malloc(1)=0x10\n20 20 malloc(1)=0x10\n10 11 malloc(1)=0x20\n"
	  "10 10 free(0x99)\n20 20 free(0x10)\n10 10 jemalloc_stats()\n10 10 malloc(1)=0x30\n",
	  "1 1 malloc(1)=#1\n2 1 malloc(1)=#1\n1 2 malloc(1)=#2\n1 1 jemalloc_stats()\n"
	  "2 1 free(#1)\n2 1 jemalloc_stats()\n1 1 jemalloc_stats()\n"
	  "1 1 malloc(1)=#3\n1 1 jemalloc_stats()\n",
	  "4:Did not see an alloc for pointer|" },
	{ "--stats-every with --pid prints process 1", { 1, 0, 20, 1, 0 },
	  "10 10 malloc(1)=0x10\n20 20 malloc(1)=0x10\n",
	  "1 1 malloc(1)=#1\n1 1 jemalloc_stats()\n", "" },
	{ "every function passes sizes through as written", NOOPT,
	  "4 4 malloc(32)=0x7f0c33502040\n4 4 calloc(1,148)=0x7f0c33503040\n"
	  "4 4 realloc(0x7f0c33502040,64)=0x7f0c33502040\n4 4 posix_memalign(256,240)=0x10\n"
	  "4 4 memalign(16,9)=0x20\n4 4 aligned_alloc(64,128)=0x30\n4 4 valloc(4096)=0x40\n"
	  "4 4 jemalloc_stats()\n4 4 free(0x7f0c33502040)\n4 4 malloc(007)=0x50\n",
	  "1 1 malloc(32)=#1\n1 1 calloc(1,148)=#2\n1 1 realloc(#1,64)=#1\n"
	  "1 1 posix_memalign(256,240)=#3\n1 1 memalign(16,9)=#4\n1 1 aligned_alloc(64,128)=#5\n"
	  "1 1 valloc(4096)=#6\n1 1 jemalloc_stats()\n1 1 free(#1)\n1 1 malloc(007)=#1\n", "" },
	{ "a last line without newline", NOOPT, "1 1 malloc(1)=0x10\n1 1 free(0x10)",
	  "1 1 malloc(1)=#1\n1 1 free(#1)\n", "" },
};

static void test_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct munge_case *c = &cases[i];
		struct run r;
		run_munge(&c->opt, c->in, strlen(c->in), &r);
		if (strcmp(r.out, c->out) != 0 || strcmp(r.drops, c->drops) != 0) {
			print_error("case \"%s\"\n-- got:\n%s-- drops: %s\n-- want:\n%s-- drops: %s\n",
				    c->name, r.out, r.drops, c->out, c->drops);
			free(r.out);
			fail();
		}
		free(r.out);
	}
}

/* Lines the reference writes but a replay cannot read: an allocation without a result, sizes
 * that are not plain decimal numbers. They are written byte for byte as the reference writes
 * them, with their reason; with replayable_only (--strict) they are dropped instead. A line a
 * replay reads has no reason. */
static void test_unreplayable(void **state)
{
	(void)state;
	static const char in[] = "1 1 malloc(8)=0x10\n"          /* 1: fine */
				 "1 1 malloc(7)\n"                 /* 2: no result */
				 "1 1 calloc( 2 , 8 )=0x20\n"      /* 3: spaces */
				 "1 1 realloc(0x10, 8)=0x30\n"     /* 4: a space */
				 "1 1 memalign(+16,8)=0x40\n"      /* 5: a sign */
				 "1 1 malloc(0x10)=0x50\n"         /* 6: hex */
				 "1 1 valloc(99999999999999999999)=0x60\n" /* 7: beyond 64 bits */
				 "1 1 calloc(1,)=0x70\n"           /* 8: empty */
				 "1 1 realloc(0x30,9)\n"           /* 9: no result */
				 "1 1 posix_memalign(08,16)=0x80\n" /* 10: a leading zero: fine */
				 "1 1 free(0x80 )\n"               /* 11: fine (the pointer is #N) */
				 "1 1 aligned_alloc(16,18446744073709551615)=0x90\n"; /* 12: fine */
	static const char out[] = "1 1 malloc(8)=#1\n"
				  "1 1 malloc(7)\n"
				  "1 1 calloc( 2 , 8 )=#2\n"
				  "1 1 realloc(#1, 8)=#1\n"
				  "1 1 memalign(+16,8)=#3\n"
				  "1 1 malloc(0x10)=#4\n"
				  "1 1 valloc(99999999999999999999)=#5\n"
				  "1 1 calloc(1,)=#6\n"
				  "1 1 realloc(#1,9)\n"
				  "1 1 posix_memalign(08,16)=#1\n"
				  "1 1 free(#1)\n"
				  "1 1 aligned_alloc(16,18446744073709551615)=#1\n";
	const struct at_munge_options plain = NOOPT, strict = { 0, 0, 0, 0, 1 };
	struct run r;
	char want[1024];

	run_munge(&plain, in, sizeof(in) - 1, &r);
	assert_string_equal(r.out, out);
	assert_string_equal(r.drops, "");
	snprintf(want, sizeof(want), "2:%s|3:%s|4:%s|5:%s|6:%s|7:%s|8:%s|9:%s|", AT_MUNGE_NO_RESULT,
		 AT_MUNGE_ODD_ARGUMENT, AT_MUNGE_ODD_ARGUMENT, AT_MUNGE_ODD_ARGUMENT,
		 AT_MUNGE_ODD_ARGUMENT, AT_MUNGE_ODD_ARGUMENT, AT_MUNGE_ODD_ARGUMENT,
		 AT_MUNGE_NO_RESULT);
	assert_string_equal(r.odd, want);
	free(r.out);

	run_munge(&strict, in, sizeof(in) - 1, &r);
	assert_string_equal(r.odd, "");
	assert_string_equal(r.drops, want);
	assert_int_equal(r.written, 4);
	/* every line a replay reads is still written; each dropped one changed the ids first */
	assert_string_equal(r.out, "1 1 malloc(8)=#1\n1 1 posix_memalign(08,16)=#1\n"
				   "1 1 free(#1)\n1 1 aligned_alloc(16,18446744073709551615)=#1\n");
	free(r.out);

	/* events: only a missing result can happen (the numbers are numbers) */
	struct at_munge m;
	struct at_event ev = { 5, 5, AT_MALLOC, 0, { 8, 0 }, 0, 0, 0 }, outv[2];
	unsigned n;
	const char *why = "unset";
	at_munge_init(&m, &plain);
	assert_int_equal(at_munge_event(&m, &ev, outv, &n, &why), AT_MUNGE_WRITTEN);
	assert_string_equal(why, AT_MUNGE_NO_RESULT);
	assert_int_equal(outv[0].has_result, 0);
	ev.has_result = 1;
	ev.result = 0x10;
	ev.time_ns = 123456789; /* a 2.x trace's time and stack id go along */
	ev.stack = 7;
	assert_int_equal(at_munge_event(&m, &ev, outv, &n, &why), AT_MUNGE_WRITTEN);
	assert_null(why);
	assert_int_equal(outv[0].time_ns, 123456789);
	assert_int_equal(outv[0].stack, 7);
	ev.time_ns = 0;
	ev.stack = 0;
	at_munge_free(&m);
	at_munge_init(&m, &strict);
	ev.has_result = 0;
	assert_int_equal(at_munge_event(&m, &ev, outv, &n, &why), AT_MUNGE_IGNORED);
	assert_string_equal(why, AT_MUNGE_NO_RESULT);
	assert_int_equal(n, 0);
	at_munge_free(&m);
	assert_string_equal(at_munge_unreplayable_event(&ev), AT_MUNGE_NO_RESULT);
	ev.func = AT_FREE;
	assert_null(at_munge_unreplayable_event(&ev));
	/* slots a replay does not have (munged input kept as it is, --keep-pointers) */
	struct at_event big = { 1, 1, AT_FREE, 0, { AT_SLOT_LIMIT, 0 }, 0, 0, 0 };
	assert_string_equal(at_munge_unreplayable_event(&big), AT_MUNGE_BIG_SLOT);
	big.arg[0] = AT_SLOT_LIMIT - 1;
	assert_null(at_munge_unreplayable_event(&big));
	big = (struct at_event){ 1, 1, AT_REALLOC, 1, { 5, 8 }, AT_SLOT_LIMIT, 0, 0 };
	assert_string_equal(at_munge_unreplayable_event(&big), AT_MUNGE_BIG_SLOT);
	big.result = 7;
	assert_null(at_munge_unreplayable_event(&big));
}

/* Which drops are frees and reallocs of a pointer the trace never allocated (counted by the
 * programs, listed only at -v): a table of lines munged in order on one state. */
static void test_unseen_pointer(void **state)
{
	static const struct {
		const char *line;
		int result, unseen;
	} cases[] = {
		{ "1 1 free(0x10)", AT_MUNGE_IGNORED, 1 },           /* allocated before the trace */
		{ "1 1 realloc(0x20,8)=0x30", AT_MUNGE_IGNORED, 1 },
		{ "1 1 malloc(8)=0x0", AT_MUNGE_IGNORED, 0 },        /* Result is NULL */
		{ "1 1 mallocx(3)=0x50", AT_MUNGE_IGNORED, 0 },      /* Unknown function */
		{ "1 1 free(0x20)=0x1", AT_MUNGE_IGNORED, 0 },       /* Malformed input */
		{ "1 1 malloc(8)=0x40", AT_MUNGE_WRITTEN, 0 },
		{ "1 1 free(0x40)", AT_MUNGE_WRITTEN, 0 },
		{ "1 1 free(0x40)", AT_MUNGE_IGNORED, 1 },           /* freed twice: unseen again */
		{ "1 1 free(0x0)", AT_MUNGE_WRITTEN, 0 },            /* free(NULL) is no unknown */
		{ "2 2 free(0x40)", AT_MUNGE_IGNORED, 1 },           /* another process's pointers */
	};
	struct at_munge_options opt = NOOPT;
	struct at_output o;
	struct at_munge m;
	int fd = memfd_create("munge-test", 0);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(at_output_open_fd(&o, fd, "memfd"), 0);
	at_munge_init(&m, &opt);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = NULL;

		print_message("case %zu: %s\n", i, cases[i].line);
		assert_int_equal(at_munge_line(&m, cases[i].line, strlen(cases[i].line), &o, &why),
				 cases[i].result);
		assert_int_equal(at_munge_unseen_pointer(why), cases[i].unseen);
	}
	assert_int_equal(at_munge_unseen_pointer(NULL), 0);
	assert_int_equal(at_munge_unseen_pointer("Did not see an alloc for pointer"), 1);
	assert_int_equal(at_munge_unseen_pointer("Did not see an alloc for pointe"), 0);
	at_output_close(&o);
	close(fd);
	at_munge_free(&m);
}

static void test_nul_bytes(void **state)
{
	(void)state;
	static const char in[] = "1 1 malloc(1)=0x10\0\n1\0 1 malloc(1)=0x20\n1 1 free(0x10)\n"
				 "1 1 malloc(\0)=0x30\n";
	struct at_munge_options opt = NOOPT;
	struct run r;

	run_munge(&opt, NUL_SAFE(in), &r);
	assert_int_equal(r.out_len, sizeof("1 1 malloc(\0)=#1\n") - 1);
	assert_memory_equal(r.out, "1 1 malloc(\0)=#1\n", r.out_len);
	assert_string_equal(r.drops, "1:Malformed result|2:Malformed process id|"
				     "3:Did not see an alloc for pointer|");
	free(r.out);
}

/* An argument text longer than the 1 MiB output buffer still comes out whole. */
static void test_huge_line(void **state)
{
	(void)state;
	size_t zeros = 3u << 20;
	char *in = malloc(zeros + 64);
	assert_non_null(in);
	size_t n = (size_t)sprintf(in, "1 1 malloc(");
	memset(in + n, '0', zeros);
	n += zeros;
	n += (size_t)sprintf(in + n, "7)=0x10\n1 1 free(0x10)\n");
	struct at_munge_options opt = NOOPT;
	struct run r;

	run_munge(&opt, in, n, &r);
	assert_int_equal(r.written, 2);
	assert_int_equal(r.out_len, 11 + zeros + 6 + 13);
	assert_memory_equal(r.out, "1 1 malloc(000", 14);
	assert_memory_equal(r.out + 11 + zeros, "7)=#1\n1 1 free(#1)\n", 18);
	free(r.out);
	free(in);
}

static void test_parse_int(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int base, st, neg;
		uint64_t mag;
	} t[] = {
		{ "0", 10, AT_PYINT_OK, 0, 0 },
		{ "-0", 10, AT_PYINT_OK, 0, 0 },
		{ "  +17 \t", 10, AT_PYINT_OK, 0, 17 },
		{ "- 17", 10, AT_PYINT_OK, 1, 17 },
		{ "-\v17", 10, AT_PYINT_OK, 1, 17 },
		{ "18446744073709551615", 10, AT_PYINT_OK, 0, UINT64_MAX },
		{ "-18446744073709551615", 10, AT_PYINT_OK, 1, UINT64_MAX },
		{ "18446744073709551616", 10, AT_PYINT_TOO_BIG, 0, 0 },
		{ "0x10", 10, AT_PYINT_INVALID, 0, 0 },
		{ "1_0", 10, AT_PYINT_INVALID, 0, 0 },
		{ "1 0", 10, AT_PYINT_INVALID, 0, 0 },
		{ "", 10, AT_PYINT_INVALID, 0, 0 },
		{ "-", 10, AT_PYINT_INVALID, 0, 0 },
		{ "--1", 10, AT_PYINT_INVALID, 0, 0 },
		{ "1L", 10, AT_PYINT_INVALID, 0, 0 },
		{ "0x7f0c33502040", 16, AT_PYINT_OK, 0, 0x7f0c33502040 },
		{ "0XABCdef", 16, AT_PYINT_OK, 0, 0xabcdef },
		{ "abc", 16, AT_PYINT_OK, 0, 0xabc },
		{ " -0x10 ", 16, AT_PYINT_OK, 1, 16 },
		{ "- 0x10", 16, AT_PYINT_OK, 1, 16 },
		{ "0xffffffffffffffff", 16, AT_PYINT_OK, 0, UINT64_MAX },
		{ "0x00000000000000000000001", 16, AT_PYINT_OK, 0, 1 },
		{ "0x10000000000000000", 16, AT_PYINT_TOO_BIG, 0, 0 },
		{ "0x", 16, AT_PYINT_INVALID, 0, 0 },
		{ "0x ", 16, AT_PYINT_INVALID, 0, 0 },
		{ "0xg", 16, AT_PYINT_INVALID, 0, 0 },
		{ "00x1", 16, AT_PYINT_INVALID, 0, 0 },
		{ "0x0x1", 16, AT_PYINT_INVALID, 0, 0 },
		{ "0x-1", 16, AT_PYINT_INVALID, 0, 0 },
		{ "0 x1", 16, AT_PYINT_INVALID, 0, 0 },
		{ "#1", 16, AT_PYINT_INVALID, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int neg = -1;
		uint64_t mag = 1;
		int st = at_parse_pyint(t[i].s, strlen(t[i].s), t[i].base, &neg, &mag);
		if (st != t[i].st || (st == AT_PYINT_OK && (neg != t[i].neg || mag != t[i].mag))) {
			print_error("\"%s\" base %d: got %d %d %llu\n", t[i].s, t[i].base, st, neg,
				    (unsigned long long)mag);
			fail();
		}
	}
	int neg;
	uint64_t mag;
	assert_int_equal(at_parse_pyint("1\0", 2, 10, &neg, &mag), AT_PYINT_INVALID);
}

/* --- events: at_munge_event() against at_munge_line() on the same events as text ---------- */

static uint64_t rng_state = 0x9E3779B97F4A7C15u;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* A random raw event: 3 pids, 4 tids each, pointers from a pool of 24 (so double frees,
 * frees of unknown pointers, NULL results and free(0) all happen), now and then a result on
 * free or jemalloc_stats, or a missing result. */
static void random_event(struct at_event *e)
{
	static const uint64_t pool[24] = { 0x10, 0x20, 0x30, 0x40, 0x7f0000001000, 0x7f0000002000,
		0x55aa00, 0x55bb00, 0x1, 0xffffffffffffffff, 0x8000000000000000, 0x123456789abc,
		0x60, 0x70, 0x80, 0x90, 0xa0, 0xb0, 0xc0, 0xd0, 0xe0, 0xf0, 0x100, 0x110 };
	uint64_t r = rng();

	memset(e, 0, sizeof(*e));
	e->pid = (uint32_t)(100 + r % 3);
	e->tid = e->pid + (uint32_t)((r >> 8) % 4);
	e->func = (uint8_t)((r >> 16) % AT_FUNC_COUNT);
	for (unsigned i = 0; i < at_func_nargs[e->func]; i++)
		e->arg[i] = (r >> 24) % 5 == 0 ? rng() : rng() % 4096;
	if (at_func_takes_pointer(e->func))
		e->arg[0] = (r >> 32) % 10 == 0 ? 0 : pool[rng() % 24];
	e->has_result = at_func_returns_pointer(e->func) ? (r >> 40) % 20 != 0 : (r >> 40) % 30 == 0;
	if (e->has_result)
		e->result = (r >> 48) % 25 == 0 ? 0 : pool[rng() % 24];
}

static void test_event_matches_line(void **state)
{
	static const struct at_munge_options opts[] = {
		NOOPT,
		{ .has_pid = 1, .pid_mag = 101 },
		{ .stats_every = 7 },
	};
	enum { EVENTS = 20000 };
	(void)state;
	struct at_event *events = malloc(EVENTS * sizeof(*events));
	char *text = malloc((size_t)EVENTS * AT_LINE_MAX), *got = malloc((size_t)EVENTS * 2 * AT_LINE_MAX);
	assert_non_null(events);
	assert_non_null(text);
	assert_non_null(got);
	size_t text_len = 0;
	for (unsigned i = 0; i < EVENTS; i++) {
		random_event(&events[i]);
		text_len += at_format_raw(text + text_len, &events[i]);
	}
	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		struct run want;
		run_munge(&opts[k], text, text_len, &want);
		struct at_munge m;
		char drops[4096] = "", odd[4096] = "";
		unsigned written = 0, ignored = 0, filtered = 0;
		size_t got_len = 0;
		at_munge_init(&m, &opts[k]);
		for (unsigned i = 0; i < EVENTS; i++) {
			struct at_event out[2];
			unsigned n = 99;
			const char *why = NULL;
			int rc = at_munge_event(&m, &events[i], out, &n, &why);
			if (rc == AT_MUNGE_WRITTEN) {
				written++;
				size_t d = strlen(odd);
				if (why)
					snprintf(odd + d, sizeof(odd) - d, "%u:%s|", i + 1, why);
				assert_true(n == 1 || n == 2);
				for (unsigned j = 0; j < n; j++) {
					if (at_func_nargs[out[j].func] < 2)
						assert_true(out[j].arg[1] == 0);
					if (!out[j].has_result)
						assert_true(out[j].result == 0);
					got_len += at_format_munged(got + got_len, &out[j]);
				}
			} else {
				assert_int_equal(n, 0);
				if (rc == AT_MUNGE_FILTERED) {
					filtered++;
				} else {
					assert_int_equal(rc, AT_MUNGE_IGNORED);
					ignored++;
					size_t d = strlen(drops);
					snprintf(drops + d, sizeof(drops) - d, "%u:%s|", i + 1, why);
				}
			}
		}
		at_munge_free(&m);
		assert_int_equal(written, want.written);
		assert_int_equal(ignored, want.ignored);
		assert_int_equal(filtered, want.filtered);
		assert_true(want.ignored > 100 && want.written > 1000); /* the mix drops lines */
		assert_string_equal(drops, want.drops);
		assert_string_equal(odd, want.odd);
		assert_true(strlen(odd) > 0); /* the mix has allocations without a result */
		assert_int_equal(got_len, want.out_len);
		assert_memory_equal(got, want.out, got_len);
		free(want.out);
	}
	free(events);
	free(text);
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cases),
		cmocka_unit_test(test_unreplayable),
		cmocka_unit_test(test_nul_bytes),
		cmocka_unit_test(test_unseen_pointer),
		cmocka_unit_test(test_huge_line),
		cmocka_unit_test(test_parse_int),
		cmocka_unit_test(test_event_matches_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
