/* diff.c — see diff.h. */
#include "analysis/diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff_stats.h"
#include "analysis/step_detect.h"
#include "analysis/step_summary.h"
#include "common/util.h"

const char *const diff_table_names[DT_COUNT] = {
	"diff", "diff_steps", "diff_buckets", "diff_kernels", "diff_nvtx", "diff_api", "diff_copies",
};

static int counted(const struct step_row *w, int keep)
{
	return !w->partial && !w->unrecorded && (keep || !w->warmup);
}

static int numbered(const struct steps_proc *p)
{
	if (!p->plan || p->plan->method != STEP_NVTX) return 0;
	for (size_t i = 0; i < p->nrows; i++)
		if (p->rows[i].number < 0) return 0;
	return 1;
}

void diff_align(struct diff_pair *d, int keep)
{
	const struct steps_proc *pa = d->a.p, *pb = d->b.p;
	d->a.rows = xcalloc(pa->nrows ? pa->nrows : 1, sizeof(*d->a.rows));
	d->b.rows = xcalloc(pb->nrows ? pb->nrows : 1, sizeof(*d->b.rows));
	d->a.n = d->b.n = 0;
	size_t common = 0;
	u64map in_a, in_b;
	u64map_init(&in_a);
	u64map_init(&in_b);
	int by_number = numbered(pa) && numbered(pb);
	if (by_number) {
		for (size_t i = 0; i < pa->nrows; i++)
			if (counted(&pa->rows[i], keep)) *u64map_get(&in_a, (uint64_t)pa->rows[i].number, MAP_INSERT) = 1;
		for (size_t i = 0; i < pb->nrows; i++)
			if (counted(&pb->rows[i], keep)) {
				*u64map_get(&in_b, (uint64_t)pb->rows[i].number, MAP_INSERT) = 1;
				common += u64map_get(&in_a, (uint64_t)pb->rows[i].number, MAP_FIND) != NULL;
			}
		by_number = common >= DIFF_ALIGN_MIN;
	}
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < pa->nrows; i++) {
		const struct step_row *w = &pa->rows[i];
		if (!counted(w, keep)) continue;
		if (by_number && !u64map_get(&in_b, (uint64_t)w->number, MAP_FIND)) continue;
		d->a.rows[d->a.n++] = w;
		if (w->number < lo) lo = w->number;
		if (w->number > hi) hi = w->number;
	}
	for (size_t i = 0; i < pb->nrows; i++) {
		const struct step_row *w = &pb->rows[i];
		if (!counted(w, keep)) continue;
		if (by_number && !u64map_get(&in_a, (uint64_t)w->number, MAP_FIND)) continue;
		d->b.rows[d->b.n++] = w;
	}
	if (by_number)
		snprintf(d->aligned, sizeof(d->aligned), "by step number: the %zu steps counted in both (%" PRId64
			 "..%" PRId64 ")", d->a.n, lo, hi);
	else
		snprintf(d->aligned, sizeof(d->aligned), "the counted steps of each run (%zu and %zu)", d->a.n, d->b.n);
	u64map_free(&in_a);
	u64map_free(&in_b);
}

void diff_pair_free(struct diff_pair *d)
{
	free(d->a.rows);
	free(d->b.rows);
	d->a.rows = d->b.rows = NULL;
}

/* ------------------------------------------------------------ tables */

static const struct col summary_cols[] = {
	{ "Rank", "rank", COL_ID, COL_EVERYWHERE }, { "PID A", "pid_a", COL_ID, COL_EVERYWHERE }, { "PID B", "pid_b", COL_ID, COL_EVERYWHERE },
	{ "What Changed", "headline", COL_STR, COL_EVERYWHERE },
};

