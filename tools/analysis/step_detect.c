/* step_detect.c — see step_detect.h.
 *
 * The trace method.  Per process, the GPU operations in start order form a
 * sequence of signatures.  For every signature X seen at least 3 times, the
 * sequence is cut before each X into segments; a segment's content is
 * compared as a multiset of signatures (order-free: kernels of two threads or
 * streams may interleave differently from one step to the next).  X is
 * accepted as a step boundary when
 *   - its most common segment content occurs in at least 60 % of its
 *     segments (a step repeats; an X that alternates between two kinds of
 *     segment, e.g. a fill kernel at the start of forward and of backward,
 *     reaches only 50 %), and
 *   - those segments cover at least 50 % of the operations between the
 *     first and the last X (a sub-loop such as one transformer layer repeats
 *     too, but covers only its share of the step).
 * Of the accepted X, those whose segments are shortest win (the step, not a
 * multiple of it such as a kernel run every 10 steps); among these, which
 * all cut the same steps at different places, the one after the longest
 * median GPU idle gap wins: the GPU idles between steps (data loading, the
 * Python loop), so the step starts at the first operation after that gap.
 * The sample is the first sample_max operations of the process. */
#include "analysis/step_detect.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis/opjoin.h"
#include "common/tool.h"
#include "common/util.h"

#define DEFAULT_SAMPLE (1u << 20)

struct sample { uint64_t s, e, sig; };

struct dproc {
	uint32_t pid;
	struct sample *v; size_t n, cap;
	uint64_t dropped;       /* past sample_max */
	struct step_plan plan;
};

struct step_detect {
	gp_reader *r;
	int want;
	char *range_name;
	size_t sample_max;
	u64map pid2p;
	struct dproc *p; size_t np, cp;
};

uint64_t step_sig(int op_kind, uint32_t name_id)
{
	return op_kind == OP_KERNEL ? name_id : ((uint64_t)(op_kind + 1) << 32);
}

int64_t step_name_split(const char *name, char *buf, size_t n)
{
	size_t len = strlen(name), d = len;
	while (d > 0 && isdigit((unsigned char)name[d - 1])) d--;
	int64_t number = -1;
	size_t cut = len;
	if (d < len && len - d <= 18) {
		number = strtoll(name + d, NULL, 10);
		cut = d;
		while (cut > 0 && strchr(" #_:-.", name[cut - 1])) cut--;
		if (cut == 0) { cut = len; number = -1; } /* a bare number is its own name */
	}
	if (cut >= n) cut = n - 1;
	memcpy(buf, name, cut);
	buf[cut] = 0;
	return number;
}

/* Whether a group name looks like a step (after any "domain:"). */
static int steplike(const char *group)
{
	static const char *const names[] = {
		"step", "steps", "iteration", "iter", "train_step", "training_step", "train step", "training step",
		"train_iter", "train_iteration", "train iteration", "profilerstep",
	};
	const char *colon = strrchr(group, ':');
	const char *g = colon ? colon + 1 : group;
	while (*g == ' ') g++;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(g, names[i])) return 1;
	return 0;
}

struct step_detect *step_detect_new(gp_reader *r, const struct step_detect_opts *opts)
{
	struct step_detect *d = xcalloc(1, sizeof(*d));
	d->r = r;
	d->want = opts ? opts->want : STEP_WANT_AUTO;
	d->range_name = opts && opts->range_name ? xstrdup(opts->range_name) : NULL;
	d->sample_max = opts && opts->sample_max ? opts->sample_max : DEFAULT_SAMPLE;
	u64map_init(&d->pid2p);
	return d;
}

void step_detect_free(struct step_detect *d)
{
	if (!d) return;
	for (size_t i = 0; i < d->np; i++) {
		free(d->p[i].v);
		free(d->p[i].plan.group);
		free(d->p[i].plan.steps);
	}
	free(d->p);
	free(d->range_name);
	u64map_free(&d->pid2p);
	free(d);
}

static struct dproc *proc_get(struct step_detect *d, uint32_t pid)
{
	uint64_t *s = u64map_get(&d->pid2p, pid, 0);
	if (s) return &d->p[*s];
	struct dproc p;
	memset(&p, 0, sizeof(p));
	p.pid = pid;
	*u64map_get(&d->pid2p, pid, 1) = d->np;
	VEC_PUSH(d->p, d->np, d->cp, p);
	return &d->p[d->np - 1];
}

