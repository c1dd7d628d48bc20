/* gps_stacks.c — call stacks at kernel launch, memcpy/memset and allocation call sites
 * (GPUPROF_STACKS; record layout in docs/FORMAT.md "Call stacks").
 *
 * Runs in the API exit callback of the call, inside gps_enter with
 * gps_in_shim = 1.  Which calls, and what tells their call sites apart, is
 * the GPU backend's choice (nvidia/gps_cupti_stacks.c).  Cost control: a
 * per-thread table keyed by the call site (the call, the kernel function or
 * graph, and in Python the innermost frames' instructions) captures the
 * first 16 calls of a site and then 1 in 32 at random (GPUPROF_STACKS=all:
 * every call); the other calls reuse the site's last stack id — no
 * unwinding, a few loads.
 * Captures are interned process-wide (64-bit hash of the frames -> id), so a
 * repeated stack costs one id; GP_REC_STACK is emitted once per new stack,
 * GP_REC_MODULE once per executable segment, both before the first API
 * record that uses them (the recorder writes them in source 0 first).
 *
 * Native frames come from libunwind's unw_backtrace, loaded with dlopen
 * (never linked), else from glibc's backtrace().  Symbolisation is offline:
 * only addresses and module maps go into the trace. */
#include <dlfcn.h>
#include <execinfo.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/gps_core.h"
#include "features/gps_stacks.h"

#define SITE_SLOTS 512           /* per thread, power of 2 */
#define FIRST_CAPTURES 16        /* per site before sampling */
#define SAMPLE_MASK 31           /* then 1 in 32 */
#define INTERN_SLOTS 32768       /* process-wide, power of 2; 3/4 used at most */
#define CTX_SLOTS 256            /* Python parts of recent stacks, by id */
#define PY_RESERVE 32            /* frames kept for Python in a Python process */

int gps_stacks_on;

/* ------------------------------------------------------------ unwinder */
static int (*unw_backtrace_fn)(void **buf, int size);
/* the shim's own executable segments: its frames are dropped */
static uintptr_t own_lo[4], own_hi[4];
static int own_n;

static int find_own(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	uintptr_t me = (uintptr_t)arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (me < lo || me >= lo + ph->p_memsz)
			continue;
		/* this object: every executable segment of it */
		for (int j = 0; j < info->dlpi_phnum && own_n < 4; j++) {
			const ElfW(Phdr) *q = &info->dlpi_phdr[j];
			if (q->p_type == PT_LOAD && (q->p_flags & PF_X)) {
				own_lo[own_n] = info->dlpi_addr + q->p_vaddr;
				own_hi[own_n] = own_lo[own_n] + q->p_memsz;
				own_n++;
			}
		}
		return 1;
	}
	return 0;
}

static inline int is_own(uintptr_t a)
{
	for (int i = 0; i < own_n; i++)
		if (a >= own_lo[i] && a < own_hi[i])
			return 1;
	return 0;
}

static void *open_libunwind(char *tried, size_t n)
{
	char path[PATH_MAX];
	const char *names[4];
	int k = 0;
	const char *slash = strrchr(gps.self_path, '/');
	if (gps.cfg.unwind_lib[0]) {
		names[k++] = gps.cfg.unwind_lib; /* GPUPROF_UNWIND=/path: only that one */
	} else {
		/* next to libgpuprof.so first: the GPU image carries Debian's there */
		if (slash && (size_t)(slash - gps.self_path) + 20 < sizeof path) {
			snprintf(path, sizeof path, "%.*s/libunwind.so.8", (int)(slash - gps.self_path),
				 gps.self_path);
			names[k++] = path;
		}
		names[k++] = "libunwind.so.8";
		names[k++] = "libunwind.so";
	}
	size_t o = 0;
	tried[0] = 0;
	for (int i = 0; i < k; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (h)
			return h;
		int w = snprintf(tried + o, n - o, "%s%s", o ? ", " : "", names[i]);
		if (w > 0 && (size_t)w < n - o)
			o += (size_t)w;
	}
	return NULL;
}

