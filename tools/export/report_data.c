/* report_data.c — see report_data.h. */
#include "export/report_data.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/intervals.h"
#include "common/tool.h"
#include "common/util.h"

static void jnum(FILE *f, double v)
{
	if (!isfinite(v)) fputs("null", f);
	else if (v == floor(v) && fabs(v) < 1e15) fprintf(f, "%.0f", v);
	else fprintf(f, "%.6g", v);
}

/* seconds after the trace start, ns resolution */
static void jsec(FILE *f, uint64_t t, uint64_t base)
{
	fprintf(f, "%.9g", ((double)(int64_t)(t - base)) / 1e9);
}

/* {name: rows (first max)} and {name: row count}, for the tables marked */
static void tables(FILE *f, const char *key, const struct report *t, const int *want, size_t n, size_t max)
{
	fprintf(f, ",\"%s\":{", key);
	int first = 1;
	for (size_t i = 0; i < n; i++) {
		if (want && !want[i]) continue;
		struct report cut = t[i];
		if (cut.nrows > max) cut.nrows = max;
		fprintf(f, "%s\"%s\":", first ? "" : ",\n", t[i].name);
		const struct report_style js = { .fmt = FMT_JSON, .width = 0, .unit = TU_NS };
		report_print(f, &cut, &js);
		first = 0;
	}
	fprintf(f, "},\"%s_rows\":{", key);
	first = 1;
	for (size_t i = 0; i < n; i++) {
		if (want && !want[i]) continue;
		fprintf(f, "%s\"%s\":%zu", first ? "" : ",", t[i].name, t[i].nrows);
		first = 0;
	}
	fputc('}', f);
}

/* Whether a counter is a percentage drawn beside the busy % (nvml.*_util, *_pct). */
static int report_counter_is_pct(const char *name)
{
	size_t l = strlen(name);
	return (l > 5 && !strcmp(name + l - 5, "_util")) || (l > 4 && !strcmp(name + l - 4, "_pct"));
}

/* the step flag of the page (report_data.h) */
static int step_flag(const struct step_row *w)
{
	if (w->partial || w->unrecorded) return 3;
	if (w->warmup) return 1;
	if (w->outlier) return 2;
	return 0;
}

static void step_series(FILE *f, const struct steps_proc *p, uint64_t base, size_t max)
{
	size_t stride = p->nrows > max ? (p->nrows + max - 1) / max : 1;
	char *keep = xcalloc(p->nrows ? p->nrows : 1, 1);
	size_t shown = 0;
	for (size_t i = 0; i < p->nrows; i++) {
		keep[i] = i % stride == 0 || step_flag(step_row(p, i)) != 0;
		shown += keep[i];
	}
	fprintf(f, "{\"total\":%zu,\"shown\":%zu,\"stride\":%zu", p->nrows, shown, stride);
/* expr per kept row w, as a JSON array */
#define ROWS(expr) do { \
		fputc('[', f); \
		int first_ = 1; \
		for (size_t i = 0; i < p->nrows; i++) { \
			if (!keep[i]) continue; \
			const struct step_row *w = step_row(p, i); \
			if (!first_) fputc(',', f); \
			first_ = 0; \
			expr; \
		} \
		fputc(']', f); } while (0)
#define SERIES(key, expr) do { fputs(",\"" key "\":", f); ROWS(expr); } while (0)
	SERIES("index", fprintf(f, "%u", w->index));
	SERIES("number", fprintf(f, "%" PRId64, w->number));
	SERIES("start_s", jsec(f, w->s, base));
	SERIES("time_ns", fprintf(f, "%" PRIu64, w->e - w->s));
	/* the GPU work launched in the step: the step time the steps table
	 * gives when the host runs ahead (docs/STEPS.md) */
	SERIES("gpu_ns", fprintf(f, "%" PRIu64, w->kernel_ns + w->memop_ns));
	fprintf(f, ",\"runs_ahead\":%s", p->runs_ahead ? "true" : "false");
	SERIES("flag", fprintf(f, "%d", step_flag(w)));
	SERIES("kernels", fprintf(f, "%" PRIu64, w->kernels));
	fputs(",\"buckets\":{", f);
	for (int b = 0; b < SB_COUNT; b++) {
		fprintf(f, "%s\"%s\":", b ? "," : "", step_bucket_names[b]);
		ROWS(fprintf(f, "%" PRIu64, w->bucket[b]));
	}
	fputs("}}", f);
#undef SERIES
#undef ROWS
	free(keep);
}

