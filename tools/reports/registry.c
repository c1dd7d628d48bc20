/* registry.c — the reports of `gpuprof stats`, in output order.  The help
 * text, the --report names, their validation, the default set and the JSON
 * keys all come from this list and each report's struct stats_report.
 * Adding a report: its file in reports/ and one line here. */
#include "reports/stats_report.h"

#define STATS_REPORTS(X) \
	X(api) \
	X(kernels) \
	X(occupancy) \
	X(memops) \
	X(memsize) \
	X(sync) \
	X(memory) \
	X(nvtx) \
	X(util) \
	X(counters) \
	X(windows) \
	X(launch_sites) \
	X(layers) \
	X(comm) \
	X(steps) \
	X(memory_steps)

#define DECLARE(name) extern const struct stats_report stats_report_##name;
STATS_REPORTS(DECLARE)

#define ENTRY(name) &stats_report_##name,
const struct stats_report *const stats_reports[] = { STATS_REPORTS(ENTRY) NULL };