static void bind_unwinder(void)
{
	if (gps.cfg.unwind != GP_UNWIND_GLIBC) {
		char tried[PATH_MAX + 64];
		void *h = open_libunwind(tried, sizeof tried);
		if (h) {
			unw_backtrace_fn = (int (*)(void **, int))dlsym(h, "unw_backtrace");
			if (!unw_backtrace_fn)
				gps_warn("stacks: %s has no unw_backtrace; using glibc backtrace()", "libunwind");
		} else {
			gps_warn("stacks: libunwind not found (tried %s); using glibc backtrace()", tried);
		}
	}
	/* the first call loads what the unwinder needs (glibc: libgcc_s via
	 * dlopen); done here, not in the first launch */
	void *warm[4];
	if (unw_backtrace_fn)
		unw_backtrace_fn(warm, 4);
	else
		backtrace(warm, 4);
	dl_iterate_phdr(find_own, (void *)(uintptr_t)&bind_unwinder);
}

/* ------------------------------------------------------------ process-wide */
static pthread_mutex_t stk_lock = PTHREAD_MUTEX_INITIALIZER;
struct intern_ent { uint64_t hash; uint32_t id; uint32_t n; };
static struct intern_ent *itab;  /* INTERN_SLOTS, under stk_lock */
static uint32_t itab_used, next_id;
static unsigned tab_gen = ~0u;   /* recorder generation the tables belong to */
static _Atomic uint64_t n_captured, n_distinct;

/* Python part of recent stacks, for the ctx marker (under stk_lock) */
struct ctx_ent { uint32_t id; uint32_t n; uint64_t f[GP_STACK_MAX_FRAMES]; };
static struct ctx_ent *ctxtab;   /* CTX_SLOTS, NULL when no Python frames */
/* latest launch with Python frames: (tid << 32) | stack id, 0 none */
static _Atomic uint64_t ctx_latest;
static int py_on;

/* modules emitted for this generation (under stk_lock) */
struct mod_ent { uint64_t base, size; };
static struct mod_ent *mods;
static size_t nmods, capmods;
static _Atomic unsigned long long seen_adds, seen_subs;
static atomic_uint mods_gen = ~0u;
static char exe_path[PATH_MAX];

static void tables_reset_locked(unsigned gen)
{
	if (itab)
		memset(itab, 0, INTERN_SLOTS * sizeof *itab);
	if (ctxtab)
		memset(ctxtab, 0, CTX_SLOTS * sizeof *ctxtab);
	itab_used = 0;
	next_id = 1;
	nmods = 0;
	atomic_store(&ctx_latest, 0);
	atomic_store(&mods_gen, ~0u);
	atomic_store(&n_captured, 0);
	atomic_store(&n_distinct, 0);
	tab_gen = gen;
}

/* ------------------------------------------------------------ modules */
struct mod_scan { gp_recorder *rec; int index; uint64_t ts; };

static int emit_modules_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct mod_scan *ms = arg;
	int first = ms->index++ == 0;
	const char *name = info->dlpi_name;
	char rp[PATH_MAX];
	if (!name || !*name) {
		if (!first || !exe_path[0])
			return 0; /* no name: nothing to symbolise against */
		name = exe_path;
	} else if (!strncmp(name, "linux-vdso", 10) || !strncmp(name, "linux-gate", 10)) {
		return 0;
	} else if (name[0] != '/' && realpath(name, rp)) {
		name = rp;
	}
	uint32_t path_id = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		uint64_t base = info->dlpi_addr + ph->p_vaddr, sz = ph->p_memsz;
		size_t k;
		for (k = 0; k < nmods; k++)
			if (mods[k].base == base && mods[k].size == sz)
				break;
		if (k < nmods)
			continue;
		if (nmods == capmods) {
			size_t nc = capmods ? capmods * 2 : 256;
			struct mod_ent *m = realloc(mods, nc * sizeof *m);
			if (!m)
				return 1;
			mods = m;
			capmods = nc;
		}
		if (!path_id)
			path_id = gp_intern(ms->rec, name);
		gp_record r;
		memset(&r, 0, sizeof r);
		r.type = GP_REC_MODULE;
		r.u.module = (gp_rec_module){ .ts_ns = ms->ts, .base = base, .size = sz,
					      .file_offset = ph->p_offset, .path_id = path_id };
		gp_emit(ms->rec, &r);
		mods[nmods++] = (struct mod_ent){ base, sz };
	}
	return 0;
}

