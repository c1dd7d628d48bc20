/* tool.c — see tool.h. */
#include "common/tool.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gp_settings.h"

const char *g_cmd = "gpuprof";

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", g_cmd, kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void tool_msg(const char *kind, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(kind, fmt, ap);
	va_end(ap);
}

int tool_fail(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	return code;
}

static const char *reader_cause(gp_reader *r, int rc)
{
	/* gp_reader_errmsg(NULL): why this thread's last open failed */
	const char *m = gp_reader_errmsg(r);
	if (m && *m)
		return m;
	if (rc == GP_ERR_IO && errno)
		return strerror(errno);
	return gp_strerror(rc);
}

int g_threads;

/* Option `name` ("--width") at argv[*i], alone or as "--width=V": its value
 * (argv[*i] advanced past a separate one), "" when it has none, NULL when
 * argv[*i] is another word. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
	size_t l = strlen(name);
	if (strncmp(argv[*i], name, l)) return NULL;
	if (argv[*i][l] == '=') return argv[*i] + l + 1;
	if (argv[*i][l]) return NULL;
	return *i + 1 < argc ? argv[++*i] : "";
}

int tool_take_options(int argc, char **argv, const char *const *names, int (*take)(int which, const char *value))
{
	int w = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < argc) argv[w++] = argv[i++];
			break;
		}
		const char *v = NULL;
		int k = 0;
		while (names[k] && !(v = option_value(argc, argv, &i, names[k]))) k++;
		if (!names[k]) argv[w++] = argv[i];
		else if (take(k, v)) return -1;
	}
	argv[w] = NULL;
	return w;
}

static int take_threads(int which, const char *v)
{
	uint64_t n;
	if (!*v) return tool_fail(-1, "--threads needs a number");
	if (gp_parse_uint(v, 1, GP_READER_MAX_THREADS, &n))
		return tool_fail(-1, "bad --threads '%s' (1 .. %d)", v, GP_READER_MAX_THREADS);
	g_threads = (int)n;
	return 0;
}

int tool_take_threads(int argc, char **argv)
{
	static const char *const names[] = { "--threads", NULL };
	argc = tool_take_options(argc, argv, names, take_threads);
	if (!g_threads) g_threads = gp_reader_threads_default();
	return argc;
}

/* "-": stdin, copied once into an unlinked temporary file (the reader
 * seeks: to the index at the end when it opens a file, back to the start for
 * another pass), then opened by its /proc/self/fd path as often as asked.
 * NULL after the message. */
static const char *stdin_path(void)
{
	static char path[64];
	static int state; /* 0 not yet, 1 ok, -1 failed */
	if (state) return state > 0 ? path : NULL;
	state = -1;
	if (isatty(STDIN_FILENO)) {
		tool_err("cannot read -: stdin is a terminal (pipe a trace into it, or name the file)");
		return NULL;
	}
	const char *tmp = getenv("TMPDIR");
	char tpl[4096];
	snprintf(tpl, sizeof(tpl), "%s/gpuprof-stdin.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(tpl);
	if (fd < 0) {
		tool_err("cannot read -: no temporary file for stdin in %s: %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
		return NULL;
	}
	unlink(tpl);
	char buf[65536];
	ssize_t n;
	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR) continue;
		if (n < 0 || write(fd, buf, (size_t)n) != n) {
			tool_err("cannot read -: copying stdin to %s failed: %s", tpl, strerror(errno));
			close(fd);
			return NULL;
		}
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd); /* fd stays open */
	state = 1;
	return path;
}

gp_reader *tool_open(const char *path)
{
	return tool_open_threads(path, g_threads ? g_threads : gp_reader_threads_default());
}

gp_reader *tool_open_threads(const char *path, int threads)
{
	gp_reader *r = NULL;
	const char *name = path;
	if (!strcmp(path, "-") && !(path = stdin_path()))
		return NULL;
	errno = 0;
	/* share: the time slices' readers of the file (slices_open) borrow this
	 * one's chunk table while it is open */
	struct gp_reader_opts o = { .sz = sizeof(o), .threads = threads, .share = 1 };
	int rc = gp_reader_open_opts(path, &o, &r);
	if (rc < 0 || !r) {
		/* an open's errno before the reader's message (gp_reader_errmsg(NULL)) */
		tool_err("cannot read %s: %s", name, rc == GP_ERR_IO && errno ? strerror(errno) : reader_cause(r, rc));
		gp_reader_close(r);
		return NULL;
	}
	/* Best effort: a damaged file still gets whatever names were intact; the
	 * damage itself is reported by tool_finish after the real iteration. */
	gp_reader_load_meta(r);
	gp_reader_rewind(r);
	return r;
}

int tool_finish(gp_reader *r, const char *path, int rc, int strict)
{
	progress_done();
	if (!gp_reader_recoverable(rc))
		return tool_fail(EXIT_BADINPUT, "cannot read %s: %s", path, reader_cause(r, rc));
	struct gp_integrity in = { 0 };
	gp_reader_integrity(r, &in);
	int code = EXIT_OK;
	if (rc == GP_ERR_CORRUPT || in.frames_corrupt) {
		const char *m = gp_reader_errmsg(r);
		int have_m = m && *m && strcmp(m, "no error") && strncmp(m, "no footer", 9);
		tool_err("cannot read %s: %s%s%" PRIu64 " corrupt frame(s) skipped (%" PRIu64
			 " bytes); output covers the intact frames only",
			 path, have_m ? m : "", have_m ? "; " : "", in.frames_corrupt, in.bytes_skipped);
		code = EXIT_BADINPUT;
	}
	if (rc == GP_ERR_TRUNCATED || in.truncated) {
		if (strict) {
			tool_err("cannot read %s: truncated after %" PRIu64 " frames at offset %" PRIu64,
				 path, in.frames_ok, in.truncated_at);
			code = EXIT_BADINPUT;
		} else {
			tool_warn("%s: truncated after %" PRIu64 " frames at offset %" PRIu64
				  " (job killed?); showing the intact prefix",
				  path, in.frames_ok, in.truncated_at);
		}
	}
	return code;
}