static const struct col steps_cols[] = {
	{ "Rank", "rank", COL_ID, COL_EVERYWHERE }, { "Steps A", "steps_a", COL_INT, COL_EVERYWHERE }, { "Steps B", "steps_b", COL_INT, COL_EVERYWHERE },
	{ "Med A (ns)", "median_a_ns", COL_INT, COL_EVERYWHERE }, { "Med B (ns)", "median_b_ns", COL_INT, COL_EVERYWHERE },
	{ "Delta Med (ns)", "delta_median_ns", COL_INT, COL_EVERYWHERE }, { "Delta Med (%)", "delta_median_pct", COL_F1, COL_EVERYWHERE },
	{ "Mean A (ns)", "mean_a_ns", COL_INT, COL_EVERYWHERE }, { "Mean B (ns)", "mean_b_ns", COL_INT, COL_EVERYWHERE },
	{ "Spread A (%)", "spread_a_pct", COL_F1, COL_EVERYWHERE }, { "Spread B (%)", "spread_b_pct", COL_F1, COL_EVERYWHERE },
	{ "U", "mann_whitney_u", COL_F1, COL_EVERYWHERE }, { "p", "p_value", COL_G3, COL_EVERYWHERE }, { "Test", "test", COL_STR, COL_EVERYWHERE },
	{ "CI Low (ns)", "ci95_low_ns", COL_INT, COL_EVERYWHERE }, { "CI High (ns)", "ci95_high_ns", COL_INT, COL_EVERYWHERE },
	{ "Verdict", "verdict", COL_STR, COL_EVERYWHERE }, { "Aligned", "aligned", COL_STR, COL_EVERYWHERE },
};

static const struct col bucket_cols[] = {
	{ "Rank", "rank", COL_ID, COL_EVERYWHERE }, { "Bucket", "bucket", COL_STR, COL_EVERYWHERE }, { "A (ns/step)", "a_ns_per_step", COL_INT, COL_EVERYWHERE },
	{ "B (ns/step)", "b_ns_per_step", COL_INT, COL_EVERYWHERE }, { "Delta (ns/step)", "delta_ns_per_step", COL_INT, COL_EVERYWHERE },
	{ "Of Delta Step (%)", "of_delta_step_pct", COL_F1, COL_EVERYWHERE },
};

static const struct col kernel_cols[] = {
	{ "Rank", "rank", COL_ID, COL_EVERYWHERE }, { "A Count/Step", "a_count_per_step", COL_F3, COL_EVERYWHERE },
	{ "B Count/Step", "b_count_per_step", COL_F3, COL_EVERYWHERE }, { "A (ns/step)", "a_ns_per_step", COL_INT, COL_EVERYWHERE },
	{ "B (ns/step)", "b_ns_per_step", COL_INT, COL_EVERYWHERE }, { "Delta (ns/step)", "delta_ns_per_step", COL_INT, COL_EVERYWHERE },
	{ "Of Delta Step (%)", "of_delta_step_pct", COL_F1, COL_EVERYWHERE }, { "In", "in", COL_STR, COL_EVERYWHERE }, { "Kernel", "kernel", COL_STR, COL_EVERYWHERE },
};

static const struct col nvtx_cols[] = {
	{ "Rank", "rank", COL_ID, COL_EVERYWHERE }, { "A Count/Step", "a_count_per_step", COL_F3, COL_EVERYWHERE },
	{ "B Count/Step", "b_count_per_step", COL_F3, COL_EVERYWHERE }, { "A (ns/step)", "a_ns_per_step", COL_INT, COL_EVERYWHERE },
	{ "B (ns/step)", "b_ns_per_step", COL_INT, COL_EVERYWHERE }, { "Delta (ns/step)", "delta_ns_per_step", COL_INT, COL_EVERYWHERE },
	{ "A Kernel (ns/step)", "a_kernel_ns_per_step", COL_INT, COL_EVERYWHERE }, { "B Kernel (ns/step)", "b_kernel_ns_per_step", COL_INT, COL_EVERYWHERE },
	{ "Delta Kernel (ns/step)", "delta_kernel_ns_per_step", COL_INT, COL_EVERYWHERE }, { "In", "in", COL_STR, COL_EVERYWHERE },
	{ "Range", "range", COL_STR, COL_EVERYWHERE },
};

