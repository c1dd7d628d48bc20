/* report_html.h — the `gpuprof report` page: one self-contained HTML file
 * (docs/REPORT.md).  Its styles, scripts and data are inlined, so it opens
 * with no network access: the page's own script and style
 * (tools/export/report_page.js, report_page.css) and the uPlot charting
 * library, embedded at build time (scripts/embed-report-assets.sh; uPlot is
 * installed by `make deps`, pinned in scripts/uplot.pin), and the data of
 * report_data.h in a <script type="application/json" id="gpuprof-data">
 * element.  Built without uPlot, the page has the same tables and says in
 * place of each chart that charts were not built in. */
#ifndef GPUPROF_EXPORT_REPORT_HTML_H
#define GPUPROF_EXPORT_REPORT_HTML_H

#include <stddef.h>
#include <stdio.h>

#include "export/report_data.h"

/* Whether this build embeds uPlot (the charts). */
int report_html_have_charts(void);

/* The page in three parts, as report_data.h writes its data: the head
 * (title: the <title>; command as report_data_head), each run, the tail.  Each returns 0, or -1 when the output could not be written
 * (errno set). */
int report_html_head(FILE *f, const char *title, const char *command, const struct report_data_opts *opts);
int report_html_run(FILE *f, const struct report_run *run, size_t index, const struct report_data_opts *opts);
int report_html_tail(FILE *f);

#endif
