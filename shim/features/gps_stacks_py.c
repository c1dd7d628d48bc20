/* gps_stacks_py.c — the calling thread's Python frames at a launch site,
 * without the GIL and without linking Python.
 *
 * PyTorch releases the GIL in its op bindings before it launches (so does
 * ctypes), and the C API that materialises frame objects allocates and needs
 * the GIL.  We read CPython's own structures instead, as py-spy does, but in
 * process and only the CALLING thread's frames: that chain cannot change
 * while the thread is inside our callback, and each frame holds a strong
 * reference to its code object.  Offsets are release-build constants per
 * minor version (3.11, 3.12, 3.13), checked against the real headers by
 * tests/shim/test_py_offsets.c.  Safety: every code object's type is
 * compared with PyCode_Type before use; the first walk of the process reads
 * through process_vm_readv (EFAULT instead of a crash) and any surprise turns
 * Python frames off with one gpuprof: line. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/gps_core.h"
#include "features/gps_stacks.h"

#include "features/gps_py_layout.h"

/* Python frames that tell call sites apart for the rate limit: all that a
 * stack can hold.  Four innermost frames (as before) are the same library
 * frames for every nn.LayerNorm of a model (F.layer_norm, forward,
 * _call_impl, _wrapped_call_impl): the final LayerNorm of GPT-2 then shared
 * a site with the blocks' ones and got their sampled stack (5 of its 8
 * launches under GPT2Block on the H200).  Two loads a frame. */
#define PY_SITE_FRAMES GP_STACK_MAX_FRAMES

static const struct py_layout *L;
static void *(*p_this_tstate)(void);     /* PyGILState_GetThisThreadState: a TLS read */
static int (*p_is_initialized)(void);    /* Py_IsInitialized */
static int (*p_addr2line)(void *code, int byte_offset); /* PyCode_Addr2Line: pure reads */
static const void *p_code_type, *p_unicode_type, *p_none, *p_tuple_type, *p_cell_type;
static int present;
/* 0: the first walk still has to be checked; 1: checked; -1: frames off */
static atomic_int checked;
/* the same for the class of `self` in forward frames (self_class): its
 * first read is checked on its own; a surprise then turns only it off
 * (-1).  2: checked, but a forward frame whose self was not an object of a
 * class was seen since (the layout held for others): from then on the reads
 * from self on are checked ones and such frames get no class. */
static atomic_int cls_checked;

int gps_py_present(void) { return present; }

int gps_py_bind(void)
{
	const unsigned long *ver = dlsym(RTLD_DEFAULT, "Py_Version");
	if (!ver) {
		const char *(*getver)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
		if (getver) { /* CPython before 3.11 */
			present = 1;
			const char *v = getver();
			gps_warn("python frames: CPython %.*s not supported (3.11 to 3.13 are); native frames only",
				 (int)strcspn(v ? v : "?", " "), v ? v : "?");
		}
		return 0;
	}
	present = 1;
	unsigned major = (unsigned)(*ver >> 24) & 0xff, minor = (unsigned)(*ver >> 16) & 0xff;
	if (major == 3 && minor == 11)
		L = &py311;
	else if (major == 3 && minor == 12)
		L = &py312;
	else if (major == 3 && minor == 13)
		L = &py313;
	if (!L) {
		gps_warn("python frames: CPython %u.%u not supported (3.11 to 3.13 are); native frames only",
			 major, minor);
		return 0;
	}
	p_this_tstate = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	p_is_initialized = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
	p_addr2line = (int (*)(void *, int))dlsym(RTLD_DEFAULT, "PyCode_Addr2Line");
	p_code_type = dlsym(RTLD_DEFAULT, "PyCode_Type");
	p_unicode_type = dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	p_none = dlsym(RTLD_DEFAULT, "_Py_NoneStruct");
	p_tuple_type = dlsym(RTLD_DEFAULT, "PyTuple_Type");
	p_cell_type = dlsym(RTLD_DEFAULT, "PyCell_Type");
	if (!p_tuple_type || !p_cell_type)
		atomic_store(&cls_checked, -1); /* frames without class names */
	if (!p_this_tstate || !p_is_initialized || !p_addr2line || !p_code_type || !p_unicode_type) {
		gps_warn("python frames: CPython %u.%u lacks an expected symbol; native frames only", major,
			 minor);
		L = NULL;
		return 0;
	}
	return 1;
}

