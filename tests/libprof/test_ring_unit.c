/* The per-thread ring as a unit (write/gp_ring.h), without the recorder:
 * it fills to exactly its capacity and then refuses and counts; it wakes
 * its consumer once per drain when more than half full; entries that run
 * past the end of the buffer read back contiguous; entries too large are
 * refused; the entry decoder clips lengths to the entry; and one producer
 * thread against one consumer thread loses or reorders nothing (run under
 * TSan by `make tsan-test`). */
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include "tl.h"
#include "write/gp_ring.h"

#define BODY 48u /* a 56-byte entry, like an API record */

static uint64_t wakes(int efd)
{
	uint64_t v = 0;
	if (read(efd, &v, sizeof(v)) != sizeof(v)) return 0; /* EAGAIN: none */
	return v;
}

static void body_for(uint8_t *b, uint32_t len, uint64_t seq)
{
	for (uint32_t i = 0; i < len; i++) b[i] = (uint8_t)(seq * 31 + i);
	if (len >= 8) memcpy(b, &seq, 8);
}

static int body_ok(const uint8_t *b, uint32_t len, uint64_t seq)
{
	uint8_t want[2048];
	body_for(want, len, seq);
	return !memcmp(b, want, len);
}

/* Drains [tail, head): checks each entry is the next sequence number
 * (bodies made by body_for), returns how many. */
static uint64_t drain(struct gp_ring *g, uint64_t *next_seq, uint32_t type, int check_seq)
{
	uint64_t head = gp_ring_head(g), t = g->tail, n = 0;
	while (t < head) {
		uint32_t ty, size;
		const uint8_t *p = gp_ring_entry(g, t, head, &ty, &size);
		REQUIRE(p, "malformed entry at %" PRIu64, t);
		CHECK(ty == type, "type %u", ty);
		uint64_t seq;
		memcpy(&seq, p + GP_ENTRY_HDR, 8);
		if (check_seq) CHECK(seq == *next_seq, "seq %" PRIu64 " want %" PRIu64, seq, *next_seq);
		else CHECK(seq >= *next_seq, "seq %" PRIu64 " after %" PRIu64 ": reordered", seq, *next_seq);
		CHECK(body_ok(p + GP_ENTRY_HDR, size - GP_ENTRY_HDR, seq), "body of %" PRIu64, seq);
		*next_seq = seq + 1;
		t += size;
		n++;
	}
	gp_ring_release(g, t);
	gp_ring_drained(g);
	return n;
}

static void test_fill(void)
{
	int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	REQUIRE(efd >= 0, "eventfd");
	struct gp_ring g;
	REQUIRE(gp_ring_init(&g, 4096, efd) == 0, "init");
	uint8_t b[BODY];
	uint64_t seq = 0, next = 0;
	int rc;
	while ((body_for(b, BODY, seq), rc = gp_ring_put_fixed(&g, 6, b, BODY)) == 0) seq++;
	CHECK(rc == GP_ERR_FULL, "full: %s", gp_strerror(rc));
	CHECK(seq == 4096 / (BODY + GP_ENTRY_HDR), "accepted %" PRIu64 " of 56-byte entries in 4096 bytes", seq);
	CHECK(gp_ring_accepted(&g) == seq && gp_ring_drops(&g) == 1, "counters %" PRIu64 "/%" PRIu64,
	      gp_ring_accepted(&g), gp_ring_drops(&g));
	CHECK(wakes(efd) == 1, "one wake when it got more than half full");
	CHECK(drain(&g, &next, 6, 1) == seq, "drained all");
	/* room again; the next half-full crossing wakes again (new drain) */
	uint64_t more = 0;
	while (more < 40 && (body_for(b, BODY, seq), gp_ring_put_fixed(&g, 6, b, BODY)) == 0) {
		seq++;
		more++;
	}
	CHECK(more == 40, "accepts again after the drain: %" PRIu64, more);
	CHECK(wakes(efd) == 1, "woken again after the drain");
	CHECK(drain(&g, &next, 6, 1) == 40, "second drain");
	CHECK(gp_ring_drops(&g) == 1, "no new drops");
	gp_ring_fini(&g);
	close(efd);
}

/* Entries of every size, with extra bytes, lap a small ring many times:
 * each reads back in one piece (the slack past the buffer). */
