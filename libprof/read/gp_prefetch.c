/* gp_prefetch.c — see gp_prefetch.h.  One mutex guards the jobs decoded
 * ahead (`ahead`, in schedule order) and their states; a worker takes the
 * first queued one, decodes it without the lock, and marks it done.  The
 * reader's thread submits (keeping `window` jobs ahead), takes, and
 * recycles jobs through a free list only it touches; waiting for a job a
 * worker has, it decodes a queued one itself, so N threads decode. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "common/gp_error.h"
#include "common/gp_format.h"
#include "codec/gp_codec.h"
#include "gp_prefetch.h"

enum {
	J_QUEUED = 1,
	J_BUSY = 2,
	J_DONE = 3
};
enum {
	DEC_BATCH = 32
};

struct gp_prefetch {
	int fd;
	gp_prefetch_describe_fn describe;
	void *arg;
	pthread_mutex_t mu;
	pthread_cond_t wake; /* workers: a job was queued, or stop */
	pthread_cond_t done; /* reader: a job finished */
	pthread_t *th;
	int nth, stop;
	struct gp_job **ahead; /* submitted, not taken: schedule order */
	size_t nahead, window;
	size_t *sched, nsched, snext;
	struct gp_job *free_jobs; /* reader's thread only */
};

/* ---------------------------------------------------------------- decoding */
int gp_pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	uint8_t *p = buf;
	while (n) {
		ssize_t k = pread(fd, p, n, (off_t)off);
		if (k < 0 && errno == EINTR) continue;
		if (k <= 0) return GP_ERR_IO;
		p += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

static int grow(void **p, size_t *cap, size_t want, size_t elem)
{
	if (want <= *cap) return 0;
	size_t nc = *cap ? *cap : 64;
	while (nc < want) nc *= 2;
	void *n = realloc(*p, nc * elem);
	if (!n) return GP_ERR_NOMEM;
	*p = n;
	*cap = nc;
	return 0;
}

void gp_job_decode(struct gp_job *j, int fd, ZSTD_DCtx *dctx)
{
	const struct gp_chunk_ref *c = &j->ref;
	j->rc = 0;
	j->zerr = NULL;
	j->nrec = 0;
	j->nfr = 0;
	j->dec_err = 0;
	j->why = NULL;
	j->err_at = 0;
	size_t ucap = j->ucap;
	if (grow((void **)&j->cbuf, &j->ccap, c->csize ? c->csize : 1, 1) ||
	    grow((void **)&j->ubuf, &ucap, (size_t)c->usize + GP_DEC_OVERREAD, 1)) {
		j->rc = GP_ERR_NOMEM;
		return;
	}
	j->ucap = ucap;
	if (gp_pread_all(fd, j->cbuf, c->csize, c->off + GP_CHUNK_HDR)) {
		j->rc = GP_ERR_IO;
		return;
	}
	size_t n = ZSTD_decompressDCtx(dctx, j->ubuf, c->usize, j->cbuf, c->csize);
	if (ZSTD_isError(n) || n != c->usize) {
		j->rc = GP_ERR_CORRUPT;
		j->zerr = ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size differs from the chunk header";
		return;
	}
	memset(j->ubuf + c->usize, 0, GP_DEC_OVERREAD); /* defined bytes for the read-ahead */
	struct gp_dec *d = &j->dec;
	gp_dec_start(d, j->ubuf, c->usize, c->source, c->src_tid, c->major);
	gp_dec_set_slack(d, GP_DEC_OVERREAD);
	for (;;) {
		if (grow((void **)&j->recs, &j->crec, j->nrec + DEC_BATCH, sizeof(*j->recs))) {
			j->rc = GP_ERR_NOMEM;
			return;
		}
		int meta;
		int k = gp_dec_batch(d, j->recs + j->nrec, DEC_BATCH, &meta);
		if (k > 0 && j->recs[j->nrec + k - 1].type == GP_REC_STACK) {
			/* its frames live in the decoder: keep a copy; the pointer is
			 * set once the array stops moving (below) */
			gp_rec_stack *s = &j->recs[j->nrec + k - 1].u.stack;
			if (grow((void **)&j->frames, &j->cfr, j->nfr + s->nframes + 1, sizeof(*j->frames))) {
				j->rc = GP_ERR_NOMEM;
				return;
			}
			memcpy(j->frames + j->nfr, s->frames, s->nframes * sizeof(*j->frames));
			s->frames = (const uint64_t *)(uintptr_t)j->nfr;
			j->nfr += s->nframes;
		}
		j->nrec += (size_t)k;
		if (d->err) {
			j->dec_err = d->err;
			j->why = d->why;
			j->err_at = (size_t)(d->p - j->ubuf);
			break;
		}
		if (!k) break;
	}
	for (size_t i = 0; i < j->nrec; i++)
		if (j->recs[i].type == GP_REC_STACK)
			j->recs[i].u.stack.frames = j->frames + (uintptr_t)j->recs[i].u.stack.frames;
}

/* ---------------------------------------------------------------- workers */
static struct gp_job *first_queued(struct gp_prefetch *p)
{
	for (size_t i = 0; i < p->nahead; i++)
		if (p->ahead[i]->state == J_QUEUED) return p->ahead[i];
	return NULL;
}

static void *worker(void *arg)
{
	struct gp_prefetch *p = arg;
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	if (dctx) ZSTD_DCtx_setParameter(dctx, ZSTD_d_windowLogMax, 24);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		struct gp_job *j = NULL;
		while (!p->stop && !(j = first_queued(p))) pthread_cond_wait(&p->wake, &p->mu);
		if (p->stop) break;
		j->state = J_BUSY;
		pthread_mutex_unlock(&p->mu);
		if (dctx) gp_job_decode(j, p->fd, dctx);
		else j->rc = GP_ERR_NOMEM;
		pthread_mutex_lock(&p->mu);
		j->state = J_DONE;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	ZSTD_freeDCtx(dctx);
	return NULL;
}

int gp_prefetch_new(int fd, int nworkers, size_t window, gp_prefetch_describe_fn describe, void *arg,
		    struct gp_prefetch **out)
{
	*out = NULL;
	struct gp_prefetch *p = calloc(1, sizeof(*p));
	if (!p) return GP_ERR_NOMEM;
	p->fd = fd;
	p->describe = describe;
	p->arg = arg;
	p->window = window ? window : 1;
	p->ahead = calloc(p->window, sizeof(*p->ahead));
	p->th = calloc((size_t)nworkers, sizeof(*p->th));
	if (!p->ahead || !p->th) {
		free(p->ahead);
		free(p->th);
		free(p);
		return GP_ERR_NOMEM;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->done, NULL);
	for (int i = 0; i < nworkers; i++) {
		if (pthread_create(&p->th[i], NULL, worker, p)) break;
		p->nth++;
	}
	if (p->nth < nworkers) {
		gp_prefetch_free(p);
		return GP_ERR_NOMEM;
	}
	*out = p;
	return 0;
}

static void job_free(struct gp_job *j)
{
	if (!j) return;
	free(j->cbuf);
	free(j->ubuf);
	free(j->recs);
	free(j->frames);
	gp_dec_free(&j->dec);
	free(j);
}

static struct gp_job *job_get(struct gp_prefetch *p)
{
	struct gp_job *j = p->free_jobs;
	if (j) {
		p->free_jobs = j->next_free;
		j->next_free = NULL;
		return j;
	}
	return calloc(1, sizeof(*j));
}

void gp_prefetch_release(struct gp_prefetch *p, struct gp_job *j)
{
	if (!j) return;
	j->state = 0;
	j->next_free = p->free_jobs;
	p->free_jobs = j;
}

/* Waits for the jobs ahead to leave the workers, then recycles them. */
static void drop_ahead(struct gp_prefetch *p)
{
	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < p->nahead; i++) {
		struct gp_job *j = p->ahead[i];
		if (j->state == J_QUEUED) j->state = J_DONE; /* never started */
		while (j->state != J_DONE) pthread_cond_wait(&p->done, &p->mu);
	}
	size_t n = p->nahead;
	p->nahead = 0;
	pthread_mutex_unlock(&p->mu);
	for (size_t i = 0; i < n; i++) gp_prefetch_release(p, p->ahead[i]);
}

