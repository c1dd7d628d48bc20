/* cmd_merge.c — `gpuprof merge A B ... -o OUT`: traces of several processes
 * (ranks) into one file on the first input's trace clock; the time mapping
 * and the ids: docs/CLI.md "gpuprof merge".  Two passes per input: strings,
 * clocks and id ranges first (strings must precede their users), records
 * second, each streamed with bounded memory. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/tool.h"

void cmd_merge_help(FILE *f)
{
	fprintf(f, "usage: gpuprof merge [--strict] A.gpuprof B.gpuprof ... -o OUT.gpuprof\n\n"
		   "Merges traces of several processes (e.g. ranks) into one trace on the first\n"
		   "input's time axis: timestamps are translated through CLOCK_REALTIME using each\n"
		   "input's header and clock records; string, stack and source ids are renumbered;\n"
		   "pids are kept.  OUT must not exist.\n\n"
		   "  -o, --output OUT   merged trace\n"
		   "  --strict           fail (exit 2) on truncated inputs (default: merge the intact part)\n"
		   "  -h, --help         this text\n");
}

struct clockpair { uint64_t trace, real; };
struct input {
	const char *path;
	gp_header hdr;
	struct clockpair *cp; size_t ncp, ccp;   /* sorted by trace */
	uint32_t str_off, stack_off, src_off;
	uint32_t max_str, max_stack, max_src;
};

static int cmp_cp(const void *a, const void *b)
{
	const struct clockpair *x = a, *y = b;
	return x->trace < y->trace ? -1 : x->trace > y->trace;
}

static int cmp_cp_real(const void *a, const void *b)
{
	const struct clockpair *x = a, *y = b;
	return x->real < y->real ? -1 : x->real > y->real;
}

/* Which clock of a pair a lookup goes by. */
enum pair_key { BY_TRACE, BY_REAL };

/* latest pair with key <= v (or the first) */
static const struct clockpair *find_pair(const struct clockpair *cp, size_t n, uint64_t v, enum pair_key key)
{
	size_t after = FIRST_WHERE(i, n, (key == BY_REAL ? cp[i].real : cp[i].trace) > v);
	return &cp[after ? after - 1 : 0];
}

struct merge {
	struct input *in;
	size_t nin;
	struct clockpair *ref_by_real; size_t nref; /* first input's pairs, sorted by realtime */
	size_t cur;
};

static uint64_t xlate(struct merge *m, uint64_t t)
{
	if (!t) return 0;
	struct input *in = &m->in[m->cur];
	if (m->cur == 0) return t;
	const struct clockpair *p = find_pair(in->cp, in->ncp, t, BY_TRACE);
	int64_t real = (int64_t)p->real + ((int64_t)t - (int64_t)p->trace);
	const struct clockpair *q = find_pair(m->ref_by_real, m->nref, (uint64_t)real, BY_REAL);
	int64_t out = (int64_t)q->trace + (real - (int64_t)q->real);
	return out < 0 ? 0 : (uint64_t)out;
}


/* Rewrites ids and times of one record for the merged file, by the kinds
 * of its fields in the field table (libprof/common/gp_fields.h): times on
 * the trace clock are translated; string and stack ids move past the
 * earlier inputs' (a reference of 0 = none stays 0; a record's own id
 * always moves); source ids move too (0 is the input's metadata source).
 * A field added to the table with one of these kinds is remapped without
 * an edit here. */
static void remap(struct merge *m, gp_record *r)
{
	struct input *in = &m->in[m->cur];
	unsigned n;
	const struct gp_field *f = gp_rec_fields(r->type, &n);
	for (unsigned i = 0; i < n; i++) {
		uint64_t v = gp_field_get(r, &f[i], 0);
		int def = f[i].flags & GP_FIELD_DEF;
		switch (f[i].kind) {
		case GP_FK_TIME: case GP_FK_END: v = xlate(m, v); break;
		case GP_FK_STRING: if (v || def) v += in->str_off; break;
		case GP_FK_STACK: if (v || def) v += in->stack_off; break;
		case GP_FK_SOURCE:
			/* the one field whose kind depends on the record: CUPTI's
			 * drops name a device there, not a source */
			if (r->type == GP_REC_DROPPED && r->u.dropped.where == GP_DROP_CUPTI) continue;
			v += in->src_off;
			break;
		default: continue;
		}
		gp_field_set(r, &f[i], 0, v);
	}
}

/* Appends rec to the merged trace; -1 after the message, with r (the input
 * being read) closed. */
static int put(gp_writer *w, uint32_t source_id, const gp_record *rec, gp_reader *r)
{
	if (gp_writer_append(w, source_id, rec) >= 0) return 0;
	tool_err("cannot write merged trace");
	gp_reader_close(r);
	return -1;
}

