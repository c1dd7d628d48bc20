/* advise_slice.c — see advise_slice.h. */
#include "analysis/advise/advise_slice.h"

#include "analysis/steps/steps_pipe.h"
#include "common/tool.h"
#include "common/util.h"

/* A slice's engine: the facts, fed by the slice's join (steps_slice.h
 * struct cut_slice), beside the steps' engine whose join it is where it
 * makes the steps too (s.st; NULL: the facts alone, s.c and s.win only). */
struct adv_slice {
	struct steps_slice s;
	struct adv_facts *f;
	struct attribution *a;    /* the facts' view of the steps' index */
};

/* The join's operations: to the steps, then to the facts. */
static void on_op(void *ctx, const struct gpu_op *op)
{
	struct adv_slice *s = ctx;
	if (s->s.st) steps_op(s->s.st, op);
	adv_facts_op(s->f, op);
}

/* One record, as one pass's facts pass takes it: the API calls and GPU
 * operations into the facts, then through the join (and the steps), the
 * facts advanced with the join's frontier. */
static void feed(struct cut_slice *c, const gp_record *rec)
{
	struct adv_slice *s = (struct adv_slice *)c;
	if (rec->type == GP_REC_API)
		adv_facts_api(s->f, tool_pid(c->r, rec), tool_rec_tid(c->r, rec), &rec->u.api);
	else
		adv_facts_gpu(s->f, tool_pid(c->r, rec), rec);
	uint64_t before = c->now;
	steps_slice_engine.feed(c, rec); /* s.st NULL: the join alone */
	if (c->now > before) adv_facts_advance(s->f, c->now, opjoin_frontier(c->j));
}

static void mark(struct cut_slice *c)
{
	if (((struct adv_slice *)c)->s.st) steps_slice_engine.mark(c);
	adv_facts_mark(((struct adv_slice *)c)->f);
}

static void state(const struct cut_slice *c, struct bytes *b, int cut)
{
	if (((const struct adv_slice *)c)->s.st) steps_slice_engine.state(c, b, cut);
	adv_facts_state(((const struct adv_slice *)c)->f, b, c->cuts->lead[cut]);
}

static void finish(struct cut_slice *c)
{
	if (((struct adv_slice *)c)->s.st) steps_slice_engine.finish(c);
	adv_facts_drain(((struct adv_slice *)c)->f);
}

static void reader(struct cut_slice *c, gp_reader *r)
{
	if (((struct adv_slice *)c)->s.st) steps_slice_engine.reader(c, r);
	adv_facts_reader(((struct adv_slice *)c)->f, r);
}

static int same(const struct cut_slice *before, const struct cut_slice *c)
{
	return !((const struct adv_slice *)c)->s.st || steps_slice_engine.same(before, c);
}

static void take(void *sum, struct opjoin_counts *counts, struct cut_slice *c)
{
	struct adv_slice_sum *su = sum;
	if (((struct adv_slice *)c)->s.st) steps_slice_engine.take(su->st, counts, c);
	adv_facts_take(su->f, ((struct adv_slice *)c)->f);
}

static void parts_free(struct cut_slice *c)
{
	struct adv_slice *s = (struct adv_slice *)c;
	if (s->s.st) steps_slice_engine.free(c);
	adv_facts_free(s->f);
	attribution_free(s->a);
}

static const struct cut_engine facts_engine = { feed, mark, state, finish, reader, same, take, parts_free };

/* Made on the caller's thread (the slices share the steps and pre). */
static struct cut_slice *slice_new(void *arg, gp_reader *r, const struct steps_cuts *cuts, int ix)
{
	return adv_slice_new(arg, r, cuts, ix);
}

struct cut_slice *adv_slice_new(const struct adv_slice_in *in, gp_reader *r, const struct steps_cuts *cuts, int ix)
{
	struct adv_slice *s = xcalloc(1, sizeof(*s));
	const struct attribution *a = steps_attribution(in->st);
	if (in->steps) steps_slice_init(&s->s, &facts_engine, r, in->st, a, in->win, cuts, ix, on_op, s);
	/* beside the steps' engine, its view's query state answers the facts too */
	s->a = s->s.a ? attribution_view_sharing(s->s.a) : a ? attribution_view(a) : NULL;
	/* a lead-in from the trace's start is one pass up to the cut; else
	 * the slack starts from one pass's at the cut, and the lead-in's
	 * operations whose call lies before it never pair */
	int alone = ix && cuts->lead[ix];
	/* beside the steps on one thread: their rows as they make them */
	struct adv_facts_opts fo = { in->opts ? in->opts->kernel_wait_ns : 0, s->a, 1, alone ? cuts->lead[ix] : 0,
				     in->beside ? in->win : NULL, in->beside && cuts->k == 1 && !in->steps,
				     in->beside && in->opts ? in->opts->expect : NULL };
	s->f = adv_facts_new(r, in->st, in->pre, &fo);
	if (alone && cuts->prefix) adv_facts_seed(s->f, cuts->prefix, ix);
	if (!in->steps) {
		s->s.win = in->win;
		cut_slice_init(&s->s.c, &facts_engine, r, cuts, ix, alone ? cuts->from[ix] : 0, on_op, s);
	}
	return &s->s.c;
}

int adv_slice_one(struct adv_facts *sum, gp_reader *r, const struct adv_slice_in *in)
{
	int rc = gp_reader_rewind(r);
	if (rc < 0) return rc;
	struct cut_slice *s = slice_new((void *)in, r, &steps_cuts_one, 0);
	cut_slice_read(s, r, &rc);
	adv_facts_take(sum, ((struct adv_slice *)s)->f);
	cut_slice_free(s);
	return rc;
}

int adv_slice_merge(const struct adv_slice_sum *sum, struct opjoin_counts *counts, struct cut_slice **e,
		    const struct steps_cuts *cuts, const char *path, const struct adv_slice_in *in,
		    struct steps_slice_merged *how)
{
	if (cut_slice_merge((void *)sum, counts, e, cuts, path, slice_new, (void *)in, how)) return -1;
	return adv_facts_lost(sum->f) ? -1 : 0;
}

int adv_slice_pass(struct adv_facts *sum, const char *path, const struct steps_prefix *pf,
		   const struct step_detect *d, const struct adv_slice_in *in, struct steps_slice_merged *how)
{
	if (in->pre->ctr.n) return -1;
	struct adv_slice_sum su = { NULL, sum };
	if (cut_slice_pass(&su, NULL, in->pre->r, path, pf, d, slice_new, (void *)in, how)) return -1;
	return adv_facts_lost(sum) ? -1 : 0;
}
