/* steps_report.c — see steps_report.h. */
#include "analysis/steps/steps_report.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/core/quantile.h"
#include "analysis/steps/step_summary.h"
#include "common/spill.h"
#include "common/util.h"

/* report_define with a column array's length */
#define DEFINE(rep, title, cols) report_define(rep, title, cols, (int)(sizeof(cols) / sizeof((cols)[0])))

static const struct col summary_cols[] = {
	{ "PID", "pid", COL_ID, COL_EVERYWHERE }, { "Method", "method", COL_STR, COL_EVERYWHERE }, { "Steps", "steps", COL_INT, COL_EVERYWHERE },
	{ "Warm-up", "warmup", COL_INT, COL_EVERYWHERE }, { "Counted", "counted", COL_INT, COL_EVERYWHERE }, { "Med (ns)", "median_ns", COL_INT, COL_EVERYWHERE },
	{ "P90 (ns)", "p90_ns", COL_INT, COL_EVERYWHERE }, { "Max (ns)", "max_ns", COL_INT, COL_EVERYWHERE }, { "Min (ns)", "min_ns", COL_INT, COL_EVERYWHERE },
	{ "Spread (%)", "spread_pct", COL_F1, COL_EVERYWHERE }, { "GPU Busy (%)", "gpu_busy_pct", COL_F1, COL_EVERYWHERE },
	{ "Outliers", "outliers", COL_INT, COL_EVERYWHERE }, { "Steps Are", "defined_by", COL_STR, COL_PROSE },
};

static const struct col bucket_cols[] = {
	{ "PID", "pid", COL_ID, COL_EVERYWHERE }, { "Bucket", "bucket", COL_STR, COL_EVERYWHERE }, { "Total (ns)", "total_ns", COL_INT, COL_EVERYWHERE },
	{ "Step Time (%)", "step_time_pct", COL_F1, COL_EVERYWHERE }, { "Med (ns)", "median_ns", COL_INT, COL_EVERYWHERE },
	{ "P90 (ns)", "p90_ns", COL_INT, COL_EVERYWHERE }, { "Max (ns)", "max_ns", COL_INT, COL_EVERYWHERE }, { "Meaning", "meaning", COL_STR, COL_PROSE },
};

static const struct col launch_cols[] = {
	{ "PID", "pid", COL_ID, COL_EVERYWHERE }, { "Launched Ops", "launched_ops", COL_INT, COL_EVERYWHERE },
	{ "CPU Dur Med (ns)", "cpu_duration_med_ns", COL_INT, COL_EVERYWHERE }, { "GPU Dur Med (ns)", "gpu_duration_med_ns", COL_INT, COL_EVERYWHERE },
	{ "Delay Med (ns)", "launch_delay_med_ns", COL_INT, COL_EVERYWHERE }, { "Delay Max (ns)", "launch_delay_max_ns", COL_INT, COL_EVERYWHERE },
	{ "Queue Max", "queue_length_max", COL_INT, COL_EVERYWHERE }, { "Short Ops", "short_ops", COL_INT, COL_EVERYWHERE },
	{ "Runtime Outliers", "runtime_outliers", COL_INT, COL_EVERYWHERE }, { "Delay Outliers", "launch_delay_outliers", COL_INT, COL_EVERYWHERE },
	{ "Kernels/Step Med", "kernels_per_step_med", COL_F1, COL_EVERYWHERE },
	{ "Kernel Time/Step Med (ns)", "kernel_ns_per_step_med", COL_INT, COL_EVERYWHERE },
};

static const struct col outlier_cols[] = {
	{ "PID", "pid", COL_ID, COL_EVERYWHERE }, { "Step", "step", COL_ID, COL_EVERYWHERE }, { "Start (ns)", "start_ns", COL_INT, COL_EVERYWHERE },
	{ "Time (ns)", "time_ns", COL_INT, COL_EVERYWHERE }, { "vs Med (%)", "vs_median_pct", COL_F1, COL_EVERYWHERE },
	{ "What Differs", "what_differs", COL_STR, COL_PROSE },
};

