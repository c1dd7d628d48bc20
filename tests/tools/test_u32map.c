/* test_u32map.c — common/util.h's u32map (a range id to its step in
 * comm_steps and the steps engine) against u64map, on random keys: grown
 * key by key from empty (comm_steps) and sized at once (the steps engine,
 * u32map_reserve: a capacity that is no power of two, probes that wrap
 * past its last slot); values overwritten; absent keys, key 0 and the
 * largest key.  Prints "ok" or the failed checks; exit 1 on failure. */
#include <stdio.h>

#include "common/util.h"
#include "splitmix.h"

static int fails;
#define CHECK(cond, ...) do { if (!(cond)) { if (fails++ < 20) { printf("FAIL: "); printf(__VA_ARGS__); printf("\n"); } } } while (0)

/* n random keys below `range` put into m (reserved first when `reserve`),
 * then every key below `range` looked up; as u64map has them. */
static void run(size_t n, uint32_t range, int reserve, uint64_t seed)
{
	struct u32map m = { 0 };
	u64map want;
	u64map_init(&want);
	if (reserve) u32map_reserve(&m, n);
	size_t cap0 = m.cap;
	for (size_t i = 0; i < n; i++) {
		uint32_t k = (uint32_t)(sm_next(&seed) % range), v = (uint32_t)sm_next(&seed);
		u32map_put(&m, k, v);
		*u64map_get(&want, k, MAP_INSERT) = v;
	}
	CHECK(m.n == want.n, "n %zu, range %u: %zu keys held (%zu wanted)", n, range, m.n, want.n);
	CHECK(m.n * 4 <= m.cap * 3, "n %zu: %zu keys in %zu slots (at most 3/4 full)", n, m.n, m.cap);
	if (reserve) CHECK(m.cap == cap0, "n %zu: grew from %zu to %zu slots after u32map_reserve", n, cap0, m.cap);
	for (uint32_t k = 0; k < range; k++) {
		uint64_t *w = u64map_get(&want, k, MAP_FIND);
		uint64_t got = u32map_find(&m, k);
		CHECK(got == (w ? *w + 1 : 0), "n %zu: key %u gives %llu (%llu wanted)", n, k, (unsigned long long)got,
		      (unsigned long long)(w ? *w + 1 : 0));
	}
	u32map_free(&m);
	u64map_free(&want);
}

int main(void)
{
	struct u32map empty = { 0 };
	CHECK(u32map_find(&empty, 0) == 0 && u32map_find(&empty, 7) == 0, "an empty map finds a key");
	for (size_t n = 1; n <= 5000; n = n * 3 + 1) {
		run(n, (uint32_t)(2 * n), 0, n);
		run(n, (uint32_t)(2 * n), 1, n + 1);
		run(n, (uint32_t)(n / 2 + 1), 1, n + 2); /* keys put again: values overwritten */
	}
	run(100000, 1u << 20, 1, 99);
	struct u32map m = { 0 };
	u32map_reserve(&m, 3);
	u32map_put(&m, UINT32_MAX - 1, 5);
	u32map_put(&m, 0, 6);
	CHECK(u32map_find(&m, UINT32_MAX - 1) == 6 && u32map_find(&m, 0) == 7 && u32map_find(&m, 1) == 0,
	      "the largest key and key 0");
	u32map_free(&m);
	if (fails) return 1;
	printf("ok\n");
	return 0;
}
