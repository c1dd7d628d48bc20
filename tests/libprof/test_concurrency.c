/* Concurrency: 8 threads x 200k records with exact per-source counts and
 * order; a tiny ring with a paused writer counts every drop exactly; a
 * memory cap leaves threads without a ring and counts those drops. */
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include "tl.h"

#define NT 8
#define PER 200000

struct targ {
	gp_recorder *rec;
	int idx, per, retry;
	uint32_t tid;
	uint64_t ok, full;
	pthread_barrier_t *bar;
};

static void *producer(void *p)
{
	struct targ *a = p;
	a->tid = (uint32_t)syscall(SYS_gettid);
	if (a->bar) pthread_barrier_wait(a->bar);
	gp_record r = { .type = GP_REC_API };
	for (int i = 0; i < a->per; i++) {
		r.u.api.start_ns = 1000000 + (uint64_t)i * 250 + (uint64_t)a->idx;
		r.u.api.end_ns = r.u.api.start_ns + 100;
		r.u.api.correlation_id = (uint64_t)i;
		r.u.api.cbid = (uint32_t)a->idx;
		r.u.api.domain = GP_API_RUNTIME;
		for (;;) {
			int rc = gp_emit(a->rec, &r);
			if (rc == 0) {
				a->ok++;
				break;
			}
			if (rc != GP_ERR_FULL) {
				fprintf(stderr, "emit: %d\n", rc);
				exit(1);
			}
			a->full++;
			if (!a->retry) break;
			sched_yield();
		}
	}
	return NULL;
}

struct readback {
	uint64_t per_thread[64];
	uint64_t last_corr[64];
	int order_ok;
	uint64_t dropped[8]; /* by where */
	uint64_t total;
};

static void read_back(const char *path, struct readback *rb, int nthreads)
{
	memset(rb, 0, sizeof(*rb));
	rb->order_ok = 1;
	uint32_t src_of[64] = { 0 };
	gp_reader *r;
	REQUIRE(gp_reader_open(path, &r) == 0, "open: %s", gp_reader_errmsg(NULL));
	const gp_record *rec;
	int rc;
	while ((rc = gp_reader_next(r, &rec)) == 1) {
		rb->total++;
		if (rec->type == GP_REC_DROPPED && rec->u.dropped.where < 8) rb->dropped[rec->u.dropped.where] += rec->u.dropped.count;
		if (rec->type != GP_REC_API) continue;
		uint32_t t = rec->u.api.cbid;
		REQUIRE(t < (uint32_t)nthreads, "bad cbid %u", t);
		if (!src_of[t]) src_of[t] = rec->source_id;
		CHECK(src_of[t] == rec->source_id, "thread %u records in two sources", t);
		if (rb->per_thread[t] && rec->u.api.correlation_id <= rb->last_corr[t]) rb->order_ok = 0;
		rb->last_corr[t] = rec->u.api.correlation_id;
		rb->per_thread[t]++;
	}
	CHECK(rc == 0, "iteration rc %d", rc);
	struct gp_integrity in;
	gp_reader_integrity(r, &in);
	CHECK(in.has_footer && in.frames_corrupt == 0, "integrity");
	gp_reader_close(r);
}

static void test_many_threads(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/many.gpuprof", dir);
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1, .flush_interval_ms = 50 };
	gp_recorder *rec;
	REQUIRE(gp_recorder_create(&o, &rec) == 0, "create");
	pthread_t th[NT];
	struct targ a[NT];
	for (int i = 0; i < NT; i++) {
		a[i] = (struct targ){ .rec = rec, .idx = i, .per = PER, .retry = 1 };
		pthread_create(&th[i], NULL, producer, &a[i]);
	}
	uint64_t full = 0;
	for (int i = 0; i < NT; i++) {
		pthread_join(th[i], NULL);
		full += a[i].full;
	}
	struct gp_recorder_stats st = { .sz = sizeof(st) };
	gp_recorder_close(rec);
	(void)st;
	struct readback rb;
	read_back(path, &rb, NT);
	for (int i = 0; i < NT; i++)
		CHECK(rb.per_thread[i] == PER, "thread %d: %llu records read, %d emitted", i, (unsigned long long)rb.per_thread[i], PER);
	CHECK(rb.order_ok, "per-thread order preserved");
	CHECK(rb.dropped[GP_DROP_RING] == full, "ring drops in file %llu == refused emits %llu",
	      (unsigned long long)rb.dropped[GP_DROP_RING], (unsigned long long)full);
	printf("%d threads x %d records: all read back in per-thread order (%llu ring-full refusals retried, all counted)\n",
	       NT, PER, (unsigned long long)full);
}

