/* advise.h — the rules of `gpuprof advise` (docs/ADVISE.md): from what
 * advise_facts.h measured per process, a ranked list of findings, each with
 * what happens, where, its cost per step, what to change, an estimated
 * saving per step with the reasoning, and the records to look at.
 *
 * Severity (the bands below) and the ranking: docs/ADVISE.md, its
 * opening. */
#ifndef GPUPROF_ANALYSIS_ADVISE_ADVISE_H
#define GPUPROF_ANALYSIS_ADVISE_ADVISE_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/advise/advise_facts.h"

/* The rules, one a line: X(id, name, judge, cause, steps).  name: what
 * advise prints (table, JSON, CSV, --help); judge: its function in
 * advise.c, judge(j, id, cause), which reads one process's facts and adds
 * at most one finding of rule id; cause: the advise_facts.h cause it judges
 * (AC_COUNT: none; launch-bound and host-gaps judge the same idle, and one
 * of the two speaks); steps: 1 when it judges only a process whose steps
 * are judged (step_judgeable), 0 when every process (out-of-memory: a job
 * that ran out may have stopped before its steps could be judged).  The
 * order is the ids' (the ranking's last tie-break).  Adding a rule: a line
 * here, its judge function in advise.c, its section in docs/ADVISE.md. */
/* clang-format off */
#define ADV_RULES(X) \
	X(AR_OOM,       "out-of-memory",  rule_oom,       AC_COUNT,    0) \
	X(AR_INPUT,     "input-bound",    rule_input,     AC_INPUT,    1) \
	X(AR_SYNC,      "sync",           rule_blocking,  AC_SYNC,     1) \
	X(AR_PAGEABLE,  "pageable-copy",  rule_blocking,  AC_PAGEABLE, 1) \
	X(AR_SYNC_COPY, "sync-copy",      rule_blocking,  AC_SYNC_COPY, 1) \
	X(AR_ALLOC,     "alloc-churn",    rule_blocking,  AC_ALLOC,    1) \
	X(AR_LAUNCH,    "launch-bound",   rule_host_idle, AC_HOST_IDLE, 1) \
	X(AR_HOST_GAPS, "host-gaps",      rule_host_idle, AC_HOST_IDLE, 1) \
	X(AR_FP32,      "fp32-matmul",    rule_fp32,      AC_FP32,     1) \
	X(AR_UNDERPAR,  "under-parallel", rule_underpar,  AC_UNDERPAR, 1) \
	X(AR_LOWOCC,    "low-occupancy",  rule_lowocc,    AC_LOWOCC,   1) \
	X(AR_COMM,      "exposed-comm",   rule_comm,      AC_COUNT,    1) \
	X(AR_COPIES,    "exposed-copies", rule_copies,    AC_COUNT,    1) \
	X(AR_OUTLIER,   "outlier-steps",  rule_outliers,  AC_COUNT,    1)
/* clang-format on */

enum adv_rule {
#define ADV_RULE_ID(id, name, judge, cause, steps) id,
	ADV_RULES(ADV_RULE_ID)
#undef ADV_RULE_ID
	AR_COUNT
};
extern const char *const adv_rule_names[AR_COUNT];

enum adv_severity { SEV_INFO, SEV_LOW, SEV_MEDIUM, SEV_HIGH };
extern const char *const adv_severity_names[4]; /* "info", "low", "medium", "high" */
#define ADV_SEV_HIGH_PCT 20.0
#define ADV_SEV_MEDIUM_PCT 5.0
#define ADV_SEV_LOW_PCT 1.0
/* launch-bound rather than host-gaps: at least this share of the counted
 * steps' kernels ran shorter than their launch call */
#define ADV_LAUNCH_SHORT_SHARE 0.5
/* exposed communication: the share of min(exposed, compute) assumed hidden */
#define ADV_COMM_HIDE_SHARE 0.5
/* exposed-copies: the share of min(exposed copies, compute) that a second
 * stream hides (copy engines run beside the SMs: all of it, less the
 * memory bandwidth the copy takes from the kernels, which is not estimated) */
