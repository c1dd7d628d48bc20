/* stats_set.c — see stats_set.h. */
#include "reports/stats_set.h"

#include <stdlib.h>
#include <string.h>

#include "common/selopt.h"
#include "common/util.h"

void stats_set_init(struct stats_set *s, gp_reader *r, const struct site_rule *site,
		    const struct step_detect_opts *detect, uint64_t kernel_wait_ns,
		    void (*pre)(void *arg, const gp_record *rec), void *pre_arg)
{
	memset(s, 0, sizeof(*s));
	s->opts.rule = ATTR_ANY_THREAD;
	s->opts.whole_trace = 1; /* the page's charts and util cover the whole trace */
	s->opts.detect.want = STEP_WANT_AUTO;
	if (detect) s->opts.detect = *detect;
	s->opts.kernel_wait_ns = kernel_wait_ns;
	if (site) s->opts.site = *site;
	struct sel_opts none;
	sel_opts_init(&none);
	char err[256];
	uint32_t needs = 0;
	for (size_t i = 0; stats_reports[i]; i++) needs |= stats_reports[i]->needs;
	if (selection_resolve(&s->sel, r, &none, &s->opts.detect, err, sizeof(err)) < 0) needs = 0;
	stats_ctx_init(&s->ctx, r, &s->opts, needs, &s->sel, 0);
	int prepass = stats_ctx_prepass(&s->ctx);
	if (prepass || pre) {
		/* a read error shows in the caller's pass; a failed step
		 * detection leaves the steps tables empty */
		const gp_record *rec;
		while (gp_reader_next_ordered(r, &rec) > 0) {
			if (pre) pre(pre_arg, rec);
			if (prepass) stats_ctx_pre_add(&s->ctx, rec);
		}
		if (prepass) stats_ctx_pre_finish(&s->ctx, &s->steps_err);
		gp_reader_rewind(r);
	}
	/* the set feeds machine output (the report page's data): full names,
	 * as `stats --format json` gives them */
	s->ctx.names = NAME_FULL;
	while (stats_reports[s->nreps]) s->nreps++;
	s->self = xcalloc(s->nreps ? s->nreps : 1, sizeof(*s->self));
	for (size_t i = 0; i < s->nreps; i++) {
		if (stats_reports[i]->new) s->self[i] = stats_reports[i]->new(&s->ctx);
		s->ntabs += (size_t)stats_reports[i]->ntables;
	}
	stats_fanout_attach(&s->fan, &s->ctx, s->self, NULL);
}

void stats_set_add(struct stats_set *s, const gp_record *rec)
{
	stats_fanout_add(&s->fan, rec);
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
			s->want[k + (size_t)j] = in && !(rep->by_name & (1u << j));
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
	selection_free(&s->sel);
	memset(s, 0, sizeof(*s));
}