static const struct col api_cols[] = {
	{ "Rank", "rank", COL_ID, COL_EVERYWHERE }, { "A Calls/Step", "a_calls_per_step", COL_F3, COL_EVERYWHERE },
	{ "B Calls/Step", "b_calls_per_step", COL_F3, COL_EVERYWHERE }, { "A (ns/step)", "a_ns_per_step", COL_INT, COL_EVERYWHERE },
	{ "B (ns/step)", "b_ns_per_step", COL_INT, COL_EVERYWHERE }, { "Delta (ns/step)", "delta_ns_per_step", COL_INT, COL_EVERYWHERE },
	{ "Of Delta Step (%)", "of_delta_step_pct", COL_F1, COL_EVERYWHERE }, { "Kind", "kind", COL_STR, COL_EVERYWHERE }, { "In", "in", COL_STR, COL_EVERYWHERE },
	{ "API", "api", COL_STR, COL_EVERYWHERE },
};

static const struct col copy_cols[] = {
	{ "Rank", "rank", COL_ID, COL_EVERYWHERE }, { "Copy", "copy", COL_STR, COL_EVERYWHERE }, { "A Count/Step", "a_count_per_step", COL_F3, COL_EVERYWHERE },
	{ "B Count/Step", "b_count_per_step", COL_F3, COL_EVERYWHERE }, { "A Bytes/Step", "a_bytes_per_step", COL_INT, COL_EVERYWHERE },
	{ "B Bytes/Step", "b_bytes_per_step", COL_INT, COL_EVERYWHERE }, { "A (ns/step)", "a_ns_per_step", COL_INT, COL_EVERYWHERE },
	{ "B (ns/step)", "b_ns_per_step", COL_INT, COL_EVERYWHERE }, { "Delta (ns/step)", "delta_ns_per_step", COL_INT, COL_EVERYWHERE },
	{ "In", "in", COL_STR, COL_EVERYWHERE },
};

/* "+1.234 ms" / "-12.000 us" */
static void signed_dur(char *buf, size_t n, double ns)
{
	if (n < 2) return;
	buf[0] = ns < 0 ? '-' : '+';
	fmt_dur(buf + 1, n - 1, (uint64_t)llround(fabs(ns)));
}

static double per(uint64_t v, size_t n) { return n ? (double)v / (double)n : 0; }

/* one name of a profile list, A against B */
struct row { const char *name; const struct sp_entry *a, *b; double delta; };

static int cmp_row(const void *x, const void *y)
{
	const struct row *p = x, *q = y;
	double dp = fabs(p->delta), dq = fabs(q->delta);
	if (dp != dq) return dp > dq ? -1 : 1;
	return strcmp(p->name, q->name);
}

static const char *in_which(const struct row *r)
{
	return r->a && r->b ? "both" : r->a ? "only A" : "only B";
}

/* the names of list k in A or B, ranked by |delta ns per step| (for ranges:
 * the larger of the wall time's and the kernel time's) */
static struct row *merged(const struct diff_pair *d, int k, size_t *n)
{
	const struct sp_list *la = d->a.prof ? &d->a.prof->list[k] : NULL;
	const struct sp_list *lb = d->b.prof ? &d->b.prof->list[k] : NULL;
	size_t na = la ? la->n : 0, nb = lb ? lb->n : 0, m = 0;
	struct row *v = xcalloc(na + nb + 1, sizeof(*v));
	strmap idx;
	strmap_init(&idx);
	for (size_t i = 0; i < na; i++) {
		int is_new;
		*strmap_get(&idx, la->v[i].name, &is_new) = m;
		v[m++] = (struct row){ la->v[i].name, &la->v[i], NULL, 0 };
	}
	for (size_t i = 0; i < nb; i++) {
		int is_new;
		size_t *slot = strmap_get(&idx, lb->v[i].name, &is_new);
		if (is_new) {
			*slot = m;
			v[m++] = (struct row){ lb->v[i].name, NULL, &lb->v[i], 0 };
		} else {
			v[*slot].b = &lb->v[i];
		}
	}
	strmap_free(&idx);
	for (size_t i = 0; i < m; i++) {
		v[i].delta = (v[i].b ? per(v[i].b->ns, d->b.n) : 0) - (v[i].a ? per(v[i].a->ns, d->a.n) : 0);
		if (k == SP_RANGE) { /* the larger move of the wall time and the kernel time */
			double dk = (v[i].b ? per(v[i].b->kernel_ns, d->b.n) : 0) -
				    (v[i].a ? per(v[i].a->kernel_ns, d->a.n) : 0);
			if (fabs(dk) > fabs(v[i].delta)) v[i].delta = dk;
		}
	}
	qsort(v, m, sizeof(*v), cmp_row);
	*n = m;
	return v;
}