static int phdr_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
	unsigned long long *c = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		c[0] = info->dlpi_adds;
		c[1] = info->dlpi_subs;
	}
	return 1; /* the counters are the same in every entry: one is enough */
}

/* Every object whose code can be on a stack captured now has its module
 * records emitted when this returns.  Cheap when nothing was loaded since
 * the last call: one dl_iterate_phdr step. */
static void modules_sync(gp_recorder *rec, unsigned gen)
{
	unsigned long long c[2] = {~0ull, ~0ull};
	dl_iterate_phdr(phdr_counts, c);
	if (atomic_load_explicit(&mods_gen, memory_order_acquire) == gen && c[0] != ~0ull &&
	    c[0] == atomic_load_explicit(&seen_adds, memory_order_relaxed) &&
	    c[1] == atomic_load_explicit(&seen_subs, memory_order_relaxed))
		return;
	pthread_mutex_lock(&stk_lock);
	if (tab_gen != gen)
		tables_reset_locked(gen);
	struct mod_scan ms = { rec, 0, gps_now() };
	dl_iterate_phdr(emit_modules_cb, &ms);
	atomic_store_explicit(&seen_adds, c[0], memory_order_relaxed);
	atomic_store_explicit(&seen_subs, c[1], memory_order_relaxed);
	atomic_store_explicit(&mods_gen, gen, memory_order_release);
	pthread_mutex_unlock(&stk_lock);
}

/* ------------------------------------------------------------ per thread */
struct site { uint64_t key; uint32_t dc; uint32_t count; uint32_t id; uint32_t has_py; };
struct stk_thread {
	unsigned gen;
	uint32_t tid;
	uint64_t rng;
	struct site site[SITE_SLOTS];
	void *ips[GP_STACK_MAX_FRAMES + 32];
	uint64_t frames[GP_STACK_MAX_FRAMES];
};
static GPS_TLS struct stk_thread *stk_tls;
static pthread_key_t stk_key;

static void stk_thread_free(void *p)
{
	stk_tls = NULL; /* a later TLS destructor may still call CUDA */
	free(p);
}

static __attribute__((noinline)) struct stk_thread *stk_thread_new(void)
{
	struct stk_thread *st = calloc(1, sizeof *st);
	if (!st)
		return NULL;
	st->gen = ~0u;
	pthread_setspecific(stk_key, st);
	stk_tls = st;
	return st;
}

