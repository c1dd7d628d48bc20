/* Ring mechanics behind gp_emit's fast path: entries that run past the end
 * of a small ring (every record type, stacks included, many laps, writer
 * flushing in between) come back field for field in order; a thread's
 * cached ring is forgotten when its recorder closes, so recorders created
 * afterwards (often at the same address) get their own ring and file;
 * default options give each of 100 threads alive at once a ring; a thread
 * that turns out to be CUPTI's activity thread after it got a small ring
 * (many threads came first) is given a full one. */
#include <pthread.h>
#include "tl.h"

#define NREC 6000

static gp_record sent[NREC];
static uint64_t sent_frames[NREC][8];

static void test_wrap(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/wrap.gpuprof", dir);
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1, .ring_bytes = 4096, .flush_interval_ms = 3600000 };
	gp_recorder *rec;
	REQUIRE(gp_recorder_create(&o, &rec) == 0, "create");
	gp_recorder_pause_writer(rec, 1);
	static const uint32_t types[] = { GP_REC_API, GP_REC_KERNEL, GP_REC_MEMCPY, GP_REC_MEMSET, GP_REC_NVTX_RANGE,
					  GP_REC_NVTX_MARK, GP_REC_SYNC, GP_REC_MEMORY, GP_REC_CLOCK, GP_REC_COUNTER, GP_REC_MODULE,
					  GP_REC_WINDOW, GP_REC_STACK };
	uint64_t s = 12345, frames[GP_STACK_MAX_FRAMES];
	int nt = (int)(sizeof(types) / sizeof(types[0])), pending = 0, flush_at = 7;
	uint32_t tid = 0; /* 0: the recorder's thread rule fills it */
	for (int i = 0; i < NREC; i++) {
		uint32_t t = types[tl_rand(&s) % (uint64_t)nt];
		tl_make(&sent[i], t, 2, tid, frames, "x");
		uint64_t ts = 1000000 + (uint64_t)i * 1000;
		/* distinct, increasing primary timestamps; per-record values */
		switch (t) {
		case GP_REC_API:
			sent[i].u.api.start_ns = ts;
			sent[i].u.api.end_ns = ts + 5;
			sent[i].u.api.correlation_id = (uint64_t)i;
			sent[i].u.api.tid = 0;
			break;
		case GP_REC_KERNEL:
			sent[i].u.kernel.start_ns = ts;
			sent[i].u.kernel.end_ns = ts + 7;
			sent[i].u.kernel.grid[0] = (uint32_t)i;
			break;
		case GP_REC_STACK:
			sent[i].u.stack.stack_id = (uint32_t)i;
			sent[i].u.stack.nframes = 1 + (uint32_t)(tl_rand(&s) % 8);
			for (uint32_t k = 0; k < sent[i].u.stack.nframes; k++) sent_frames[i][k] = tl_rand(&s);
			sent[i].u.stack.frames = sent_frames[i];
			break;
		default: break;
		}
		int rc = gp_emit(rec, &sent[i]);
		REQUIRE(rc == 0, "emit %d (type %u): %s", i, t, gp_strerror(rc));
		/* flush well before 4 KiB fill up: entries keep crossing the ring's end */
		if (++pending == flush_at) {
			REQUIRE(gp_recorder_flush(rec) == 0, "flush");
			pending = 0;
			flush_at = 1 + (int)(tl_rand(&s) % 25);
		}
	}
	gp_recorder_close(rec);

	gp_reader *r;
	REQUIRE(gp_reader_open(path, &r) == 0, "open: %s", gp_reader_errmsg(NULL));
	const gp_record *x;
	int i = 0, bad = 0, im = 0;
	/* stacks, modules and (format 1.4) clocks are metadata: the recorder
	 * sends them to source 0 (in emission order there); everything else went
	 * through the ring */
