/* slices.c — see slices.h. */
#include "analysis/core/slices.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

struct slice {
	struct slices *all;
	int ix;
	uint64_t from, to;
	pthread_t th;
	int started;
	double cpu_s;
};

struct slices {
	int k;
	struct slice *sl;
	const struct slice_pass *p;
};

int slices_count(gp_reader *r, const char *path, int k)
{
	struct gp_footer_info f;
	uint64_t first, last;
	if (k < 1 || !strcmp(path, "-")) return 0;
	if (gp_reader_footer(r, &f) != 0 || !f.present) return 0;
	if (gp_reader_time_range(r, &first, &last) != 0 || last <= first) return 0;
	if (last - first < (uint64_t)k) return 0;
	return k;
}

struct slices *slices_new(gp_reader *r, int k)
{
	uint64_t first, last;
	if (k < 1 || gp_reader_time_range(r, &first, &last) != 0) return NULL;
	struct slices *s = xcalloc(1, sizeof(*s));
	s->k = k;
	s->sl = xcalloc((size_t)k, sizeof(*s->sl));
	for (int i = 0; i < k; i++) {
		struct slice *x = &s->sl[i];
		x->all = s;
		x->ix = i;
		/* equal lengths of time; the first from 0, the last to the end */
		x->from = i ? first + (uint64_t)((double)(last - first) * i / k) : 0;
		x->to = i + 1 < k ? first + (uint64_t)((double)(last - first) * (i + 1) / k) : UINT64_MAX;
	}
	return s;
}

void slices_bounds(const struct slices *s, int i, uint64_t *from, uint64_t *to)
{
	*from = s->sl[i].from;
	*to = s->sl[i].to;
}

/* A slice's thread: its records, then the tree of merges (slices.h). */
static void *slice_main(void *arg)
{
	struct slice *x = arg;
	struct slices *s = x->all;
	double c0 = thread_cpu_s();
	s->p->read(s->p->arg, x->ix, x->from, x->to);
	x->cpu_s = thread_cpu_s() - c0;
	for (int step = 1; s->p->merge && x->ix % (2 * step) == 0 && x->ix + step < s->k; step *= 2) {
		struct slice *o = &s->sl[x->ix + step];
		if (o->started) pthread_join(o->th, NULL);
		o->started = 0;
		s->p->merge(s->p->arg, x->ix, o->ix);
	}
	return NULL;
}

void slices_start(struct slices *s, const struct slice_pass *p)
{
	s->p = p;
	int made = 1;
	for (int i = s->k - 1; i >= 0; i--) {
		struct slice *x = &s->sl[i];
		x->cpu_s = 0;
		if (made && pthread_create(&x->th, NULL, slice_main, x) == 0) {
			x->started = 1;
			continue;
		}
		made = 0;
		slice_main(x);
	}
}

void slices_wait(struct slices *s)
{
	for (int i = 0; i < s->k; i++) {
		if (s->sl[i].started) pthread_join(s->sl[i].th, NULL);
		s->sl[i].started = 0;
	}
}

void slices_run(struct slices *s, const struct slice_pass *p)
{
	slices_start(s, p);
	slices_wait(s);
}

void slices_cpu(const struct slices *s, double *sum, double *max)
{
	*sum = *max = 0;
	for (int i = 0; s && i < s->k; i++) {
		*sum += s->sl[i].cpu_s;
		if (s->sl[i].cpu_s > *max) *max = s->sl[i].cpu_s;
	}
}

void slices_free(struct slices *s)
{
	if (!s) return;
	slices_wait(s);
	free(s->sl);
	free(s);
}

gp_reader *slices_open(const char *path, uint64_t from, uint64_t to)
{
	struct gp_reader_opts o = { .sz = sizeof(o), .threads = 1, .share = 1 }; /* the command's reader's chunk table */
	gp_reader *r;
	if (gp_reader_open_opts(path, &o, &r) != 0) return NULL;
	gp_reader_load_meta(r);
	if (gp_reader_set_time_window(r, from, to) != 0) {
		gp_reader_close(r);
		return NULL;
	}
	return r;
}

int slices_whole(gp_reader *r, int rc)
{
	struct gp_integrity in;
	gp_reader_integrity(r, &in);
	return rc == 0 && !in.frames_corrupt && !in.truncated;
}
