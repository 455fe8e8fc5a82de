/* top_csv.c: alloctap-report top --csv (top_csv.h). */
#include <stdlib.h>

#include "csv.h"
#include "finish.h"
#include "tables.h"
#include "top_csv.h"

/* The weight the sites are ranked by (rep_sorted_sites takes a function of the site alone). */
static const struct rep_top_options *csv_by;

static uint64_t weight_of(const struct rep_site *s)
{
	return rep_top_weight(s, csv_by);
}

/* The records of process proc. 0, or -1 with errno. */
static int write_process(struct rep_csv *c, const struct rep_heap *h, size_t proc,
			 const struct rep_proc *p, const struct rep_top_options *o)
{
	const struct rep_site *sites;
	size_t nsites = rep_heap_sites(h, &sites), count, len;
	uint32_t *idx = rep_sorted_sites(h, proc, weight_of, &count);
	rep_u128 total = 0;

	if (!idx)
		return -1;
	for (size_t i = 0; i < nsites; i++)
		if (sites[i].proc == proc)
			total += rep_top_weight(&sites[i], o);
	for (size_t k = 0; k < count && k < o->limit; k++) {
		const char *text = rep_heap_site_text(h, &sites[idx[k]], &len);

		rep_csv_u64(c, p->pid);
		rep_csv_u64(c, k + 1);
		rep_csv_u64(c, rep_top_weight(&sites[idx[k]], o));
		rep_csv_u64(c, rep_sat_u64(total));
		rep_csv_stack(c, text, len);
		rep_csv_end(c);
	}
	free(idx);
	return 0;
}

int rep_write_top_csv(FILE *out, const struct rep_heap *h, const struct rep_top_options *o)
{
	static const char *const header[] = { "pid", "rank", "value", "process_total", "stack",
					      NULL };
	const struct rep_proc *procs;
	size_t n = rep_heap_procs(h, &procs);
	struct rep_csv c;

	csv_by = o;
	rep_csv_init(&c, out);
	rep_csv_header(&c, header);
	for (size_t i = 0; i < n; i++)
		if (write_process(&c, h, i, &procs[i], o) < 0)
			return -1;
	return rep_finish_output(out);
}