/* Time covered by the union set u (disjoint, ordered) within [a, b);
 * *pos: where to start looking, advanced (bins go left to right). */
static uint64_t covered(const struct ivset *u, size_t *pos, uint64_t a, uint64_t b)
{
	while (*pos < u->n && u->v[*pos].e <= a) (*pos)++;
	uint64_t sum = 0;
	for (size_t k = *pos; k < u->n && u->v[k].s < b; k++) {
		uint64_t s = u->v[k].s > a ? u->v[k].s : a, e = u->v[k].e < b ? u->v[k].e : b;
		if (e > s) sum += e - s;
	}
	return sum;
}

/* Time of bin [a, b) in which pid's GPU activity was recorded: all of it,
 * unless the process has windows. */
static uint64_t recorded(const struct winset *w, uint32_t pid, uint64_t a, uint64_t b)
{
	size_t lo = 0, hi = 0;
	if (w && w->n) winset_range(w, pid, &lo, &hi);
	if (lo == hi) return b - a;
	uint64_t sum = 0;
	for (size_t k = lo; k < hi; k++) {
		uint64_t s = w->v[k].s > a ? w->v[k].s : a, e = w->v[k].e < b ? w->v[k].e : b;
		if (e > s) sum += e - s;
	}
	return sum;
}

static uint64_t bin_lo(const struct gpu_bins *bn, size_t i) { return bn->t0 + i * bn->width; }
static uint64_t bin_hi(const struct gpu_bins *bn, size_t i)
{
	uint64_t e = bn->t0 + (i + 1) * bn->width;
	return e > bn->t1 ? bn->t1 : e;
}

/* binned means of the samples of series s; null where none */
static void counter_bins(FILE *f, const struct cseries *s, const struct gpu_bins *bn)
{
	fputc('[', f);
	size_t k = 0;
	for (size_t i = 0; i < bn->n; i++) {
		uint64_t a = bin_lo(bn, i), b = bin_hi(bn, i);
		double sum = 0;
		size_t cnt = 0;
		while (k < s->n && s->s[k].t < a) k++;
		for (size_t j = k; j < s->n && (s->s[j].t < b || (i == bn->n - 1 && s->s[j].t <= b)); j++) {
			sum += s->s[j].v;
			cnt++;
		}
		if (i) fputc(',', f);
		if (cnt) jnum(f, sum / (double)cnt);
		else fputs("null", f);
	}
	fputc(']', f);
}

static void bin_times(FILE *f, const struct gpu_bins *bn, uint64_t base)
{
	fputs("\"t_s\":[", f);
	for (size_t i = 0; i < bn->n; i++) {
		if (i) fputc(',', f);
		jsec(f, bn->t0 + i * bn->width + bn->width / 2, base);
	}
	fputc(']', f);
}

/* per bin, the share of its recorded time that device g's kernels (which
 * 0) or copies (1) cover, in %: from its bins when it summed them on these
 * (gpu_activity.bins), else from its kept union */
static void busy_bins(FILE *f, const struct gpu_dev *g, int which, const struct winset *win,
		      const struct gpu_bins *bn)
{
	const struct gpu_busy *by = g->busy;
	if (by && (by->bn.t0 != bn->t0 || by->bn.t1 != bn->t1 || by->bn.width != bn->width || by->bn.n != bn->n))
		by = NULL;
	size_t pos = 0;
	fputc('[', f);
	for (size_t i = 0; i < bn->n; i++) {
		uint64_t a = bin_lo(bn, i), b = bin_hi(bn, i), rec = recorded(win, g->pid, a, b);
		if (i) fputc(',', f);
		if (rec) jnum(f, 100.0 * (double)(by ? by->v[which][i] : covered(&g->kc.set[which], &pos, a, b)) / (double)rec);
		else fputs("null", f);
	}
	fputc(']', f);
}

static const char *device_name(const struct report_run *run, uint32_t pid, uint32_t dev)
{
	const struct trace_info *in = run->info;
	for (size_t i = 0; i < in->ndevs; i++)
		if (in->dev_pid[i] == pid && in->devs[i].device_id == dev) return tool_str(run->r, in->devs[i].name_id);
	return "";
}

