/* diff.c — see diff.h. */
#include "analysis/diff/diff.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/diff/diff_setup.h"
#include "analysis/diff/diff_stats.h"
#include "analysis/steps/step_detect.h"
#include "analysis/core/quantile.h"
#include "analysis/steps/step_summary.h"
#include "common/util.h"

const char *const diff_table_names[DT_COUNT] = {
	"diff", "diff_setup", "diff_steps", "diff_runs", "diff_buckets", "diff_kernels", "diff_nvtx", "diff_api",
	"diff_copies",
};

static int numbered(const struct steps_proc *p)
{
	if (!p->plan || p->plan->method != STEP_NVTX) return 0;
	for (size_t i = 0; i < p->nrows; i++)
		if (step_row(p, i)->number < 0) return 0;
	return 1;
}

static size_t nruns(const struct diff_pair *d) { return d->a.nrun + d->b.nrun; }

static struct diff_run *run_of(struct diff_pair *d, size_t i)
{
	return i < d->a.nrun ? &d->a.run[i] : &d->b.run[i - d->a.nrun];
}

void diff_align(struct diff_pair *d, int keep)
{
	size_t nr = nruns(d), common = 0;
	int by_number = 1;
	for (size_t i = 0; i < nr; i++) {
		struct diff_run *x = run_of(d, i);
		x->rows = xcalloc(x->p->nrows ? x->p->nrows : 1, sizeof(*x->rows));
		x->n = 0;
		by_number = by_number && numbered(x->p);
	}
	/* in how many runs each step number is counted */
	u64map in;
	u64map_init(&in);
	if (by_number) {
		for (size_t i = 0; i < nr; i++) {
			const struct steps_proc *p = run_of(d, i)->p;
			for (size_t k = 0; k < p->nrows; k++)
				if (step_counted(step_row(p, k), keep)) {
					uint64_t *c = u64map_get(&in, (uint64_t)step_row(p, k)->number, MAP_INSERT);
					if (++*c == nr) common++;
				}
		}
		by_number = common >= DIFF_ALIGN_MIN;
	}
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < nr; i++) {
		struct diff_run *x = run_of(d, i);
		for (size_t k = 0; k < x->p->nrows; k++) {
			const struct step_row *w = step_row(x->p, k);
			if (!step_counted(w, keep)) continue;
			if (by_number && *u64map_get(&in, (uint64_t)w->number, MAP_FIND) != nr) continue;
			x->rows[x->n++] = *w;
			if (w->number < lo) lo = w->number;
			if (w->number > hi) hi = w->number;
		}
	}
	if (by_number)
		snprintf(d->aligned, sizeof(d->aligned), "by step number: the %zu steps counted in %s (%" PRId64
			 "..%" PRId64 ")", common, nr == 2 ? "both" : "every run", lo, hi);
	else if (nr == 2)
		snprintf(d->aligned, sizeof(d->aligned), "the counted steps of each run (%zu and %zu)", d->a.run[0].n,
			 d->b.run[0].n);
	else
		snprintf(d->aligned, sizeof(d->aligned), "the counted steps of each run");
	u64map_free(&in);
}

void diff_pair_free(struct diff_pair *d)
{
	for (size_t i = 0; i < nruns(d); i++) free(run_of(d, i)->rows);
	free(d->a.run);
	free(d->b.run);
	memset(d, 0, sizeof(*d));
}

/* ------------------------------------------------------------ tables */

static const struct col summary_cols[] = {
	{ "Rank", "rank", COL_ID, COL_EVERYWHERE }, { "PID A", "pid_a", COL_ID, COL_EVERYWHERE }, { "PID B", "pid_b", COL_ID, COL_EVERYWHERE },
	{ "What Changed", "headline", COL_STR, COL_PROSE },
};

static const struct col setup_cols[] = {
	{ "Rank", "rank", COL_ID, COL_EVERYWHERE }, { "Item", "item", COL_STR, COL_EVERYWHERE },
	{ "A", "a", COL_STR, COL_EVERYWHERE }, { "B", "b", COL_STR, COL_EVERYWHERE },
	{ "Differs", "differs", COL_STR, COL_EVERYWHERE },
};

