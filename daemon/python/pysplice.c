/* pysplice.c: native and Python frames in one stack. */
#include "pysplice.h"

#define CODE_MASK ((UINT64_C(1) << AT_PY_VALUE_SHIFT) - 1)

uint64_t at_py_value(const struct at_py_frame *f)
{
	return at_py_pack(f->code, f->offset);
}

uint64_t at_py_value_code(uint64_t v)
{
	return v & CODE_MASK;
}

uint32_t at_py_value_offset(uint64_t v)
{
	uint32_t off = (uint32_t)(v >> AT_PY_VALUE_SHIFT);

	return off == AT_PY_VALUE_NOT_STARTED ? AT_PY_OFFSET_START : off;
}

/* Whether pc lies in the evaluation loop. */
static int in_eval(uint64_t pc, const struct at_py_eval *eval, int neval)
{
	for (int i = 0; i < neval; i++)
		if (pc >= eval[i].start && pc < eval[i].end)
			return 1;
	return 0;
}

/* Appends one frame if there is room. */
static void put(struct at_py_spliced *s, uint64_t *out, uint8_t *is_python, int max, uint64_t v,
		int python)
{
	if (s->count >= max)
		return;
	out[s->count] = v;
	is_python[s->count] = (uint8_t)python;
	s->count++;
}

struct at_py_spliced at_py_splice(const uint64_t *pcs, int npcs, const struct at_py_eval *eval,
				  int neval, const struct at_py_frame *py, int npy, uint64_t *out,
				  uint8_t *is_python, int max)
{
	struct at_py_spliced s = { 0, 0, 0, 0 };
	int j = 0;

	for (int i = 0; i < npcs; i++) {
		uint64_t at = i ? pcs[i] - 1 : pcs[i];

		if (s.mismatch || !in_eval(at, eval, neval)) {
			put(&s, out, is_python, max, pcs[i], 0);
			continue;
		}
		if (j >= npy) {
			s.mismatch = 1;
			put(&s, out, is_python, max, pcs[i], 0);
			continue;
		}
		for (int entry = 0; j < npy && !entry; j++) {
			entry = py[j].entry;
			put(&s, out, is_python, max, at_py_value(&py[j]), 1);
		}
		s.runs++;
	}
	s.left = npy - j;
	return s;
}