void gp_prefetch_free(struct gp_prefetch *p)
{
	if (!p) return;
	drop_ahead(p);
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->nth; i++) pthread_join(p->th[i], NULL);
	while (p->free_jobs) {
		struct gp_job *j = p->free_jobs;
		p->free_jobs = j->next_free;
		job_free(j);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->done);
	free(p->ahead);
	free(p->th);
	free(p->sched);
	free(p);
}

/* Keeps `window` jobs ahead, from the schedule. */
static void refill(struct gp_prefetch *p)
{
	int queued = 0;
	while (p->nahead < p->window && p->snext < p->nsched) {
		size_t idx = p->sched[p->snext++];
		struct gp_job *j = job_get(p);
		if (!j) break;
		j->idx = idx;
		if (!p->describe(p->arg, idx, &j->ref)) {
			gp_prefetch_release(p, j);
			continue;
		}
		pthread_mutex_lock(&p->mu);
		j->state = J_QUEUED;
		p->ahead[p->nahead++] = j;
		pthread_mutex_unlock(&p->mu);
		queued = 1;
	}
	if (queued) {
		pthread_mutex_lock(&p->mu);
		pthread_cond_broadcast(&p->wake);
		pthread_mutex_unlock(&p->mu);
	}
}

int gp_prefetch_schedule(struct gp_prefetch *p, const size_t *idx, size_t n)
{
	drop_ahead(p);
	size_t *s = malloc((n ? n : 1) * sizeof(*s));
	if (!s) return GP_ERR_NOMEM;
	if (n) memcpy(s, idx, n * sizeof(*s));
	free(p->sched);
	p->sched = s;
	p->nsched = n;
	p->snext = 0;
	refill(p);
	return 0;
}