static inline uint64_t xorshift64(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static inline void ctx_note(uint32_t tid, uint32_t id)
{
	uint64_t v = ((uint64_t)tid << 32) | id;
	/* read first: the line stays shared while one thread keeps launching */
	if (atomic_load_explicit(&ctx_latest, memory_order_relaxed) != v)
		atomic_store_explicit(&ctx_latest, v, memory_order_relaxed);
}

static uint32_t intern_ctx_marker(gp_recorder *rec, uint32_t tid)
{
	char b[32];
	int n = snprintf(b, sizeof b, "ctx\t%u", tid);
	return gp_intern_n(rec, b, (size_t)n);
}

/* Unwinds, adds Python frames (or the ctx context), interns.  Returns the
 * stack id (0 on failure). */
static __attribute__((noinline)) uint32_t capture(gp_recorder *rec, struct stk_thread *st,
						 unsigned gen, uint32_t *has_py)
{
	int max_native = py_on ? GP_STACK_MAX_FRAMES - PY_RESERVE : GP_STACK_MAX_FRAMES;
	int n = unw_backtrace_fn ? unw_backtrace_fn(st->ips, GP_STACK_MAX_FRAMES + 32)
				 : backtrace(st->ips, GP_STACK_MAX_FRAMES + 32);
	int i = 0, nf = 0;
	while (i < n && is_own((uintptr_t)st->ips[i]))
		i++;
	for (; i < n && nf < max_native; i++)
		st->frames[nf++] = (uint64_t)(uintptr_t)st->ips[i] & ~GPS_STK_SYMBOLIC;
	int npy = 0, pystart = nf;
	uint64_t ctx = 0;
	if (py_on) {
		npy = gps_py_walk(rec, st->frames + nf, GP_STACK_MAX_FRAMES - nf);
		nf += npy;
		if (npy == 0 && nf + 2 <= GP_STACK_MAX_FRAMES) {
			ctx = atomic_load_explicit(&ctx_latest, memory_order_relaxed);
			if ((uint32_t)(ctx >> 32) == st->tid)
				ctx = 0;
		}
	}
	*has_py = npy > 0;
	modules_sync(rec, gen);
	pthread_mutex_lock(&stk_lock);
	if (tab_gen != gen)
		tables_reset_locked(gen);
	if (ctx && ctxtab) {
		/* no Python of our own: the Python stack of the latest launch
		 * that had one (autograd's thread runs backward for the main
		 * thread waiting in loss.backward()) */
		const struct ctx_ent *ce = &ctxtab[(uint32_t)ctx % CTX_SLOTS];
		if (ce->id == (uint32_t)ctx && ce->n) {
			uint32_t m = intern_ctx_marker(rec, (uint32_t)(ctx >> 32));
			if (m) {
				st->frames[nf++] = GPS_STK_SYMBOLIC | m;
				for (uint32_t k = 0; k < ce->n && nf < GP_STACK_MAX_FRAMES; k++)
					st->frames[nf++] = ce->f[k];
			}
		}
	}
	uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t)nf;
	for (int k = 0; k < nf; k++)
		h = mix64(h ^ st->frames[k]);
	uint32_t id = 0;
	struct intern_ent *e = NULL;
	if (itab) {
		uint32_t s = (uint32_t)h & (INTERN_SLOTS - 1);
		while (itab[s].id && !(itab[s].hash == h && itab[s].n == (uint32_t)nf))
			s = (s + 1) & (INTERN_SLOTS - 1);
		e = &itab[s];
		id = e->id;
	}
	if (!id) {
		id = next_id++;
		gp_record r;
		memset(&r, 0, sizeof r);
		r.type = GP_REC_STACK;
		r.u.stack = (gp_rec_stack){ .stack_id = id, .nframes = (uint32_t)nf, .frames = st->frames };
		gp_emit(rec, &r);
		atomic_fetch_add_explicit(&n_distinct, 1, memory_order_relaxed);
		/* a full table stops interning new stacks (each capture then
		 * gets its own id), it never loops forever */
		if (e && itab_used < INTERN_SLOTS / 4 * 3) {
			*e = (struct intern_ent){ h, id, (uint32_t)nf };
			itab_used++;
		}
		if (npy && ctxtab) {
			struct ctx_ent *ce = &ctxtab[id % CTX_SLOTS];
			ce->id = id;
			ce->n = (uint32_t)npy;
			memcpy(ce->f, st->frames + pystart, (size_t)npy * sizeof ce->f[0]);
		}
	}
	pthread_mutex_unlock(&stk_lock);
	atomic_fetch_add_explicit(&n_captured, 1, memory_order_relaxed);
	if (npy)
		ctx_note(st->tid, id);
	return id;
}