#define META_TYPE(t) ((t) == GP_REC_STACK || (t) == GP_REC_MODULE || (t) == GP_REC_CLOCK)
#define META(k) META_TYPE(sent[k].type)
	while (gp_reader_next(r, &x) == 1) {
		if (x->source_id == 0) {
			if (!META_TYPE(x->type)) continue;
			while (im < NREC && !META(im)) im++;
			if (im >= NREC || tl_rec_cmp(&sent[im], x)) {
				fprintf(stderr, "  metadata record %d differs\n", im);
				if (++bad > 3) break;
			}
			im++;
			continue;
		}
		while (i < NREC && META(i)) i++;
		if (i >= NREC) {
			bad++;
			break;
		}
		gp_record want = sent[i];
		/* tid fields the recorder fills from the source: compare what was read */
		if (want.type == GP_REC_API) want.u.api.tid = x->u.api.tid;
		if (want.type == GP_REC_NVTX_RANGE) {
			want.u.nvtx_range.tid = x->u.nvtx_range.tid;
			want.u.nvtx_range.end_tid = x->u.nvtx_range.end_tid;
		}
		if (want.type == GP_REC_NVTX_MARK) want.u.nvtx_mark.tid = x->u.nvtx_mark.tid;
		if (tl_rec_cmp(&want, x)) {
			fprintf(stderr, "  record %d (type %u) differs\n", i, want.type);
			if (++bad > 3) break;
		}
		i++;
	}
	struct gp_integrity in;
	gp_reader_integrity(r, &in);
	gp_reader_close(r);
	while (i < NREC && META(i)) i++;
	while (im < NREC && !META(im)) im++;
	CHECK(i == NREC && im == NREC && !bad, "read back %d/%d of %d records, %d differ", i, im, NREC, bad);
	CHECK(in.has_footer && !in.frames_corrupt, "integrity");
	printf("4 KiB ring, %d records of 13 types (stacks, modules and clocks via source 0) across many laps: all read back equal, in order\n", NREC);
}

static uint64_t count_api(const char *path)
{
	gp_reader *r;
	if (gp_reader_open(path, &r)) return UINT64_MAX;
	const gp_record *x;
	uint64_t n = 0;
	while (gp_reader_next(r, &x) == 1) n += x->type == GP_REC_API;
	gp_reader_close(r);
	return n;
}

static void test_reuse(const char *dir)
{
	void *addrs[40];
	int same_addr = 0;
	for (int k = 0; k < 40; k++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/reuse%d.gpuprof", dir, k);
		struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1, .ring_bytes = 64 << 10 };
		gp_recorder *rec;
		REQUIRE(gp_recorder_create(&o, &rec) == 0, "create %d", k);
		addrs[k] = rec;
		for (int j = 0; j < k; j++) same_addr += addrs[j] == (void *)rec;
		gp_record r = { .type = GP_REC_API };
		for (int i = 0; i < 10 + k; i++) {
			r.u.api.start_ns = 100 + (uint64_t)i;
			r.u.api.correlation_id = (uint64_t)i;
			CHECK(gp_emit(rec, &r) == 0, "emit into recorder %d", k);
		}
		gp_recorder_close(rec);
		CHECK(count_api(path) == (uint64_t)(10 + k), "recorder %d: %llu API records, expected %d", k,
		      (unsigned long long)count_api(path), 10 + k);
	}
	printf("40 recorders one after another from one thread (%d at a reused address): each file has exactly its records\n", same_addr);
}

struct targ {
	gp_recorder *rec;
	int n;
	pthread_barrier_t *bar;
};
static void *emitter(void *p)
{
	struct targ *a = p;
	gp_record r = { .type = GP_REC_API };
	void *rv = NULL;
	for (int i = 0; i < a->n; i++) {
		r.u.api.start_ns = 1 + (uint64_t)i;
		if (gp_emit(a->rec, &r)) rv = (void *)1;
		if (i == 0) pthread_barrier_wait(a->bar); /* every thread holds its ring at once */
	}
	return rv;
}