#define ADV_COPY_HIDE_SHARE 1.0
#define ADV_MAX_SITES 3
#define ADV_MAX_EVIDENCE 12

/* One place a finding was seen (a group of advise_facts.h). */
struct adv_site {
	const char *label, *name, *phase;  /* phase "" none */
	const struct stack_view *stack;    /* NULL none */
	int after_site, dataloader;
	double count_per_step, cost_ns_per_step;
	uint64_t blocks_min, blocks_max;   /* kernels (0: not a kernel group) */
	uint32_t threads;
	double occ;                        /* -1 unknown */
	double pm_pct;                     /* PM sampling mean while they ran, -1 none */
};

struct adv_evidence { const char *key; double v; };

struct adv_finding {
	uint32_t pid;
	int32_t rank;                      /* -1 none */
	enum adv_rule rule;
	enum adv_severity sev;
	char *title, *what, *change, *how; /* how: how the saving was estimated, with the numbers */
	struct adv_site sites[ADV_MAX_SITES]; size_t nsites;
	char *where;                       /* one line: the sites, or where else */
	double count_per_step;             /* -1: not a count */
	double cost_ns, cost_pct;          /* per counted step; % of the counted steps' time */
	int has_saving;
	double saving_ns, saving_pct;
	/* records: a step (number -1: a time range, not a step) as ns after the trace start */
	int64_t step_number;
	uint64_t since_ns, until_ns;
	struct adv_evidence ev[ADV_MAX_EVIDENCE]; size_t nev;
};

struct adv_proc_summary {
	uint32_t pid;
	int32_t rank;
	const char *method, *steps_are;    /* "nvtx"/"trace"/"none", the plan's one line */
	size_t nsteps, nwarm, ncounted, noutliers;
	double step_mean_ns, step_median_ns, busy_pct;
	double host_wait_pct;              /* host_wait + sync + launch buckets: the GPU waited for the host */
	double unexplained_pct;            /* idle no cause took ("other" gaps) */
	double gpu_work_ns;                /* GPU time launched per counted step (kernels, copies, sets) */
	int runs_ahead;                    /* gpu_work_ns > ADV_RUN_AHEAD x the mean step: the host runs
					      ahead of the GPU, the steps are the host's; the findings'
					      shares (and severities) are then of gpu_work_ns */
	char not_judged[320];              /* why the process's steps are not judged, "" when they are */
};
#define ADV_RUN_AHEAD 1.2
/* Steps advise judges: at least ADV_MIN_STEPS counted, launching at least
 * ADV_MIN_STEP_SHARE % of the process's kernel time (else the repeat found is
 * not the job's training step: a compile-dominated job's small repeats). */
#define ADV_MIN_STEPS 3
#define ADV_MIN_STEP_SHARE 50.0

struct adv_result {
	struct adv_proc_summary *procs; size_t nprocs;
	struct adv_finding *v; size_t n, cap; /* ranked */
	size_t njudged;                       /* processes whose steps were judged */
	int cut_short;                        /* the trace is truncated or corrupt (advise_drive.h sets it) */
	size_t hidden;                        /* findings that save nothing, left out (advise_hide_nothing_saved) */
};
/* Removes the findings whose estimated saving prints as 0.000 ms per step
 * (under 500 ns: set-up copies outside the loop, a rule at its floor),
 * counting them in res->hidden; findings without an estimate stay. */
void advise_hide_nothing_saved(struct adv_result *res);
/* Why nothing was judged (no process with steps judged), or NULL: the
 * answer is its findings, or that there are none. */
const char *advise_nothing_judged(const struct adv_result *res);

/* base: the trace start (header start_trace_ns), for the record pointers. */
void advise_judge(const struct adv_facts *f, uint64_t base, struct adv_result *out);
void advise_result_free(struct adv_result *res);

#endif