void step_detect_gpu(struct step_detect *d, uint32_t pid, const gp_record *rec)
{
	struct sample sm;
	switch (rec->type) {
	case GP_REC_KERNEL:
		sm.s = rec->u.kernel.start_ns; sm.e = rec->u.kernel.end_ns;
		sm.sig = step_sig(OP_KERNEL, rec->u.kernel.name_id);
		break;
	case GP_REC_MEMCPY:
		sm.s = rec->u.memcpy.start_ns; sm.e = rec->u.memcpy.end_ns;
		sm.sig = step_sig(OP_MEMCPY, 0);
		break;
	case GP_REC_MEMSET:
		sm.s = rec->u.memset.start_ns; sm.e = rec->u.memset.end_ns;
		sm.sig = step_sig(OP_MEMSET, 0);
		break;
	default:
		return;
	}
	if (sm.e < sm.s) sm.e = sm.s;
	struct dproc *p = proc_get(d, pid);
	if (p->n >= d->sample_max) { p->dropped++; return; }
	VEC_PUSH(p->v, p->n, p->cap, sm);
}

/* ------------------------------------------------------------ NVTX */
struct group {
	char *name;
	uint32_t *ids; size_t n, cap;
	uint64_t first;
};

static const struct attribution *sort_attr;
static int cmp_range_start(const void *x, const void *y)
{
	const struct attr_range *a = attribution_range(sort_attr, *(const uint32_t *)x);
	const struct attr_range *b = attribution_range(sort_attr, *(const uint32_t *)y);
	if (a->s != b->s) return a->s < b->s ? -1 : 1;
	if (a->e != b->e) return a->e > b->e ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

/* Whether most of g's ranges lie inside some range of h (both sorted). */
static int inside(const struct attribution *a, const struct group *g, const struct group *h)
{
	size_t in = 0;
	for (size_t i = 0; i < g->n; i++) {
		const struct attr_range *x = attribution_range(a, g->ids[i]);
		size_t lo = 0, hi = h->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (attribution_range(a, h->ids[mid])->s <= x->s) lo = mid + 1;
			else hi = mid;
		}
		for (size_t k = lo; k-- > 0;) {
			const struct attr_range *y = attribution_range(a, h->ids[k]);
			if (h->ids[k] == g->ids[i]) continue;
			if (y->e >= x->e && (y->s < x->s || y->e > x->e || h->ids[k] < g->ids[i])) { in++; break; }
			if (lo - k > 64) break; /* ranges of one group rarely nest deeper */
		}
	}
	return in * 2 > g->n;
}

static int name_wanted(const char *want, const char *name, const char *group)
{
	return !strcmp(name, want) || !strcasecmp(group, want);
}

