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

#include "analysis/stacks/site_rule.h"
#include "analysis/stacks/stacks.h"
#include "analysis/stacks/symbols.h"
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
	struct site_rule rule; /* which frame is the site (set before the first view) */
	int have_cls;          /* some Python frame has the class field: the shim read classes */
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

void stacks_adopt(struct stacks *s, struct stacks *src, gp_reader *r)
{
	if (!s->count && src->count) {
		struct stacks t = *s;
		*s = *src;
		*src = t;
	}
	s->r = r;
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
	for (size_t i = 0; i < s->nviews; i++) {
		free(s->views[i]->frames);
		free((void *)s->views[i]->layers);
		free(s->views[i]);
	}
	free(s->views);
	strmap_free(&s->view_idx);
	for (size_t i = 0; i < s->nstrs; i++) free(s->strs[i]);
	free(s->strs);
	strmap_free(&s->intern);
	free(s);
}

/* One owned copy per distinct display string. */
const char *stacks_intern(struct stacks *s, const char *str)
{
	int is_new;
	size_t *slot = strmap_get(&s->intern, str, &is_new);
	if (is_new) {
		*slot = s->nstrs;
		VEC_PUSH(s->strs, s->nstrs, s->cstrs, xstrdup(str));
	}
	return s->strs[*slot];
}

/* A display string must fit one folded line: no ';' (frame separator) and
 * no control characters (tool_text-style escaping would hide the name);
 * its one owned copy. */
static const char *intern_clean(struct stacks *s, const char *str)
{
	char *c = xstrdup(str);
	for (char *p = c; *p; p++)
		if (*p == ';' || (unsigned char)*p < 0x20 || *p == 0x7f) *p = '_';
	const char *out = stacks_intern(s, c);
	free(c);
	return out;
}

static struct modset *modset_for(struct stacks *s, uint32_t pid)
{
	static const struct modset zero;
	struct modset *m = VEC_KEYED(&s->pid2mods, pid, s->mods, s->nmods, s->cmods, &zero);
	m->pid = pid;
	return m;
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

static const struct module *find_module(struct stacks *s, uint32_t pid, uint64_t addr)
{
	uint64_t *slot = u64map_get(&s->pid2mods, pid, MAP_FIND);
	if (!slot) return NULL;
	struct modset *ms = &s->mods[*slot - 1];
	if (!ms->sorted) {
		if (ms->n) qsort(ms->v, ms->n, sizeof(*ms->v), cmp_u64); /* by base, the first field */
		ms->sorted = 1;
	}
	/* disjoint: the last one with base <= addr */
	size_t lo = FIRST_WHERE(k, ms->n, ms->v[k].base > addr);
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
		for (uint32_t i = 0; i < n && !s->have_cls; i++) {
			if (!(st->frames[i] & SYMBOLIC_BIT)) continue;
			const char *str = tool_str(s->r, (uint32_t)st->frames[i]);
			int tabs = 0;
			for (const char *p = str; *p; p++) tabs += *p == '\t';
			s->have_cls = starts_with(str, "py\t") && tabs >= 4;
		}
		struct rawstack raw = { xmalloc((n ? n : 1) * sizeof(uint64_t)), n, -1 };
		if (n) memcpy(raw.frames, st->frames, n * sizeof(uint64_t));
		*u64map_get(&s->id2stack, st->stack_id, MAP_INSERT) = s->nraw;
		VEC_PUSH(s->raw, s->nraw, s->craw, raw);
		break;
	}
	}
}

void stacks_set_site_rule(struct stacks *s, const struct site_rule *rule)
{
	if (rule) s->rule = *rule;
}

uint64_t stacks_count(const struct stacks *s)
{
	return s->count;
}

int stacks_preload(struct stacks *s, gp_reader *r)
{
	/* A trace that keeps its metadata apart (format 1.4) has every module,
	 * stack, thread and source in its source-0 chunks: read those only
	 * (an empty time window), not the whole trace. */
	uint64_t from, to;
	gp_reader_time_window(r, &from, &to);
	int apart = gp_reader_meta_apart(r);
	if (apart) {
		int w = gp_reader_set_time_window(r, 0, 0);
		if (w < 0) return w;
	}
	const gp_record *rec;
	int rc;
	while ((rc = gp_reader_next(r, &rec)) > 0) stacks_add(s, rec); /* it takes what it needs */
	int rw = apart ? gp_reader_set_time_window(r, from, to) : gp_reader_rewind(r);
	return rw < 0 ? rw : 0;
}

