/* String interning as a unit (write/gp_intern.h): ids are 1, 2, 3... in the
 * order strings are first added, equal bytes find the same id and any
 * other bytes (a prefix, an embedded NUL, the empty string) do not; the
 * table grows past many rehashes; taking back the last string leaves every
 * other findable (colliding hashes included) and gives its id to the next
 * string; the per-thread cache hits only for the same pointer, bytes and
 * recorder generation.  Then through the recorder: two threads interning
 * the same strings get the same ids, and a reused buffer with new bytes
 * gets a new id. */
#include <pthread.h>
#include "tl.h"
#include "write/gp_intern.h"

static uint32_t add_or_find(struct gp_strtab *t, const char *s, uint32_t len)
{
	uint64_t h = gp_str_hash(s, len);
	uint32_t id = gp_strtab_find(t, s, len, h);
	return id ? id : gp_strtab_add(t, s, len, h);
}

static void test_table(void)
{
	struct gp_strtab t = { 0 };
	CHECK(gp_strtab_find(&t, "a", 1, gp_str_hash("a", 1)) == 0, "empty table finds nothing");
	CHECK(add_or_find(&t, "a", 1) == 1, "first id is 1");
	CHECK(add_or_find(&t, "ab", 2) == 2, "second id is 2");
	CHECK(add_or_find(&t, "a", 1) == 1, "same bytes, same id");
	CHECK(add_or_find(&t, "ab\0", 3) == 3, "embedded NUL: another string");
	CHECK(add_or_find(&t, "", 0) == 4, "empty string has an id");
	CHECK(add_or_find(&t, "", 0) == 4, "and keeps it");
	CHECK(gp_str_hash("", 0) != gp_str_hash("\0", 1), "length is part of the hash");
	CHECK(!strcmp(gp_strtab_str(&t, 2), "ab"), "bytes of an id");
	CHECK(gp_strtab_str(&t, 0) == NULL && gp_strtab_str(&t, 99) == NULL, "unknown ids");

	/* many strings: several rehashes (1024 slots at first) */
	char buf[64];
	enum {
		N = 100000
	};
	for (uint32_t i = 0; i < N; i++) {
		int n = snprintf(buf, sizeof(buf), "cudaLaunchKernel_%u", i);
		uint32_t id = add_or_find(&t, buf, (uint32_t)n);
		if (id != 5 + i) {
			CHECK(0, "string %u got id %u", i, id);
			break;
		}
	}
	for (uint32_t i = 0; i < N; i += 7) {
		int n = snprintf(buf, sizeof(buf), "cudaLaunchKernel_%u", i);
		if (gp_strtab_find(&t, buf, (uint32_t)n, gp_str_hash(buf, (size_t)n)) != 5 + i) {
			CHECK(0, "find %u", i);
			break;
		}
	}
	CHECK(t.slot_cap > 2 * t.n, "load factor under 1/2 (%u slots, %u strings)", t.slot_cap, t.n);

	/* take back the last: gone, the rest stays, its id is reused */
	uint32_t last = add_or_find(&t, "temporary", 9);
	gp_strtab_remove_last(&t);
	CHECK(gp_strtab_find(&t, "temporary", 9, gp_str_hash("temporary", 9)) == 0, "removed");
	CHECK(add_or_find(&t, "a", 1) == 1 && add_or_find(&t, "ab\0", 3) == 3, "others still there");
	CHECK(add_or_find(&t, "replacement", 11) == last, "id given again");
	gp_strtab_free(&t);

	/* colliding hashes: one probe chain, take back its last member */
	uint64_t h = 12345;
	CHECK(gp_strtab_add(&t, "x", 1, h) == 1 && gp_strtab_add(&t, "y", 1, h) == 2 && gp_strtab_add(&t, "z", 1, h) == 3,
	      "three strings, one hash");
	CHECK(gp_strtab_find(&t, "y", 1, h) == 2 && gp_strtab_find(&t, "z", 1, h) == 3, "all found");
	gp_strtab_remove_last(&t);
	CHECK(gp_strtab_find(&t, "x", 1, h) == 1 && gp_strtab_find(&t, "y", 1, h) == 2, "chain intact");
	CHECK(gp_strtab_find(&t, "z", 1, h) == 0, "last one gone");
	CHECK(gp_strtab_add(&t, "w", 1, h) == 3 && gp_strtab_find(&t, "w", 1, h) == 3, "reused id in the chain");
	gp_strtab_free(&t);
}