uint32_t gps_stacks_for_site(gp_recorder *rec, uint32_t call, uint64_t key, int every)
{
	if (py_on && gps.cfg.stacks != GP_STACKS_ALL)
		key ^= gps_py_site_key();
	struct stk_thread *st = stk_tls;
	if (__builtin_expect(!st, 0) && !(st = stk_thread_new()))
		return 0;
	unsigned gen = atomic_load_explicit(&gps.gen, memory_order_relaxed);
	if (__builtin_expect(st->gen != gen, 0)) {
		memset(st->site, 0, sizeof st->site);
		st->gen = gen;
		st->tid = gps_gettid();
		st->rng = mix64(((uint64_t)st->tid << 32) ^ gps_mono_ns()) | 1;
	}
	uint32_t dc = call;
	struct site *s = &st->site[mix64(key ^ ((uint64_t)dc << 40)) & (SITE_SLOTS - 1)];
	int take;
	if (s->id && s->key == key && s->dc == dc) {
		s->count += s->count < UINT32_MAX;
		take = every || gps.cfg.stacks == GP_STACKS_ALL || s->count <= FIRST_CAPTURES ||
		       (xorshift64(&st->rng) & SAMPLE_MASK) == 0;
	} else { /* new site, or another one took the slot: start over */
		*s = (struct site){ .key = key, .dc = dc, .count = 1 };
		take = 1;
	}
	if (!take) {
		if (s->has_py)
			ctx_note(st->tid, s->id);
		return s->id;
	}
	uint32_t has_py = 0;
	uint32_t id = capture(rec, st, gen, &has_py);
	if (id) {
		s->id = id;
		s->has_py = has_py;
	}
	return s->id;
}

/* ------------------------------------------------------------ bind */
int gps_stacks_wanted(void)
{
	static int done;
	if (gps.cfg.stacks == GP_STACKS_OFF || done)
		return 0;
	done = 1;
	if (gps.cfg.api_set == GP_API_SET_NONE) { /* a stack belongs to an API record */
		gps_warn("stacks: GPUPROF_API=none records no API calls, so no call stacks either");
		return 0;
	}
	return 1;
}

void gps_stacks_enable(void)
{
	itab = calloc(INTERN_SLOTS, sizeof *itab);
	if (!itab || pthread_key_create(&stk_key, stk_thread_free) != 0) {
		gps_warn("stacks: out of memory; no call stacks");
		return;
	}
	ssize_t k = readlink("/proc/self/exe", exe_path, sizeof exe_path - 1);
	exe_path[k > 0 ? k : 0] = 0;
	bind_unwinder();
	if (gps_py_bind()) {
		ctxtab = calloc(CTX_SLOTS, sizeof *ctxtab);
		py_on = 1;
	}
	gps_stacks_on = 1;
}

/* ------------------------------------------------------------ stats */
void gps_stacks_emit_stats(gp_recorder *rec)
{
	if (!gps_stacks_on)
		return;
	/* what the stacks cost: captures (unwinds) and distinct stacks of this
	 * trace; the other launches reused a site's stack */
	unsigned gen = atomic_load(&gps.gen);
	pthread_mutex_lock(&stk_lock);
	int mine = tab_gen == gen;
	pthread_mutex_unlock(&stk_lock);
	gps_emit_int_counter(rec, "gpuprof.stacks_captured", mine ? atomic_load(&n_captured) : 0);
	gps_emit_int_counter(rec, "gpuprof.stacks_distinct", mine ? atomic_load(&n_distinct) : 0);
}

void gps_stacks_after_fork_child(void)
{
	/* the child's first capture resets the tables (new generation) */
	pthread_mutex_init(&stk_lock, NULL);
	atomic_store(&ctx_latest, 0);
	gps_py_after_fork_child();
}