static void devices(FILE *f, const struct report_run *run, uint32_t pid, const struct gpu_bins *bn, uint64_t base)
{
	fputs(",\"devices\":[", f);
	int firstd = 1;
	for (size_t d = 0; d < run->gpu->ndevs; d++) {
		const struct gpu_dev *g = &run->gpu->devs[d];
		if (g->pid != pid) continue;
		fprintf(f, "%s{\"device\":%u,\"name\":", firstd ? "" : ",", g->dev);
		json_str(f, device_name(run, pid, g->dev));
		fprintf(f, ",\"busy_ns\":%" PRIu64 ",\"bin_ns\":%" PRIu64 ",", g->ksum.busy, bn->width);
		bin_times(f, bn, base);
		fputs(",\"series\":{\"GPU busy %\":", f);
		busy_bins(f, g, 0, run->win, bn);
		fputs(",\"copy busy %\":", f);
		busy_bins(f, g, 1, run->win, bn);
		for (size_t c = 0; c < run->cnt->n; c++) {
			const struct cseries *s = &run->cnt->v[c];
			if (s->pid != pid || s->dev != g->dev || !report_counter_is_pct(s->name)) continue;
			fputc(',', f);
			json_str(f, s->name);
			fputc(':', f);
			counter_bins(f, s, bn);
		}
		fputs("}}", f);
		firstd = 0;
	}
	fputc(']', f);
}

/* counters not drawn beside a device's busy % (other kinds, or of a device
 * with no GPU activity) */
static void other_counters(FILE *f, const struct report_run *run, uint32_t pid, const struct gpu_bins *bn,
			   uint64_t base)
{
	fputs(",\"counters\":[", f);
	int first = 1;
	for (size_t c = 0; c < run->cnt->n; c++) {
		const struct cseries *s = &run->cnt->v[c];
		if (s->pid != pid) continue;
		int beside = 0;
		for (size_t d = 0; d < run->gpu->ndevs && !beside; d++)
			beside = run->gpu->devs[d].pid == pid && run->gpu->devs[d].dev == s->dev &&
				 report_counter_is_pct(s->name);
		if (beside) continue;
		fprintf(f, "%s{\"name\":", first ? "" : ",");
		json_str(f, s->name);
		fprintf(f, ",\"device\":%u,\"samples\":%zu,", s->dev, s->n);
		bin_times(f, bn, base);
		fputs(",\"v\":", f);
		counter_bins(f, s, bn);
		fputc('}', f);
		first = 0;
	}
	fputc(']', f);
}

static void memory(FILE *f, const struct report_run *run, uint32_t pid, const struct gpu_bins *bn, uint64_t base)
{
	fputs(",\"memory\":[", f);
	int first = 1;
	for (size_t m = 0; m < run->mem->n; m++) {
		const struct mem_series *s = &run->mem->v[m];
		if (s->pid != pid || !s->n) continue;
		fprintf(f, "%s{\"device\":%u,\"kind\":\"%s\",\"allocs\":%" PRIu64 ",\"frees\":%" PRIu64
			",\"peak_bytes\":%" PRId64 ",\"end_bytes\":%" PRId64 ",", first ? "" : ",", s->dev,
			mem_kind_name(s->kind), s->allocs, s->frees, s->peak, s->p[s->n - 1].v);
		/* the peak, marked on the chart: its first instant, and the bin
		 * whose value it is (a bin holds the level at its start and the
		 * events in (start, end]); -1 when none or outside the bins */
		size_t k = 0;
		while (k < s->n && s->p[k].v != s->peak) k++;
		int64_t pbin = -1;
		if (s->peak > 0 && k < s->n && s->p[k].t <= bn->t1 && bn->n && bn->width) {
			uint64_t t = s->p[k].t;
			size_t i = t <= bn->t0 ? 0 : (size_t)((t - bn->t0 - 1) / bn->width);
			pbin = (int64_t)(i < bn->n ? i : bn->n - 1);
		}
		fputs("\"peak_s\":", f);
		if (k < s->n) jsec(f, s->p[k].t, base);
		else fputs("null", f);
		fprintf(f, ",\"peak_bin\":%" PRId64 ",", pbin);
		bin_times(f, bn, base);
		fputs(",\"bytes\":[", f);
		for (size_t i = 0; i < bn->n; i++)
			fprintf(f, "%s%" PRId64, i ? "," : "", mem_series_max(s, bin_lo(bn, i), bin_hi(bn, i)));
		fputs("]}", f);
		first = 0;
	}
	fputc(']', f);
}

/* A page-wide limit of points per process (the steps, the bins): max,
 * divided among the processes past 4, at least min(max, 100). */