static const struct col steps_cols[] = {
	{ "Rank", "rank", COL_ID, COL_EVERYWHERE }, { "Runs A", "runs_a", COL_INT, COL_EVERYWHERE }, { "Runs B", "runs_b", COL_INT, COL_EVERYWHERE },
	{ "Steps A", "steps_a", COL_INT, COL_EVERYWHERE }, { "Steps B", "steps_b", COL_INT, COL_EVERYWHERE },
	{ "Med A (ns)", "median_a_ns", COL_INT, COL_EVERYWHERE }, { "Med B (ns)", "median_b_ns", COL_INT, COL_EVERYWHERE },
	{ "Delta Med (ns)", "delta_median_ns", COL_INT, COL_EVERYWHERE }, { "Delta Med (%)", "delta_median_pct", COL_F1, COL_EVERYWHERE },
	{ "Mean A (ns)", "mean_a_ns", COL_INT, COL_EVERYWHERE }, { "Mean B (ns)", "mean_b_ns", COL_INT, COL_EVERYWHERE },
	{ "Spread A (%)", "spread_a_pct", COL_F1, COL_EVERYWHERE }, { "Spread B (%)", "spread_b_pct", COL_F1, COL_EVERYWHERE },
	{ "U", "mann_whitney_u", COL_F1, COL_EVERYWHERE }, { "p", "p_value", COL_G3, COL_EVERYWHERE }, { "Test", "test", COL_STR, COL_EVERYWHERE },
	{ "CI Low (ns)", "ci95_low_ns", COL_INT, COL_EVERYWHERE }, { "CI High (ns)", "ci95_high_ns", COL_INT, COL_EVERYWHERE },
	{ "Run Med A (ns)", "run_median_a_ns", COL_INT, COL_EVERYWHERE }, { "Run Med B (ns)", "run_median_b_ns", COL_INT, COL_EVERYWHERE },
	{ "Run SD A (%)", "run_sd_a_pct", COL_F1, COL_EVERYWHERE }, { "Run SD B (%)", "run_sd_b_pct", COL_F1, COL_EVERYWHERE },
	{ "t", "welch_t", COL_F3, COL_EVERYWHERE }, { "df", "welch_df", COL_F1, COL_EVERYWHERE }, { "Run p", "run_p_value", COL_G3, COL_EVERYWHERE },
	{ "Run CI Low (ns)", "run_ci95_low_ns", COL_INT, COL_EVERYWHERE }, { "Run CI High (ns)", "run_ci95_high_ns", COL_INT, COL_EVERYWHERE },
	{ "Noise (%)", "noise_pct", COL_F1, COL_EVERYWHERE }, { "Verdict", "verdict", COL_STR, COL_EVERYWHERE },
	{ "Basis", "basis", COL_STR, COL_PROSE }, { "Aligned", "aligned", COL_STR, COL_PROSE },
};