/* Picks the step group of process p among its NVTX ranges. */
static void plan_nvtx(struct step_detect *d, const struct attribution *a, struct dproc *p, const uint32_t *ids,
		      size_t nids)
{
	strmap idx;
	strmap_init(&idx);
	struct group *g = NULL; size_t ng = 0, cg = 0;
	char grp[256];
	for (size_t i = 0; i < nids; i++) {
		const struct attr_range *x = attribution_range(a, ids[i]);
		const char *name = attribution_name(a, x->name);
		step_name_split(name, grp, sizeof(grp));
		if (d->range_name ? !name_wanted(d->range_name, name, grp) : !steplike(grp)) continue;
		if (x->e <= x->s) continue;
		int is_new;
		size_t *slot = strmap_get(&idx, grp, &is_new);
		if (is_new) {
			struct group ng0;
			memset(&ng0, 0, sizeof(ng0));
			ng0.name = xstrdup(grp);
			ng0.first = x->s;
			*slot = ng;
			VEC_PUSH(g, ng, cg, ng0);
		}
		struct group *G = &g[*slot];
		VEC_PUSH(G->ids, G->n, G->cap, ids[i]);
		if (x->s < G->first) G->first = x->s;
	}
	sort_attr = a;
	for (size_t i = 0; i < ng; i++) qsort(g[i].ids, g[i].n, sizeof(uint32_t), cmp_range_start);
	/* the outermost repeating group; ties: more ranges, then the earliest */
	long best = -1;
	for (size_t i = 0; i < ng; i++) {
		if (g[i].n < 2 && !d->range_name) continue;
		int in = 0;
		for (size_t k = 0; k < ng && !in; k++)
			if (k != i && g[k].n >= 2 && inside(a, &g[i], &g[k])) in = 1;
		if (in) continue;
		if (best < 0 || g[i].n > g[best].n || (g[i].n == g[best].n && g[i].first < g[best].first))
			best = (long)i;
	}
	if (best >= 0) {
		struct group *G = &g[best];
		struct step_plan *pl = &p->plan;
		pl->method = STEP_NVTX;
		pl->group = xstrdup(G->name);
		pl->steps = xcalloc(G->n, sizeof(*pl->steps));
		uint64_t last_e = 0;
		for (size_t i = 0; i < G->n; i++) {
			const struct attr_range *x = attribution_range(a, G->ids[i]);
			if (pl->nsteps && x->s < last_e) { pl->overlapping++; continue; }
			struct step_def *sd = &pl->steps[pl->nsteps++];
			sd->s = x->s; sd->e = x->e; sd->range_id = G->ids[i];
			sd->number = step_name_split(attribution_name(a, x->name), grp, sizeof(grp));
			last_e = x->e;
		}
		const struct attr_range *x0 = attribution_range(a, G->ids[0]);
		int numbered = step_name_split(attribution_name(a, x0->name), grp, sizeof(grp)) >= 0;
		snprintf(pl->what, sizeof(pl->what), "NVTX %s ranges '%.160s%s' (%zu%s)",
			 x0->kind == GP_NVTX_STARTEND ? "start/end" : "push/pop", G->name, numbered ? " <N>" : "",
			 pl->nsteps, d->range_name ? ", named with --step-range" : ", outermost repeating step-like range");
	}
	for (size_t i = 0; i < ng; i++) { free(g[i].name); free(g[i].ids); }
	free(g);
	strmap_free(&idx);
}

/* ------------------------------------------------------------ trace */
static int cmp_sample(const void *x, const void *y)
{
	const struct sample *a = x, *b = y;
	if (a->s != b->s) return a->s < b->s ? -1 : 1;
	if (a->e != b->e) return a->e < b->e ? -1 : 1;
	return a->sig < b->sig ? -1 : a->sig > b->sig;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33; x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

struct occ { uint64_t sig; size_t pos; };
static int cmp_occ(const void *x, const void *y)
{
	const struct occ *a = x, *b = y;
	if (a->sig != b->sig) return a->sig < b->sig ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

struct seg { uint64_t h; size_t len; };
static int cmp_seg(const void *x, const void *y)
{
	const struct seg *a = x, *b = y;
	if (a->h != b->h) return a->h < b->h ? -1 : 1;
	return a->len < b->len ? -1 : a->len > b->len;
}

static void plan_trace(struct step_detect *d, struct dproc *p)
{
	struct step_plan *pl = &p->plan;
	size_t n = p->n;
	if (n < 6) {
		snprintf(pl->what, sizeof(pl->what), "no steps: %zu GPU operations, too few to find a period", n);
		return;
	}
	qsort(p->v, n, sizeof(*p->v), cmp_sample);
	/* order-free content hash: prefix sums of a hash of each signature */
	uint64_t *pre = xmalloc((n + 1) * sizeof(*pre));
	uint64_t *gap = xmalloc(n * sizeof(*gap));
	struct occ *o = xmalloc(n * sizeof(*o));
	pre[0] = 0;
	uint64_t maxe = 0;
	for (size_t i = 0; i < n; i++) {
		pre[i + 1] = pre[i] + mix(p->v[i].sig + 0x9e3779b97f4a7c15ull);
		gap[i] = i && p->v[i].s > maxe ? p->v[i].s - maxe : 0;
		if (p->v[i].e > maxe) maxe = p->v[i].e;
		o[i].sig = p->v[i].sig; o[i].pos = i;
	}
	qsort(o, n, sizeof(*o), cmp_occ);
	struct seg *sg = NULL; size_t csg = 0;
	uint64_t *gv = NULL; size_t cgv = 0;
	uint64_t best_sig = 0, best_gap = 0;
	size_t best_len = 0, best_m = 0, best_first = 0, best_segs = 0;
	int have = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && o[j].sig == o[i].sig) j++;
		size_t c = j - i;
		if (c >= 3) {
			size_t nseg = c - 1;
			vec_reserve((void **)&sg, &csg, nseg, sizeof(*sg));
			for (size_t k = 0; k < nseg; k++) {
				size_t a = o[i + k].pos, b = o[i + k + 1].pos;
				sg[k].h = pre[b] - pre[a];
				sg[k].len = b - a;
			}
			qsort(sg, nseg, sizeof(*sg), cmp_seg);
			size_t m = 0, len = 0;
			for (size_t k = 0; k < nseg;) {
				size_t q = k;
				while (q < nseg && sg[q].h == sg[k].h && sg[q].len == sg[k].len) q++;
				if (q - k > m || (q - k == m && sg[k].len < len)) { m = q - k; len = sg[k].len; }
				k = q;
			}
			size_t span = o[j - 1].pos - o[i].pos;
			if (m >= 2 && m * 10 >= nseg * 6 && m * len * 2 >= span) {
				vec_reserve((void **)&gv, &cgv, c, sizeof(*gv));
				for (size_t k = 0; k < c; k++) gv[k] = gap[o[i + k].pos];
				qsort(gv, c, sizeof(*gv), cmp_u64);
				uint64_t med = gv[c / 2];
				if (!have || len < best_len ||
				    (len == best_len && (med > best_gap || (med == best_gap && o[i].pos < best_first)))) {
					have = 1;
					best_sig = o[i].sig; best_len = len; best_gap = med;
					best_m = m; best_first = o[i].pos; best_segs = nseg;
				}
			}
		}
		i = j;
	}
	free(pre); free(gap); free(o); free(sg); free(gv);
	if (!have) {
		snprintf(pl->what, sizeof(pl->what),
			 "no steps: no GPU operation starts a repeating sequence (first %zu operations looked at)", n);
		return;
	}
	pl->method = STEP_TRACE;
	pl->marker = best_sig;
	pl->period_ops = best_len;
	char *dn = NULL;
	const char *what = best_sig >> 32 == OP_MEMCPY + 1 ? "a memcpy" : best_sig >> 32 == OP_MEMSET + 1 ? "a memset" : NULL;
	char *sn = NULL;
	if (!what) {
		dn = demangle(tool_str(d->r, (uint32_t)best_sig));
		sn = short_name(dn);
	}
	snprintf(pl->what, sizeof(pl->what),
		 "trace: each step starts at the launch of %s%.120s%s (period %zu GPU operations, %zu of %zu "
		 "repeats alike)", what ? what : "kernel '", what ? "" : sn, what ? "" : "'", best_len, best_m, best_segs);
	free(dn); free(sn);
}

