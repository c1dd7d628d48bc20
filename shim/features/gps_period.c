/* gps_period.c — the period of a sequence of API events (gps_period.h).
 *
 * The offline trace method (docs/STEPS.md, "Trace (no NVTX)";
 * tools/analysis/steps/step_detect.c) re-done on API events rather than GPU
 * operations, without allocation (the caller's scratch).  For every
 * signature X seen at least 3 times, the
 * sequence is cut before each X into segments, compared as multisets
 * (order-free prefix hashes).  X is a candidate when its most common
 * segment content holds in >= 60 % of its segments and at least min_alike
 * of them, those segments cover >= 50 % of the events between its first and
 * last occurrence, it still occurs at the end of the sequence (within two
 * periods: a burst of alike parameter copies at start-up is no step), and
 * it is no sub-loop (one of L identical layers: the odd segment recurs
 * every L segments).  The shortest period wins; among the candidates of
 * that period (they cut the same steps at different places), the phase:
 * the host-to-device copy after the longest run without one (the step's
 * input), else another marker (copy, synchronisation, graph launch) before
 * a kernel launch (a marker can still be seen when the API callbacks are
 * off: docs/FLIGHT.md), then the longest median host gap before the event,
 * then the earliest. */
#include <stdlib.h>
#include <string.h>

#include "features/gps_period.h"

struct occ { uint64_t sig; size_t pos; };
struct seg { uint64_t h; size_t len; };
struct cand {
	uint64_t sig;
	size_t o0, c;    /* occurrences o[o0 .. o0 + c) */
	size_t len, m;   /* the common segment: length, how many */
	uint64_t hash;
	uint64_t gap;    /* median host gap before it */
	size_t back;     /* median events since the previous host-to-device copy */
};

struct scratch {
	uint64_t *pre, *gap, *gv;
	size_t *back, *un;
	struct occ *o;
	uint32_t *id;
	int32_t *cnt;
	struct seg *sg;
	struct cand *cv;
};

static size_t al8(size_t b) { return (b + 7) & ~(size_t)7; }

size_t gps_period_scratch_size(size_t n)
{
	return al8((n + 1) * 8) + 2 * al8(n * 8) + 2 * al8(n * sizeof(size_t)) + al8(n * sizeof(struct occ)) +
	       2 * al8(n * 4) + al8(n * sizeof(struct seg)) + al8(n * sizeof(struct cand));
}

static void carve(void *mem, size_t n, struct scratch *s)
{
	char *p = mem;
#define TAKE(field, bytes)                                                                                             \
	do {                                                                                                           \
		s->field = (void *)p;                                                                                  \
		p += al8(bytes);                                                                                       \
	} while (0)
	TAKE(pre, (n + 1) * 8);
	TAKE(gap, n * 8);
	TAKE(gv, n * 8);
	TAKE(back, n * sizeof(size_t));
	TAKE(un, n * sizeof(size_t));
	TAKE(o, n * sizeof(struct occ));
	TAKE(id, n * 4);
	TAKE(cnt, n * 4);
	TAKE(sg, n * sizeof(struct seg));
	TAKE(cv, n * sizeof(struct cand));
#undef TAKE
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

uint64_t gps_period_context(const uint64_t *newest, unsigned k)
{
	if (k <= 1)
		return newest[0];
	uint64_t h = 0;
	for (unsigned j = k; j-- > 0;)
		h = mix(h ^ (newest[j] + 0x9e3779b97f4a7c15ull));
	return GPS_SIG_MAKE(GPS_SIG_CLASS(newest[0]), h);
}

static int cmp_occ(const void *x, const void *y)
{
	const struct occ *a = x, *b = y;
	if (a->sig != b->sig)
		return a->sig < b->sig ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}
static int cmp_seg(const void *x, const void *y)
{
	const struct seg *a = x, *b = y;
	if (a->h != b->h)
		return a->h < b->h ? -1 : 1;
	return a->len < b->len ? -1 : a->len > b->len;
}
static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}
static int cmp_size(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;
	return a < b ? -1 : a > b;
}
static int cmp_cand_len(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->o0 < b->o0 ? -1 : a->o0 > b->o0;
}