static void of_delta(struct cell *c, double delta, double dstep)
{
	if (dstep != 0) cell_num(c, delta == 0 ? 0 : 100.0 * delta / dstep);
}

static void rank_cell(struct cell *c, int32_t rank)
{
	if (rank >= 0) cell_num(c, rank);
}

struct pair_stats {
	double med_a, med_b, mean_a, mean_b, spread_a, spread_b, lo, hi;
	struct mwu u;
	int significant;
};

static void spread_med_mean(const struct step_row **rows, size_t n, double *med, double *mean, double *spread)
{
	double *v = xmalloc((n ? n : 1) * sizeof(double)), sum = 0;
	for (size_t i = 0; i < n; i++) {
		v[i] = (double)(rows[i]->e - rows[i]->s);
		sum += v[i];
	}
	*mean = n ? sum / (double)n : 0;
	*med = step_quantile(v, n, 0.5);
	double p10 = step_quantile(v, n, 0.1), p90 = step_quantile(v, n, 0.9);
	*spread = *med > 0 ? 100.0 * (p90 - p10) / *med : 0;
	free(v);
}

static void pair_stats(const struct diff_pair *d, double alpha, struct pair_stats *s)
{
	memset(s, 0, sizeof(*s));
	spread_med_mean(d->a.rows, d->a.n, &s->med_a, &s->mean_a, &s->spread_a);
	spread_med_mean(d->b.rows, d->b.n, &s->med_b, &s->mean_b, &s->spread_b);
	if (!d->a.n || !d->b.n) { s->u.p = NAN; return; }
	double *a = xmalloc(d->a.n * sizeof(double)), *b = xmalloc(d->b.n * sizeof(double));
	for (size_t i = 0; i < d->a.n; i++) a[i] = (double)(d->a.rows[i]->e - d->a.rows[i]->s);
	for (size_t i = 0; i < d->b.n; i++) b[i] = (double)(d->b.rows[i]->e - d->b.rows[i]->s);
	mann_whitney(a, d->a.n, b, d->b.n, &s->u);
	bootstrap_median_diff(a, d->a.n, b, d->b.n, &s->lo, &s->hi);
	s->significant = s->u.p < alpha;
	free(a);
	free(b);
}

static void headline_item(char *buf, size_t n, int *items, const char *what, const char *name, double delta,
			  const char *in)
{
	if (*items >= 4 || fabs(delta) < 0.5) return;
	char dd[48];
	signed_dur(dd, sizeof(dd), delta);
	size_t l = strlen(buf);
	snprintf(buf + l, n - l, "%s%s %s %s/step%s%s%s", *items ? "; " : " Largest changes: ", what, name, dd,
		 strcmp(in, "both") ? " (" : "", strcmp(in, "both") ? in : "", strcmp(in, "both") ? ")" : "");
	(*items)++;
}

