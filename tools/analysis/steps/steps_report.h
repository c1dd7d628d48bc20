/* steps_report.h — the steps analysis as the report tables (report.h:
 * aligned text, CSV or JSON) of `gpuprof steps`, in SR_* order (what each
 * holds: reports/stats_steps.c's table list).  Times in ns; Start is
 * relative to the trace start. */
#ifndef GPUPROF_ANALYSIS_STEPS_STEPS_REPORT_H
#define GPUPROF_ANALYSIS_STEPS_STEPS_REPORT_H

#include <stdint.h>

#include "common/report.h"
#include "analysis/steps/steps.h"

enum { SR_SUMMARY, SR_BUCKETS, SR_LAUNCH, SR_OUTLIERS, SR_PHASES, SR_ROWS, SR_COUNT };

struct steps_reports {
	struct report rep[SR_COUNT];
	char *note[SR_COUNT];  /* owned; rep[i].note points here */
};

struct steps_reports_opts {
	uint64_t base;           /* Start columns count from it (the trace start; 0: absolute) */
	int keep_warmup;
	/* the steps reported (warm-up and outliers judged among them); NULL:
	 * every one */
	int (*row_selected)(void *arg, const struct step_row *w);
	void *arg;
};
/* After steps_finish. */
void steps_reports_fill(struct steps_reports *out, struct steps *st, const struct steps_reports_opts *o);
void steps_reports_free(struct steps_reports *out);

#endif
