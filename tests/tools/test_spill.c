/* test_spill.c — common/spill.c against a plain array: 200,000 records of
 * 40 bytes with a cap of 256 KiB (so that most blocks go to the file and
 * back through the cache), read at random, older records rewritten in
 * place (and read back after their blocks have left the cache), a cut
 * (spill_truncate) and pushes after it; a byte stream written in pieces
 * of random size and read back at random offsets; the sealed spill read
 * by 4 threads at once, each with its reader; what malloc holds at the
 * end bounded by the cap and the caches (not the 8 MB of records); and
 * the failures: a $TMPDIR that does not exist and a file size limit
 * (RLIMIT_FSIZE: the pwrite fails as on a full disk) give a spill that
 * says it failed and still holds every record right.  Prints "ok" or the
 * failed checks; exit 1 on failure. */
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/spill.h"
#include "splitmix.h"

static int fails;
#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			if (fails++ < 20) { \
				printf("FAIL: "); \
				printf(__VA_ARGS__); \
				printf("\n"); \
			} \
		} \
	} while (0)

enum {
	RECSZ = 40,
	NREC = 200000,
	CAP = 256 << 10,
	NTHREADS = 4
};

struct rec {
	uint64_t w[RECSZ / 8];
};

static void rec_make(struct rec *r, uint64_t i, uint64_t gen)
{
	for (int k = 0; k < RECSZ / 8; k++) r->w[k] = i * 1000003u + (uint64_t)k * 7919u + gen;
}

/* The spill holds what ref holds: every record, then 2,000 at random. */
static void check_all(struct spill *s, const struct rec *ref, size_t n, const char *when, uint64_t *rng)
{
	CHECK(spill_count(s) == n, "%s: count %zu, want %zu", when, spill_count(s), n);
	size_t bad = 0;
	for (size_t i = 0; i < n; i++) bad += memcmp(spill_get(s, i), &ref[i], RECSZ) != 0;
	for (int k = 0; k < 2000; k++) {
		size_t i = (size_t)(sm_next(rng) % n);
		bad += memcmp(spill_get(s, i), &ref[i], RECSZ) != 0;
	}
	CHECK(!bad, "%s: %zu records differ", when, bad);
}

/* Pushes, rewrites and a cut through one spill, against ref. */
static void exercise(struct spill *s, struct rec *ref, const char *name)
{
	uint64_t rng = 7;
	for (size_t i = 0; i < NREC; i++) {
		rec_make(&ref[i], i, 0);
		memcpy(spill_push(s), &ref[i], RECSZ);
		if (i % 97 == 0 && i) { /* an older record changed in place */
			size_t j = (size_t)(sm_next(&rng) % i);
			rec_make(&ref[j], j, i);
			memcpy(spill_at(s, j), &ref[j], RECSZ);
		}
	}
	char when[64];
	snprintf(when, sizeof(when), "%s: pushed", name);
	check_all(s, ref, NREC, when, &rng);
	for (int k = 0; k < 5000; k++) {
		size_t j = (size_t)(sm_next(&rng) % NREC);
		rec_make(&ref[j], j, 1000000u + (uint64_t)k);
		memcpy(spill_at(s, j), &ref[j], RECSZ);
	}
	snprintf(when, sizeof(when), "%s: rewritten", name);
	check_all(s, ref, NREC, when, &rng);
	spill_truncate(s, NREC / 2 + 3);
	for (size_t i = NREC / 2 + 3; i < NREC; i++) {
		rec_make(&ref[i], i, 77);
		struct rec *p = spill_push(s);
		CHECK(p->w[0] == 0 && p->w[RECSZ / 8 - 1] == 0, "%s: pushed record %zu not zeroed", name, i);
		memcpy(p, &ref[i], RECSZ);
	}
	snprintf(when, sizeof(when), "%s: cut and pushed", name);
	check_all(s, ref, NREC, when, &rng);
}

struct reader_arg {
	struct spill *s;
	const struct rec *ref;
	uint64_t seed;
	size_t bad;
};