/* ------------------------------------------------------------ frames */
static const char *basename_of(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
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

/* The user's Python code, not library code (stdlib, site-/dist-packages,
 * frozen modules): the site is the innermost frame in it (innermost_py's
 * match). */
static int user_py_file(const char *unused, const char *file)
{
	return !(file[0] == '<' || strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
		 strstr(file, "/lib/python") || strstr(file, "/lib64/python"));
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

/* cls: the class of `self` the shim read for a `forward` or `_call_impl`
 * frame, "" none */
struct pyframe { char *file, *line, *func, *cls; };

/* Splits a copy of "py\tFILE\tLINE\tFUNC" or "py\tFILE\tLINE\tFUNC\tCLASS";
 * 0 if the string is not that. */
static int parse_py(const char *str, struct pyframe *f, char **copy)
{
	if (!starts_with(str, "py\t")) return 0;
	char *c = xstrdup(str + 3);
	char *t1 = strchr(c, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
	if (!t2) { free(c); return 0; }
	char *t3 = strchr(t2 + 1, '\t');
	*t1 = *t2 = 0;
	f->file = c; f->line = t1 + 1; f->func = t2 + 1; f->cls = "";
	if (t3) { *t3 = 0; f->cls = t3 + 1; }
	*copy = c;
	return 1;
}

/* The last component of a qualified name ("forward" of "Net.forward"). */
static const char *last_component(const char *qual)
{
	const char *d = strrchr(qual, '.');
	return d ? d + 1 : qual;
}

/* The class of a frame's `self`, else NULL: the class the shim recorded;
 * in a trace with no class at all (recorded before the shim read them, or
 * with the read off), the class the method is defined in, from the
 * qualified name ("Linear.forward" -> "Linear"). */
static const char *frame_class(struct stacks *s, const struct pyframe *f)
{
	if (*f->cls) return intern_clean(s, f->cls);
	if (s->have_cls) return NULL;  /* the shim read classes: not a method of self */
	const char *dot = strrchr(f->func, '.');
	if (!dot || dot == f->func) return NULL;
	const char *b = dot;
	while (b > f->func && b[-1] != '.') b--;
	size_t n = (size_t)(dot - b);
	if (!n || (n >= 2 && b[0] == '<')) return NULL;  /* "<locals>.forward": a function */
	char *c = xmalloc(n + 1);
	memcpy(c, b, n);
	c[n] = 0;
	const char *out = intern_clean(s, c);
	free(c);
	return out;
}

/* The layer (class) of a `forward` frame, else NULL. */
static const char *layer_class(struct stacks *s, const struct pyframe *f)
{
	if (strcmp(last_component(f->func), "forward")) return NULL;
	return frame_class(s, f);
}

/* The layer of own[i] when it is a module's `_call_impl` frame
 * (docs/STACKS.md "Layers": a module with no forward frame of its own
 * still counts); NULL when the next module frame inward (own[] is
 * innermost first) is this module's own forward frame, which names the
 * layer already.  A class tells the module apart, not the object (the shim
 * reads no identity): a module that calls another of its class's
 * instances' forward directly, not through __call__, would count once —
 * torch's modules do not. */
static const char *call_impl_layer(struct stacks *s, const struct pyframe *own, uint32_t i)
{
	if (!*own[i].cls || strcmp(last_component(own[i].func), "_call_impl")) return NULL;
	const char *c = frame_class(s, &own[i]);
	for (uint32_t j = i; j-- > 0;) {
		const char *fc = layer_class(s, &own[j]);
		if (fc) return fc == c ? NULL : c;  /* interned: equal strings, equal pointers */
		if (*own[j].cls && !strcmp(last_component(own[j].func), "_call_impl")) break;
	}
	return c;
}

static const char *py_display(struct stacks *s, const struct pyframe *f)
{
	const char *file = short_py_file(f->file);
	size_t n = strlen(f->func) + strlen(f->cls) + strlen(file) + strlen(f->line) + 16;
	char *b = xmalloc(n);
	if (*f->cls) /* the layer's class, where the method was defined in another */
		snprintf(b, n, "%s.%s (%s:%s)", f->cls, last_component(f->func), file, f->line);
	else
		snprintf(b, n, "%s (%s:%s)", *f->func ? f->func : "?", file, f->line);
	const char *out = intern_clean(s, b);
	free(b);
	return out;
}

/* A view's Python frames: the thread's own (own_base: the first one's
 * index in the view, outermost first there) and the borrowed context's,
 * each innermost first. */
struct pyframes { const struct pyframe *own; uint32_t no, own_base; const struct pyframe *ctx; uint32_t nc; };

/* The innermost Python frame whose file match(arg, file) accepts (NULL:
 * any), the thread's own before the borrowed ones; its index in the view
 * in *ix.  NULL: none. */
static const struct pyframe *innermost_py(const struct pyframes *py, int (*match)(const char *arg, const char *file),
					  const char *arg, int *ix)
{
	for (uint32_t i = 0; i < py->no; i++)
		if (!match || match(arg, py->own[i].file)) { *ix = (int)(py->own_base + py->no - 1 - i); return &py->own[i]; }
	for (uint32_t i = 0; i < py->nc; i++)
		if (!match || match(arg, py->ctx[i].file)) { *ix = (int)(py->nc - 1 - i); return &py->ctx[i]; }
	return NULL;
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
		nf.name = stacks_intern(s, buf);
		return nf;
	}
	nf.path = tool_str(s->r, m->path_id);
	nf.module = basename_of(nf.path);
	uint64_t off = a - m->base + m->file_offset;
	const char *sym = symcache_lookup(s->syms, nf.path, off);
	if (!sym) {
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, *nf.module ? nf.module : "?", off);
		sym = buf;
	}
	nf.name = intern_clean(s, sym);
	return nf;
}

const char *stacks_thread_name(struct stacks *s, uint32_t pid, uint32_t tid)
{
	uint64_t *n = u64map_get(&s->thread_name, ((uint64_t)pid << 32) | tid, MAP_FIND);
	return n ? tool_str(s->r, (uint32_t)*n) : "";
}

static const char *thread_label(struct stacks *s, uint32_t pid, uint32_t tid)
{
	const char *name = stacks_thread_name(s, pid, tid);
	char buf[320];
	if (*name) snprintf(buf, sizeof(buf), "[thread %u %s]", tid, name);
	else snprintf(buf, sizeof(buf), "[thread %u]", tid);
	return intern_clean(s, buf);
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
			other[nother++] = intern_clean(s, *str ? str : "?");
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

	/* the layers: the classes of the thread's own `forward` frames,
	 * outermost first (a borrowed context is another thread's) */
	const char **lay = xcalloc(no ? no : 1, sizeof(char *));
	for (uint32_t i = no; i-- > 0;) {
		const char *c = layer_class(s, &own[i]);
		if (!c) c = call_impl_layer(s, own, i);
		if (c) lay[v->nlayers++] = c;
	}
	v->layers = lay;
	v->own_python = no;
	v->borrowed = in_ctx && !no;
	/* s's own copy: a view outlives the reader it was made with when the
	 * stacks change hands (stacks_adopt) */
	v->thread_name = stacks_intern(s, stacks_thread_name(s, pid, tid));
	uint32_t own_base = nc + (in_ctx ? 1u : 0u), nat_base = own_base + no;
	const struct pyframes py = { own, no, own_base, ctx, nc };

	/* the user's site (the default rule): innermost user Python frame,
	 * else innermost Python frame, else innermost native frame outside
	 * CUDA's libraries */
	int user_ix = -1, ix = -1;
	const struct pyframe *user = innermost_py(&py, user_py_file, NULL, &user_ix), *site = NULL;
	if (!user) user = innermost_py(&py, NULL, NULL, &user_ix);
	/* the chosen rule's frame; none: as the user's */
	if (s->rule.kind == SITE_INNER) site = innermost_py(&py, NULL, NULL, &ix);
	else if (s->rule.kind == SITE_GLOB) site = innermost_py(&py, site_rule_glob_match, s->rule.glob, &ix);
	char buf[1024];
	const char *native_site = NULL, *native_key = NULL;
	int native_ix = -1;
	{
		const struct native *ns = NULL;
		uint32_t k = 0;
		for (uint32_t i = 0; i < nn && !ns; i++)
			if (!cuda_module(nat[i].module)) { ns = &nat[i]; k = i; }
		if (!ns && nn) ns = &nat[0];
		native_site = ns ? ns->name : stacks_intern(s, "(empty stack)");
		native_ix = ns ? (int)(nat_base + nn - 1 - k) : -1;
		snprintf(buf, sizeof(buf), "native\t%s\t%s", ns ? ns->path : "", native_site);
		native_key = stacks_intern(s, buf);
	}
	if (user) {
		snprintf(buf, sizeof(buf), "%s:%s %s", short_py_file(user->file), user->line, user->func);
		v->user_site = intern_clean(s, buf);
	} else {
		v->user_site = native_site;
	}
	if (!site) { site = user; ix = user_ix; }
	if (s->rule.kind == SITE_LAYER && v->nlayers) {
		size_t len = 1;
		for (uint32_t i = 0; i < v->nlayers; i++) len += strlen(v->layers[i]) + 3;
		char *b = xmalloc(len), *p = b;
		for (uint32_t i = 0; i < v->nlayers; i++) p += sprintf(p, "%s%s", i ? " > " : "", v->layers[i]);
		v->site = stacks_intern(s, b);
		char *k = xmalloc(len + 8);
		sprintf(k, "layer\t%s", b);
		v->site_key = stacks_intern(s, k);
		free(b); free(k);
		v->site_frame = -1;
	} else if (site) {
		snprintf(buf, sizeof(buf), "%s:%s %s", short_py_file(site->file), site->line, site->func);
		v->site = intern_clean(s, buf);
		snprintf(buf, sizeof(buf), "py\t%s\t%s\t%s", site->file, site->line, site->func);
		v->site_key = stacks_intern(s, buf);
		v->site_frame = ix;
	} else {
		v->site = native_site;
		v->site_key = native_key;
		v->site_frame = native_ix;
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
