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

const char *time_summary_note(const struct summary *t)
{
	return t->approx ? " Med: for the names with the most values, estimated from a log-bucketed histogram\n"
			   "   (more than 2^20 values in the table): within 0.5 % of the exact median.\n"
			 : NULL;
}

void time_summary_fill(struct report *rep, struct summary *t, int name_col)
{
	rep->note = time_summary_note(t);
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

void *summary_state_new(const struct stats_ctx *ctx)
{
	struct summary_state *s = xcalloc(1, sizeof(*s));
	s->r = ctx->r;
	return s;
}

void summary_state_free(void *self)
{
	struct summary_state *s = self;
	summary_free(&s->groups);
	u64map_free(&s->id2g);
	free(s);
}

size_t summary_state_group(struct summary_state *s, uint32_t id, char *(*name_of)(gp_reader *r, uint32_t id))
{
	uint64_t *slot = u64map_get(&s->id2g, id, MAP_FIND);
	if (slot) return *slot;
	char *name = name_of(s->r, id);
	size_t g = summary_group(&s->groups, name);
	free(name);
	*u64map_get(&s->id2g, id, MAP_INSERT) = g;
	return g;
}

void memop_summary_add(struct summary_state *s, const gp_record *rec, enum memop_measure m)
{
	char op[64];
	uint64_t dur, bytes;
	if (rec->type == GP_REC_MEMCPY) {
		const gp_rec_memcpy *c = &rec->u.memcpy;
		snprintf(op, sizeof(op), "[CUDA memcpy %s]", copy_kind_long(c->copy_kind));
		dur = c->end_ns > c->start_ns ? c->end_ns - c->start_ns : 0;
		bytes = c->bytes;
	} else {
		const gp_rec_memset *z = &rec->u.memset;
		snprintf(op, sizeof(op), "[CUDA memset]");
		dur = z->end_ns > z->start_ns ? z->end_ns - z->start_ns : 0;
		bytes = z->bytes;
	}
	size_t g = summary_group(&s->groups, op);
	summary_add(&s->groups, g, m == MEMOP_TIME ? dur : bytes);
}
