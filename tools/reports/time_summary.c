/* time_summary.c — see time_summary.h. */
#include "reports/time_summary.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/util.h"

uint64_t time_summary_sum(const struct summary *t)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < t->n; i++) sum += t->g[i].total;
	return sum;
}

void time_summary_cells(struct cell *row, struct sgroup *g, uint64_t sum)
{
	cell_num(&row[TS_TIME_PCT], sum ? 100.0 * (double)g->total / (double)sum : 0);
	cell_num(&row[TS_TOTAL], (double)g->total);
	cell_num(&row[TS_COUNT], (double)g->n);
	cell_num(&row[TS_AVG], (double)g->total / (double)g->n);
	cell_num(&row[TS_MED], sgroup_median(g));
	cell_num(&row[TS_MIN], (double)g->min);
	cell_num(&row[TS_MAX], (double)g->max);
	cell_num(&row[TS_STDDEV], sgroup_stddev(g));
}

void time_summary_fill(struct report *rep, struct summary *t, int name_col)
{
	uint64_t sum = time_summary_sum(t);
	size_t *ix = summary_by_total(t);
	for (size_t k = 0; k < t->n; k++) {
		struct sgroup *g = &t->g[ix[k]];
		struct cell *c = report_row(rep);
		time_summary_cells(c, g, sum);
		cell_str(&c[name_col], g->name);
	}
	free(ix);
}

const char *memop_group(const gp_record *rec, char *buf, size_t n, uint64_t *dur, uint64_t *bytes)
{
	if (rec->type == GP_REC_MEMCPY) {
		const gp_rec_memcpy *m = &rec->u.memcpy;
		snprintf(buf, n, "[CUDA memcpy %s]", copy_kind_long(m->copy_kind));
		*dur = m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0;
		*bytes = m->bytes;
	} else {
		const gp_rec_memset *m = &rec->u.memset;
		snprintf(buf, n, "[CUDA memset]");
		*dur = m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0;
		*bytes = m->bytes;
	}
	return buf;
}