static size_t per_proc(size_t max, const struct trace_info *in)
{
	size_t np = in->nprocs ? in->nprocs : 1;
	size_t div = np > 4 ? (np + 3) / 4 : 1, n = max / div;
	return div > 1 && n < 100 ? (max < 100 ? max : 100) : n;
}

static void procs(FILE *f, const struct report_run *run, const struct report_data_opts *o)
{
	const struct trace_info *in = run->info;
	uint64_t base = gp_reader_header(run->r)->start_trace_ns;
	/* the processes: those with a PROCESS record, else the header's */
	size_t np = in->nprocs ? in->nprocs : 1, steps_max = per_proc(o->steps_max, in);
	struct gpu_bins bn;
	report_data_bins(in, o, &bn);
	fputs(",\"procs\":[", f);
	for (size_t i = 0; i < np; i++) {
		uint32_t pid = in->nprocs ? in->procs[i].pid : gp_reader_header(run->r)->pid;
		int32_t rank = in->nprocs ? in->procs[i].rank : gp_reader_header(run->r)->rank;
		fprintf(f, "%s{\"pid\":%u,\"rank\":%d,\"name\":", i ? ",\n" : "\n", pid, rank);
		json_str(f, in->nprocs ? tool_str(run->r, in->procs[i].name_id) : "");
		fputs(",\"step_series\":", f);
		const struct steps_proc *sp = NULL;
		for (size_t k = 0; run->st && k < steps_nprocs(run->st) && !sp; k++)
			if (steps_proc(run->st, k)->pid == pid) sp = steps_proc(run->st, k);
		if (sp && sp->nrows) step_series(f, sp, base, steps_max);
		else fputs("null", f);
		devices(f, run, pid, &bn, base);
		other_counters(f, run, pid, &bn, base);
		memory(f, run, pid, &bn, base);
		fputc('}', f);
	}
	fputc(']', f);
}

/* Options with the defaults filled in. */
static void report_data_opts_fill(struct report_data_opts *o, const struct report_data_opts *in)
{
	memset(o, 0, sizeof(*o));
	if (in) *o = *in;
	if (!o->rows_max) o->rows_max = REPORT_ROWS_MAX;
	if (!o->steps_max) o->steps_max = REPORT_STEPS_MAX;
	if (!o->bins) o->bins = REPORT_BINS;
}

void report_data_bins(const struct trace_info *in, const struct report_data_opts *opts, struct gpu_bins *bn)
{
	struct report_data_opts o;
	report_data_opts_fill(&o, opts);
	size_t nbins = per_proc(o.bins, in);
	bn->t0 = in->first; bn->t1 = in->last; bn->width = 1; bn->n = 1;
	if (in->have_time && in->last > in->first) {
		uint64_t span = in->last - in->first;
		bn->width = (span + nbins - 1) / nbins;
		if (!bn->width) bn->width = 1;
		bn->n = (size_t)((span + bn->width - 1) / bn->width);
	}
}

void report_data_head(FILE *f, const char *command, int charts, const char *uplot_version,
		      const struct report_data_opts *opts)
{
	struct report_data_opts o;
	report_data_opts_fill(&o, opts);
	fprintf(f, "{\"generator\":\"gpuprof %s\",\"command\":", GP_PRODUCER_VERSION);
	json_str(f, command);
	fprintf(f, ",\"charts\":%s,\"uplot_version\":", charts ? "true" : "false");
	if (uplot_version) json_str(f, uplot_version);
	else fputs("null", f);
	fprintf(f, ",\"rows_max\":%zu,\"runs\":[", o.rows_max);
}

void report_data_run(FILE *f, const struct report_run *run, size_t index, const struct report_data_opts *opts)
{
	struct report_data_opts o;
	report_data_opts_fill(&o, opts);
	fputs(index ? ",\n{\"file\":" : "\n{\"file\":", f);
	json_str(f, run->path);
	fprintf(f, ",\"advise\":%s,\"info\":", run->advise_json ? run->advise_json : "null");
	trace_info_print_json(f, run->info, run->r, run->path, run->ig);
	tables(f, "stats", run->stats, run->stats_want, run->nstats, o.rows_max);
	if (run->steps) tables(f, "steps", run->steps, NULL, run->nsteps, o.rows_max);
	else fputs(",\"steps\":null,\"steps_rows\":null", f);
	fputs(",\"steps_error\":", f);
	if (run->steps_error) json_str(f, run->steps_error);
	else fputs("null", f);
	procs(f, run, &o);
	fputc('}', f);
}

void report_data_tail(FILE *f)
{
	fputs("]}\n", f);
}