const char *tool_str(gp_reader *r, uint32_t id)
{
	if (!id)
		return "";
	const char *s = gp_reader_string(r, id);
	return s ? s : "";
}

char *tool_range_name(gp_reader *r, const gp_rec_nvtx_range *n)
{
	const char *dom = tool_str(r, n->domain_id), *msg = tool_str(r, n->message_id);
	char *name = xmalloc(strlen(dom) + strlen(msg) + 2);
	if (*dom) sprintf(name, "%s:%s", dom, msg);
	else strcpy(name, msg);
	return name;
}

uint32_t tool_rec_tid(gp_reader *r, const gp_record *rec)
{
	uint32_t tid = 0;
	if (rec->type == GP_REC_API) tid = rec->u.api.tid;
	else if (rec->type == GP_REC_NVTX_RANGE) tid = rec->u.nvtx_range.tid;
	if (tid) return tid;
	const gp_rec_source *src = gp_reader_source(r, rec->source_id);
	return src ? src->tid : 0;
}

uint32_t tool_pid(gp_reader *r, const gp_record *rec)
{
	/* records that describe a process/thread carry their own pid */
	if (rec->type == GP_REC_PROCESS) return rec->u.process.pid;
	if (rec->type == GP_REC_THREAD) return rec->u.thread.pid;
	if (rec->type == GP_REC_SOURCE && rec->u.source.pid) return rec->u.source.pid;
	const gp_rec_source *s = gp_reader_source(r, rec->source_id);
	if (s && s->pid)
		return s->pid;
	const gp_header *h = gp_reader_header(r);
	return h ? h->pid : 0;
}

const struct gp_field *tool_field(uint32_t type, const char *name)
{
	const struct gp_field *f = gp_rec_field(type, name);
	if (!f) {
		tool_err("internal: no field '%s' in %s records", name, gp_rec_type_name(type));
		abort();
	}
	return f;
}

uint64_t tool_rec_end(const gp_record *r)
{
	switch (r->type) {
	case GP_REC_API: return r->u.api.end_ns;
	case GP_REC_KERNEL: return r->u.kernel.end_ns;
	case GP_REC_MEMCPY: return r->u.memcpy.end_ns;
	case GP_REC_MEMSET: return r->u.memset.end_ns;
	case GP_REC_NVTX_RANGE: return r->u.nvtx_range.end_ns;
	case GP_REC_SYNC: return r->u.sync.end_ns;
	case GP_REC_WINDOW: return r->u.window.end_ns;
	default: return gp_record_time(r);
	}
}

/* ------------------------------------------------------------ progress */
static int prog_state = -1; /* -1 unknown, 0 off, 1 on */
static time_t prog_last;
static int prog_shown;

void progress_tick(uint64_t n)
{
	if ((n & 0xffff) != 0 || prog_state == 0)
		return;
	if (prog_state < 0)
		prog_state = isatty(2) ? 1 : 0;
	if (!prog_state)
		return;
	time_t now = time(NULL);
	if (now == prog_last)
		return;
	prog_last = now;
	fprintf(stderr, "\r%s: %" PRIu64 " records...", g_cmd, n);
	prog_shown = 1;
}

void progress_done(void)
{
	if (prog_shown)
		fprintf(stderr, "\r\033[K");
	prog_shown = 0;
}

const char *tool_text(const char *s)
{
	static char *bufs[8];
	static size_t caps[8];
	static unsigned next;
	if (!s) return "";
	const unsigned char *q = (const unsigned char *)s;
	while (*q && *q >= 0x20 && *q != 0x7f) q++;
	if (!*q) return s;
	unsigned k = next++ % 8;
	vec_reserve((void **)&bufs[k], &caps[k], strlen(s) * 4 + 1, 1);
	char *o = bufs[k];
	for (q = (const unsigned char *)s; *q; q++) {
		if (*q < 0x20 || *q == 0x7f) o += sprintf(o, "\\x%02x", *q);
		else *o++ = (char)*q;
	}
	*o = 0;
	return bufs[k];
}

void tool_see_help(void)
{
	fprintf(stderr, "%s: see '%s --help'\n", g_cmd, g_cmd);
}

int tool_open_operand(int argc, char **argv, const char **path, gp_reader **r)
{
	int n = argc - optind;
	if (n != 1) {
		/* One line that says what to do: the whole help would bury it. */
		if (n == 0)
			tool_err("expected one trace file (see '%s --help')", g_cmd);
		else
			tool_err("expected one trace file, got %d: run '%s FILE' once per file "
				 "(the traces of one job's processes: 'gpuprof merge' them first)", n, g_cmd);
		return EXIT_USAGE;
	}
	*path = argv[optind];
	*r = tool_open(*path);
	return *r ? EXIT_OK : EXIT_BADINPUT;
}