struct gp_job *gp_prefetch_take(struct gp_prefetch *p, size_t idx, const struct gp_chunk_ref *ref,
				ZSTD_DCtx *dctx)
{
	struct gp_job *j = NULL;
	int mine = 0; /* decode it on this thread */
	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < p->nahead; i++) {
		if (p->ahead[i]->idx != idx) continue;
		j = p->ahead[i];
		memmove(p->ahead + i, p->ahead + i + 1, (p->nahead - i - 1) * sizeof(*p->ahead));
		p->nahead--;
		break;
	}
	if (j && j->state == J_QUEUED) {
		j->state = J_BUSY; /* no worker got to it yet: do it here */
		mine = 1;
	}
	while (j && !mine && j->state != J_DONE) {
		/* a worker has it: rather than idle, decode one queued behind it */
		struct gp_job *o = first_queued(p);
		if (!o) {
			pthread_cond_wait(&p->done, &p->mu);
			continue;
		}
		o->state = J_BUSY;
		pthread_mutex_unlock(&p->mu);
		gp_job_decode(o, p->fd, dctx);
		pthread_mutex_lock(&p->mu);
		o->state = J_DONE;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	if (!j) {
		if (!(j = job_get(p))) return NULL;
		j->idx = idx;
		mine = 1;
	}
	/* decoded with another tid for its source (a SOURCE record was read
	 * in between): decode again, as the reader on its own would */
	if (mine || j->ref.src_tid != ref->src_tid || j->ref.off != ref->off) {
		j->ref = *ref;
		gp_job_decode(j, p->fd, dctx);
	}
	j->state = J_DONE;
	refill(p);
	return j;
}