static void fill_pair(struct diff_tables *out, const struct diff_pair *d, const struct diff_opts *o)
{
	struct report *R = out->rep;
	struct pair_stats s;
	pair_stats(d, o->alpha, &s);
	int32_t rank = d->a.rank >= 0 ? d->a.rank : d->b.rank;
	double dmean = s.mean_b - s.mean_a, dmed = s.med_b - s.med_a;
	const char *verdict = !d->a.n || !d->b.n ? "no steps to compare" :
			      !s.significant ? "no significant difference" : dmed < 0 ? "B faster" : "B slower";
	struct cell *c = report_row(&R[DT_STEPS]);
	rank_cell(&c[0], rank);
	cell_num(&c[1], (double)d->a.n);
	cell_num(&c[2], (double)d->b.n);
	if (d->a.n && d->b.n) {
		cell_num(&c[3], s.med_a);
		cell_num(&c[4], s.med_b);
		cell_num(&c[5], dmed);
		if (s.med_a > 0) cell_num(&c[6], 100.0 * dmed / s.med_a);
		cell_num(&c[7], s.mean_a);
		cell_num(&c[8], s.mean_b);
		cell_num(&c[9], s.spread_a);
		cell_num(&c[10], s.spread_b);
		cell_num(&c[11], s.u.u_a);
		cell_num(&c[12], s.u.p);
		cell_str(&c[13], s.u.exact ? "exact" : "normal");
		cell_num(&c[14], s.lo);
		cell_num(&c[15], s.hi);
	}
	cell_str(&c[16], verdict);
	cell_str(&c[17], d->aligned);

	/* the headline: the step change, then what moved most */
	char head[2048], who[32] = "", ma[48], mb[48], dd[48];
	if (rank >= 0) snprintf(who, sizeof(who), "rank %d: ", rank);
	if (d->a.n && d->b.n) {
		fmt_dur(ma, sizeof(ma), (uint64_t)llround(s.med_a));
		fmt_dur(mb, sizeof(mb), (uint64_t)llround(s.med_b));
		signed_dur(dd, sizeof(dd), dmed);
		snprintf(head, sizeof(head), "%sstep time %s -> %s median (%s, %+.1f %%; p = %.2g, %zu vs %zu steps): %s.",
			 who, ma, mb, dd, s.med_a > 0 ? 100.0 * dmed / s.med_a : 0.0, s.u.p, d->a.n, d->b.n, verdict);
	} else {
		snprintf(head, sizeof(head), "%sno steps to compare (A: %zu, B: %zu aligned)", who, d->a.n, d->b.n);
	}

	/* buckets: means per aligned step; they add up to the mean step time */
	int items = 0;
	int order[SB_COUNT], nb = SB_COUNT;
	double bd[SB_COUNT];
	for (int k = 0; k < SB_COUNT; k++) {
		uint64_t ta = 0, tb = 0;
		for (size_t i = 0; i < d->a.n; i++) ta += d->a.rows[i]->bucket[k];
		for (size_t i = 0; i < d->b.n; i++) tb += d->b.rows[i]->bucket[k];
		double a = per(ta, d->a.n), b = per(tb, d->b.n);
		bd[k] = b - a;
		order[k] = k;
		c = report_row(&R[DT_BUCKETS]);
		rank_cell(&c[0], rank);
		cell_str(&c[1], step_bucket_names[k]);
		cell_num(&c[2], a);
		cell_num(&c[3], b);
		cell_num(&c[4], b - a);
		of_delta(&c[5], b - a, dmean);
	}
	c = report_row(&R[DT_BUCKETS]);
	rank_cell(&c[0], rank);
	cell_str(&c[1], "step");
	cell_num(&c[2], s.mean_a);
	cell_num(&c[3], s.mean_b);
	cell_num(&c[4], dmean);
	if (dmean != 0) cell_num(&c[5], 100.0);
	/* the headline names the biggest bucket move, if the step time moved */
	for (int i = 1; i < nb; i++)
		for (int j = i; j > 0 && fabs(bd[order[j]]) > fabs(bd[order[j - 1]]); j--) {
			int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
		}
	if (s.significant) headline_item(head, sizeof(head), &items, "bucket", step_bucket_names[order[0]],
					 bd[order[0]], "both");

	/* kernels, API calls, ranges, copies */
	size_t n;
	struct row *v = merged(d, SP_KERNEL, &n);
	for (size_t i = 0; i < n && (!o->top || i < o->top); i++) {
		const struct row *w = &v[i];
		c = report_row(&R[DT_KERNELS]);
		rank_cell(&c[0], rank);
		cell_num(&c[1], w->a ? per(w->a->count, d->a.n) : 0);
		cell_num(&c[2], w->b ? per(w->b->count, d->b.n) : 0);
		cell_num(&c[3], w->a ? per(w->a->ns, d->a.n) : 0);
		cell_num(&c[4], w->b ? per(w->b->ns, d->b.n) : 0);
		cell_num(&c[5], w->delta);
		of_delta(&c[6], w->delta, dmean);
		cell_str(&c[7], in_which(w));
		cell_str(&c[8], w->name);
		if (i < 2 && s.significant) headline_item(head, sizeof(head), &items, "kernel", w->name, w->delta,
							  in_which(w));
	}
	free(v);
	v = merged(d, SP_API, &n);
	char newcalls[512] = "";
	for (size_t i = 0; i < n; i++) {
		const struct row *w = &v[i];
		unsigned flags = (w->a ? w->a->flags : 0) | (w->b ? w->b->flags : 0);
		double ca = w->a ? per(w->a->count, d->a.n) : 0, cb = w->b ? per(w->b->count, d->b.n) : 0;
		/* new synchronising or copying calls: the headline says so whatever their time */
		if ((flags & (SP_SYNC | SP_COPYCALL)) && cb >= ca + 0.5 && strlen(newcalls) < sizeof(newcalls) - 100) {
			size_t l = strlen(newcalls);
			snprintf(newcalls + l, sizeof(newcalls) - l, "%s%s %.3g -> %.3g/step", l ? ", " : "", w->name, ca, cb);
		}
		if (o->top && i >= o->top) continue;
		c = report_row(&R[DT_API]);
		rank_cell(&c[0], rank);
		cell_num(&c[1], ca);
		cell_num(&c[2], cb);
		cell_num(&c[3], w->a ? per(w->a->ns, d->a.n) : 0);
		cell_num(&c[4], w->b ? per(w->b->ns, d->b.n) : 0);
		cell_num(&c[5], w->delta);
		of_delta(&c[6], w->delta, dmean);
		cell_str(&c[7], flags & SP_SYNC ? "sync" : flags & SP_COPYCALL ? "copy" : "");
		cell_str(&c[8], in_which(w));
		cell_str(&c[9], w->name);
	}
	free(v);
	if (items) {
		size_t l = strlen(head);
		snprintf(head + l, sizeof(head) - l, ".");
	}
	if (*newcalls) {
		size_t l = strlen(head);
		snprintf(head + l, sizeof(head) - l, " More synchronising/copy calls in B: %s.", newcalls);
	}
	v = merged(d, SP_RANGE, &n);
	for (size_t i = 0; i < n && (!o->top || i < o->top); i++) {
		const struct row *w = &v[i];
		c = report_row(&R[DT_NVTX]);
		rank_cell(&c[0], rank);
		cell_num(&c[1], w->a ? per(w->a->count, d->a.n) : 0);
		cell_num(&c[2], w->b ? per(w->b->count, d->b.n) : 0);
		double wa = w->a ? per(w->a->ns, d->a.n) : 0, wb = w->b ? per(w->b->ns, d->b.n) : 0;
		double ka = w->a ? per(w->a->kernel_ns, d->a.n) : 0, kb = w->b ? per(w->b->kernel_ns, d->b.n) : 0;
		cell_num(&c[3], wa);
		cell_num(&c[4], wb);
		cell_num(&c[5], wb - wa);
		cell_num(&c[6], ka);
		cell_num(&c[7], kb);
		cell_num(&c[8], kb - ka);
		cell_str(&c[9], in_which(w));
		cell_str(&c[10], w->name);
	}
	free(v);
	v = merged(d, SP_COPY, &n);
	for (size_t i = 0; i < n; i++) {
		const struct row *w = &v[i];
		c = report_row(&R[DT_COPIES]);
		rank_cell(&c[0], rank);
		cell_str(&c[1], w->name);
		cell_num(&c[2], w->a ? per(w->a->count, d->a.n) : 0);
		cell_num(&c[3], w->b ? per(w->b->count, d->b.n) : 0);
		cell_num(&c[4], w->a ? per(w->a->bytes, d->a.n) : 0);
		cell_num(&c[5], w->b ? per(w->b->bytes, d->b.n) : 0);
		cell_num(&c[6], w->a ? per(w->a->ns, d->a.n) : 0);
		cell_num(&c[7], w->b ? per(w->b->ns, d->b.n) : 0);
		cell_num(&c[8], w->delta);
		cell_str(&c[9], in_which(w));
	}
	free(v);

	c = report_row(&R[DT_SUMMARY]);
	rank_cell(&c[0], rank);
	cell_num(&c[1], d->a.pid);
	cell_num(&c[2], d->b.pid);
	cell_str(&c[3], head);
	out->headline[out->nheadline++] = xstrdup(head); /* room for every pair: diff_tables_fill */
}

