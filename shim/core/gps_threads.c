/* gps_threads.c — the thread registry: per-thread shim data (created on a
 * thread's first entry, announced once per recorder, retired by a TLS
 * destructor), and the enter/leave bracket that lets the final flush wait
 * until no thread is inside an emit path. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/gps_core.h"

static GPS_TLS struct gps_thread *tls_thread;
static pthread_key_t thread_key;
static int thread_key_ok;
static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gps_thread *threads;

static void thread_exit(void *p)
{
	struct gps_thread *t = p;
	pthread_mutex_lock(&threads_lock);
	if (t->depth == 0) {
		/* nothing left to report: forget it */
		for (struct gps_thread **pp = &threads; *pp; pp = &(*pp)->next)
			if (*pp == t) {
				*pp = t->next;
				break;
			}
		pthread_mutex_unlock(&threads_lock);
		free(t->stack);
		free(t);
	} else {
		t->dead = 1; /* its open ranges are reported at the final flush */
		pthread_mutex_unlock(&threads_lock);
	}
	tls_thread = NULL;
}

void gps_threads_start(void)
{
	thread_key_ok = pthread_key_create(&thread_key, thread_exit) == 0;
}

/* A recorder is born while this thread exists: its name (GP_REC_THREAD). */
static void thread_announce(gp_recorder *rec, struct gps_thread *t)
{
	char name[64] = "";
	if (pthread_getname_np(pthread_self(), name, sizeof name) != 0 || !name[0])
		return;
	gp_record r;
	memset(&r, 0, sizeof r);
	r.type = GP_REC_THREAD;
	r.u.thread.pid = (uint32_t)gps.pid;
	r.u.thread.tid = t->tid;
	r.u.thread.name_id = gp_intern(rec, name);
	gp_emit(rec, &r);
}

struct gps_thread *gps_thread_get(void)
{
	struct gps_thread *t = tls_thread;
	if (__builtin_expect(!t, 0)) {
		t = calloc(1, sizeof *t);
		if (!t)
			return NULL;
		t->tid = gps_gettid();
		t->gen = ~0u;
		pthread_mutex_lock(&threads_lock);
		t->next = threads;
		threads = t;
		pthread_mutex_unlock(&threads_lock);
		if (thread_key_ok)
			pthread_setspecific(thread_key, t);
		tls_thread = t;
	}
	unsigned gen = atomic_load_explicit(&gps.gen, memory_order_relaxed);
	if (__builtin_expect(t->gen != gen, 0)) {
		gp_recorder *rec = atomic_load(&gps.rec);
		t->gen = gen;
		t->kind_set = 0;
		if (rec)
			thread_announce(rec, t);
	}
	return t;
}

struct gps_thread *gps_enter(void)
{
	struct gps_thread *t = gps_thread_get();
	if (!t)
		return NULL;
	int b = atomic_load_explicit(&t->busy, memory_order_relaxed);
	atomic_store_explicit(&t->busy, b + 1, memory_order_relaxed);
	/* Dekker with the final flush: our busy store before its closed load,
	 * its closed store before our closed load (gps_fence_heavy there) */
	gps_fence_light();
	if (atomic_load_explicit(&gps.closed, memory_order_relaxed)) {
		atomic_store_explicit(&t->busy, b, memory_order_release);
		return NULL;
	}
	return t;
}

void gps_leave(struct gps_thread *t)
{
	if (t)
		atomic_store_explicit(&t->busy, atomic_load_explicit(&t->busy, memory_order_relaxed) - 1,
				      memory_order_release);
}

void gps_threads_wait_idle(void)
{
	gps_fence_heavy();
	struct gps_thread *self = tls_thread;
	struct timespec ts = {0, 1000 * 1000};
	for (int i = 0; i < 500; i++) { /* at most ~0.5 s: never hang the exit */
		int busy = 0;
		pthread_mutex_lock(&threads_lock);
		for (struct gps_thread *t = threads; t; t = t->next)
			if (t != self && atomic_load_explicit(&t->busy, memory_order_acquire) > 0)
				busy = 1;
		pthread_mutex_unlock(&threads_lock);
		if (!busy)
			return;
		nanosleep(&ts, NULL);
	}
}

void gps_threads_foreach(void (*fn)(struct gps_thread *, void *), void *arg)
{
	pthread_mutex_lock(&threads_lock);
	for (struct gps_thread *t = threads; t; t = t->next)
		fn(t, arg);
	pthread_mutex_unlock(&threads_lock);
}

gp_recorder *gps_tool_rec(struct gps_thread *t)
{
	gp_recorder *rec = t ? atomic_load(&gps.rec) : NULL;
	if (rec && !t->kind_set) {
		gp_recorder_set_thread_kind(rec, GP_SOURCE_TOOL);
		t->kind_set = 1;
	}
	return rec;
}

void gps_threads_after_fork_child(void)
{
	pthread_mutex_init(&threads_lock, NULL);
	/* only the forking thread exists here; the rest of the list is the
	 * parent's (leaked on purpose: freeing could touch inconsistent heap) */
	struct gps_thread *self = tls_thread;
	threads = NULL;
	if (self) {
		self->tid = gps_gettid();
		self->next = NULL;
		self->depth = 0; /* the parent reports its own open ranges */
		threads = self;
	}
}