/* ------------------------------------------------------------ reads */
/* Checked read: process_vm_readv on ourselves fails with EFAULT where a
 * plain load would crash.  Where the call is refused (seccomp, EPERM), a
 * write(2) of the bytes into a pipe is the same test. */
static int pipe_fd[2] = {-1, -1};
/* The pipe is the process's: two threads' checked reads at once would take
 * each other's bytes, or find the pipe empty (EAGAIN, taken for a fault: the
 * check would then turn frames or classes off for nothing), so one thread at
 * a time writes and reads it.  Walks run in the launching thread, never in a
 * signal handler. */
static pthread_mutex_t pipe_lock = PTHREAD_MUTEX_INITIALIZER;
static int safe_read(void *dst, const void *src, size_t n)
{
	struct iovec l = { dst, n }, r = { (void *)src, n };
	ssize_t k = process_vm_readv(getpid(), &l, 1, &r, 1, 0);
	if (k == (ssize_t)n)
		return 0;
	if (k >= 0 || errno == EFAULT)
		return -1;
	pthread_mutex_lock(&pipe_lock);
	int rc = -1;
	if (pipe_fd[0] >= 0 || pipe2(pipe_fd, O_CLOEXEC | O_NONBLOCK) == 0) {
		/* a source that ends in an unmapped page is written in part:
		 * those bytes are read back too, or the next read would get
		 * them */
		ssize_t w = write(pipe_fd[1], src, n);
		if (w > 0 && read(pipe_fd[0], dst, (size_t)w) == w && w == (ssize_t)n)
			rc = 0;
	}
	pthread_mutex_unlock(&pipe_lock);
	return rc;
}

struct rd { int safe; int bad; };
/* one pointer-sized / int-sized field; sets r->bad on a failed checked read */
/* Reads n bytes at base+off into dst: straight through a pointer on the hot
 * path, through safe_read while the layout is being validated (r->bad on a
 * fault). */
static inline void rd_bytes(struct rd *r, void *dst, const char *base, size_t off, size_t n)
{
	if (!r->safe)
		memcpy(dst, base + off, n);
	else if (safe_read(dst, base + off, n))
		r->bad = 1;
}
static inline uintptr_t rd_ptr(struct rd *r, const char *base, size_t off)
{
	uintptr_t v = 0;
	rd_bytes(r, &v, base, off, sizeof v);
	return v;
}
static inline uint32_t rd_u32(struct rd *r, const char *base, size_t off)
{
	uint32_t v = 0;
	rd_bytes(r, &v, base, off, sizeof v);
	return v;
}

/* UTF-8 bytes of a str: compact ASCII data, or the cached UTF-8 of a compact
 * str; else "?" (never materialised: that would allocate). */
static const char *py_str(struct rd *r, const char *o, size_t *len, char *tmp, size_t tmpsz)
{
	*len = 1;
	if (!o || rd_ptr(r, o, PY_OB_TYPE) != (uintptr_t)p_unicode_type || r->bad)
		return "?";
	uint32_t state = rd_u32(r, o, PY_STR_STATE);
	size_t n;
	const char *data;
	if ((state & PY_STATE_COMPACT) && (state & PY_STATE_ASCII)) {
		n = rd_ptr(r, o, PY_STR_LENGTH);
		data = o + L->ascii_size;
	} else if (state & PY_STATE_COMPACT) {
		data = (const char *)rd_ptr(r, o, L->utf8);
		n = rd_ptr(r, o, L->utf8 - 8);
		if (!data)
			return "?";
	} else {
		return "?";
	}
	if (r->bad)
		return "?";
	if (n > 1024)
		n = 1024;
	if (r->safe) {
		/* longer than the caller's buffer: not what it looks for (a
		 * name compared with "forward" or "self"), and not a fault.
		 * Taking it for one turned layer classes off at the first
		 * function name over 16 bytes while the first read was being
		 * checked (on the H200: HF's Trainer, torch.compile, JAX) */
		if (n > tmpsz)
			return "?";
		if (safe_read(tmp, data, n)) {
			r->bad = 1;
			return "?";
		}
		data = tmp;
	}
	*len = n;
	return data;
}