void diff_tables_fill(struct diff_tables *out, struct diff_pair *pairs, size_t npairs, const struct diff_opts *opts)
{
	struct diff_opts o = { sizeof(o), DIFF_ALPHA, DIFF_TOP };
	if (opts) memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	if (o.alpha <= 0) o.alpha = DIFF_ALPHA;
	memset(out, 0, sizeof(*out));
	out->headline = xcalloc(npairs + 1, sizeof(char *));
	struct report *R = out->rep;
	for (int k = 0; k < DT_COUNT; k++) report_init(&R[k], diff_table_names[k]);
	report_define(&R[DT_SUMMARY], "What Changed, per Rank", summary_cols, REPORT_NCOLS(summary_cols));
	report_define(&R[DT_STEPS], "Step Time, A vs B (aligned steady-state steps)", steps_cols,
		      REPORT_NCOLS(steps_cols));
	report_define(&R[DT_BUCKETS], "Step Time by Bucket, Mean per Step (adds up to the mean step time)",
		      bucket_cols, REPORT_NCOLS(bucket_cols));
	report_define(&R[DT_KERNELS], "Kernels Launched per Step", kernel_cols, REPORT_NCOLS(kernel_cols));
	report_define(&R[DT_NVTX], "NVTX Ranges Opened per Step", nvtx_cols, REPORT_NCOLS(nvtx_cols));
	report_define(&R[DT_API], "CUDA API Calls per Step", api_cols, REPORT_NCOLS(api_cols));
	report_define(&R[DT_COPIES], "Copies and Memsets Launched per Step", copy_cols, REPORT_NCOLS(copy_cols));
	for (size_t i = 0; i < npairs; i++) fill_pair(out, &pairs[i], &o);
	snprintf(out->note[DT_STEPS], sizeof(out->note[DT_STEPS]),
		 " Per pair of processes (the same rank, else in order).  p: two-sided Mann-Whitney U test of the step\n"
		 "   times (exact without ties up to %d steps a run, else the normal approximation with tie and\n"
		 "   continuity corrections); significant when p < %g.  CI: 95 %% bootstrap interval of\n"
		 "   Med B - Med A (%d resamples, seed %u).  Spread = (P90 - P10) / Med.\n",
		 DIFF_EXACT_MAX, o.alpha, DIFF_BOOTSTRAP, DIFF_BOOTSTRAP_SEED);
	snprintf(out->note[DT_BUCKETS], sizeof(out->note[DT_BUCKETS]), "%s",
		 " Means over the aligned steps; Of Delta Step = delta / delta of the mean step time.\n");
	snprintf(out->note[DT_KERNELS], sizeof(out->note[DT_KERNELS]),
		 " Kernels whose launch call started in an aligned step, per step; ranked by |Delta|.  GPU time:\n"
		 "   it adds to the step time only where the GPU is what the step waits for.%s\n",
		 o.top ? "  Top rows only (--top)." : "");
	snprintf(out->note[DT_NVTX], sizeof(out->note[DT_NVTX]), "%s",
		 " Ranges started in an aligned step (the step's own range left out): wall time per step, and the\n"
		 "   kernels launched while open (any thread).  Ranked by the larger |Delta| of the two.\n");
	snprintf(out->note[DT_API], sizeof(out->note[DT_API]), "%s",
		 " Calls started in an aligned step.  Kind: sync (blocks until GPU work is done), copy (memcpy).\n");
	for (int k = 0; k < DT_COUNT; k++) R[k].note = out->note[k][0] ? out->note[k] : NULL;
}

void diff_tables_free(struct diff_tables *t)
{
	for (int k = 0; k < DT_COUNT; k++) report_free(&t->rep[k]);
	for (size_t i = 0; i < t->nheadline; i++) free(t->headline[i]);
	free(t->headline);
	memset(t, 0, sizeof(*t));
}
