/* stats_set.h — every report of `gpuprof stats` (registry.c) over one trace,
 * driven by a caller that reads the trace itself (so that it can feed its
 * own analyses from the same pass): the driver loop of cmd/cmd_stats.c as
 * a component.  stats_set_new, each record through stats_set_add,
 * stats_set_finish, stats_set_fill, stats_set_free.
 *
 * The tables come out in output order, named as `stats --report` names
 * them; the default set is what `gpuprof stats FILE` prints. */
#ifndef GPUPROF_REPORTS_STATS_SET_H
#define GPUPROF_REPORTS_STATS_SET_H

#include <stddef.h>

#include "common/report.h"
#include "analysis/steps/selection.h"
#include "reports/stats_report.h"

struct stats_set {
	struct stats_ctx ctx;     /* its shared analyses are the caller's to read after finish */
	struct stats_opts opts;   /* the defaults */
	struct selection sel;     /* the whole trace */
	void **self;              /* per report */
	struct stats_fanout fan;  /* to all of them */
	const char *steps_err;    /* why step detection failed (ctx.pipe.steps NULL); NULL */
	size_t nreps;
	struct report *tab;       /* every table of every report, once filled */
	int *want;                /* per table: filled and in the default set */
	size_t ntabs;
};

/* The whole trace (no selection), the default options but the site rule
 * and how the steps are found (NULL, 0: the defaults).  When a report
 * needs the NVTX ranges or the steps, or pre is given, this reads the
 * trace once (the pre-pass: each record to pre(pre_arg, rec) too, for
 * what the caller must know before its pass) and rewinds it: the caller's
 * pass starts at the beginning. */
void stats_set_init(struct stats_set *s, gp_reader *r, const struct site_rule *site,
		    const struct step_detect_opts *detect, uint64_t kernel_wait_ns,
		    void (*pre)(void *arg, const gp_record *rec), void *pre_arg);
void stats_set_add(struct stats_set *s, const gp_record *rec);
void stats_set_finish(struct stats_set *s);
/* Fills the tables of the default set (s->want marks them). */
void stats_set_fill(struct stats_set *s);
void stats_set_free(struct stats_set *s);

#endif
