/* stats_set.c — see stats_set.h. */
#include "reports/stats_set.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

void stats_set_init(struct stats_set *s, gp_reader *r)
{
	memset(s, 0, sizeof(*s));
	stats_ctx_init(&s->ctx, r, 0, 0, 0, 0);
	/* the set feeds machine output (the report page's data): full names,
	 * as `stats --format json` gives them */
	s->ctx.names = NAME_FULL;
	while (stats_reports[s->nreps]) s->nreps++;
	s->self = xcalloc(s->nreps ? s->nreps : 1, sizeof(*s->self));
	for (size_t i = 0; i < s->nreps; i++) {
		if (stats_reports[i]->new) s->self[i] = stats_reports[i]->new(&s->ctx);
		s->ntabs += (size_t)stats_reports[i]->ntables;
	}
}

void stats_set_add(struct stats_set *s, const gp_record *rec)
{
	struct stats_rec sr;
	if (!stats_ctx_add(&s->ctx, rec, &sr)) return;
	for (size_t i = 0; i < s->nreps; i++)
		if (stats_reports[i]->types & STATS_TYPE(rec->type))
			stats_reports[i]->add(s->self[i], &s->ctx, &sr);
}

void stats_set_finish(struct stats_set *s)
{
	stats_ctx_finish(&s->ctx);
}

void stats_set_fill(struct stats_set *s)
{
	s->tab = xcalloc(s->ntabs ? s->ntabs : 1, sizeof(*s->tab));
	s->want = xcalloc(s->ntabs ? s->ntabs : 1, sizeof(*s->want));
	size_t k = 0;
	for (size_t i = 0; i < s->nreps; i++) {
		const struct stats_report *rep = stats_reports[i];
		int in = !rep->in_default || rep->in_default(s->self[i], &s->ctx);
		for (int j = 0; j < rep->ntables; j++) {
			report_init(&s->tab[k + (size_t)j], rep->tables[j].name);
			s->want[k + (size_t)j] = in;
		}
		if (in) rep->fill(s->self[i], &s->ctx, &s->tab[k]);
		k += (size_t)rep->ntables;
	}
}

void stats_set_free(struct stats_set *s)
{
	for (size_t k = 0; s->tab && k < s->ntabs; k++) report_free(&s->tab[k]);
	free(s->tab);
	free(s->want);
	for (size_t i = 0; i < s->nreps; i++)
		if (stats_reports[i]->free) stats_reports[i]->free(s->self[i]);
	free(s->self);
	stats_ctx_free(&s->ctx);
	memset(s, 0, sizeof(*s));
}
