/* stacks.c — GP_REC_STACK frames -> display frames, launch site, innermost
 * frame.  Frame encoding (docs/FORMAT.md): bit 63 clear = native address
 * (frame 0 the capture point, later ones return addresses); bit 63 set = a
 * string id: "py\tFILE\tLINE\tFUNC" (a Python frame) or "ctx\tTID" (the
 * frames after it are the Python stack last seen on thread TID).  Innermost
 * first: native frames, the thread's Python frames, then ctx and the borrowed
 * Python frames. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/stacks.h"
#include "analysis/symbols.h"
#include "common/tool.h"

#define SYMBOLIC_BIT (1ull << 63)

struct module { uint64_t base, size, file_offset; uint32_t path_id; };
struct modset { uint32_t pid; struct module *v; size_t n, cap; int sorted; };

struct rawstack { uint64_t *frames; uint32_t n; int ctx; /* -1 not yet known */ };

struct stacks {
	gp_reader *r;
	struct symcache *syms;
	u64map pid2mods; struct modset *mods; size_t nmods, cmods;
	u64map id2stack; struct rawstack *raw; size_t nraw, craw;
	u64map thread_name;  /* (pid<<32|tid) -> string id */
	uint64_t count;
	strmap view_idx; struct stack_view **views; size_t nviews, cviews;
	strmap intern;       /* display strings, owned */
	char **strs; size_t nstrs, cstrs;
};

struct stacks *stacks_new(gp_reader *r)
{
	struct stacks *s = xcalloc(1, sizeof(*s));
	s->r = r;
	s->syms = symcache_new();
	strmap_init(&s->view_idx);
	strmap_init(&s->intern);
	return s;
}

void stacks_free(struct stacks *s)
{
	if (!s) return;
	symcache_free(s->syms);
	for (size_t i = 0; i < s->nmods; i++) free(s->mods[i].v);
	free(s->mods);
	u64map_free(&s->pid2mods);
	for (size_t i = 0; i < s->nraw; i++) free(s->raw[i].frames);
	free(s->raw);
	u64map_free(&s->id2stack);
	u64map_free(&s->thread_name);
	for (size_t i = 0; i < s->nviews; i++) { free(s->views[i]->frames); free(s->views[i]); }
	free(s->views);
	strmap_free(&s->view_idx);
	for (size_t i = 0; i < s->nstrs; i++) free(s->strs[i]);
	free(s->strs);
	strmap_free(&s->intern);
	free(s);
}

/* One owned copy per distinct display string. */
static const char *intern(struct stacks *s, const char *str)
{
	int is_new;
	size_t *slot = strmap_get(&s->intern, str, &is_new);
	if (is_new) {
		*slot = s->nstrs;
		VEC_PUSH(s->strs, s->nstrs, s->cstrs, xstrdup(str));
	}
	return s->strs[*slot];
}

static struct modset *modset_for(struct stacks *s, uint32_t pid)
{
	uint64_t *slot = u64map_get(&s->pid2mods, pid, MAP_FIND);
	if (slot) return &s->mods[*slot];
	struct modset m;
	memset(&m, 0, sizeof(m));
	m.pid = pid;
	*u64map_get(&s->pid2mods, pid, MAP_INSERT) = s->nmods;
	VEC_PUSH(s->mods, s->nmods, s->cmods, m);
	return &s->mods[s->nmods - 1];
}

static void add_module(struct stacks *s, uint32_t pid, const gp_rec_module *m)
{
	if (!m->size || m->base + m->size < m->base) return; /* empty or wrapping: unusable */
	struct modset *ms = modset_for(s, pid);
	size_t w = 0;
	for (size_t i = 0; i < ms->n; i++) {  /* a later mapping replaces what it overlaps */
		const struct module *o = &ms->v[i];
		if (o->base < m->base + m->size && m->base < o->base + o->size) continue;
		ms->v[w++] = ms->v[i];
	}
	ms->n = w;
	struct module nm = { m->base, m->size, m->file_offset, m->path_id };
	VEC_PUSH(ms->v, ms->n, ms->cap, nm);
	ms->sorted = 0;
}

static int cmp_module(const void *a, const void *b)
{
	const struct module *x = a, *y = b;
	return x->base < y->base ? -1 : x->base > y->base;
}

