# munged_churn.awk: writes a munged log of random churn over a fixed set of slots: an empty slot
# gets an allocation (malloc, or calloc and posix_memalign at the given rates), a full one a
# free or, at the given rate, a realloc in place. The same variables always give the same log.
#
#   awk -v n=OPS -v seed=S -v slots=W -v max=BYTES [-v factors=F] [-v realloc=P]
#       [-v calloc=P] [-v calloc_n=N] [-v memalign=P] [-v stats_every=K] -f munged_churn.awk
#
# size = 8 + int(max * the product of F rand() draws) (F = 3 by default: mostly small blocks);
# with stats_every, every K-th line is "1 1 jemalloc_stats()" instead of a call.
BEGIN {
	if (factors == "") factors = 3
	if (realloc == "") realloc = 0.2
	if (calloc == "") calloc = 0.125
	if (calloc_n == "") calloc_n = 1
	if (memalign == "") memalign = 0.156
	srand(seed)
	for (i = 0; i < n; i++) {
		if (stats_every && i % stats_every == stats_every - 1) {
			print "1 1 jemalloc_stats()"
			continue
		}
		s = 1 + int(rand() * slots); r = rand()
		p = 1
		for (k = 0; k < factors; k++) p *= rand()
		size = 8 + int(p * max)
		if (s in live) {
			if (r < realloc) print "1 1 realloc(#" s "," size ")=#" s
			else { print "1 1 free(#" s ")"; delete live[s] }
		} else {
			if (r < calloc) print "1 1 calloc(" calloc_n "," size ")=#" s
			else if (r < memalign) print "1 1 posix_memalign(64," size ")=#" s
			else print "1 1 malloc(" size ")=#" s
			live[s] = 1
		}
	}
}
