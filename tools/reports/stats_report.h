/* stats_report.h — what a `gpuprof stats` report is: a component with
 * new / add (each record it asked for) / fill (its tables) / free, described
 * by one struct stats_report; the context the driver (cmd/cmd_stats.c)
 * shares with every report; and the one list of reports (registry.c).
 *
 * The driver streams the trace once in time order.  Every record first
 * feeds the context's shared analyses (below) that some report of the run
 * needs, then goes to the add() of each report of the run whose `types`
 * has its type; records timed outside --since/--until go nowhere.  The
 * reports of the run: those --report names, or without it every report
 * that may be in the default set.  At the end the driver finishes the shared
 * analyses, then calls fill() of each report that has a table to print, in
 * list order; the reports do not depend on each other.
 *
 * Adding a report: one file here defining
 * `const struct stats_report stats_report_NAME`, and NAME in registry.c. */
#ifndef GPUPROF_TOOL_STATS_REPORT_H
#define GPUPROF_TOOL_STATS_REPORT_H

#include <stdint.h>

#include "gp_trace.h"
#include "analysis/counters.h"
#include "analysis/devprops.h"
#include "analysis/gpu_activity.h"
#include "analysis/kernel_names.h"
#include "analysis/kernel_shapes.h"
#include "analysis/windows.h"
#include "common/report.h"

/* The context's analyses that cost memory per record: a report names those
 * it reads in stats_report.needs, and only those some report of the run
 * needs are fed (windows and device properties always are). */
enum stats_need {
	STATS_NEED_GPU = 1,      /* gpu: busy intervals, kernels per window */
	STATS_NEED_SHAPES = 2,   /* kn, shapes: kernel names and launch shapes */
	STATS_NEED_COUNTERS = 4, /* cnt: sampled counters */
	STATS_NEED_ALL = 7,
};

/* Shared by the driver and every report.  Reports read it; only
 * stats_ctx_add and stats_ctx_finish write it. */
struct stats_ctx {
	uint32_t needs;         /* enum stats_need: the analyses fed (init: all) */
	gp_reader *r;
	uint64_t base;          /* trace start (header start_trace_ns) */
	uint64_t since, until;  /* absolute; timed records starting outside [since, until) are dropped */
	int clipped;            /* --since or --until was given */
	/* The form of kernel names in a Name column (--names; CSV and JSON:
	 * always NAME_FULL, with the mangled name in a column of its own). */
	enum name_form names;
	/* shared analyses: complete after stats_ctx_finish */
	uint64_t last;          /* latest end of any timed record, dropped ones included */
	struct winset win;      /* GPU-activity windows, clipped to [since, until) */
	struct devprops dev;    /* device properties */
	struct kernel_names kn; /* demangled kernel names (for shapes) */
	struct kshapes shapes;  /* kernels by name and launch shape; occupancy */
	struct gpu_activity gpu;/* busy intervals per device and stream */
	struct counters cnt;    /* sampled counters */
	u64map rank_of;         /* pid -> rank + 1, from GP_REC_PROCESS (complete before any timed record) */
};

/* A record as the driver hands it to add(): with its process and thread.
 * pid: the record's process (for GP_REC_PROCESS the process it describes);
 * tid: the thread of the record's source (0 for GP_REC_PROCESS; API and
 * NVTX records may name their own thread, which takes precedence). */
struct stats_rec {
	const gp_record *rec;
	uint32_t pid, tid;
};

/* One table a report prints: its --report name (also its JSON key and CSV
 * "# NAME" line) and its --help text (lines after the first are indented by
 * the help printer).  Selecting a report's first table selects all of its
 * tables. */
struct stats_table { const char *name, *help; };

#define STATS_TYPE(t) (1u << (t))

struct stats_report {
	const struct stats_table *tables;
	int ntables;
	uint32_t types;  /* STATS_TYPE(GP_REC_...) | ...: the records add() gets */
	uint32_t needs;  /* enum stats_need: the context's analyses it reads */
	/* The report's state; NULL (the function or its result) for a report
	 * that only reads the context. */
	void *(*new)(const struct stats_ctx *ctx);
	void (*add)(void *self, const struct stats_ctx *ctx, const struct stats_rec *r);
	/* Whether it is in the default set (no --report); NULL: always. */
	int (*in_default)(void *self, const struct stats_ctx *ctx);
	/* Fills tables[0 .. ntables): each arrives with its name set (report.h:
	 * report_init); fill gives it title and columns (report_define) and
	 * rows.  Titles and notes may point into self: printed before free. */
	void (*fill)(void *self, struct stats_ctx *ctx, struct report *tables);
	void (*free)(void *self);
};

/* Every report, in output order; NULL-terminated (registry.c). */
extern const struct stats_report *const stats_reports[];

/* The context: start (reader, trace start, --since/--until relative to the
 * start, have_* whether given), every record, finish, free. */
void stats_ctx_init(struct stats_ctx *ctx, gp_reader *r, uint64_t since, int have_since,
		    uint64_t until, int have_until);
/* Feeds the shared analyses; returns whether the record goes to the
 * reports, with *out filled. */
int stats_ctx_add(struct stats_ctx *ctx, const gp_record *rec, struct stats_rec *out);
void stats_ctx_finish(struct stats_ctx *ctx);
/* The rank of process pid (its GP_REC_PROCESS record), -1 for none. */
int stats_ctx_rank(const struct stats_ctx *ctx, uint32_t pid);
void stats_ctx_free(struct stats_ctx *ctx);

#endif
