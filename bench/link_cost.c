/* link_cost.c: what a uprobe_multi link costs the kernel to create and to destroy, for the
 * follow benchmarks (bench/follow_bench.sh): the price of probing each traced process with
 * links of its own (pid set) rather than each file once for every process (pid 0).
 *
 * Usage: link_cost [ROUNDS [LINKS]]   (defaults 5 and 32; needs root, or CAP_BPF and
 * CAP_PERFMON)
 * Loads a BPF program that returns at once (r0 = 0; exit), of the kind and attach type of the
 * daemon's probes, and puts it, with raw bpf(2) calls, on the malloc family's entry points
 * (lib/functions.h's symbols; file offsets from the ELF file's .dynsym and PT_LOAD headers, as
 * the daemon computes them) in the C library this program maps. A child that sleeps is the
 * pid of the per-process links. Each round measures: (a) creating one link with the child's
 * pid and (b) closing it; (d) the same with pid 0 (every process that maps the library); the
 * two again with one site (malloc), to tell a link's cost from a site's; creating LINKS links
 * with the child's pid one after another (the median time of one); (c)
 * closing LINKS links of the child's from 1, 4, 16 and 32 threads at once (each thread
 * closes its share; the wall time from their start to the last one's end). Closing a link's
 * last descriptor destroys it before close() returns, and destroying waits for the kernel's
 * grace periods. Prints two tables of medians over the rounds, in ms. Exits 1 with a message
 * when the program or a link is refused (not root, a kernel before 6.6), 2 on bad usage. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "functions.h"
#include "prim.h"

/* What link_create needs of union bpf_attr for a uprobe_multi link (Linux 6.6), which
 * Debian 12's headers do not know (as in daemon/bpf.c). */
#define LC_TRACE_UPROBE_MULTI 48
struct uprobe_multi_attr {
	uint32_t prog_fd, target_fd, attach_type, flags;
	uint64_t path, offsets, ref_ctr_offsets, cookies;
	uint32_t cnt, multi_flags, pid;
};

#define MAX_SITES 16
#define MAX_ROUNDS 101
#define MAX_LINKS 1024
static const int thread_counts[] = { 1, 4, 16, 32 };
#define NTHREADS (int)(sizeof(thread_counts) / sizeof(thread_counts[0]))

/* The probe sites: the library's path, and the file offset of each symbol found. */
struct sites {
	char path[4096];
	const char *names[MAX_SITES];
	uint64_t offsets[MAX_SITES];
	unsigned n;
};

#define SYMBOL_OF(code, word, symbol, ...) #symbol,
static const char *const family[] = { AT_FUNCTIONS(SYMBOL_OF, AT_FUNC_SKIP, SYMBOL_OF) };

static pid_t sleeper = -1;

/* fail: prints the message, ends the sleeping child, exits 1. */
__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("link_cost: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	if (sleeper > 0) {
		kill(sleeper, SIGKILL);
		waitpid(sleeper, NULL, 0);
	}
	exit(1);
}

/* library_of: the path of the file mapped at addr in this process, into out (size n); 0, or
 * -1 when no mapping with a path covers it. */
static int library_of(uintptr_t addr, char *out, size_t n)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4608];
	int found = -1;

	if (!f)
		return -1;
	while (found != 0 && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		int at = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) < 2 || at == 0)
			continue;
		if (addr < lo || addr >= hi || line[at] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(out, n, "%s", line + at);
		found = 0;
	}
	fclose(f);
	return found;
}

/* file_offset: the file offset of vaddr through the executable PT_LOAD headers of the ELF
 * image at base (size len); 0, or -1 when none covers it. */
static int file_offset(const uint8_t *base, size_t len, uint64_t vaddr, uint64_t *off)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;

	if (eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > len)
		return -1;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	for (unsigned i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && vaddr >= ph[i].p_vaddr &&
		    vaddr < ph[i].p_vaddr + ph[i].p_memsz) {
			*off = vaddr - ph[i].p_vaddr + ph[i].p_offset;
			return 0;
		}
	return -1;
}

/* dynsym_vaddr: the address of the defined function name in the .dynsym of the ELF image at
 * base (size len); 0 when it has none. */
static uint64_t dynsym_vaddr(const uint8_t *base, size_t len, const char *name)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;

	if (eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len)
		return 0;
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(base + eh->e_shoff);
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh->e_shnum)
			continue;
		const Elf64_Shdr *str = &sh[sh[i].sh_link];
		if (sh[i].sh_offset + sh[i].sh_size > len || str->sh_offset + str->sh_size > len)
			return 0;
		const Elf64_Sym *sym = (const Elf64_Sym *)(base + sh[i].sh_offset);
		size_t count = sh[i].sh_size / sizeof(Elf64_Sym);
		for (size_t s = 0; s < count; s++) {
			int type = ELF64_ST_TYPE(sym[s].st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym[s].st_shndx == SHN_UNDEF ||
			    sym[s].st_name >= str->sh_size)
				continue;
			const char *sname = (const char *)base + str->sh_offset + sym[s].st_name;
			if (strncmp(sname, name, str->sh_size - sym[s].st_name) == 0)
				return sym[s].st_value;
		}
	}
	return 0;
}