static void test_stalled_writer(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/stall.gpuprof", dir);
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1, .ring_bytes = 4096 };
	gp_recorder *rec;
	REQUIRE(gp_recorder_create(&o, &rec) == 0, "create");
	gp_recorder_pause_writer(rec, 1);
	enum {
		N = 4,
		PERT = 5000
	};
	pthread_t th[N];
	struct targ a[N];
	for (int i = 0; i < N; i++) {
		a[i] = (struct targ){ .rec = rec, .idx = i, .per = PERT, .retry = 0 };
		pthread_create(&th[i], NULL, producer, &a[i]);
	}
	uint64_t ok = 0, full = 0;
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		ok += a[i].ok;
		full += a[i].full;
	}
	struct gp_recorder_stats st = { .sz = sizeof(st) };
	gp_recorder_get_stats(rec, &st);
	CHECK(st.records == ok && st.dropped == full, "stats %llu+%llu vs %llu+%llu", (unsigned long long)st.records,
	      (unsigned long long)st.dropped, (unsigned long long)ok, (unsigned long long)full);
	CHECK(st.records + st.dropped == (uint64_t)N * PERT, "accepted + dropped == attempted");
	CHECK(full > 0, "a 4 KiB ring with a paused writer must drop");
	gp_recorder_pause_writer(rec, 0);
	gp_recorder_close(rec);
	struct readback rb;
	read_back(path, &rb, N);
	for (int i = 0; i < N; i++)
		CHECK(rb.per_thread[i] == a[i].ok, "thread %d: %llu read vs %llu accepted", i,
		      (unsigned long long)rb.per_thread[i], (unsigned long long)a[i].ok);
	CHECK(rb.order_ok, "order");
	CHECK(rb.dropped[GP_DROP_RING] == full, "dropped records in file %llu vs %llu", (unsigned long long)rb.dropped[GP_DROP_RING], (unsigned long long)full);
	printf("stalled writer, 4 KiB rings: %llu accepted + %llu dropped == %d attempted; file agrees exactly\n",
	       (unsigned long long)ok, (unsigned long long)full, N * PERT);
}

static void test_memory_cap(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/cap.gpuprof", dir);
	/* writer overhead is ~3.5 MiB: 3.75 MiB leaves room for exactly one 256 KiB ring */
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1, .ring_bytes = 256 << 10, .max_memory_bytes = 15 << 18 };
	gp_recorder *rec;
	REQUIRE(gp_recorder_create(&o, &rec) == 0, "create");
	enum {
		N = 4,
		PERT = 1000
	};
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, N);
	pthread_t th[N];
	struct targ a[N];
	for (int i = 0; i < N; i++) {
		a[i] = (struct targ){ .rec = rec, .idx = i, .per = PERT, .retry = 0, .bar = &bar };
		pthread_create(&th[i], NULL, producer, &a[i]);
	}
	uint64_t ok = 0, full = 0;
	for (int i = 0; i < N; i++) {
		pthread_join(th[i], NULL);
		ok += a[i].ok;
		full += a[i].full;
	}
	struct gp_recorder_stats st = { .sz = sizeof(st) };
	struct gp_recorder_stats2 st2 = { .sz = sizeof(st2) };
	gp_recorder_get_stats(rec, &st);
	gp_recorder_get_stats2(rec, &st2);
	gp_recorder_close(rec);
	pthread_barrier_destroy(&bar);
	CHECK(st.records + st.dropped == (uint64_t)N * PERT, "accepted + dropped == attempted (%llu + %llu)",
	      (unsigned long long)st.records, (unsigned long long)st.dropped);
	CHECK(st.threads >= 1 && st2.dropped_no_ring > 0, "threads %u, no-ring drops %llu", st.threads, (unsigned long long)st2.dropped_no_ring);
	struct readback rb;
	read_back(path, &rb, N);
	CHECK(rb.dropped[GP_DROP_NO_RING] == st2.dropped_no_ring, "no-ring drops in file %llu vs %llu",
	      (unsigned long long)rb.dropped[GP_DROP_NO_RING], (unsigned long long)st2.dropped_no_ring);
	uint64_t read = 0;
	for (int i = 0; i < N; i++) read += rb.per_thread[i];
	CHECK(read == ok, "records read %llu == accepted %llu", (unsigned long long)read, (unsigned long long)ok);
	printf("memory cap: %u ring(s) created, %llu records without a ring counted as GP_DROP_NO_RING, file agrees\n",
	       st.threads, (unsigned long long)st2.dropped_no_ring);
}

int main(void)
{
	char *dir = tl_tmpdir();
	test_many_threads(dir);
	test_stalled_writer(dir);
	test_memory_cap(dir);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {}
	if (tl_failures) {
		fprintf(stderr, "%d checks failed\n", tl_failures);
		return 1;
	}
	printf("concurrency: all checks passed\n");
	return 0;
}