static const struct col phase_cols[] = {
	{ "PID", "pid", COL_ID, COL_EVERYWHERE }, { "Steps", "steps", COL_INT, COL_EVERYWHERE }, { "Kernels", "kernels", COL_INT, COL_EVERYWHERE },
	{ "Kernel Time (ns)", "kernel_ns", COL_INT, COL_EVERYWHERE }, { "Med/Step (ns)", "kernel_ns_per_step_med", COL_INT, COL_EVERYWHERE },
	{ "Of Step Kernels (%)", "of_step_kernel_pct", COL_F1, COL_EVERYWHERE }, { "Memops", "memops", COL_INT, COL_EVERYWHERE },
	{ "Memop Time (ns)", "memop_ns", COL_INT, COL_EVERYWHERE }, { "Phase", "phase", COL_STR, COL_EVERYWHERE },
};

static const struct col row_cols[] = {
	{ "PID", "pid", COL_ID, COL_EVERYWHERE }, { "Step", "step", COL_ID, COL_EVERYWHERE }, { "Start (ns)", "start_ns", COL_INT, COL_EVERYWHERE },
	{ "Time (ns)", "time_ns", COL_INT, COL_EVERYWHERE }, { "Compute", "compute_ns", COL_INT, COL_EVERYWHERE }, { "Comm", "comm_ns", COL_INT, COL_EVERYWHERE },
	{ "Memory", "memory_ns", COL_INT, COL_EVERYWHERE }, { "Host Wait", "host_wait_ns", COL_INT, COL_EVERYWHERE }, { "Sync", "sync_ns", COL_INT, COL_EVERYWHERE },
	{ "Launch", "launch_ns", COL_INT, COL_EVERYWHERE }, { "Other", "other_ns", COL_INT, COL_EVERYWHERE }, { "Kernels", "kernels", COL_INT, COL_EVERYWHERE },
	{ "Kernel Time", "kernel_time_ns", COL_INT, COL_EVERYWHERE }, { "Memops", "memops", COL_INT, COL_EVERYWHERE },
	{ "Other Thread", "other_thread_ops", COL_INT, COL_EVERYWHERE }, { "CPU Dur Med", "cpu_duration_med_ns", COL_INT, COL_EVERYWHERE },
	{ "Delay Med", "launch_delay_med_ns", COL_INT, COL_EVERYWHERE }, { "Delay Max", "launch_delay_max_ns", COL_INT, COL_EVERYWHERE },
	{ "Queue Max", "queue_length_max", COL_INT, COL_EVERYWHERE }, { "Sync Calls", "sync_calls", COL_INT, COL_EVERYWHERE },
	{ "Allocs", "alloc_calls", COL_INT, COL_EVERYWHERE }, { "Host Pause", "host_pause_ns", COL_INT, COL_EVERYWHERE },
	{ "Flags", "flags", COL_STR, COL_EVERYWHERE }, { "Range", "range", COL_STR, COL_EVERYWHERE },
};

/* [SB_COUNT]: the row of the step's whole time */
static const char *const bucket_meaning[SB_COUNT + 1] = {
	"a computation kernel runs",
	"an NCCL kernel runs, no computation kernel",
	"a memcpy/memset runs, no kernel",
	"idle: the next launch call came after the GPU drained",
	"idle: as host_wait, while a thread is in a synchronising call",
	"idle: the next launch was issued before the drain (launch latency)",
	"idle: the next operation was queued yet waited (event, stream), or has no call",
	"the step's wall time: the sum of the rows above",
};