static int pass1(struct merge *m, gp_writer *w, int strict, int *code)
{
	for (m->cur = 0; m->cur < m->nin; m->cur++) {
		struct input *in = &m->in[m->cur];
		gp_reader *r = tool_open(in->path);
		if (!r) return -1;
		in->hdr = *gp_reader_header(r);
		struct clockpair hp = { in->hdr.start_trace_ns, in->hdr.start_realtime_ns };
		VEC_PUSH(in->cp, in->ncp, in->ccp, hp);
		if (m->cur) {
			struct input *prev = &m->in[m->cur - 1];
			in->str_off = prev->str_off + prev->max_str;
			in->stack_off = prev->stack_off + prev->max_stack;
			in->src_off = prev->src_off + prev->max_src + 1;
			/* The meta source of a later input gets its own id and a
			 * SOURCE record, so its device/process records keep their
			 * pid.  Sources go to source 0, which the writer puts before
			 * any data chunk. */
			gp_record s = { .type = GP_REC_SOURCE,
					.u.source = { .source_id = in->src_off, .kind = GP_SOURCE_META, .pid = in->hdr.pid } };
			if (put(w, 0, &s, r)) return -1;
		}
		const gp_record *rec;
		int rc;
		while ((rc = gp_reader_next(r, &rec)) > 0) {
			switch (rec->type) {
			case GP_REC_SOURCE: case GP_REC_STRING: {
				if (rec->type == GP_REC_STRING && rec->u.string.id > in->max_str) in->max_str = rec->u.string.id;
				gp_record c = *rec;
				remap(m, &c);   /* ids only: these records have no times */
				if (put(w, 0, &c, r)) return -1;
				break;
			}
			case GP_REC_CLOCK: {
				struct clockpair p = { rec->u.clock.trace_ns, rec->u.clock.realtime_ns };
				if (p.trace && p.real) VEC_PUSH(in->cp, in->ncp, in->ccp, p);
				break;
			}
			case GP_REC_STACK:
				if (rec->u.stack.stack_id > in->max_stack) in->max_stack = rec->u.stack.stack_id;
				break;
			}
			if (rec->source_id > in->max_src) in->max_src = rec->source_id;
			if (rec->type == GP_REC_SOURCE && rec->u.source.source_id > in->max_src)
				in->max_src = rec->u.source.source_id;
		}
		int c = tool_finish(r, in->path, rc, strict);
		gp_reader_close(r);
		if (c) *code = c;
		if (c && (strict || !gp_reader_recoverable(rc))) return -1;
		qsort(in->cp, in->ncp, sizeof(*in->cp), cmp_cp);
	}
	return 0;
}

static int pass2(struct merge *m, gp_writer *w)
{
	for (m->cur = 0; m->cur < m->nin; m->cur++) {
		struct input *in = &m->in[m->cur];
		gp_reader *r = tool_open(in->path);
		if (!r) return -1;
		const gp_record *rec;
		int rc;
		uint64_t n = 0;
		while ((rc = gp_reader_next(r, &rec)) > 0) {
			progress_tick(++n);
			if (rec->type == GP_REC_STRING || rec->type == GP_REC_SOURCE) continue;
			gp_record c = *rec;
			remap(m, &c);
			if (put(w, rec->source_id + in->src_off, &c, r)) return -1;
		}
		/* pass 1 already reported damage */
		gp_reader_close(r);
	}
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "strict", no_argument, NULL, 's' },
		{ 0 },
	};
	const char *out = NULL;
	int strict = 0, c;
	while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 's': strict = 1; break;
		default: tool_see_help(); return EXIT_USAGE;
		}
	}
	if (!out) return tool_usage_see_help("-o OUT is required");
	if (optind >= argc) return tool_usage_see_help("no input traces");
	if (access(out, F_OK) == 0) return tool_usage("%s exists; not overwriting", out);

	struct merge m = { .nin = (size_t)(argc - optind) };
	m.in = xcalloc(m.nin, sizeof(struct input));
	for (size_t i = 0; i < m.nin; i++) m.in[i].path = argv[optind + i];

	/* header of the output: the first input's clock; rank only if one input */
	gp_reader *r0 = tool_open(m.in[0].path);
	if (!r0) { free(m.in); return EXIT_BADINPUT; }
	gp_header hdr = *gp_reader_header(r0);
	gp_reader_close(r0);
	if (m.nin > 1) hdr.rank = -1;
	snprintf(hdr.producer, sizeof(hdr.producer), "gpuprof %s (merge)", GP_PRODUCER_VERSION);
	hdr.major = GP_FORMAT_MAJOR;
	hdr.minor = GP_FORMAT_MINOR;

	gp_writer *w = NULL;
	int rc = gp_writer_open(out, &hdr, 3, &w);
	if (rc < 0 || !w) {
		tool_err("cannot write %s: %s", out, gp_strerror(rc));
		free(m.in);
		return EXIT_BADINPUT;
	}
	int code = EXIT_OK;
	int fail = pass1(&m, w, strict, &code);
	if (!fail) {
		m.nref = m.in[0].ncp;
		m.ref_by_real = xmalloc(m.nref * sizeof(struct clockpair));
		memcpy(m.ref_by_real, m.in[0].cp, m.nref * sizeof(struct clockpair));
		qsort(m.ref_by_real, m.nref, sizeof(struct clockpair), cmp_cp_real);
		fail = pass2(&m, w);
	}
	if (gp_writer_close(w) < 0 && !fail) {
		tool_err("cannot write %s", out);
		fail = 1;
	}
	if (fail) {
		unlink(out);
		if (code == EXIT_OK) code = EXIT_BADINPUT;
	}
	for (size_t i = 0; i < m.nin; i++) free(m.in[i].cp);
	free(m.in);
	free(m.ref_by_real);
	progress_done();
	return code;
}
