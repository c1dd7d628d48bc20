/* step_summary.c — see step_summary.h. */
#include "analysis/steps/step_summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/quantile.h"
#include "common/util.h"

static struct qstats qstats_of(double *v, size_t n)
{
	struct qstats q = { 0 };
	if (!n) return q;
	double sum = 0;
	for (size_t i = 0; i < n; i++) sum += v[i];
	q.mean = sum / (double)n;
	qsort(v, n, sizeof(*v), cmp_double); /* once for the three */
	q.med = quantile_sorted(v, n, 0.5);
	q.p10 = quantile_sorted(v, n, 0.1);
	q.p90 = quantile_sorted(v, n, 0.9);
	q.min = v[0];
	q.max = v[n - 1];
	return q;
}

/* The figure that what-differs and the statistics look at, by index (the
 * medians of every one below NFIG; the launch figures after it are of the
 * steps that launched work). */
enum fig { F_TIME, F_KERNELS, F_KERNEL_NS, F_GPU_WORK, F_SYNC, F_ALLOC, F_PAUSE, F_BUCKET0 };
#define NFIG (F_BUCKET0 + SB_COUNT)
enum { F_CPU_MED = NFIG, F_GPU_MED, F_DELAY_MED };

static double fig(const struct step_row *w, int f)
{
	switch (f) {
	case F_TIME: return (double)(w->e - w->s);
	case F_KERNELS: return (double)w->kernels;
	case F_KERNEL_NS: return (double)w->kernel_ns;
	case F_GPU_WORK: return (double)(w->kernel_ns + w->memop_ns);
	case F_SYNC: return (double)w->sync_calls;
	case F_ALLOC: return (double)w->alloc_calls;
	case F_PAUSE: return (double)w->pause_max;
	case F_CPU_MED: return (double)w->cpu_med;
	case F_GPU_MED: return (double)w->gpu_med;
	case F_DELAY_MED: return (double)w->delay_med;
	default: return (double)w->bucket[f - F_BUCKET0];
	}
}

int step_counted(const struct step_row *w, int keep_warmup)
{
	return !w->partial && !w->unrecorded && (keep_warmup || !w->warmup);
}

/* Figure f of the counted rows (keep: warm-up kept) into buf; how many. */
static size_t counted(const struct steps_proc *p, int f, int keep, double *buf)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nrows; i++)
		if (step_counted(step_row(p, i), keep) && (f < NFIG || step_row(p, i)->launched))
			buf[n++] = fig(step_row(p, i), f);
	return n;
}

/* Median of figure f over the rows idx[0 .. k) that are not partial. */
static double median_of(const struct steps_proc *p, const size_t *idx, size_t k, int f, double *buf)
{
	size_t n = 0;
	for (size_t i = 0; i < k; i++)
		if (!step_row(p, idx[i])->partial) buf[n++] = fig(step_row(p, idx[i]), f);
	return quantile_of(buf, n, 0.5);
}

static int unlike_steady(const struct step_row *w, double mt, double mk, double ma)
{
	double t = (double)(w->e - w->s), k = (double)w->kernels;
	double tol = 0.02 * mk > 2 ? 0.02 * mk : 2;
	return t > 1.5 * mt || t * 1.5 < mt || fabs(k - mk) > tol || (w->alloc_calls > 0 && ma == 0);
}

static void add_item(char *buf, size_t n, const char *item)
{
	size_t l = strlen(buf);
	snprintf(buf + l, n - l, "%s%s", l ? "; " : "", item);
}

static char *what_differs(const struct step_row *w, const double *med)
{
	char buf[512] = "", item[160], a[32], b[32];
	double dt = fig(w, F_TIME) - med[F_TIME], adt = fabs(dt);
	double dk = fig(w, F_KERNELS) - med[F_KERNELS];
	double tol = 0.02 * med[F_KERNELS] > 2 ? 0.02 * med[F_KERNELS] : 2;
	if (fabs(dk) > tol) {
		snprintf(item, sizeof(item), "%+.0f kernels", dk);
		add_item(buf, sizeof(buf), item);
	}
	/* the buckets that moved by at least a quarter of the difference, largest first */
	int used[SB_COUNT] = { 0 };
	for (int round = 0; round < 2; round++) {
		int best = -1;
		double bx = 0;
		for (int k = 0; k < SB_COUNT; k++) {
			double x = fig(w, F_BUCKET0 + k) - med[F_BUCKET0 + k];
			if (!used[k] && fabs(x) >= 0.25 * adt && fabs(x) > fabs(bx)) { best = k; bx = x; }
		}
		if (best < 0 || bx == 0) break;
		used[best] = 1;
		fmt_dur(a, sizeof(a), (uint64_t)fabs(bx));
		snprintf(item, sizeof(item), "%s %s%s", step_bucket_names[best], bx < 0 ? "-" : "+", a);
		add_item(buf, sizeof(buf), item);
	}
	if (fig(w, F_SYNC) > med[F_SYNC]) {
		snprintf(item, sizeof(item), "%u sync calls (median %.0f)", w->sync_calls, med[F_SYNC]);
		add_item(buf, sizeof(buf), item);
	}
	if (fig(w, F_ALLOC) > med[F_ALLOC]) {
		snprintf(item, sizeof(item), "%u allocation calls (median %.0f)", w->alloc_calls, med[F_ALLOC]);
		add_item(buf, sizeof(buf), item);
	}
	double pause = fig(w, F_PAUSE);
	if (pause > 2 * med[F_PAUSE] && pause - med[F_PAUSE] >= 0.25 * adt) {
		fmt_dur(a, sizeof(a), w->pause_max);
		fmt_dur(b, sizeof(b), (uint64_t)med[F_PAUSE]);
		snprintf(item, sizeof(item), "host pause %s with no API call (median %s)", a, b);
		add_item(buf, sizeof(buf), item);
	}
	if (!*buf) snprintf(buf, sizeof(buf), "nothing stands out");
	return xstrdup(buf);
}