static void note_add(char **note, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_add(char **note, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	size_t l = *note ? strlen(*note) : 0;
	*note = xrealloc(*note, l + strlen(buf) + 1);
	strcpy(*note + l, buf);
}

static double rel(uint64_t t, uint64_t base) { return (double)(int64_t)(t - base); }

/* One row per phase name of process p: over the counted steps. */
static void fill_phases(struct report *rep, const struct steps_proc *p, const struct attribution *a, int keep,
			uint64_t step_kernel_ns)
{
	size_t nn = attribution_nnames(a);
	struct acc { uint64_t steps, kernels, kernel_ns, memops, memop_ns; double *v; size_t nv, cv; };
	struct acc *acc = xcalloc(nn ? nn : 1, sizeof(*acc));
	for (size_t i = 0; i < p->nrows; i++) {
		const struct step_row *w = step_row(p, i);
		if (!keep && w->warmup) continue;
		for (uint32_t j = 0; j < w->ph_n; j++) {
			const struct step_phase *ph = step_phase(p, w->ph_off + j);
			struct acc *x = &acc[ph->name];
			x->steps++;
			x->kernels += ph->kernels;
			x->kernel_ns += ph->kernel_ns;
			x->memops += ph->memops;
			x->memop_ns += ph->memop_ns;
			double v = (double)ph->kernel_ns;
			VEC_PUSH(x->v, x->nv, x->cv, v);
		}
	}
	for (size_t k = 0; k < nn; k++) {
		struct acc *x = &acc[k];
		if (!x->steps) continue;
		struct cell *c = report_row(rep);
		cell_num(&c[0], p->pid);
		cell_num(&c[1], (double)x->steps);
		cell_num(&c[2], (double)x->kernels);
		cell_num(&c[3], (double)x->kernel_ns);
		cell_num(&c[4], quantile_of(x->v, x->nv, 0.5));
		if (step_kernel_ns) cell_num(&c[5], 100.0 * (double)x->kernel_ns / (double)step_kernel_ns);
		cell_num(&c[6], (double)x->memops);
		cell_num(&c[7], (double)x->memop_ns);
		cell_str(&c[8], attribution_name(a, (uint32_t)k));
		free(x->v);
	}
	free(acc);
}

static void fill_rows(struct report *rep, const struct steps_proc *p, const struct attribution *a, uint64_t base)
{
	for (size_t i = 0; i < p->nrows; i++) {
		const struct step_row *w = step_row(p, i);
		struct cell *c = report_row(rep);
		cell_num(&c[0], w->pid);
		cell_num(&c[1], (double)w->number);
		cell_num(&c[2], rel(w->s, base));
		cell_num(&c[3], (double)(w->e - w->s));
		for (int k = 0; k < SB_COUNT; k++) cell_num(&c[4 + k], (double)w->bucket[k]);
		cell_num(&c[11], (double)w->kernels);
		cell_num(&c[12], (double)w->kernel_ns);
		cell_num(&c[13], (double)w->memops);
		if (p->plan->method == STEP_NVTX) cell_num(&c[14], (double)w->other_thread);
		if (w->launched) {
			cell_num(&c[15], (double)w->cpu_med);
			cell_num(&c[16], (double)w->delay_med);
			cell_num(&c[17], (double)w->delay_max);
			cell_num(&c[18], w->queue_max);
		}
		cell_num(&c[19], w->sync_calls);
		cell_num(&c[20], w->alloc_calls);
		cell_num(&c[21], (double)w->pause_max);
		cell_str(&c[22], w->unrecorded ? "no GPU record" : w->partial ? "partial" : w->warmup ? "warm-up"
				 : w->outlier ? "outlier" : "");
		if (w->range_id != UINT32_MAX)
			cell_str(&c[23], attribution_name(a, attribution_range(a, w->range_id).name));
	}
}

void steps_reports_fill(struct steps_reports *out, struct steps *st, const struct steps_reports_opts *o)
{
	uint64_t base = o->base;
	int keep = o->keep_warmup;
	memset(out, 0, sizeof(*out));
	const struct attribution *a = steps_attribution(st);
	struct report *R = out->rep;
	report_init(&R[SR_SUMMARY], "steps");
	DEFINE(&R[SR_SUMMARY], "Training Steps (docs/STEPS.md)", summary_cols);
	report_init(&R[SR_BUCKETS], "step_buckets");
	DEFINE(&R[SR_BUCKETS], "Step Time by Bucket (counted steps; adds up to the step time)", bucket_cols);
	report_init(&R[SR_LAUNCH], "step_launch");
	DEFINE(&R[SR_LAUNCH], "Kernel Launch Statistics over the Counted Steps (HTA definitions)", launch_cols);
	report_init(&R[SR_OUTLIERS], "step_outliers");
	DEFINE(&R[SR_OUTLIERS], "Outlier Steps", outlier_cols);
	report_init(&R[SR_PHASES], "step_phases");
	DEFINE(&R[SR_PHASES], "GPU Work Launched per Phase (NVTX ranges directly inside the steps)", phase_cols);
	report_init(&R[SR_ROWS], "step_rows");
	DEFINE(&R[SR_ROWS], "Steps, One Row Each (ns)", row_cols);
	for (size_t i = 0; i < steps_nprocs(st); i++) {
		struct steps_proc *p = steps_proc(st, i), sub;
		sub.rows = NULL;
		if (o->row_selected) {
			/* a shallow copy with the selected rows (their phases stay in p->ph) */
			sub = *p;
			sub.rows = spill_new(sizeof(struct step_row), STEPS_ROWS_MEM);
			sub.nrows = 0;
			for (size_t k = 0; k < p->nrows; k++) {
				struct step_row w = *step_row(p, k);
				if (!o->row_selected(o->arg, &w)) continue;
				*(struct step_row *)spill_push(sub.rows) = w;
				sub.nrows++;
			}
			p = &sub;
		}
		const struct step_plan *pl = p->plan;
		struct step_summary sm;
		step_summarize(p, keep, &sm);
		note_add(&out->note[SR_SUMMARY], " pid %u: %s%s\n", p->pid,
			 pl->method == STEP_NONE ? "" : "steps are ", pl->what);
		size_t npartial = 0, nunrec = 0, nhist = 0;
		for (size_t k = 0; k < p->nrows; k++) {
			npartial += step_row(p, k)->partial;
			nunrec += step_row(p, k)->unrecorded;
		}
		while (nhist < p->nrows && step_row(p, nhist)->unrecorded) nhist++;
		if (nhist < p->nrows && nhist) {
			/* the steps before the first window: a capture's history */
			char d[32];
			fmt_dur(d, sizeof(d), step_row(p, nhist)->s - step_row(p, 0)->s);
			note_add(&out->note[SR_SUMMARY],
				 "   history: %s before GPU activity was recorded (%zu step%s), API calls and NVTX only:\n"
				 "   shown as context ('no GPU record'), not counted.\n",
				 d, nhist, nhist == 1 ? "" : "s");
			nunrec -= nhist;
		}
		if (nunrec)
			note_add(&out->note[SR_SUMMARY],
				 "   %zu step%s not inside one GPU-activity window (a capture's end, --gpu-window,\n"
				 "   --sample-steps): GPU work was not recorded there; listed ('no GPU record'), not counted.\n",
				 nunrec, nunrec == 1 ? " is" : "s are");
		if (p->nrows)
			note_add(&out->note[SR_SUMMARY], "   %zu warm-up step%s %s;%s %zu counted.\n", sm.nwarm,
				 sm.nwarm == 1 ? "" : "s",
				 keep ? "recognised and kept (--keep-warmup)" : "recognised and left out (--keep-warmup counts them)",
				 npartial ? " the last step is partial (no next boundary: not counted);" : "", sm.ncounted);
		if (p->late_ops)
			note_add(&out->note[SR_SUMMARY],
				 "   %" PRIu64 " GPU operations came after their step was finalized and are not counted in it.\n",
				 p->late_ops);
		struct cell *c = report_row(&R[SR_SUMMARY]);
		cell_num(&c[0], p->pid);
		cell_str(&c[1], step_method_name(pl->method));
		cell_num(&c[2], (double)p->nrows);
		cell_num(&c[3], (double)sm.nwarm);
		cell_num(&c[4], (double)sm.ncounted);
		/* a host that runs ahead: its steps are shorter than the work they
		 * issue, the pipeline's step time is the GPU's, and the GPU's busy
		 * share of the host's short windows says nothing */
		const struct qstats *g = sm.runs_ahead ? &sm.gpu_work : &sm.time;
		if (sm.ncounted) {
			cell_num(&c[5], g->med);
			cell_num(&c[6], g->p90);
			cell_num(&c[7], g->max);
			cell_num(&c[8], g->min);
			cell_num(&c[9], g->med > 0 ? 100.0 * (g->p90 - g->p10) / g->med : 0); /* spread */
			if (!sm.runs_ahead) cell_num(&c[10], sm.busy_pct);
			cell_num(&c[11], (double)sm.noutliers);
		}
		if (sm.ncounted && sm.runs_ahead) {
			char *what = NULL;
			note_add(&what, "host runs ahead, times are the GPU's: %s", pl->what);
			cell_str(&c[12], what);
			free(what);
			note_add(&out->note[SR_SUMMARY],
				 "   The host runs ahead of the GPU: its steps took %.3f ms (mean) and launched %.3f ms of GPU\n"
				 "   work each, more than %.1fx: the step time is the GPU's, so Med, P90, Max and Min are of\n"
				 "   the GPU work launched per step (kernel + copy and set time), GPU Busy is not given, and\n"
				 "   the buckets and step rows are of the host's step windows.\n",
				 (double)sm.wall / (double)sm.ncounted / 1e6, g->mean / 1e6, STEP_RUN_AHEAD);
		} else {
			cell_str(&c[12], pl->what);
		}
		if (sm.ncounted) {
			for (int k = 0; k <= SB_COUNT; k++) {
				int all = k == SB_COUNT;
				uint64_t v = all ? sm.wall : sm.bucket[k];
				const struct qstats *q = all ? &sm.time : &sm.bucket_q[k];
				c = report_row(&R[SR_BUCKETS]);
				cell_num(&c[0], p->pid);
				cell_str(&c[1], all ? "step" : step_bucket_names[k]);
				cell_num(&c[2], (double)v);
				cell_num(&c[3], all ? 100.0 : sm.wall ? 100.0 * (double)v / (double)sm.wall : 0);
				cell_num(&c[4], q->med);
				cell_num(&c[5], q->p90);
				cell_num(&c[6], q->max);
				cell_str(&c[7], bucket_meaning[k]);
			}
			c = report_row(&R[SR_LAUNCH]);
			cell_num(&c[0], p->pid);
			cell_num(&c[1], (double)sm.launched);
			if (sm.launched) {
				cell_num(&c[2], sm.cpu_med);
				cell_num(&c[3], sm.gpu_med);
				cell_num(&c[4], sm.delay_med);
				cell_num(&c[5], (double)sm.delay_max);
				cell_num(&c[6], sm.queue_max);
			}
			cell_num(&c[7], (double)sm.short_ops);
			cell_num(&c[8], (double)sm.runtime_outliers);
			cell_num(&c[9], (double)sm.delay_outliers);
			cell_num(&c[10], sm.kernels.med);
			cell_num(&c[11], sm.kernel_ns.med);
		}
		double med = sm.time.med;
		for (size_t k = 0; k < p->nrows; k++) {
			const struct step_row *w = step_row(p, k);
			if (!w->outlier) continue;
			c = report_row(&R[SR_OUTLIERS]);
			cell_num(&c[0], p->pid);
			cell_num(&c[1], (double)w->number);
			cell_num(&c[2], rel(w->s, base));
			cell_num(&c[3], (double)(w->e - w->s));
			if (med > 0) cell_num(&c[4], 100.0 * ((double)(w->e - w->s) - med) / med);
			cell_str(&c[5], sm.why[k]);
		}
		uint64_t step_kernel_ns = 0;
		for (size_t k = 0; k < p->nrows; k++)
			if (keep || !step_row(p, k)->warmup) step_kernel_ns += step_row(p, k)->kernel_ns;
		fill_phases(&R[SR_PHASES], p, a, keep, step_kernel_ns);
		fill_rows(&R[SR_ROWS], p, a, base);
		step_summary_free(&sm, p->nrows);
		spill_free(sub.rows);
	}
	note_add(&out->note[SR_SUMMARY],
		 " GPU work belongs to the step (or range) that was open when its launch call started: %s.\n"
		 " Spread = (P90 - P10) / Med.  GPU Busy = time some GPU operation of the process ran / step time.\n"
		 " Outlier: further from Med than max(3 x 1.4826 x MAD, 20 %% of Med).\n",
		 attribution_rule(a) == ATTR_ANY_THREAD ? "a call from any thread of the process (any-thread)"
							 : "only calls on the thread that began it (same-thread)");
	note_add(&out->note[SR_BUCKETS],
		 " Busy buckets take priority in the order compute, comm, memory.  Idle gaps are classified by\n"
		 "   the GPU operation that ends them and its launch call (HTA's idle time breakdown, extended):\n"
		 "   launch = issued before the drain and still running then, or a gap <= %" PRIu64 " ns.\n",
		 steps_kernel_wait(st));
	note_add(&out->note[SR_LAUNCH],
		 " Per launched operation with a call: CPU Dur = the call's duration, Delay = GPU start - call end\n"
		 "   (0 if earlier), Queue = operations launched but not started on the stream at the launch.\n"
		 "   Short: CPU Dur <= 50 us and GPU Dur < CPU Dur; Runtime Outlier: CPU Dur > 50 us; Delay\n"
		 "   Outlier: Delay > 100 us.  The medians are medians of the per-step medians.\n");
	note_add(&out->note[SR_PHASES],
		 " Kernel Time: kernels whose launch call started while the phase was open (%s), over the\n"
		 "   counted steps; Of Step Kernels: share of the kernel time launched in those steps.\n",
		 attr_rule_name(attribution_rule(a)));
	for (int k = 0; k < SR_COUNT; k++) R[k].note = out->note[k];
}

void steps_reports_free(struct steps_reports *out)
{
	for (int k = 0; k < SR_COUNT; k++) {
		report_free(&out->rep[k]);
		free(out->note[k]);
	}
}