static void test_cache(void)
{
	static struct gp_icache c; /* zeroed: generation 0 */
	char buf[16] = "kernel";
	uint64_t h = gp_str_hash(buf, 6);
	struct gp_icache_ent *e = gp_icache_slot(&c, 1, buf, h);
	CHECK(!gp_icache_hit(e, buf, 6, h), "empty cache misses");
	*e = (struct gp_icache_ent){ buf, h, 6, 42 };
	CHECK(gp_icache_hit(gp_icache_slot(&c, 1, buf, h), buf, 6, h), "same pointer and bytes hit");
	const char *copy = "kernel";
	CHECK(!gp_icache_hit(gp_icache_slot(&c, 1, copy, h), copy, 6, h), "other pointer, same bytes: miss");
	memcpy(buf, "memcpy", 6);
	uint64_t h2 = gp_str_hash(buf, 6);
	CHECK(!gp_icache_hit(gp_icache_slot(&c, 1, buf, h2), buf, 6, h2), "same pointer, new bytes: miss");
	CHECK(!gp_icache_hit(gp_icache_slot(&c, 1, buf, h), buf, 5, h), "other length: miss");
	memcpy(buf, "kernel", 6);
	CHECK(!gp_icache_hit(gp_icache_slot(&c, 2, buf, h), buf, 6, h), "another recorder: emptied");
}

/* through the recorder */
static gp_recorder *g_rec;
static uint32_t ids[2][64];

static void *interner(void *arg)
{
	uint32_t *out = arg;
	char name[32];
	for (int rep = 0; rep < 3; rep++)
		for (int i = 0; i < 64; i++) {
			snprintf(name, sizeof(name), "range_%d", i);
			uint32_t id = gp_intern(g_rec, name);
			if (rep && out[i] != id) out[i] = 0; /* not stable */
			else out[i] = id;
		}
	return NULL;
}

static void test_recorder(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/intern.gpuprof", dir);
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1 };
	REQUIRE(gp_recorder_create(&o, &g_rec) == 0, "create");
	pthread_t t[2];
	for (int i = 0; i < 2; i++) REQUIRE(pthread_create(&t[i], NULL, interner, ids[i]) == 0, "thread");
	for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
	for (int i = 0; i < 64; i++) {
		CHECK(ids[0][i] && ids[0][i] == ids[1][i], "string %d: ids %u and %u", i, ids[0][i], ids[1][i]);
		for (int j = 0; j < i; j++) CHECK(ids[0][i] != ids[0][j], "strings %d and %d share an id", i, j);
	}
	char buf[8] = "aaaa";
	uint32_t a = gp_intern(g_rec, buf);
	memcpy(buf, "bbbb", 4);
	uint32_t b = gp_intern(g_rec, buf);
	CHECK(a && b && a != b, "reused buffer, new bytes: new id (%u, %u)", a, b);
	CHECK(gp_intern(g_rec, "aaaa") == a, "and the old bytes keep theirs");
	gp_recorder_close(g_rec);

	/* each id's STRING record is in the file with its bytes */
	gp_reader *r;
	REQUIRE(gp_reader_open(path, &r) == 0, "open: %s", gp_reader_errmsg(NULL));
	REQUIRE(gp_reader_load_meta(r) == 0, "meta");
	CHECK(!strcmp(gp_reader_string(r, ids[0][5]) ? gp_reader_string(r, ids[0][5]) : "", "range_5"), "string in the file");
	CHECK(!strcmp(gp_reader_string(r, b) ? gp_reader_string(r, b) : "", "bbbb"), "reused buffer's string");
	gp_reader_close(r);
	unlink(path);
}

int main(void)
{
	char *dir = tl_tmpdir();
	test_table();
	test_cache();
	test_recorder(dir);
	rmdir(dir);
	if (tl_failures) {
		fprintf(stderr, "%d check(s) failed\n", tl_failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