static void test_default_threads(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/threads.gpuprof", dir);
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1 };
	gp_recorder *rec;
	REQUIRE(gp_recorder_create(&o, &rec) == 0, "create");
	enum {
		NT = 100
	};
	pthread_t th[NT];
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, NT);
	struct targ a = { rec, 1000, &bar };
	int failed = 0;
	for (int i = 0; i < NT; i++) pthread_create(&th[i], NULL, emitter, &a);
	for (int i = 0; i < NT; i++) {
		void *rv;
		pthread_join(th[i], &rv);
		failed += rv != NULL;
	}
	pthread_barrier_destroy(&bar);
	struct gp_recorder_stats st = { .sz = sizeof(st) };
	gp_recorder_get_stats(rec, &st);
	gp_recorder_close(rec);
	CHECK(!failed && st.dropped == 0 && st.threads == NT, "default options, %d threads: %d refused, %llu dropped, %u rings",
	      NT, failed, (unsigned long long)st.dropped, st.threads);
	CHECK(count_api(path) == (uint64_t)NT * 1000, "records read back");
	printf("default options: %d threads each got a ring, nothing dropped\n", NT);
}

struct hold {
	gp_recorder *rec;
	pthread_barrier_t *in, *out;
};
static void *holder(void *p)
{
	struct hold *h = p;
	gp_record r = { .type = GP_REC_API };
	gp_emit(h->rec, &r);
	pthread_barrier_wait(h->in);
	pthread_barrier_wait(h->out);
	return NULL;
}

static void test_activity_ring(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/activity.gpuprof", dir);
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1 };
	gp_recorder *rec;
	REQUIRE(gp_recorder_create(&o, &rec) == 0, "create");
	gp_recorder_pause_writer(rec, 1);
	enum {
		NH = 40,
		NK = 100000
	};
	pthread_t th[NH];
	pthread_barrier_t in, out;
	pthread_barrier_init(&in, NULL, NH + 1);
	pthread_barrier_init(&out, NULL, NH + 1);
	struct hold h = { rec, &in, &out };
	for (int i = 0; i < NH; i++) pthread_create(&th[i], NULL, holder, &h);
	pthread_barrier_wait(&in); /* 40 rings taken: the next thread's is small */
	gp_record r = { .type = GP_REC_API };
	CHECK(gp_emit(rec, &r) == 0, "first emit");
	gp_recorder_set_thread_kind(rec, GP_SOURCE_ACTIVITY);
	uint64_t full = 0;
	for (int i = 0; i < NK; i++) {
		r = (gp_record){ .type = GP_REC_KERNEL };
		r.u.kernel.start_ns = 1000 + (uint64_t)i;
		r.u.kernel.end_ns = r.u.kernel.start_ns + 9;
		r.u.kernel.correlation_id = (uint64_t)i;
		full += gp_emit(rec, &r) != 0;
	}
	pthread_barrier_wait(&out);
	for (int i = 0; i < NH; i++) pthread_join(th[i], NULL);
	gp_recorder_pause_writer(rec, 0);
	gp_recorder_close(rec);
	gp_reader *rd;
	REQUIRE(gp_reader_open(path, &rd) == 0, "open");
	const gp_record *x;
	uint64_t kernels = 0, api = 0;
	uint32_t ksrc = 0;
	while (gp_reader_next(rd, &x) == 1) {
		if (x->type == GP_REC_KERNEL) {
			kernels++;
			ksrc = x->source_id;
		}
		if (x->type == GP_REC_API) api++;
	}
	const gp_rec_source *src = gp_reader_source(rd, ksrc);
	CHECK(full == 0 && kernels == NK, "activity thread after %d others, writer paused: %llu of %d kernels, %llu refused",
	      NH, (unsigned long long)kernels, NK, (unsigned long long)full);
	CHECK(api == NH + 1, "API records %llu (its first one stays in its first ring)", (unsigned long long)api);
	CHECK(src && src->kind == GP_SOURCE_ACTIVITY, "kernels' source kind %u", src ? src->kind : 0);
	gp_reader_close(rd);
	pthread_barrier_destroy(&in);
	pthread_barrier_destroy(&out);
	printf("activity thread arriving after %d others: moved to a full ring, %d kernels kept with the writer paused\n", NH, NK);
}

int main(void)
{
	char *dir = tl_tmpdir();
	test_wrap(dir);
	test_reuse(dir);
	test_default_threads(dir);
	test_activity_ring(dir);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {}
	if (tl_failures) {
		fprintf(stderr, "%d checks failed\n", tl_failures);
		return 1;
	}
	return 0;
}