int step_detect_finish(struct step_detect *d, const struct attribution *a, const char **err)
{
	/* every process with NVTX ranges is a candidate too */
	size_t nr = attribution_nranges(a);
	for (size_t i = 0; i < nr; i++) proc_get(d, attribution_range(a, (uint32_t)i)->pid);
	/* range ids per process */
	uint32_t *ids = xmalloc((nr ? nr : 1) * sizeof(*ids));
	int found_named = 0;
	for (size_t pi = 0; pi < d->np; pi++) {
		struct dproc *p = &d->p[pi];
		p->plan.pid = p->pid;
		size_t k = 0;
		for (size_t i = 0; i < nr; i++)
			if (attribution_range(a, (uint32_t)i)->pid == p->pid) ids[k++] = (uint32_t)i;
		if (d->want != STEP_WANT_TRACE) plan_nvtx(d, a, p, ids, k);
		if (p->plan.method == STEP_NVTX) { found_named = 1; continue; }
		if (d->want == STEP_WANT_NVTX || d->range_name) {
			snprintf(p->plan.what, sizeof(p->plan.what), "no steps: no NVTX range %s%s%s",
				 d->range_name ? "named '" : "that looks like a step",
				 d->range_name ? d->range_name : "", d->range_name ? "'" : "");
			continue;
		}
		plan_trace(d, p);
	}
	free(ids);
	if (d->range_name && !found_named) {
		static char msg[512];
		snprintf(msg, sizeof(msg), "no NVTX range named '%.200s' (nor numbered '%.200s <N>') in the trace",
			 d->range_name, d->range_name);
		*err = msg;
		return -1;
	}
	return 0;
}

size_t step_detect_nplans(const struct step_detect *d) { return d->np; }
const struct step_plan *step_detect_plan(const struct step_detect *d, size_t i) { return &d->p[i].plan; }