static const struct col runs_cols[] = {
	{ "Rank", "rank", COL_ID, COL_EVERYWHERE }, { "Side", "side", COL_STR, COL_EVERYWHERE }, { "Run", "run", COL_INT, COL_EVERYWHERE },
	{ "PID", "pid", COL_ID, COL_EVERYWHERE }, { "Steps", "steps", COL_INT, COL_EVERYWHERE }, { "Med (ns)", "median_ns", COL_INT, COL_EVERYWHERE },
	{ "Mean (ns)", "mean_ns", COL_INT, COL_EVERYWHERE }, { "Spread (%)", "spread_pct", COL_F1, COL_EVERYWHERE },
	{ "Trace", "trace", COL_STR, COL_EVERYWHERE },
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

size_t diff_side_steps(const struct diff_side *s)
{
	size_t n = 0;
	for (size_t r = 0; r < s->nrun; r++) n += s->run[r].n;
	return n;
}

/* one name of a profile list, A against B (each summed over its side's runs) */
struct row { const char *name; const struct sp_entry *a, *b; double delta; };

static int cmp_row(const void *x, const void *y)
{
	const struct row *p = x, *q = y;
	double dp = fabs(p->delta), dq = fabs(q->delta);
	if (dp != dq) return dp > dq ? -1 : 1;
	return strcmp(p->name, q->name);
}

/* Field f of a name's entries, per step of each side (0: a side without
 * the name), into c[0] (A) and c[1] (B). */
#define PER_STEP(c, w, s, f) \
	(cell_num(&(c)[0], (w)->a ? per((w)->a->f, (s).na) : 0), cell_num(&(c)[1], (w)->b ? per((w)->b->f, (s).nb) : 0))

static const char *in_which(const struct row *r)
{
	return r->a && r->b ? "both" : r->a ? "only A" : "only B";
}

/* the names of list k in A or B, ranked by |delta ns per step| (for ranges:
 * the larger of the wall time's and the kernel time's) */
static struct row *merged(const struct diff_pair *d, int k, struct side_list *la, struct side_list *lb, size_t *n)
{
	side_list_fill(la, &d->a, k);
	side_list_fill(lb, &d->b, k);
	size_t sa = diff_side_steps(&d->a), sb = diff_side_steps(&d->b), m = 0;
	struct row *v = xcalloc(la->n + lb->n + 1, sizeof(*v));
	for (size_t i = 0; i < la->n; i++) {
		size_t *slot = strmap_find(&lb->idx, la->v[i].name);
		v[m++] = (struct row){ la->v[i].name, &la->v[i], slot ? &lb->v[*slot] : NULL, 0 };
	}
	for (size_t i = 0; i < lb->n; i++)
		if (!strmap_find(&la->idx, lb->v[i].name)) v[m++] = (struct row){ lb->v[i].name, NULL, &lb->v[i], 0 };
	for (size_t i = 0; i < m; i++) {
		v[i].delta = (v[i].b ? per(v[i].b->ns, sb) : 0) - (v[i].a ? per(v[i].a->ns, sa) : 0);
		if (k == SP_RANGE) { /* the larger move of the wall time and the kernel time */
			double dk = (v[i].b ? per(v[i].b->kernel_ns, sb) : 0) - (v[i].a ? per(v[i].a->kernel_ns, sa) : 0);
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

enum basis { BASIS_RUNS, BASIS_STEPS };

/* per run of a side: its steps' median (Welch's samples), mean and spread */
struct run_figs { double *med, *mean, *spread; };

struct pair_stats {
	size_t na, nb;                      /* aligned steps of all runs of a side */
	double med_a, med_b, mean_a, mean_b, spread_a, spread_b, lo, hi;   /* over the pooled steps */
	struct mwu u;
	struct welch w;                     /* over the runs' medians (basis runs) */
	enum basis basis;
	double change, change_pct;          /* of the median (steps) or the mean run median (runs) */
	int significant, within_noise;
	struct run_figs run[2];             /* A's, B's (one block each: run[i].med) */
};

/* the step times of rows[0..n) */
static double *step_times(const struct step_row *rows, size_t n, double *v)
{
	for (size_t i = 0; i < n; i++) v[i] = (double)(rows[i].e - rows[i].s);
	return v;
}

static void med_mean_spread(const double *t, size_t n, double *med, double *mean, double *spread)
{
	double *v = xmalloc((n ? n : 1) * sizeof(double)), sum = 0;
	for (size_t i = 0; i < n; i++) {
		v[i] = t[i];
		sum += v[i];
	}
	*mean = n ? sum / (double)n : 0;
	*med = quantile_of(v, n, 0.5);
	double p10 = quantile_of(v, n, 0.1), p90 = quantile_of(v, n, 0.9);
	*spread = *med > 0 ? 100.0 * (p90 - p10) / *med : 0;
	free(v);
}

/* the pooled step times of a side's runs; the runs' figures into *f */
static double *side_times(const struct diff_side *s, size_t *n, struct run_figs *f)
{
	*n = diff_side_steps(s);
	double *v = xmalloc((*n ? *n : 1) * sizeof(double));
	size_t at = 0, m = s->nrun + 1;
	f->med = xcalloc(3 * m, sizeof(double));
	f->mean = f->med + m;
	f->spread = f->mean + m;
	for (size_t r = 0; r < s->nrun; r++) {
		const struct diff_run *x = &s->run[r];
		step_times(x->rows, x->n, v + at);
		med_mean_spread(v + at, x->n, &f->med[r], &f->mean[r], &f->spread[r]);
		at += x->n;
	}
	return v;
}

static void pair_stats(const struct diff_pair *d, const struct diff_opts *o, struct pair_stats *s)
{
	memset(s, 0, sizeof(*s));
	double *a = side_times(&d->a, &s->na, &s->run[0]), *b = side_times(&d->b, &s->nb, &s->run[1]);
	med_mean_spread(a, s->na, &s->med_a, &s->mean_a, &s->spread_a);
	med_mean_spread(b, s->nb, &s->med_b, &s->mean_b, &s->spread_b);
	s->u.p = NAN;
	s->basis = d->a.nrun >= 2 && d->b.nrun >= 2 ? BASIS_RUNS : BASIS_STEPS;
	int empty = 0;
	for (size_t r = 0; r < d->a.nrun; r++) empty |= !d->a.run[r].n;
	for (size_t r = 0; r < d->b.nrun; r++) empty |= !d->b.run[r].n;
	if (!empty && s->na && s->nb) {
		mann_whitney(a, s->na, b, s->nb, &s->u);
		bootstrap_median_diff(a, s->na, b, s->nb, &s->lo, &s->hi);
		if (s->basis == BASIS_RUNS) {
			welch_t(s->run[0].med, d->a.nrun, s->run[1].med, d->b.nrun, &s->w);
			s->change = s->w.mean_b - s->w.mean_a;
			s->change_pct = s->w.mean_a > 0 ? 100.0 * s->change / s->w.mean_a : 0;
			s->significant = s->w.p < o->alpha;
		} else {
			s->change = s->med_b - s->med_a;
			s->change_pct = s->med_a > 0 ? 100.0 * s->change / s->med_a : 0;
			s->within_noise = fabs(s->change_pct) < o->noise_pct;
			s->significant = s->u.p < o->alpha && !s->within_noise;
		}
	} else {
		s->na = s->nb = 0;
	}
	free(a);
	free(b);
}

static void headline_item(char *buf, size_t n, int *items, const char *what, const char *name, double delta,
			  const char *in)
{
	if (*items >= 4 || fabs(delta) < 0.5) return;
	char dd[48], sn[96];
	signed_dur(dd, sizeof(dd), delta);
	diff_short_name(name, sn, sizeof(sn));
	size_t l = strlen(buf);
	snprintf(buf + l, n - l, "%s%s %s %s/step%s%s%s", *items ? "; " : " Largest changes: ", what, sn, dd,
		 strcmp(in, "both") ? " (" : "", strcmp(in, "both") ? in : "", strcmp(in, "both") ? ")" : "");
	(*items)++;
}

static void runs_rows(struct report *R, const struct diff_pair *d, const struct pair_stats *ps)
{
	for (int sd = 0; sd < 2; sd++) {
		const struct diff_side *s = sd ? &d->b : &d->a;
		const struct run_figs *f = &ps->run[sd];
		for (size_t r = 0; r < s->nrun; r++) {
			const struct diff_run *x = &s->run[r];
			struct cell *c = report_row(R);
			rank_cell(&c[0], d->rank);
			cell_str(&c[1], sd ? "B" : "A");
			cell_num(&c[2], (double)(r + 1));
			cell_num(&c[3], x->pid);
			cell_num(&c[4], (double)x->n);
			if (x->n) {
				cell_num(&c[5], f->med[r]);
				cell_num(&c[6], f->mean[r]);
				cell_num(&c[7], f->spread[r]);
			}
			cell_str(&c[8], x->path);
		}
	}
}

static const char *verdict_of(const struct pair_stats *s)
{
	return !s->na || !s->nb ? "no steps to compare" :
	       s->significant ? (s->change < 0 ? "B faster" : "B slower") :
	       s->within_noise ? "within the run-to-run noise" : "no significant difference";
}

/* the step-time part of the headline */
static void headline_steps(char *head, size_t n, const struct diff_pair *d, const struct pair_stats *s,
			   const struct diff_opts *o)
{
	char ma[48], mb[48], dd[48];
	size_t l = strlen(head);
	if (!s->na || !s->nb) {
		snprintf(head + l, n - l, "No steps to compare (A: %zu, B: %zu aligned).", s->na, s->nb);
		return;
	}
	signed_dur(dd, sizeof(dd), s->change);
	if (s->basis == BASIS_RUNS) {
		char lo[48], hi[48];
		fmt_dur(ma, sizeof(ma), (uint64_t)llround(s->w.mean_a));
		fmt_dur(mb, sizeof(mb), (uint64_t)llround(s->w.mean_b));
		signed_dur(lo, sizeof(lo), s->w.lo);
		signed_dur(hi, sizeof(hi), s->w.hi);
		snprintf(head + l, n - l, "Step time %s -> %s, mean of the runs' medians (%s, %+.1f %%, 95 %% CI %s .. %s; "
			 "Welch p = %.2g, %zu vs %zu runs, run-to-run SD %.1f %% and %.1f %%): %s.", ma, mb, dd,
			 s->change_pct, lo, hi, s->w.p, d->a.nrun, d->b.nrun,
			 s->w.mean_a > 0 ? 100.0 * s->w.sd_a / s->w.mean_a : 0.0,
			 s->w.mean_b > 0 ? 100.0 * s->w.sd_b / s->w.mean_b : 0.0, verdict_of(s));
		return;
	}
	fmt_dur(ma, sizeof(ma), (uint64_t)llround(s->med_a));
	fmt_dur(mb, sizeof(mb), (uint64_t)llround(s->med_b));
	char runs[64] = "";
	if (d->a.nrun > 1 || d->b.nrun > 1) snprintf(runs, sizeof(runs), " of %zu vs %zu runs", d->a.nrun, d->b.nrun);
	snprintf(head + l, n - l, "Step time %s -> %s median (%s, %+.1f %%; p = %.2g, %zu vs %zu steps%s): %s", ma, mb,
		 dd, s->change_pct, s->u.p, s->na, s->nb, runs, verdict_of(s));
	l = strlen(head);
	if (s->within_noise)
		snprintf(head + l, n - l, " (±%g %%, one run %s: give 2+ runs per side to measure it).", o->noise_pct,
			 d->a.nrun < 2 && d->b.nrun < 2 ? "per side" : "on a side");
	else
		snprintf(head + l, n - l, ".");
}

static unsigned flags_of(const struct row *w) { return (w->a ? w->a->flags : 0) | (w->b ? w->b->flags : 0); }

/* The rows of a profile list's table (top: at most; 0 all): the rank, then
 * per letter of cols: c, b, n: count, bytes, ns per step of A and B; w, k:
 * wall and kernel ns per step of A and B and their delta; d: the ranking
 * delta; o: its share of the step's; K: the API call's kind; i: in which
 * side; m: the name. */
static void list_rows(struct report *R, const char *cols, const struct row *v, size_t top, size_t n, int32_t rank,
		      const struct pair_stats *s, double dmean)
{
	for (size_t i = 0; i < n && (!top || i < top); i++) {
		const struct row *w = &v[i];
		struct cell *c = report_row(R);
		rank_cell(c++, rank);
		for (const char *k = cols; *k; k++) {
			double a, b;
			switch (*k) {
			case 'c': PER_STEP(c, w, *s, count); c += 2; break;
			case 'b': PER_STEP(c, w, *s, bytes); c += 2; break;
			case 'n': PER_STEP(c, w, *s, ns); c += 2; break;
			case 'w':
			case 'k':
				a = !w->a ? 0 : per(*k == 'w' ? w->a->ns : w->a->kernel_ns, s->na);
				b = !w->b ? 0 : per(*k == 'w' ? w->b->ns : w->b->kernel_ns, s->nb);
				cell_num(c++, a);
				cell_num(c++, b);
				cell_num(c++, b - a);
				break;
			case 'd': cell_num(c++, w->delta); break;
			case 'o': of_delta(c++, w->delta, dmean); break;
			case 'K': cell_str(c++, flags_of(w) & SP_SYNC ? "sync" : flags_of(w) & SP_COPYCALL ? "copy" : ""); break;
			case 'i': cell_str(c++, in_which(w)); break;
			case 'm': cell_str(c++, w->name); break;
			}
		}
	}
}

/* The synchronising or copying calls of v[0..n) made at least once more per
 * step in B, appended to buf ("NAME A -> B/step, ..."): the headline says
 * so whatever their time. */
static void new_calls(char *buf, size_t size, const struct row *v, size_t n, const struct pair_stats *s)
{
	for (size_t i = 0; i < n; i++) {
		const struct row *w = &v[i];
		double ca = w->a ? per(w->a->count, s->na) : 0, cb = w->b ? per(w->b->count, s->nb) : 0;
		size_t k = strlen(buf);
		if ((flags_of(w) & (SP_SYNC | SP_COPYCALL)) && cb >= ca + 0.5 && k < size - 100)
			snprintf(buf + k, size - k, "%s%s %.3g -> %.3g/step", k ? ", " : "", w->name, ca, cb);
	}
}

static void fill_pair(struct diff_tables *out, const struct diff_pair *d, const struct diff_opts *o)
{
	struct report *R = out->rep;
	struct pair_stats s;
	pair_stats(d, o, &s);
	int32_t rank = d->rank;
	double dmean = s.mean_b - s.mean_a;
	struct cell *c = report_row(&R[DT_STEPS]);
	rank_cell(&c[0], rank);
	cell_num(&c[1], (double)d->a.nrun);
	cell_num(&c[2], (double)d->b.nrun);
	cell_num(&c[3], (double)s.na);
	cell_num(&c[4], (double)s.nb);
	if (s.na && s.nb) {
		double dmed = s.med_b - s.med_a;
		cell_num(&c[5], s.med_a);
		cell_num(&c[6], s.med_b);
		cell_num(&c[7], dmed);
		if (s.med_a > 0) cell_num(&c[8], 100.0 * dmed / s.med_a);
		cell_num(&c[9], s.mean_a);
		cell_num(&c[10], s.mean_b);
		cell_num(&c[11], s.spread_a);
		cell_num(&c[12], s.spread_b);
		cell_num(&c[13], s.u.u_a);
		cell_num(&c[14], s.u.p);
		cell_str(&c[15], s.u.exact ? "exact" : "normal");
		cell_num(&c[16], s.lo);
		cell_num(&c[17], s.hi);
		if (s.basis == BASIS_RUNS) {
			cell_num(&c[18], s.w.mean_a);
			cell_num(&c[19], s.w.mean_b);
			if (s.w.mean_a > 0) cell_num(&c[20], 100.0 * s.w.sd_a / s.w.mean_a);
			if (s.w.mean_b > 0) cell_num(&c[21], 100.0 * s.w.sd_b / s.w.mean_b);
			if (isfinite(s.w.t)) cell_num(&c[22], s.w.t);
			cell_num(&c[23], s.w.df);
			cell_num(&c[24], s.w.p);
			cell_num(&c[25], s.w.lo);
			cell_num(&c[26], s.w.hi);
		} else {
			cell_num(&c[27], o->noise_pct);
		}
	}
	cell_str(&c[28], verdict_of(&s));
	cell_str(&c[29], s.basis == BASIS_RUNS ? "runs: Welch t on the runs' medians" :
			 "steps: Mann-Whitney U and the noise floor");
	cell_str(&c[30], d->aligned);
	runs_rows(&R[DT_RUNS], d, &s);

	/* the headline: what differs, the step change, then what moved most */
	char head[2048], what[1024];
	head[0] = 0;
	if (rank >= 0) snprintf(head, sizeof(head), "rank %d: ", rank);
	diff_setup_compare(d, what, sizeof(what), &R[DT_SETUP]);
	size_t hl = strlen(head);
	snprintf(head + hl, sizeof(head) - hl, "%s%s. ", *what ? "B: " : "",
		 *what ? what : "Same command line, settings, threads and kernels");
	headline_steps(head, sizeof(head), d, &s, o);

	/* buckets: means per aligned step; they add up to the mean step time */
	int items = 0, top = 0; /* top: the bucket that moved most (the first of equal moves) */
	double bd[SB_COUNT];
	for (int k = 0; k < SB_COUNT; k++) {
		uint64_t ta = 0, tb = 0;
		for (size_t r = 0; r < d->a.nrun; r++)
			for (size_t i = 0; i < d->a.run[r].n; i++) ta += d->a.run[r].rows[i].bucket[k];
		for (size_t r = 0; r < d->b.nrun; r++)
			for (size_t i = 0; i < d->b.run[r].n; i++) tb += d->b.run[r].rows[i].bucket[k];
		double a = per(ta, s.na), b = per(tb, s.nb);
		bd[k] = b - a;
		if (fabs(bd[k]) > fabs(bd[top])) top = k;
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
	if (s.significant) headline_item(head, sizeof(head), &items, "bucket", step_bucket_names[top], bd[top], "both");

	/* kernels, API calls, ranges, copies */
	static const struct { int list, table, all; const char *cols; } lists[] = {
		{ SP_KERNEL, DT_KERNELS, 0, "cndoim" }, { SP_API, DT_API, 0, "cndoKim" }, { SP_RANGE, DT_NVTX, 0, "cwkim" },
		{ SP_COPY, DT_COPIES, 1, "mcbndi" }, /* every kind of copy, whatever --top */
	};
	char newcalls[512] = "";
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
		size_t n;
		struct side_list la, lb;
		struct row *v = merged(d, lists[l].list, &la, &lb, &n);
		list_rows(&R[lists[l].table], lists[l].cols, v, lists[l].all ? 0 : o->top, n, rank, &s, dmean);
		if (lists[l].list == SP_KERNEL && s.significant) /* the first two kernels shown */
			for (size_t i = 0; i < n && i < 2 && (!o->top || i < o->top); i++)
				headline_item(head, sizeof(head), &items, "kernel", v[i].name, v[i].delta, in_which(&v[i]));
		if (lists[l].list == SP_API) new_calls(newcalls, sizeof(newcalls), v, n, &s);
		free(v);
		side_list_free(&la);
		side_list_free(&lb);
	}
	if (items) {
		size_t l = strlen(head);
		snprintf(head + l, sizeof(head) - l, ".");
	}
	if (*newcalls) {
		size_t l = strlen(head);
		snprintf(head + l, sizeof(head) - l, " More synchronising/copy calls in B: %s.", newcalls);
	}

	c = report_row(&R[DT_SUMMARY]);
	rank_cell(&c[0], rank);
	cell_num(&c[1], d->a.nrun ? d->a.run[0].pid : 0);
	cell_num(&c[2], d->b.nrun ? d->b.run[0].pid : 0);
	cell_str(&c[3], head);
	out->headline[out->nheadline++] = xstrdup(head); /* room for every pair: diff_tables_fill */
	free(s.run[0].med);
	free(s.run[1].med);
}

void diff_tables_fill(struct diff_tables *out, struct diff_pair *pairs, size_t npairs, const struct diff_opts *opts)
{
	struct diff_opts o = { DIFF_ALPHA, DIFF_TOP, DIFF_NOISE_PCT };
	if (opts) o = *opts;
	if (o.alpha <= 0) o.alpha = DIFF_ALPHA;
	if (o.noise_pct < 0) o.noise_pct = DIFF_NOISE_PCT;
	memset(out, 0, sizeof(*out));
	out->headline = xcalloc(npairs + 1, sizeof(char *));
	struct report *R = out->rep;
	for (int k = 0; k < DT_COUNT; k++) report_init(&R[k], diff_table_names[k]);
	report_define(&R[DT_SUMMARY], "What Changed, per Rank", summary_cols, REPORT_NCOLS(summary_cols));
	report_define(&R[DT_SETUP], "What Differs besides Timing (command line, settings, processes, threads, kernels)",
		      setup_cols, REPORT_NCOLS(setup_cols));
	report_define(&R[DT_STEPS], "Step Time, A vs B (aligned steady-state steps)", steps_cols,
		      REPORT_NCOLS(steps_cols));
	report_define(&R[DT_RUNS], "Step Time per Run", runs_cols, REPORT_NCOLS(runs_cols));
	report_define(&R[DT_BUCKETS], "Step Time by Bucket, Mean per Step (adds up to the mean step time)",
		      bucket_cols, REPORT_NCOLS(bucket_cols));
	report_define(&R[DT_KERNELS], "Kernels Launched per Step", kernel_cols, REPORT_NCOLS(kernel_cols));
	report_define(&R[DT_NVTX], "NVTX Ranges Opened per Step", nvtx_cols, REPORT_NCOLS(nvtx_cols));
	report_define(&R[DT_API], "CUDA API Calls per Step", api_cols, REPORT_NCOLS(api_cols));
	report_define(&R[DT_COPIES], "Copies and Memsets Launched per Step", copy_cols, REPORT_NCOLS(copy_cols));
	for (size_t i = 0; i < npairs; i++) fill_pair(out, &pairs[i], &o);
	int pooled = 0;
	for (size_t i = 0; i < npairs; i++) pooled |= pairs[i].a.nrun > 1 || pairs[i].b.nrun > 1;
	snprintf(out->note[DT_STEPS], sizeof(out->note[DT_STEPS]),
		 " Per pair of processes (the same rank, else in order).  Med, Mean, Spread, U, p and CI are over the\n"
		 "   aligned steps%s.  p: two-sided Mann-Whitney U test of the step times (exact without ties up to\n"
		 "   %d steps a run, else the normal approximation with tie and continuity corrections).  CI: 95 %%\n"
		 "   bootstrap interval of Med B - Med A (%d resamples, seed %u).  Spread = (P90 - P10) / Med.\n"
		 "   Verdict with 2+ runs a side: Welch's t test on the runs' median step times (Run Med = their mean,\n"
		 "   Run SD = their SD / mean, Run CI = 95 %% interval of the change); significant when Run p < %g.\n"
		 "   One run on a side: significant when p < %g and |Delta Med| >= Noise %%, else within the\n"
		 "   run-to-run noise (|Delta Med| < Noise) or no significant difference.\n",
		 pooled ? " of all runs of a side, pooled" : "", DIFF_EXACT_MAX, DIFF_BOOTSTRAP, DIFF_BOOTSTRAP_SEED,
		 o.alpha, o.alpha);
	snprintf(out->note[DT_SETUP], sizeof(out->note[DT_SETUP]), "%s",
		 " Items that differ between A and B (the same value in every run of a side), or vary between the runs\n"
		 "   of a side.  Command line: option by option; threads: those that recorded CUDA or NVTX calls.\n");
	snprintf(out->note[DT_BUCKETS], sizeof(out->note[DT_BUCKETS]),
		 " Means over the aligned steps%s; Of Delta Step = delta / delta of the mean step time.\n",
		 pooled ? " of all runs of a side" : "");
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