static const struct module *find_module(struct stacks *s, uint32_t pid, uint64_t addr)
{
	uint64_t *slot = u64map_get(&s->pid2mods, pid, MAP_FIND);
	if (!slot) return NULL;
	struct modset *ms = &s->mods[*slot];
	if (!ms->sorted) {
		if (ms->n) qsort(ms->v, ms->n, sizeof(*ms->v), cmp_module);
		ms->sorted = 1;
	}
	size_t lo = 0, hi = ms->n;  /* disjoint: the last one with base <= addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ms->v[mid].base <= addr) lo = mid + 1;
		else hi = mid;
	}
	if (!lo) return NULL;
	const struct module *m = &ms->v[lo - 1];
	return addr - m->base < m->size ? m : NULL;
}

void stacks_add(struct stacks *s, const gp_record *rec)
{
	switch (rec->type) {
	case GP_REC_MODULE:
		add_module(s, tool_pid(s->r, rec), &rec->u.module);
		break;
	case GP_REC_THREAD:
		*u64map_get(&s->thread_name, ((uint64_t)rec->u.thread.pid << 32) | rec->u.thread.tid, MAP_INSERT) =
			rec->u.thread.name_id;
		break;
	case GP_REC_SOURCE:
		if (rec->u.source.kind == GP_SOURCE_THREAD && rec->u.source.name_id) {
			uint64_t *n = u64map_get(&s->thread_name,
						 ((uint64_t)rec->u.source.pid << 32) | rec->u.source.tid, MAP_INSERT);
			if (!*n) *n = rec->u.source.name_id;
		}
		break;
	case GP_REC_STACK: {
		const gp_rec_stack *st = &rec->u.stack;
		uint32_t n = st->frames ? st->nframes : 0;
		if (n > GP_STACK_MAX_FRAMES) n = GP_STACK_MAX_FRAMES;
		s->count++;
		if (u64map_get(&s->id2stack, st->stack_id, MAP_FIND)) break;
		struct rawstack raw = { xmalloc((n ? n : 1) * sizeof(uint64_t)), n, -1 };
		if (n) memcpy(raw.frames, st->frames, n * sizeof(uint64_t));
		*u64map_get(&s->id2stack, st->stack_id, MAP_INSERT) = s->nraw;
		VEC_PUSH(s->raw, s->nraw, s->craw, raw);
		break;
	}
	}
}

uint64_t stacks_count(const struct stacks *s)
{
	return s->count;
}

int stacks_preload(struct stacks *s, gp_reader *r)
{
	const gp_record *rec;
	int rc;
	while ((rc = gp_reader_next(r, &rec)) > 0)
		if (rec->type == GP_REC_MODULE || rec->type == GP_REC_STACK || rec->type == GP_REC_THREAD ||
		    rec->type == GP_REC_SOURCE)
			stacks_add(s, rec);
	int rw = gp_reader_rewind(r);
	return rw < 0 ? rw : 0;
}

/* ------------------------------------------------------------ frames */
static const char *basename_of(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

static int starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Frames of the tracer itself: never shown. */
static int tracer_module(const char *base)
{
	return starts_with(base, "libgpuprof") || starts_with(base, "libcupti");
}

/* CUDA's own libraries: shown, but never a launch site. */
static int cuda_module(const char *base)
{
	return tracer_module(base) || starts_with(base, "libcudart") || starts_with(base, "libcuda.");
}

static int interpreter_module(const char *base)
{
	return starts_with(base, "python") || starts_with(base, "libpython");
}

/* Library Python code (stdlib, site-/dist-packages, frozen modules): the
 * site is the innermost frame outside it. */
static int library_py_file(const char *file)
{
	return file[0] == '<' || strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
	       strstr(file, "/lib/python") || strstr(file, "/lib64/python");
}

/* Shown file name: the path inside site-/dist-packages ("torch/nn/functional.py"),
 * inside the stdlib directory ("json/decoder.py"), else the base name. */
static const char *short_py_file(const char *file)
{
	static const char *const roots[] = { "/site-packages/", "/dist-packages/" };
	for (size_t i = 0; i < 2; i++) {
		const char *p = strstr(file, roots[i]);
		if (p && p[strlen(roots[i])]) return p + strlen(roots[i]);
	}
	const char *p = strstr(file, "/lib/python");
	if (!p) p = strstr(file, "/lib64/python");
	if (p) {
		const char *slash = strchr(p + 5, '/');  /* after "pythonX.Y" */
		if (slash && slash[1]) return slash + 1;
	}
	return basename_of(file);
}

struct pyframe { char *file, *line, *func; };

/* Splits a copy of "py\tFILE\tLINE\tFUNC"; 0 if the string is not that. */
static int parse_py(const char *str, struct pyframe *f, char **copy)
{
	if (!starts_with(str, "py\t")) return 0;
	char *c = xstrdup(str + 3);
	char *t1 = strchr(c, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
	if (!t2) { free(c); return 0; }
	*t1 = *t2 = 0;
	f->file = c; f->line = t1 + 1; f->func = t2 + 1;
	*copy = c;
	return 1;
}

/* A display string must fit one folded line: no ';' (frame separator) and
 * no control characters; tool_text-style escaping would hide the name. */
static char *clean(const char *s)
{
	char *c = xstrdup(s);
	for (char *p = c; *p; p++)
		if (*p == ';' || (unsigned char)*p < 0x20 || *p == 0x7f) *p = '_';
	return c;
}

static const char *py_display(struct stacks *s, const struct pyframe *f)
{
	const char *file = short_py_file(f->file);
	size_t n = strlen(f->func) + strlen(file) + strlen(f->line) + 8;
	char *b = xmalloc(n);
	snprintf(b, n, "%s (%s:%s)", *f->func ? f->func : "?", file, f->line);
	char *c = clean(b);
	const char *out = intern(s, c);
	free(b); free(c);
	return out;
}

struct native {
	const char *name;     /* interned display */
	const char *module;   /* base name of the module, "" unknown */
	const char *path;
};

static struct native native_frame(struct stacks *s, uint32_t pid, uint64_t addr, int is_return)
{
	struct native nf = { NULL, "", "" };
	char buf[512];
	uint64_t a = is_return && addr ? addr - 1 : addr;  /* inside the call instruction */
	const struct module *m = find_module(s, pid, a);
	if (!m) {
		snprintf(buf, sizeof(buf), "0x%" PRIx64, addr);
		nf.name = intern(s, buf);
		return nf;
	}
	nf.path = tool_str(s->r, m->path_id);
	nf.module = basename_of(nf.path);
	uint64_t off = a - m->base + m->file_offset;
	const char *sym = symcache_lookup(s->syms, nf.path, off);
	if (sym) {
		char *c = clean(sym);
		nf.name = intern(s, c);
		free(c);
	} else {
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, *nf.module ? nf.module : "?", off);
		char *c = clean(buf);
		nf.name = intern(s, c);
		free(c);
	}
	return nf;
}

static const char *thread_label(struct stacks *s, uint32_t pid, uint32_t tid)
{
	uint64_t *n = u64map_get(&s->thread_name, ((uint64_t)pid << 32) | tid, MAP_FIND);
	const char *name = n ? tool_str(s->r, (uint32_t)*n) : "";
	char buf[320];
	if (*name) snprintf(buf, sizeof(buf), "[thread %u %s]", tid, name);
	else snprintf(buf, sizeof(buf), "[thread %u]", tid);
	char *c = clean(buf);
	const char *out = intern(s, c);
	free(c);
	return out;
}

static struct stack_view *build_view(struct stacks *s, const struct rawstack *raw, uint32_t pid, uint32_t tid)
{
	uint32_t n = raw->n;
	struct native *nat = xcalloc(n ? n : 1, sizeof(*nat));
	struct pyframe *own = xcalloc(n ? n : 1, sizeof(*own)), *ctx = xcalloc(n ? n : 1, sizeof(*ctx));
	char **copies = xcalloc(n ? n : 1, sizeof(char *));
	const char **own_disp = xcalloc(n ? n : 1, sizeof(char *)), **ctx_disp = xcalloc(n ? n : 1, sizeof(char *));
	const char **other = xcalloc(n ? n : 1, sizeof(char *));
	uint32_t nn = 0, no = 0, nc = 0, nother = 0, native_seen = 0, ncopies = 0;
	int in_ctx = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t f = raw->frames[i];
		if (!(f & SYMBOLIC_BIT)) {
			nat[nn++] = native_frame(s, pid, f, native_seen++ > 0);
			continue;
		}
		const char *str = tool_str(s->r, (uint32_t)f);
		struct pyframe pf;
		char *copy;
		if (starts_with(str, "ctx\t")) {
			in_ctx = 1;
		} else if (parse_py(str, &pf, &copy)) {
			copies[ncopies++] = copy;
			if (in_ctx) { ctx_disp[nc] = py_display(s, &pf); ctx[nc++] = pf; }
			else { own_disp[no] = py_display(s, &pf); own[no++] = pf; }
		} else {
			/* a symbolic frame of a kind this tool does not know: shown as is */
			char *c = clean(*str ? str : "?");
			other[nother++] = intern(s, c);
			free(c);
		}
	}
	/* The interpreter's C frames say nothing the Python frames do not: drop
	 * every native frame from the innermost interpreter frame outward. */
	if (no) {
		for (uint32_t i = 0; i < nn; i++)
			if (interpreter_module(nat[i].module)) { nn = i; break; }
	}
	uint32_t w = 0;
	for (uint32_t i = 0; i < nn; i++)
		if (!tracer_module(nat[i].module)) nat[w++] = nat[i];
	nn = w;

	struct stack_view *v = xcalloc(1, sizeof(*v));
	v->frames = xmalloc((nc + 1 + no + nn + nother + 1) * sizeof(char *));
	for (uint32_t i = nc; i-- > 0;) v->frames[v->nframes++] = ctx_disp[i];
	if (in_ctx) v->frames[v->nframes++] = thread_label(s, pid, tid);
	for (uint32_t i = no; i-- > 0;) v->frames[v->nframes++] = own_disp[i];
	for (uint32_t i = nn; i-- > 0;) v->frames[v->nframes++] = nat[i].name;
	for (uint32_t i = 0; i < nother; i++) v->frames[v->nframes++] = other[i];

	/* site: innermost user Python frame, else innermost Python frame, else
	 * innermost native frame outside CUDA's libraries */
	const struct pyframe *site = NULL;
	for (uint32_t pass = 0; pass < 2 && !site; pass++) {
		for (uint32_t i = 0; i < no && !site; i++)
			if (pass || !library_py_file(own[i].file)) site = &own[i];
		for (uint32_t i = 0; i < nc && !site; i++)
			if (pass || !library_py_file(ctx[i].file)) site = &ctx[i];
	}
	char buf[1024];
	if (site) {
		snprintf(buf, sizeof(buf), "%s:%s %s", short_py_file(site->file), site->line, site->func);
		char *c = clean(buf);
		v->site = intern(s, c);
		free(c);
		snprintf(buf, sizeof(buf), "py\t%s\t%s\t%s", site->file, site->line, site->func);
		v->site_key = intern(s, buf);
	} else {
		const struct native *ns = NULL;
		for (uint32_t i = 0; i < nn && !ns; i++)
			if (!cuda_module(nat[i].module)) ns = &nat[i];
		if (!ns && nn) ns = &nat[0];
		v->site = ns ? ns->name : intern(s, "(empty stack)");
		snprintf(buf, sizeof(buf), "native\t%s\t%s", ns ? ns->path : "", v->site);
		v->site_key = intern(s, buf);
	}
	v->innermost = no ? own_disp[0] : nc ? ctx_disp[0] : nn ? nat[0].name : "";
	for (uint32_t i = 0; i < ncopies; i++) free(copies[i]);
	free(copies); free(nat); free(own); free(ctx); free(own_disp); free(ctx_disp); free(other);
	return v;
}

static int has_ctx(struct stacks *s, struct rawstack *raw)
{
	if (raw->ctx < 0) {
		raw->ctx = 0;
		for (uint32_t i = 0; i < raw->n; i++)
			if ((raw->frames[i] & SYMBOLIC_BIT) &&
			    starts_with(tool_str(s->r, (uint32_t)raw->frames[i]), "ctx\t"))
				raw->ctx = 1;
	}
	return raw->ctx;
}

const struct stack_view *stacks_view(struct stacks *s, uint32_t stack_id, uint32_t pid, uint32_t tid)
{
	if (!stack_id) return NULL;
	uint64_t *slot = u64map_get(&s->id2stack, stack_id, MAP_FIND);
	if (!slot) return NULL;
	struct rawstack *raw = &s->raw[*slot];
	/* the launching thread matters only to a stack that borrows a context */
	char key[48];
	snprintf(key, sizeof(key), "%u/%u/%u", stack_id, pid, has_ctx(s, raw) ? tid : 0);
	int is_new;
	size_t *v = strmap_get(&s->view_idx, key, &is_new);
	if (is_new) {
		*v = s->nviews;
		VEC_PUSH(s->views, s->nviews, s->cviews, build_view(s, raw, pid, tid));
	}
	return s->views[*v];
}