static void *read_thread(void *p)
{
	struct reader_arg *a = p;
	struct spill_reader *rd = spill_reader_new(a->s);
	uint64_t rng = a->seed;
	for (int k = 0; k < 30000; k++) {
		size_t i = k % 3 ? (size_t)(sm_next(&rng) % NREC) : (size_t)k % NREC;
		a->bad += memcmp(spill_reader_at(rd, i), &a->ref[i], RECSZ) != 0;
	}
	spill_reader_free(rd);
	return NULL;
}

static void bytes_check(void)
{
	enum {
		N = 3 << 20
	};
	unsigned char *ref = malloc(N), *got = malloc(1 << 17);
	uint64_t rng = 11;
	for (size_t i = 0; i < N; i++) ref[i] = (unsigned char)sm_next(&rng);
	struct spill *s = spill_new(1, CAP);
	for (size_t at = 0; at < N;) {
		size_t k = (size_t)(sm_next(&rng) % 100000);
		if (k > N - at) k = N - at;
		spill_write(s, ref + at, k);
		at += k;
	}
	CHECK(spill_count(s) == N, "bytes: count %zu", spill_count(s));
	size_t bad = 0;
	for (int k = 0; k < 2000; k++) {
		size_t off = (size_t)(sm_next(&rng) % (N + 10)), n = (size_t)(sm_next(&rng) % (1 << 17));
		size_t want = off >= N ? 0 : (N - off < n ? N - off : n);
		size_t m = spill_read(s, off, got, n);
		bad += m != want || (m && memcmp(got, ref + off, m));
	}
	CHECK(!bad, "bytes: %zu reads differ", bad);
	spill_free(s);
	free(ref);
	free(got);
}

int main(void)
{
	struct rec *ref = malloc(sizeof(*ref) * NREC);
	struct mallinfo2 mi = mallinfo2();
	size_t base = mi.uordblks + mi.hblkhd;
	struct spill *s = spill_new(RECSZ, CAP);
	exercise(s, ref, "file");
	CHECK(!spill_failed(s), "file: failed");
	/* what the spill holds in memory: the cap, 8 cached blocks of 64 KiB
	 * and its block table, not the 8 MB of records */
	mi = mallinfo2();
	size_t held = mi.uordblks + mi.hblkhd - base;
	CHECK(held < CAP + (8 << 16) + (128 << 10), "file: malloc holds %zu bytes", held);

	spill_seal(s);
	pthread_t t[NTHREADS];
	struct reader_arg a[NTHREADS];
	for (int k = 0; k < NTHREADS; k++) {
		a[k] = (struct reader_arg){ s, ref, 100 + (uint64_t)k, 0 };
		pthread_create(&t[k], NULL, read_thread, &a[k]);
	}
	for (int k = 0; k < NTHREADS; k++) {
		pthread_join(t[k], NULL);
		CHECK(!a[k].bad, "readers: thread %d read %zu records wrong", k, a[k].bad);
	}
	spill_free(s);

	bytes_check();

	/* no $TMPDIR: in memory, right, and said */
	setenv("TMPDIR", "/nonexistent-gpuprof-test", 1);
	s = spill_new(RECSZ, CAP);
	exercise(s, ref, "no tmpdir");
	CHECK(spill_failed(s), "no tmpdir: not failed");
	spill_free(s);
	unsetenv("TMPDIR");

	/* a full disk: the writes fail past 1 MiB */
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = { 1 << 20, 1 << 20 }, old;
	getrlimit(RLIMIT_FSIZE, &old);
	rl.rlim_max = old.rlim_max;
	setrlimit(RLIMIT_FSIZE, &rl);
	s = spill_new(RECSZ, CAP);
	exercise(s, ref, "full disk");
	CHECK(spill_failed(s), "full disk: not failed");
	spill_seal(s);
	struct reader_arg one = { s, ref, 5, 0 };
	read_thread(&one);
	CHECK(!one.bad, "full disk: reader read %zu records wrong", one.bad);
	spill_free(s);
	setrlimit(RLIMIT_FSIZE, &old);

	free(ref);
	if (fails) return 1;
	printf("ok\n");
	return 0;
}