/* ------------------------------------------------------------ line cache */
#define LINE_CACHE 512
struct line_ent { const void *code, *file, *qual, *cls; int off; uint32_t id; unsigned gen; };
static GPS_TLS struct line_ent *line_cache;
static pthread_key_t line_key;
static pthread_once_t line_once = PTHREAD_ONCE_INIT;
static void line_free(void *p)
{
	line_cache = NULL;
	free(p);
}
static void line_key_init(void) { pthread_key_create(&line_key, line_free); }

/* The frame's string id: "py\tFILE\tLINE\tQUALNAME", plus "\tCLASS" when
 * cls (the type object of `self`, its name in cname) is given. */
static uint32_t frame_id(gp_recorder *rec, struct rd *r, const char *code, int off, const void *cls,
			 const char *cname)
{
	const char *file = (const char *)rd_ptr(r, code, L->co_filename);
	const char *qual = (const char *)rd_ptr(r, code, L->co_qualname);
	if (r->bad)
		return 0;
	unsigned gen = atomic_load_explicit(&gps.gen, memory_order_relaxed);
	struct line_ent *e = NULL;
	if (line_cache) {
		uintptr_t h = ((uintptr_t)code >> 4) * 31u + (uintptr_t)off;
		e = &line_cache[(h ^ (h >> 9)) & (LINE_CACHE - 1)];
		/* the name pointers too: a freed code object's address reused by
		 * another with the same offset would have other names */
		if (e->gen == gen && e->code == code && e->off == off && e->file == file && e->qual == qual &&
		    e->cls == cls)
			return e->id;
	}
	char ftmp[1024], qtmp[1024], buf[2400];
	size_t fl, ql;
	const char *f = py_str(r, file, &fl, ftmp, sizeof ftmp);
	const char *q = py_str(r, qual, &ql, qtmp, sizeof qtmp);
	if (r->bad)
		return 0;
	int line = p_addr2line((void *)code, off);
	int n = snprintf(buf, sizeof buf, "py\t%.*s\t%d\t%.*s%s%s", (int)fl, f, line < 0 ? 0 : line, (int)ql, q,
			 cls ? "\t" : "", cls ? cname : "");
	if (n < 0)
		return 0;
	uint32_t id = gp_intern_n(rec, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
	if (e && id)
		*e = (struct line_ent){ code, file, qual, cls, off, id, gen };
	return id;
}

/* ------------------------------------------------------------ layers */
/* Whether str object o is exactly the ASCII text want. */
static int py_str_is(struct rd *r, const char *o, const char *want)
{
	char tmp[16];
	size_t n;
	const char *d = py_str(r, o, &n, tmp, sizeof tmp);
	return !r->bad && n == strlen(want) && !memcmp(d, want, n);
}

#define CLASS_NAME_MAX 128
/* The class of `self` in a `forward` or `_call_impl` frame f of code object
 * `code`: its type object (NULL: not such a frame, or unreadable) and its
 * name in name[] (the part after the last '.' of tp_name).  A torch.nn.Module
 * layer's forward is a method whose first argument is self: co_name
 * "forward", co_argcount > 0,
 * co_localsplusnames[0] "self"; self is localsplus[0] (or the cell there,
 * when a closure captures it).  Reads, no calls: the frame is the calling
 * thread's own and holds a reference to self, whose type outlives it.  The
 * first read of the process goes through safe_read; a surprise turns class
 * names off (frames stay).  `_call_impl` (Module.__call__'s body) too: a
 * module whose forward is not a method of its class has no forward frame of
 * its own — torch.compile's OptimizedModule sets `self.forward` to dynamo's
 * `_fn` — and torch.profiler's module hierarchy is built from these frames;
 * the tools drop one that its own forward frame follows (a layer once). */
/* Where a forward frame is, for a warning: "FILE:FIRSTLINENO" read with
 * checked reads (buf: at least 200 bytes). */
static void code_where(const char *code, char *buf, size_t sz)
{
	struct rd r = { .safe = 1, .bad = 0 };
	char tmp[160];
	size_t n;
	const char *f = py_str(&r, (const char *)rd_ptr(&r, code, L->co_filename), &n, tmp, sizeof tmp);
	int line = r.bad ? 0 : (int)rd_u32(&r, code, L->co_firstlineno);
	snprintf(buf, sz, "%.*s:%d", (int)(n < 150 ? n : 150), r.bad ? "?" : f, r.bad ? 0 : line);
}

static const void *self_class(const char *f, const char *code, char *name)
{
	int c = atomic_load_explicit(&cls_checked, memory_order_acquire);
	if (c < 0)
		return NULL;
	struct rd r = { .safe = c == 0, .bad = 0 };
	const void *tp = NULL;
	const char *why = NULL;
	uintptr_t flags = 0;
	char ntmp[16];
	size_t nl;
	const char *nm = py_str(&r, (const char *)rd_ptr(&r, code, L->co_name), &nl, ntmp, sizeof ntmp);
	if (r.bad || !((nl == 7 && !memcmp(nm, "forward", 7)) || (nl == 10 && !memcmp(nm, "_call_impl", 10))))
		goto out;
	if ((int)rd_u32(&r, code, L->co_argcount) <= 0)
		goto out;
	const char *names = (const char *)rd_ptr(&r, code, L->co_names);
	if (r.bad || !names || rd_ptr(&r, names, PY_OB_TYPE) != (uintptr_t)p_tuple_type || r.bad)
		goto out;
	if (!py_str_is(&r, (const char *)rd_ptr(&r, names, PY_TUPLE_ITEM), "self"))
		goto out;
	if (c == 2)
		r.safe = 1; /* an odd frame was seen: self and its type through checked reads */
	why = "self unreadable";
	const char *self = (const char *)rd_ptr(&r, f, PY_F_LOCALSPLUS);
	if (r.bad || !self)
		goto out;
	const char *t = (const char *)rd_ptr(&r, self, PY_OB_TYPE);
	if (!r.bad && t == p_cell_type) { /* a cell variable: the cell's content */
		self = (const char *)rd_ptr(&r, self, PY_CELL_REF);
		if (r.bad || !self)
			goto out;
		t = (const char *)rd_ptr(&r, self, PY_OB_TYPE);
	}
	if (r.bad || !t)
		goto out;
	/* a type is an object whose type has Py_TPFLAGS_TYPE_SUBCLASS */
	why = "the type of self is not a class";
	const char *meta = (const char *)rd_ptr(&r, t, PY_OB_TYPE);
	if (r.bad || !meta || !((flags = rd_ptr(&r, meta, PY_TP_FLAGS)) & PY_TPFLAGS_TYPE_SUBCLASS) || r.bad) {
		r.bad = 1; /* not laid out as we think */
		goto out;
	}
	why = "the class name unreadable";
	const char *tn = (const char *)rd_ptr(&r, t, PY_TP_NAME);
	if (r.bad || !tn)
		goto out;
	size_t n = 0;
	if (r.safe) { /* byte by byte: the name may end at a page's end */
		for (; n < CLASS_NAME_MAX - 1; n++) {
			if (safe_read(&name[n], tn + n, 1)) {
				r.bad = 1;
				goto out;
			}
			if (!name[n])
				break;
		}
	} else {
		n = strnlen(tn, CLASS_NAME_MAX - 1);
		memcpy(name, tn, n);
	}
	name[n] = 0;
	const char *dot = strrchr(name, '.'); /* a static type's "module.Name" */
	if (dot)
		memmove(name, dot + 1, strlen(dot + 1) + 1);
	for (char *p = name; *p; p++)
		if ((unsigned char)*p < 0x20)
			*p = '_'; /* a tab would split the frame string */
	if (*name)
		tp = t;
out:
	if (r.bad) {
		char where[200];
		if (c >= 1) {
			/* The layout was shown right on other frames: this frame
			 * is odd, not the layout.  It gets no class; the reads
			 * from self on are checked ones from now on. */
			int expect = 1; /* 1 -> 2 happens once: the one warning */
			if (atomic_compare_exchange_strong(&cls_checked, &expect, 2)) {
				code_where(code, where, sizeof where);
				gps_warn("python frames: a forward frame at %s: %s (type flags %#lx); such frames get no layer class",
					 where, why ? why : "?", (unsigned long)flags);
			}
			return NULL;
		}
		int expect = c;
		if (atomic_compare_exchange_strong(&cls_checked, &expect, -1)) {
			code_where(code, where, sizeof where);
			gps_warn("python frames: CPython 3.%d: the class of self in forward frames is not laid out as expected (%s at %s); no layer classes",
				 L->minor, why ? why : "a checked read failed", where);
		}
		return NULL;
	}
	if (c == 0 && tp)
		atomic_store_explicit(&cls_checked, 1, memory_order_release);
	return tp;
}

/* ------------------------------------------------------------ walk */
static int walk(gp_recorder *rec, struct rd *r, uint64_t *out, int max)
{
	const char *ts = p_this_tstate();
	if (!ts)
		return 0;
	const char *f = (const char *)rd_ptr(r, ts, L->ts_cframe);
	if (!L->direct_frame) { /* 3.11, 3.12: through the _PyCFrame */
		if (r->bad || !f)
			return 0;
		f = (const char *)rd_ptr(r, f, L->cf_current);
	}
	int n = 0;
	for (int guard = 0; f && !r->bad && n < max && guard < 4 * GP_STACK_MAX_FRAMES; guard++) {
		const char *code = (const char *)rd_ptr(r, f, L->f_code);
		const char *prev = (const char *)rd_ptr(r, f, L->f_previous);
		const char *instr = (const char *)rd_ptr(r, f, L->f_prev_instr);
		uint32_t owner = rd_u32(r, f, L->f_owner) & 0xff;
		if (r->bad)
			break;
		if ((int)owner == L->owner_cstack) { /* the C stack's shim frame: no code */
			f = prev;
			continue;
		}
		if (code && code == p_none && L->minor >= 13) { /* 3.13: a frame without code */
			f = prev;
			continue;
		}
		if (!code || rd_ptr(r, code, PY_OB_TYPE) != (uintptr_t)p_code_type) {
			r->bad = 1; /* not a frame as we know it */
			break;
		}
		const char *start = code + L->co_code;
		int first = (int)rd_u32(r, code, L->co_firsttraceable);
		/* a frame still being set up has not run a traceable
		 * instruction: CPython's own tracebacks skip it */
		if (owner != PY_OWNED_BY_GENERATOR && instr < start + 2 * (long)first) {
			f = prev;
			continue;
		}
		long off = instr - start;
		char cname[CLASS_NAME_MAX];
		const void *cls = self_class(f, code, cname);
		uint32_t id = frame_id(rec, r, code, off < 0 ? 0 : (int)off, cls, cname);
		if (id)
			out[n++] = GPS_STK_SYMBOLIC | id;
		f = prev;
	}
	return n;
}

int gps_py_walk(gp_recorder *rec, uint64_t *out, int max)
{
	int c = atomic_load_explicit(&checked, memory_order_acquire);
	if (!L || c < 0 || max <= 0 || !p_is_initialized())
		return 0; /* not yet, or no longer (finalising) */
	if (!line_cache) {
		pthread_once(&line_once, line_key_init);
		line_cache = calloc(LINE_CACHE, sizeof *line_cache);
		if (line_cache)
			pthread_setspecific(line_key, line_cache);
	}
	struct rd r = { .safe = c == 0, .bad = 0 };
	int n = walk(rec, &r, out, max);
	if (r.bad) {
		int expect = c;
		if (atomic_compare_exchange_strong(&checked, &expect, -1))
			gps_warn("python frames: CPython 3.%d's frames are not laid out as expected; python frames off, native frames only",
				 L->minor);
		return 0;
	}
	if (c == 0 && n > 0)
		atomic_store_explicit(&checked, 1, memory_order_release);
	return n;
}

uint64_t gps_py_site_key(void)
{
	/* only once a walk has shown the layout is what we think it is */
	if (!L || atomic_load_explicit(&checked, memory_order_relaxed) != 1 || !p_is_initialized())
		return 0;
	const char *ts = p_this_tstate();
	if (!ts)
		return 0;
	const char *f;
	memcpy(&f, ts + L->ts_cframe, sizeof f);
	if (!L->direct_frame && f)
		memcpy(&f, f + L->cf_current, sizeof f);
	/* the instruction of each of the innermost frames: it points into its
	 * code object, so it names function and call site at once */
	uint64_t h = 0;
	for (int i = 0; f && i < PY_SITE_FRAMES; i++) {
		uintptr_t instr;
		memcpy(&instr, f + L->f_prev_instr, sizeof instr);
		h = (h ^ instr) * 0x9E3779B97F4A7C15ull;
		memcpy(&f, f + L->f_previous, sizeof f);
	}
	return h;
}

void gps_py_after_fork_child(void)
{
	/* the pipe (if any) is shared with the parent: a child's checked read
	 * could take the parent's bytes; the child gets its own */
	pipe_fd[0] = pipe_fd[1] = -1;
	pthread_mutex_init(&pipe_lock, NULL); /* a thread of the parent may have held it */
}