/* the phase's order of preference by class */
static int class_rank(uint64_t sig)
{
	enum gps_sig_class c = GPS_SIG_CLASS(sig);
	return c == GPS_SIG_HTOD ? 2 : c == GPS_SIG_KERNEL || c == GPS_SIG_NONE ? 0 : 1;
}

static int phase_better(const struct occ *o, const struct cand *c, const struct cand *b)
{
	int rc = class_rank(c->sig), rb = class_rank(b->sig);
	if (rc != rb)
		return rc > rb;
	if (rc == 2 && c->back != b->back)
		return c->back > b->back;
	if (c->gap != b->gap)
		return c->gap > b->gap;
	return o[c->o0].pos < o[b->o0].pos;
}

/* How far segment [a, b) is from [ra, ra + len): the multisets' symmetric
 * difference, or any value > thr once it is more. */
static size_t seg_distance(struct scratch *s, size_t ra, size_t len, size_t a, size_t b, size_t thr)
{
	size_t l = b - a;
	if (l > len + thr || len > l + thr)
		return thr + 1;
	for (size_t i = ra; i < ra + len; i++)
		s->cnt[s->id[i]]++;
	size_t dist = len;
	for (size_t i = a; i < b; i++) {
		if (s->cnt[s->id[i]]-- > 0)
			dist--;
		else
			dist++;
	}
	for (size_t i = ra; i < ra + len; i++)
		s->cnt[s->id[i]] = 0;
	for (size_t i = a; i < b; i++)
		s->cnt[s->id[i]] = 0;
	return dist;
}

/* Whether c marks a sub-loop of the step (a layer): after the leading
 * unlike segments (warm-up), the unlike ones recur every k >= 2 segments in
 * >= 60 % of their spacings (at least 3 of them).  Like: at most max(2,
 * 10 %) events apart (an extra op every 10 steps is still like). */
static int is_subloop(struct scratch *s, const struct cand *c)
{
	const struct occ *o = s->o;
	size_t thr = c->len / 10 > 2 ? c->len / 10 : 2, ref = SIZE_MAX;
	for (size_t k = 0; k + 1 < c->c && ref == SIZE_MAX; k++) {
		size_t a = o[c->o0 + k].pos, b = o[c->o0 + k + 1].pos;
		if (b - a == c->len && s->pre[b] - s->pre[a] == c->hash)
			ref = a;
	}
	if (ref == SIZE_MAX)
		return 0;
	size_t nun = 0;
	int lead = 1;
	for (size_t k = 0; k + 1 < c->c; k++) {
		size_t a = o[c->o0 + k].pos, b = o[c->o0 + k + 1].pos;
		int like = (b - a == c->len && s->pre[b] - s->pre[a] == c->hash) ||
			   seg_distance(s, ref, c->len, a, b, thr) <= thr;
		if (like)
			lead = 0;
		else if (!lead)
			s->un[nun++] = k;
	}
	if (nun < 3)
		return 0;
	size_t ns = nun - 1, best = 0, bestk = 0;
	for (size_t i = 0; i < ns; i++)
		s->un[i] = s->un[i + 1] - s->un[i];
	qsort(s->un, ns, sizeof *s->un, cmp_size);
	for (size_t i = 0; i < ns;) {
		size_t j = i;
		while (j < ns && s->un[j] == s->un[i])
			j++;
		if (j - i > best) {
			best = j - i;
			bestk = s->un[i];
		}
		i = j;
	}
	return bestk >= 2 && best * 10 >= ns * 6;
}

