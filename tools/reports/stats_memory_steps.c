/* stats_memory_steps.c — `stats --report memory_steps` (docs/MEMORY.md):
 * device memory per step, its growth per step and the sites that grow, the
 * run's peak by owner and site, and the last failed allocation with what
 * was live then.  The figures are analysis/memory/mem_view.h's; this report feeds
 * it the records and the context's steps, and prints its five tables.
 * Only when named (by_name on its first table: stats without --report
 * does not run it; naming memory_steps prints all five tables). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/memory/mem_view.h"
#include "analysis/steps/step_summary.h"
#include "common/tool.h"
#include "common/util.h"
#include "reports/stats_report.h"

struct memsteps { struct mem_view *mv; char oom_note[1024]; };

static void *ms_new(const struct stats_ctx *ctx)
{
	struct memsteps *s = xcalloc(1, sizeof(*s));
	s->mv = mem_view_new(ctx->r, ctx->stacks);
	return s;
}

static void ms_add(void *self, const struct stats_ctx *ctx, const struct stats_rec *r)
{
	struct memsteps *s = self;
	mem_view_add(s->mv, r->pid, r->tid, r->rec);
}

enum { ST_PID, ST_DEV, ST_STEP, ST_START, ST_HELD0, ST_PEAK, ST_HELD1, ST_COUNTED, ST_NCOLS };
static const struct col st_cols[ST_NCOLS] = {
	[ST_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE }, [ST_DEV] = { "Device", "device", COL_ID, COL_EVERYWHERE },
	[ST_STEP] = { "Step", "step", COL_ID, COL_EVERYWHERE },
	[ST_START] = { "Start (ns)", "start_ns", COL_INT, COL_EVERYWHERE },
	[ST_HELD0] = { "Held at Start (B)", "held_start_bytes", COL_INT, COL_EVERYWHERE },
	[ST_PEAK] = { "Peak (B)", "peak_bytes", COL_INT, COL_EVERYWHERE },
	[ST_HELD1] = { "Held at End (B)", "held_end_bytes", COL_INT, COL_EVERYWHERE },
	[ST_COUNTED] = { "Counted", "counted", COL_STR, COL_EVERYWHERE },
};

enum { GR_PID, GR_DEV, GR_STEPS, GR_SLOPE, GR_BOUND, GR_VERDICT, GR_PEAK, GR_PEAK_T, GR_END, GR_TOTAL, GR_NCOLS };
static const struct col gr_cols[GR_NCOLS] = {
	[GR_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE }, [GR_DEV] = { "Device", "device", COL_ID, COL_EVERYWHERE },
	[GR_STEPS] = { "Counted Steps", "counted_steps", COL_INT, COL_EVERYWHERE },
	[GR_SLOPE] = { "Growth/Step (B)", "growth_per_step_bytes", COL_F1, COL_EVERYWHERE },
	[GR_BOUND] = { "+/- (B)", "growth_bound_bytes", COL_F1, COL_EVERYWHERE },
	[GR_VERDICT] = { "Verdict", "verdict", COL_STR, COL_EVERYWHERE },
	[GR_PEAK] = { "Peak (B)", "peak_bytes", COL_INT, COL_EVERYWHERE },
	[GR_PEAK_T] = { "Peak At (ns)", "peak_at_ns", COL_INT, COL_EVERYWHERE },
	[GR_END] = { "Held at End (B)", "end_bytes", COL_INT, COL_EVERYWHERE },
	[GR_TOTAL] = { "Device Total (B)", "device_total_bytes", COL_INT, COL_EVERYWHERE },
};

enum { OW_PID, OW_DEV, OW_OWNER, OW_PEAK, OW_AT_PEAK, OW_END, OW_NCOLS };
static const struct col ow_cols[OW_NCOLS] = {
	[OW_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE }, [OW_DEV] = { "Device", "device", COL_ID, COL_EVERYWHERE },
	[OW_OWNER] = { "Owner", "owner", COL_STR, COL_EVERYWHERE },
	[OW_PEAK] = { "Own Peak (B)", "own_peak_bytes", COL_INT, COL_EVERYWHERE },
	[OW_AT_PEAK] = { "Held at Run Peak (B)", "at_run_peak_bytes", COL_INT, COL_EVERYWHERE },
	[OW_END] = { "Held at End (B)", "end_bytes", COL_INT, COL_EVERYWHERE },
};

enum { SI_PID, SI_DEV, SI_LEAK, SI_SLOPE, SI_AT_PEAK, SI_END, SI_ALLOCS, SI_OWNER, SI_SITE, SI_NCOLS };
static const struct col si_cols[SI_NCOLS] = {
	[SI_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE }, [SI_DEV] = { "Device", "device", COL_ID, COL_EVERYWHERE },
	[SI_LEAK] = { "Leaks", "leaks", COL_STR, COL_EVERYWHERE },
	[SI_SLOPE] = { "Growth/Step (B)", "growth_per_step_bytes", COL_F1, COL_EVERYWHERE },
	[SI_AT_PEAK] = { "Held at Run Peak (B)", "at_run_peak_bytes", COL_INT, COL_EVERYWHERE },
	[SI_END] = { "Held at End (B)", "end_bytes", COL_INT, COL_EVERYWHERE },
	[SI_ALLOCS] = { "Allocs", "allocs", COL_INT, COL_EVERYWHERE },
	[SI_OWNER] = { "Owner", "owner", COL_STR, COL_EVERYWHERE },
	[SI_SITE] = { "Site", "site", COL_STR, COL_EVERYWHERE },
};

enum { OO_PID, OO_DEV, OO_CALL, OO_AT, OO_LIVE, OO_SHARE, OO_OWNER, OO_SITE, OO_NCOLS };
static const struct col oo_cols[OO_NCOLS] = {
	[OO_PID] = { "PID", "pid", COL_ID, COL_EVERYWHERE }, [OO_DEV] = { "Device", "device", COL_ID, COL_EVERYWHERE },
	[OO_CALL] = { "Failed Call", "failed_call", COL_STR, COL_EVERYWHERE },
	[OO_AT] = { "At (ns)", "at_ns", COL_INT, COL_EVERYWHERE },
	[OO_LIVE] = { "Live (B)", "live_bytes", COL_INT, COL_EVERYWHERE },
	[OO_SHARE] = { "Of Live (%)", "live_pct", COL_F1, COL_EVERYWHERE },
	[OO_OWNER] = { "Owner", "owner", COL_STR, COL_EVERYWHERE },
	[OO_SITE] = { "Site", "site", COL_STR, COL_EVERYWHERE },
};

/* The context's steps into the view, then the view finished. */
static void ms_finish(struct memsteps *s, struct stats_ctx *ctx)
{
	struct steps *st = ctx->pipe.steps;
	int keep = ctx->opts->keep_warmup;
	for (size_t i = 0; st && i < steps_nprocs(st); i++) {
		struct steps_proc *p = steps_proc(st, i);
		struct step_summary sm;
		step_summarize(p, keep, &sm);
		step_summary_free(&sm, p->nrows);
		struct mem_step *v = xcalloc(p->nrows ? p->nrows : 1, sizeof(*v));
		for (size_t k = 0; k < p->nrows; k++) {
			const struct step_row *w = step_row(p, k);
			v[k] = (struct mem_step){ w->s, w->e, w->number, step_counted(w, keep) };
		}
		mem_view_set_steps(s->mv, p->pid, v, p->nrows);
		free(v);
	}
	mem_view_finish(s->mv, NULL);
}

