/* test_sort_tail.c — common/util.h's sort_tail (the steps' and advise's
 * operations as a stream gives them, step detection's sample) on random
 * arrays: a sorted prefix of every length, tails nearly in order (the
 * insertion it tries first), far from it (its budget spent part way: the
 * sort and merge after) and in reverse; keys with many repeats; elements
 * of 16 bytes and of 600 (larger than insertion moves).  Each result is a
 * permutation of the input in key order; where insertion alone sorts (a
 * tail nearly in order, no prefix), equal keys keep their order, as in a
 * stable sort (the rest relies on the C library's qsort for that).  Prints "ok" or the failed checks; exit 1 on failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "splitmix.h"

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { if (fails++ < 20) { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } } while (0)

struct small { uint64_t key, seq; };
struct large { uint64_t key, seq; char pad[584]; };

static int cmp_small(const void *x, const void *y)
{
	const struct small *a = x, *b = y;
	return a->key < b->key ? -1 : a->key > b->key;
}

static int cmp_large(const void *x, const void *y)
{
	const struct large *a = x, *b = y;
	return a->key < b->key ? -1 : a->key > b->key;
}

/* how the tail is made */
enum shape { NEAR, RANDOM, REVERSED };

/* n keys (below `range`) of which the first `sorted` in order, the tail
 * shaped; sorted by sort_tail as elements of esz bytes; checked. */
static void run(size_t n, size_t sorted, enum shape shape, uint64_t range, int large, uint64_t seed)
{
	uint64_t *key = malloc((n ? n : 1) * sizeof(*key));
	for (size_t i = 0; i < n; i++) key[i] = sm_next(&seed) % range;
	qsort(key, sorted, sizeof(*key), cmp_u64);
	if (shape == NEAR || shape == REVERSED) {
		qsort(key + sorted, n - sorted, sizeof(*key), cmp_u64);
		if (shape == REVERSED)
			for (size_t i = sorted, j = n; i + 1 < j; i++, j--) {
				uint64_t t = key[i]; key[i] = key[j - 1]; key[j - 1] = t;
			}
		else /* a few out of place, a few places back */
			for (size_t i = sorted + 1; i < n; i++)
				if (sm_next(&seed) % 8 == 0) {
					size_t back = 1 + sm_next(&seed) % 4, j = i - (back < i - sorted ? back : i - sorted);
					uint64_t t = key[i]; key[i] = key[j]; key[j] = t;
				}
	}
	size_t esz = large ? sizeof(struct large) : sizeof(struct small);
	char *v = calloc(n ? n : 1, esz);
	for (size_t i = 0; i < n; i++) {
		struct small *e = (struct small *)(v + i * esz);
		e->key = key[i];
		e->seq = i;
		if (large) memset(((struct large *)e)->pad, (int)(i & 0xff), sizeof(((struct large *)e)->pad));
	}
	void *tmp = NULL;
	size_t ctmp = 0;
	sort_tail(v, sorted, n, esz, large ? cmp_large : cmp_small, &tmp, &ctmp);
	free(tmp);
	char *seen = calloc(n ? n : 1, 1);
	int stable = 1;
	for (size_t i = 0; i < n; i++) {
		const struct small *e = (const struct small *)(v + i * esz), *p = (const struct small *)(v + (i - 1) * esz);
		CHECK(e->seq < n && !seen[e->seq], "n %zu sorted %zu shape %d: element %zu is seq %llu, again or unknown",
		      n, sorted, shape, i, (unsigned long long)e->seq);
		if (e->seq < n) seen[e->seq] = 1;
		CHECK(e->key == key[e->seq], "n %zu sorted %zu shape %d: element %zu's key changed", n, sorted, shape, i);
		if (large)
			CHECK(((const struct large *)e)->pad[583] == (char)(e->seq & 0xff),
			      "n %zu sorted %zu: element %zu's bytes mixed with another's", n, sorted, i);
		if (!i) continue;
		CHECK(p->key <= e->key, "n %zu sorted %zu shape %d range %llu: key %llu at %zu after %llu", n, sorted,
		      shape, (unsigned long long)range, (unsigned long long)e->key, i, (unsigned long long)p->key);
		if (p->key == e->key && p->seq > e->seq) stable = 0;
	}
	if (shape == NEAR && !sorted && !large)
		CHECK(stable, "n %zu sorted %zu range %llu: equal keys out of their order", n, sorted,
		      (unsigned long long)range);
	free(seen);
	free(v);
	free(key);
}

int main(void)
{
	uint64_t seed = 41;
	static const size_t ns[] = { 0, 1, 2, 3, 10, 100, 1000, 20000 };
	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++) {
		size_t n = ns[a];
		size_t sorts[] = { 0, n / 3, n ? n - 1 : 0, n };
		for (int s = 0; s < 4; s++)
			for (int shape = NEAR; shape <= REVERSED; shape++)
				for (int large = 0; large < 2; large++) {
					if (large && n > 1000) continue;
					run(n, sorts[s], (enum shape)shape, 5, large, seed++);
					run(n, sorts[s], (enum shape)shape, 1ull << 40, large, seed++);
				}
	}
	if (fails) {
		printf("%d checks failed\n", fails);
		return 1;
	}
	printf("ok\n");
	return 0;
}