void step_summarize(struct steps_proc *p, int keep, struct step_summary *out)
{
	memset(out, 0, sizeof(*out));
	size_t n = p->nrows;
	out->why = xcalloc(n ? n : 1, sizeof(char *));
	if (!n) return;
	double *buf = xmalloc(n * sizeof(double));
	/* warm-up: the run's leading steps unlike the steady state (the second
	 * half of the steps with GPU records); judged by a step's place in
	 * the run, not in the file: a step after one without GPU records
	 * (a capture's history, a step sampled out), or whose run's earlier
	 * steps left no trace, is not at the run's start */
	for (size_t i = 0; i < n; i++) step_row_w(p, i)->warmup = step_row_w(p, i)->outlier = 0;
	size_t *rec = xmalloc(n * sizeof(size_t)), nrec = 0;
	for (size_t i = 0; i < n; i++)
		if (!step_row(p, i)->unrecorded) rec[nrec++] = i;
	if (nrec >= 3) {
		double mt = median_of(p, rec + nrec / 2, nrec - nrec / 2, F_TIME, buf);
		double mk = median_of(p, rec + nrec / 2, nrec - nrec / 2, F_KERNELS, buf);
		double ma = median_of(p, rec + nrec / 2, nrec - nrec / 2, F_ALLOC, buf);
		for (size_t j = 0; j < nrec / 2; j++) {
			struct step_row *w = step_row_w(p, rec[j]);
			if (rec[j] != j || w->run_before_unseen) break; /* not at the run's start */
			if (w->partial) continue; /* no figures to judge by */
			if (!unlike_steady(w, mt, mk, ma)) break;
			w->warmup = 1;
			out->nwarm++;
		}
	}
	free(rec);
	/* the counted steps: medians of every figure */
	double med[NFIG];
	for (int f = 0; f < NFIG; f++) med[f] = quantile_of(buf, counted(p, f, keep, buf), 0.5);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		const struct step_row *w = step_row(p, i);
		if (!step_counted(w, keep)) continue;
		m++;
		out->wall += w->e - w->s;
		for (int k = 0; k < SB_COUNT; k++) out->bucket[k] += w->bucket[k];
		out->launched += w->launched;
		out->short_ops += w->short_ops;
		out->runtime_outliers += w->runtime_outliers;
		out->delay_outliers += w->delay_outliers;
		if (w->delay_max > out->delay_max) out->delay_max = w->delay_max;
		if (w->queue_max > out->queue_max) out->queue_max = w->queue_max;
	}
	out->ncounted = m;
	if (!m) { free(buf); return; }
	out->time = qstats_of(buf, counted(p, F_TIME, keep, buf));
	uint64_t busy = out->bucket[SB_COMPUTE] + out->bucket[SB_COMM] + out->bucket[SB_MEMORY];
	out->busy_pct = out->wall ? 100.0 * (double)busy / (double)out->wall : 0;
	for (int k = 0; k < SB_COUNT; k++) out->bucket_q[k] = qstats_of(buf, counted(p, F_BUCKET0 + k, keep, buf));
	out->kernels = qstats_of(buf, counted(p, F_KERNELS, keep, buf));
	out->kernel_ns = qstats_of(buf, counted(p, F_KERNEL_NS, keep, buf));
	out->gpu_work = qstats_of(buf, counted(p, F_GPU_WORK, keep, buf));
	out->runs_ahead = out->gpu_work.mean > STEP_RUN_AHEAD * (double)out->wall / (double)m;
	p->runs_ahead = out->runs_ahead;
	out->cpu_med = quantile_of(buf, counted(p, F_CPU_MED, keep, buf), 0.5);
	out->gpu_med = quantile_of(buf, counted(p, F_GPU_MED, keep, buf), 0.5);
	out->delay_med = quantile_of(buf, counted(p, F_DELAY_MED, keep, buf), 0.5);
	/* outliers: further from the median than max(3 scaled MADs, 10 %) */
	size_t q = 0;
	for (size_t i = 0; i < n; i++)
		if (step_counted(step_row(p, i), keep)) buf[q++] = fabs(fig(step_row(p, i), F_TIME) - med[F_TIME]);
	double mad = quantile_of(buf, q, 0.5);
	double thr = 3 * 1.4826 * mad > 0.2 * med[F_TIME] ? 3 * 1.4826 * mad : 0.2 * med[F_TIME];
	for (size_t i = 0; i < n; i++) {
		struct step_row *w = step_row_w(p, i);
		if (!step_counted(w, keep) || fabs(fig(w, F_TIME) - med[F_TIME]) <= thr) continue;
		w->outlier = 1;
		out->noutliers++;
		out->why[i] = what_differs(w, med);
	}
	free(buf);
}

void step_summary_free(struct step_summary *s, size_t nrows)
{
	if (!s->why) return;
	for (size_t i = 0; i < nrows; i++) free(s->why[i]);
	free(s->why);
	s->why = NULL;
}