/* The device's total memory: the context's device record (the view is
 * given none: the reports are not fed device records). */
static uint64_t total_of(const struct stats_ctx *ctx, uint32_t pid, uint32_t dev)
{
	const gp_rec_device *d = devprops_get(&ctx->dev, pid, dev);
	return d ? d->global_mem_bytes : 0;
}

static uint64_t rel(const struct stats_ctx *ctx, uint64_t t) { return t >= ctx->out_base ? t - ctx->out_base : 0; }

/* A row of one of the five tables: each begins with PID and Device (as
 * ST_PID, ST_DEV). */
static struct cell *pid_dev_row(struct report *rep, uint32_t pid, uint32_t dev)
{
	struct cell *c = report_row(rep);
	cell_num(&c[ST_PID], pid);
	cell_num(&c[ST_DEV], dev);
	return c;
}

static void ms_fill(void *self, struct stats_ctx *ctx, struct report *tables)
{
	struct memsteps *s = self;
	ms_finish(s, ctx);
	const struct mem_view *mv = s->mv;
	struct report *rs = &tables[0], *rg = &tables[1], *ro = &tables[2], *rsi = &tables[3], *roo = &tables[4];
	report_define(rs, "Device Memory per Step", st_cols, ST_NCOLS);
	rs->note = " Held = device memory allocated (cudaMalloc, cuMemCreate, cudaMallocAsync, ...) and not freed,\n"
		   "   from the memory records (--activity=default,memory); Peak: the highest level in the step.\n";
	report_define(rg, "Device Memory Growth", gr_cols, GR_NCOLS);
	rg->note = " Growth/Step: least-squares slope of Held at End over the counted steps; +/-: 2 standard\n"
		   "   errors; grows when the slope is above both 0 and +/- (docs/MEMORY.md).\n";
	report_define(ro, "Device Memory by Owner", ow_cols, OW_NCOLS);
	report_define(rsi, "Device Memory by Site", si_cols, SI_NCOLS);
	rsi->note = " Leaks: held at the counted steps' ends never falls and rises from step to step\n"
		    "   at least half the time (docs/MEMORY.md).\n"
		    "   Sites come from stacks at allocation calls; without them, the call and the size.\n";
	report_define(roo, "Out of Memory: Live at the Last Failed Allocation", oo_cols, OO_NCOLS);
	for (size_t i = 0; i < mem_view_nseries(mv); i++) {
		const struct mem_series_view *v = mem_view_series(mv, i);
		const struct steps_proc *p = NULL;
		for (size_t q = 0; ctx->pipe.steps && q < steps_nprocs(ctx->pipe.steps); q++)
			if (steps_proc(ctx->pipe.steps, q)->pid == v->pid) p = steps_proc(ctx->pipe.steps, q);
		for (size_t k = 0; k < v->nsteps; k++) {
			const struct mem_step_row *w = &v->steps[k];
			struct cell *c = pid_dev_row(rs, v->pid, v->dev);
			cell_num(&c[ST_STEP], (double)w->number);
			cell_num(&c[ST_START], p && k < p->nrows ? (double)rel(ctx, step_row(p, k)->s) : 0);
			cell_num(&c[ST_HELD0], (double)w->start);
			cell_num(&c[ST_PEAK], (double)w->peak);
			cell_num(&c[ST_HELD1], (double)w->end);
			cell_str(&c[ST_COUNTED], w->counted ? "yes" : "no");
		}
		struct cell *c = pid_dev_row(rg, v->pid, v->dev);
		cell_num(&c[GR_STEPS], (double)v->growth.n);
		cell_num(&c[GR_SLOPE], v->growth.slope);
		cell_num(&c[GR_BOUND], v->growth.bound);
		cell_str(&c[GR_VERDICT], v->growth.n < 3 ? "too few steps" : v->grows ? "grows" : "no growth");
		cell_num(&c[GR_PEAK], (double)v->peak);
		cell_num(&c[GR_PEAK_T], (double)rel(ctx, v->peak_t));
		cell_num(&c[GR_END], (double)v->end);
		cell_num(&c[GR_TOTAL], (double)total_of(ctx, v->pid, v->dev));
		for (int o = 0; o < MO_COUNT; o++) {
			if (!v->owner_peak[o] && !v->owner_end[o]) continue;
			c = pid_dev_row(ro, v->pid, v->dev);
			cell_str(&c[OW_OWNER], mem_owner_names[o]);
			cell_num(&c[OW_PEAK], (double)v->owner_peak[o]);
			cell_num(&c[OW_AT_PEAK], (double)v->owner_at_peak[o]);
			cell_num(&c[OW_END], (double)v->owner_end[o]);
		}
		for (size_t j = 0; j < v->nsites; j++) {
			const struct mem_site *t = &v->sites[j];
			c = pid_dev_row(rsi, v->pid, v->dev);
			cell_str(&c[SI_LEAK], mem_site_leaks(t) ? "yes" : "no");
			cell_num(&c[SI_SLOPE], t->growth.slope);
			cell_num(&c[SI_AT_PEAK], (double)t->at_peak);
			cell_num(&c[SI_END], (double)t->level);
			cell_num(&c[SI_ALLOCS], (double)t->allocs);
			cell_str(&c[SI_OWNER], mem_owner_names[t->owner]);
			cell_str(&c[SI_SITE], t->label);
		}
	}
	size_t used = 0;
	s->oom_note[0] = 0;
	for (size_t i = 0; i < mem_view_nfailures(mv); i++) {
		const struct mem_failure *f = mem_view_failure(mv, i);
		char live[32], total[32];
		fmt_bytes(live, sizeof(live), (uint64_t)(f->live > 0 ? f->live : 0));
		uint64_t gm = total_of(ctx, f->pid, f->dev);
		fmt_bytes(total, sizeof(total), gm);
		char req[160], src[400];
		mem_failure_request(f, req, sizeof(req));
		mem_failure_live_source(f, src, sizeof(src));
		if (used < sizeof(s->oom_note))
			used += (size_t)snprintf(s->oom_note + used, sizeof(s->oom_note) - used,
						 " pid %u: %s failed (status %d, %u failed allocation call%s) at %s, "
						 "%s live of %s; %s%s%s\n",
						 f->pid, f->call, f->status, f->failures, f->failures == 1 ? "" : "s",
						 f->site, live, gm ? total : "an unknown total", req, *src ? "; " : "", src);
		for (size_t j = 0; j < f->nby_site; j++) {
			const struct mem_site *t = &f->by_site[j];
			struct cell *c = pid_dev_row(roo, f->pid, f->dev);
			cell_str(&c[OO_CALL], f->call);
			cell_num(&c[OO_AT], (double)rel(ctx, f->t));
			cell_num(&c[OO_LIVE], (double)t->level);
			cell_num(&c[OO_SHARE], f->live > 0 ? 100.0 * (double)t->level / (double)f->live : 0);
			cell_str(&c[OO_OWNER], mem_owner_names[t->owner]);
			cell_str(&c[OO_SITE], t->label);
		}
	}
	roo->note = s->oom_note[0] ? s->oom_note : " No allocation call failed.\n";
	if (mem_view_dropped(mv))
		tool_warn("memory_steps: %" PRIu64 " memory records past the first %u not used", mem_view_dropped(mv),
			  MEM_VIEW_MAX_EVENTS);
}