/* find_sites: the C library this program maps (the file of malloc's code) and the file
 * offsets of the family's functions it defines, into s. Exits when it cannot read them. */
static void find_sites(struct sites *s)
{
	void *(*volatile fn)(size_t) = malloc;

	if (library_of((uintptr_t)fn, s->path, sizeof(s->path)) != 0)
		fail("no mapped file holds malloc's code (/proc/self/maps)");
	int fd = open(s->path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(Elf64_Ehdr))
		fail("%s: %s", s->path, strerror(errno ? errno : EINVAL));
	size_t len = (size_t)st.st_size;
	const uint8_t *base = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (base == MAP_FAILED)
		fail("%s: mmap: %s", s->path, strerror(errno));
	if (memcmp(base, ELFMAG, SELFMAG) != 0 || base[EI_CLASS] != ELFCLASS64)
		fail("%s: not a 64-bit ELF file", s->path);
	s->n = 0;
	for (size_t i = 0; i < sizeof(family) / sizeof(family[0]) && s->n < MAX_SITES; i++) {
		uint64_t vaddr = dynsym_vaddr(base, len, family[i]), off;
		if (vaddr == 0 || file_offset(base, len, vaddr, &off) != 0)
			continue;
		s->names[s->n] = family[i];
		s->offsets[s->n++] = off;
	}
	munmap((void *)base, len);
	if (s->n == 0)
		fail("%s: defines none of the malloc family", s->path);
}

/* load_program: loads r0 = 0; exit as a kprobe program for uprobe_multi links; its
 * descriptor. Exits with the kernel's reason when refused. */
static int load_program(void)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	static char log[4096];
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_KPROBE;
	attr.insn_cnt = 2;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.license = (uint64_t)(uintptr_t)"GPL";
	attr.log_level = 1;
	attr.log_size = sizeof(log);
	attr.log_buf = (uint64_t)(uintptr_t)log;
	attr.expected_attach_type = LC_TRACE_UPROBE_MULTI;
	int fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0)
		fail("BPF refused the program: %s%s%s", strerror(errno),
		     errno == EPERM ? " (needs root, or CAP_BPF and CAP_PERFMON)" : "",
		     log[0] ? "; verifier: " : "");
	return fd;
}

/* create_link: a uprobe_multi link of prog on every site of s, for pid (0: every process);
 * its descriptor. Exits with the kernel's reason when refused. */
