/* advise_report.h — the findings of advise.h for people and machines:
 *  - text: per process one line on its steps, the ranked findings as an
 *    aligned table (report.h), then each finding in full (what, where, cost,
 *    change, saving and how it was estimated, the records to look at);
 *  - JSON: one object per trace file, {"file", "processes": [...],
 *    "findings": [...]} (docs/ADVISE.md "Output" lists the keys);
 *  - CSV: one flat row per finding (report.h).
 * Which one is printed is the command's choice. */
#ifndef GPUPROF_ANALYSIS_ADVISE_ADVISE_REPORT_H
#define GPUPROF_ANALYSIS_ADVISE_ADVISE_REPORT_H

#include <stdio.h>

#include "analysis/advise/advise.h"
#include "common/report.h"

/* path: the trace file, as the records pointers name it */
/* text: tables and lines fit `width` columns (0: no limit) */
void advise_print_text(FILE *out, const char *path, const struct adv_result *res, int width);
void advise_print_json(FILE *out, const char *path, const struct adv_result *res);
/* Appends one row per finding to the flat findings table "advise" (rep
 * zero-initialised the first time: it is then defined here). */
void advise_findings_rows(struct report *rep, const char *path, const struct adv_result *res);

#endif