static void ms_free(void *self)
{
	struct memsteps *s = self;
	mem_view_free(s->mv);
	free(s);
}

static const struct stats_table ms_tables[] = {
	{ "memory_steps",
	  "device memory per step (held at the step's start, its peak, held at\n"
	  "its end), with memory_growth, memory_owners, memory_sites and\n"
	  "memory_oom (docs/MEMORY.md); a trace recorded with\n"
	  "--activity=default,memory (and --stacks for sites); only when named" },
	{ "memory_growth",
	  "per process and device: growth per step (the slope of held at step\n"
	  "end over the counted steps, +/- 2 standard errors), the run's peak" },
	{ "memory_owners",
	  "device memory by owner (PyTorch's caching allocator, NCCL,\n"
	  "cuBLAS/cuDNN, cudaMallocAsync pools, other): own peak, at the run's\n"
	  "peak, at the end" },
	{ "memory_sites",
	  "device memory by allocation site: leaking sites first, growth per\n"
	  "step, held at the run's peak and at the end" },
	{ "memory_oom",
	  "the last failed allocation of each process (status 2: out of\n"
	  "memory) and what was live then by site" },
};

const struct stats_report stats_report_memory_steps = {
	.tables = ms_tables, .ntables = 5,
	.types = STATS_TYPE(GP_REC_MEMORY) | STATS_TYPE(GP_REC_API) | STATS_TYPE(GP_REC_DEVICE) | STATS_TYPE(GP_REC_ALLOC_FAIL) |
		 STATS_TYPE(GP_REC_MEM_LIVE),
	.needs = STATS_NEED_STEPS | STATS_NEED_STACKS,
	.by_name = 1u, /* only when named: `stats` without --report does not run it (cmd_stats.c) */
	.new = ms_new, .add = ms_add, .fill = ms_fill, .free = ms_free,
};