static int create_link(int prog, const struct sites *s, pid_t pid)
{
	union {
		struct uprobe_multi_attr a;
		uint8_t size[128]; /* the kernel's union bpf_attr is larger: the rest must be 0 */
	} attr;

	memset(&attr, 0, sizeof(attr));
	attr.a.prog_fd = (uint32_t)prog;
	attr.a.attach_type = LC_TRACE_UPROBE_MULTI;
	attr.a.path = (uint64_t)(uintptr_t)s->path;
	attr.a.offsets = (uint64_t)(uintptr_t)s->offsets;
	attr.a.cnt = s->n;
	attr.a.pid = (uint32_t)pid;
	int fd = (int)syscall(SYS_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		fail("BPF refused a uprobe_multi link on %s (pid %d): %s%s", s->path, (int)pid,
		     strerror(errno),
		     errno == EINVAL ? " (a kernel before 6.6 has no uprobe_multi links)" : "");
	return fd;
}

/* One thread's share of the parallel close: links[i] for i = first, first + step, ... */
struct closer {
	pthread_t tid;
	pthread_barrier_t *start;
	const int *links;
	int first, step, count;
};

static void *close_share(void *arg)
{
	struct closer *c = arg;

	pthread_barrier_wait(c->start);
	for (int i = c->first; i < c->count; i += c->step)
		close(c->links[i]);
	return NULL;
}

/* close_parallel: closes the count links from threads threads at once; the wall time in ns
 * from their start to the end of the last. */
static double close_parallel(const int *links, int count, int threads)
{
	struct closer c[32];
	pthread_barrier_t start;

	pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
	for (int t = 0; t < threads; t++) {
		c[t] = (struct closer){ .start = &start, .links = links, .first = t, .step = threads,
					.count = count };
		if (pthread_create(&c[t].tid, NULL, close_share, &c[t]) != 0)
			fail("pthread_create failed");
	}
	pthread_barrier_wait(&start);
	uint64_t t0 = at_now_ns();
	for (int t = 0; t < threads; t++)
		pthread_join(c[t].tid, NULL);
	uint64_t t1 = at_now_ns();
	pthread_barrier_destroy(&start);
	return (double)(t1 - t0);
}

/* timed_pair: creates a link for pid and closes it; the two times in ns into create, close. */
static void timed_pair(int prog, const struct sites *s, pid_t pid, double *create, double *shut)
{
	uint64_t t0 = at_now_ns();
	int fd = create_link(prog, s, pid);
	uint64_t t1 = at_now_ns();
	close(fd);
	uint64_t t2 = at_now_ns();
	*create = (double)(t1 - t0);
	*shut = (double)(t2 - t1);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* median_ms: the median of the n times v (ns; sorted in place), in ms. */
static double median_ms(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	return v[(n - 1) / 2] / 1e6;
}

/* start_sleeper: a child that sleeps until killed (and dies with this program). */
static pid_t start_sleeper(void)
{
	pid_t pid = fork();

	if (pid < 0)
		fail("fork: %s", strerror(errno));
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 5, nlinks = argc > 2 ? atoi(argv[2]) : 32;

	if (argc > 3 || rounds < 1 || rounds > MAX_ROUNDS || nlinks < 1 || nlinks > MAX_LINKS) {
		fprintf(stderr, "usage: link_cost [ROUNDS (1 to %d) [LINKS (1 to %d)]]\n",
			MAX_ROUNDS, MAX_LINKS);
		return 2;
	}
	static struct sites s;
	find_sites(&s);
	int prog = load_program();
	sleeper = start_sleeper();
	struct sites one = s;
	one.n = 1;
	static double att[4][MAX_ROUNDS], det[4][MAX_ROUNDS], par[NTHREADS][MAX_ROUNDS];
	static double row[NTHREADS][MAX_ROUNDS];
	static int links[MAX_LINKS];
	for (int r = 0; r < rounds; r++) {
		timed_pair(prog, &s, sleeper, &att[0][r], &det[0][r]);
		timed_pair(prog, &s, 0, &att[1][r], &det[1][r]);
		timed_pair(prog, &one, sleeper, &att[2][r], &det[2][r]);
		timed_pair(prog, &one, 0, &att[3][r], &det[3][r]);
		for (int t = 0; t < NTHREADS; t++) {
			uint64_t t0 = at_now_ns();
			for (int i = 0; i < nlinks; i++)
				links[i] = create_link(prog, &s, sleeper);
			row[t][r] = (double)(at_now_ns() - t0) / nlinks;
			par[t][r] = close_parallel(links, nlinks, thread_counts[t]);
		}
	}
	kill(sleeper, SIGKILL);
	waitpid(sleeper, NULL, 0);
	close(prog);

	printf("link_cost: uprobe_multi links of an empty program on %s, %u sites (", s.path, s.n);
	for (unsigned i = 0; i < s.n; i++)
		printf("%s%s", i ? " " : "", s.names[i]);
	printf("), median of %d rounds, ms\n", rounds);
	printf("%-26s %12s %12s\n", "one link", "pid=child", "pid=0 (all)");
	for (int k = 0; k < 2; k++) {
		unsigned n = k ? 1 : s.n;
		printf("%-26s %12.3f %12.3f\n", k ? "attach alone, 1 site" : "attach alone, all sites",
		       median_ms(att[2 * k], rounds), median_ms(att[2 * k + 1], rounds));
		printf("%-26s %12.3f %12.3f\n", n == 1 ? "close, 1 site" : "close, all sites",
		       median_ms(det[2 * k], rounds), median_ms(det[2 * k + 1], rounds));
	}
	double all_rows[NTHREADS * MAX_ROUNDS];
	for (int t = 0; t < NTHREADS; t++)
		memcpy(&all_rows[t * rounds], row[t], (size_t)rounds * sizeof(double));
	printf("%-26s %12.3f %12s\n", "attach in a row, each",
	       median_ms(all_rows, NTHREADS * rounds), "-");
	printf("(alone: the first link after the previous one's close; in a row: %d links one after\n"
	       " another, all sites; 1 site: malloc alone)\n", nlinks);
	printf("\nlink_cost: closing %d links (pid=child) from several threads at once, median of"
	       " %d rounds, ms\n", nlinks, rounds);
	printf("%-10s %12s %12s\n", "threads", "all closed", "per link");
	for (int t = 0; t < NTHREADS; t++) {
		double m = median_ms(par[t], rounds);
		printf("%-10d %12.2f %12.3f\n", thread_counts[t], m, m / nlinks);
	}
	return 0;
}