static void test_wrap(void)
{
	struct gp_ring g;
	REQUIRE(gp_ring_init(&g, 4096, -1) == 0, "init");
	uint64_t s = 99, next = 0, got = 0, sent = 0;
	uint8_t b[2048];
	for (int i = 0; i < 20000; i++) {
		/* body and extra: multiples of 8, so the consumer sees one run of
		 * body_for bytes after the entry header */
		uint32_t blen = 8 * (2 + (uint32_t)(tl_rand(&s) % 15)), elen = 8 * (uint32_t)(tl_rand(&s) % 75);
		body_for(b, blen + elen, sent);
		int rc = gp_ring_put(&g, 9, b, blen, b + blen, elen);
		REQUIRE(rc == 0, "put %d: %s", i, gp_strerror(rc));
		sent++;
		if (g.head - g.tail > g.cap / 2 || tl_rand(&s) % 4 == 0) got += drain(&g, &next, 9, 1);
	}
	got += drain(&g, &next, 9, 1);
	CHECK(got == sent, "read back %" PRIu64 " of %" PRIu64, got, sent);
	CHECK(g.head > 100 * g.cap, "lapped the ring (head %" PRIu64 ")", g.head);
	/* too large for this ring: refused, counted */
	CHECK(gp_ring_put(&g, 9, b, 2048, NULL, 0) == GP_ERR_FULL, "an entry over half the ring (and the slack)");
	CHECK(gp_ring_drops(&g) == 1, "counted");
	gp_ring_fini(&g);
}

static void test_entry_to_record(void)
{
	uint8_t e[256] = { 0 };
	gp_rec_string s = { 7, 100, NULL }; /* claims 100 bytes, carries 5 */
	uint32_t size = gp_entry_size(sizeof(s), 5);
	gp_entry_put(e, GP_REC_STRING, size, &s, sizeof(s), "hello", 5);
	gp_record r;
	REQUIRE(gp_entry_to_record(e, GP_REC_STRING, size, &r) == 0, "string entry");
	CHECK(r.type == GP_REC_STRING && r.u.string.id == 7, "string id");
	CHECK(r.u.string.len == 8 && !memcmp(r.u.string.str, "hello", 5), "len clipped to the entry's extra (8 aligned)");
	uint64_t fr[2] = { 0x1000, 0x2000 };
	gp_rec_stack st = { 3, 50, NULL };
	size = gp_entry_size(sizeof(st), sizeof(fr));
	gp_entry_put(e, GP_REC_STACK, size, &st, sizeof(st), fr, sizeof(fr));
	REQUIRE(gp_entry_to_record(e, GP_REC_STACK, size, &r) == 0, "stack entry");
	CHECK(r.u.stack.nframes == 2 && r.u.stack.frames[1] == 0x2000, "frames clipped to the entry");
	CHECK(gp_entry_to_record(e, 0, size, &r) == GP_ERR_CORRUPT, "type 0");
	CHECK(gp_entry_to_record(e, GP_REC_TYPE_MAX, size, &r) == GP_ERR_CORRUPT, "unknown type");
	CHECK(gp_entry_to_record(e, GP_REC_KERNEL, 16, &r) == GP_ERR_CORRUPT, "entry smaller than its struct");
}

/* One producer, one consumer, both busy. */
#define SPSC_N 300000
struct spsc {
	struct gp_ring g;
	int efd;
	int done;
	uint64_t consumed;
};

static void *producer(void *arg)
{
	struct spsc *x = arg;
	uint8_t b[BODY + 256];
	uint64_t s = 7;
	for (uint64_t seq = 0; seq < SPSC_N; seq++) {
		uint32_t len = BODY + 8 * (uint32_t)(tl_rand(&s) % 32);
		body_for(b, len, seq);
		if (len == BODY) gp_ring_put_fixed(&x->g, 6, b, BODY);
		else gp_ring_put(&x->g, 6, b, len, NULL, 0);
	}
	__atomic_store_n(&x->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_spsc(void)
{
	struct spsc *x = aligned_alloc(64, sizeof(*x));
	REQUIRE(x, "alloc");
	memset(x, 0, sizeof(*x));
	x->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	REQUIRE(gp_ring_init(&x->g, 1u << 16, x->efd) == 0, "init");
	pthread_t t;
	REQUIRE(pthread_create(&t, NULL, producer, x) == 0, "thread");
	uint64_t next = 0;
	for (;;) {
		int done = __atomic_load_n(&x->done, __ATOMIC_ACQUIRE);
		struct pollfd p = { x->efd, POLLIN, 0 };
		poll(&p, 1, 1);
		wakes(x->efd);
		x->consumed += drain(&x->g, &next, 6, 0);
		if (done && gp_ring_head(&x->g) == x->g.tail) break;
	}
	pthread_join(t, NULL);
	uint64_t acc = gp_ring_accepted(&x->g), drops = gp_ring_drops(&x->g);
	CHECK(x->consumed == acc, "consumed %" PRIu64 ", producer says %" PRIu64 " accepted", x->consumed, acc);
	CHECK(acc + drops == SPSC_N, "accepted %" PRIu64 " + dropped %" PRIu64 " = %d", acc, drops, SPSC_N);
	CHECK(acc > 0, "something got through");
	gp_ring_fini(&x->g);
	close(x->efd);
	free(x);
}

int main(void)
{
	test_fill();
	test_wrap();
	test_entry_to_record();
	test_spsc();
	if (tl_failures) {
		fprintf(stderr, "%d check(s) failed\n", tl_failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