int gps_period_find(const struct gps_period_ev *ev, size_t n, unsigned min_alike, void *mem,
		    struct gps_period_result *out)
{
	if (n < 6 || !mem)
		return 0;
	struct scratch s;
	carve(mem, n, &s);
	s.pre[0] = 0;
	size_t last_htod = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		s.pre[i + 1] = s.pre[i] + mix(ev[i].sig + 0x9e3779b97f4a7c15ull);
		s.gap[i] = i && ev[i].t > ev[i - 1].t ? ev[i].t - ev[i - 1].t : 0;
		s.back[i] = last_htod == SIZE_MAX ? i + 1 : i - last_htod;
		if (GPS_SIG_CLASS(ev[i].sig) == GPS_SIG_HTOD)
			last_htod = i;
		s.o[i].sig = ev[i].sig;
		s.o[i].pos = i;
	}
	qsort(s.o, n, sizeof *s.o, cmp_occ);
	size_t ncv = 0;
	uint32_t nid = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && s.o[j].sig == s.o[i].sig)
			j++;
		for (size_t k = i; k < j; k++)
			s.id[s.o[k].pos] = nid;
		nid++;
		size_t c = j - i, first = s.o[i].pos, last = s.o[j - 1].pos;
		/* (unlike the offline method, no spread over half the window: the
		 * window is the run so far, and the steady state may have begun in
		 * its second half, after warm-up; min_alike and "still occurring"
		 * keep out what occurred at start-up only) */
		if (c >= 3) {
			size_t nseg = c - 1;
			for (size_t k = 0; k < nseg; k++) {
				size_t a = s.o[i + k].pos, b = s.o[i + k + 1].pos;
				s.sg[k].h = s.pre[b] - s.pre[a];
				s.sg[k].len = b - a;
			}
			qsort(s.sg, nseg, sizeof *s.sg, cmp_seg);
			size_t m = 0, len = 0;
			uint64_t h = 0;
			for (size_t k = 0; k < nseg;) {
				size_t q = k;
				while (q < nseg && s.sg[q].h == s.sg[k].h && s.sg[q].len == s.sg[k].len)
					q++;
				if (q - k > m || (q - k == m && s.sg[k].len < len)) {
					m = q - k;
					len = s.sg[k].len;
					h = s.sg[k].h;
				}
				k = q;
			}
			size_t span = last - first;
			/* still occurring: the events after its last occurrence are
			 * at most two periods (the step in progress) */
			/* a period of one event is no step (one kernel in a loop, a
			 * launch whose function cannot be read), but a CUDA graph
			 * launched once a step with nothing else between (JAX: XLA
			 * launches the step as one graph) */
			if (m >= 2 && (len >= 2 || GPS_SIG_CLASS(s.o[i].sig) == GPS_SIG_GRAPH) && m >= min_alike &&
			    m * 10 >= nseg * 6 && m * len * 10 >= span * 8 &&
			    n - last <= 2 * len + 2) {
				struct cand cd;
				for (size_t k = 0; k < c; k++)
					s.gv[k] = s.gap[s.o[i + k].pos];
				qsort(s.gv, c, sizeof *s.gv, cmp_u64);
				cd.gap = s.gv[c / 2];
				for (size_t k = 0; k < c; k++)
					s.gv[k] = s.back[s.o[i + k].pos];
				qsort(s.gv, c, sizeof *s.gv, cmp_u64);
				cd.back = (size_t)s.gv[c / 2];
				cd.sig = s.o[i].sig;
				cd.o0 = i;
				cd.c = c;
				cd.len = len;
				cd.m = m;
				cd.hash = h;
				s.cv[ncv++] = cd;
			}
		}
		i = j;
	}
	if (ncv > 1)
		qsort(s.cv, ncv, sizeof *s.cv, cmp_cand_len);
	memset(s.cnt, 0, nid * sizeof *s.cnt);
	const struct cand *best = NULL;
	size_t period = 0;
	for (size_t k = 0; k < ncv; k++) {
		const struct cand *c = &s.cv[k];
		if (period && c->len != period)
			break;
		if (is_subloop(&s, c))
			continue;
		period = c->len;
		if (!best || phase_better(s.o, c, best))
			best = c;
	}
	if (!best)
		return 0;
	out->sig = best->sig;
	out->len = (uint32_t)best->len;
	out->alike = (uint32_t)best->m;
	out->steps = (uint32_t)(best->c - 1);
	out->count = (uint32_t)best->c;
	return 1;
}
