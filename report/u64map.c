/* u64map.c: 64-bit keys to 64-bit values (u64map.h). */
#include <errno.h>
#include <stdlib.h>

#include "u64map.h"

static int grow(struct rep_u64map *m)
{
	size_t cap = m->cap ? m->cap * 2 : 1024;
	uint64_t *key = calloc(cap, sizeof(*key)), *val = calloc(cap, sizeof(*val));

	if (!key || !val) {
		free(key);
		free(val);
		errno = ENOMEM;
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->key[i])
			continue;
		size_t j = rep_u64map_mix(m->key[i]) & (cap - 1);
		while (key[j])
			j = (j + 1) & (cap - 1);
		key[j] = m->key[i];
		val[j] = m->val[i];
	}
	free(m->key);
	free(m->val);
	m->key = key;
	m->val = val;
	m->cap = cap;
	return 0;
}

uint64_t *rep_u64map_slot(struct rep_u64map *m, uint64_t k, int *is_new)
{
	if (2 * (m->count + 1) > m->cap && grow(m) < 0)
		return NULL;
	size_t i = rep_u64map_mix(k) & (m->cap - 1);
	while (m->key[i] && m->key[i] != k)
		i = (i + 1) & (m->cap - 1);
	*is_new = !m->key[i];
	if (*is_new) {
		m->key[i] = k;
		m->val[i] = 0;
		m->count++;
	}
	return &m->val[i];
}

uint64_t *rep_u64map_find(const struct rep_u64map *m, uint64_t k)
{
	if (!m->cap)
		return NULL;
	for (size_t i = rep_u64map_mix(k) & (m->cap - 1); m->key[i]; i = (i + 1) & (m->cap - 1))
		if (m->key[i] == k)
			return &m->val[i];
	return NULL;
}

void rep_u64map_remove(struct rep_u64map *m, uint64_t k)
{
	uint64_t *v = rep_u64map_find(m, k);
	if (!v)
		return;
	size_t mask = m->cap - 1, hole = (size_t)(v - m->val);
	for (size_t j = (hole + 1) & mask; m->key[j]; j = (j + 1) & mask) {
		size_t home = rep_u64map_mix(m->key[j]) & mask;
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			m->key[hole] = m->key[j];
			m->val[hole] = m->val[j];
			hole = j;
		}
	}
	m->key[hole] = 0;
	m->count--;
}

void rep_u64map_free(struct rep_u64map *m)
{
	free(m->key);
	free(m->val);
	m->key = m->val = NULL;
	m->cap = m->count = 0;
}
