/* step_index.c — see step_index.h.
 *
 * The file: a key (struct ix_key: what the steps depend on, compared
 * byte for byte), the number of plans and of steps, the steps (struct
 * ix_step, in steps_pipe_bounds' order), then IX_END.  Written to a
 * temporary name and renamed, so a reader sees a whole file or none; a
 * file of another size than its counts say is not used. */
#include "analysis/steps/step_index.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/testenv.h"
#include "common/tool.h"
#include "common/util.h"
#include "gp_settings.h"

#define IX_MAGIC "GPSTEPIX"
#define IX_END "GPSTEPND"
#define IX_VERSION 1u
/* the directory's indexes together at most (the least recently used go first):
 * 32 bytes a step, so some eight million steps of traces */
#define IX_DIR_MAX (256ull << 20)

struct ix_key {
	char magic[8];
	uint32_t version, rule;
	/* the trace file */
	uint64_t dev, ino, size, mtime_ns;
	uint64_t start_trace_ns, index_offset, record_count;
	/* the executable that wrote it */
	uint64_t exe_size, exe_mtime_ns;
	/* the detection options */
	int32_t want;
	uint32_t has_range;
	char range_name[256];
};

struct ix_head {
	struct ix_key key;
	uint64_t nplans, nsteps;
};

struct ix_step {
	uint32_t plan, partial;
	int64_t number;
	uint64_t s, e;
};

struct step_index {
	FILE *f;
	struct ix_head h;
};

static uint64_t mtime_ns(const struct stat *st) { return (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec; }

/* The index's directory (see step_index.h): 0, or -1 when there is none */
static int ix_dir(char *out, size_t n)
{
	const char *d = getenv(gp_setting_get(GP_SET_CACHE_DIR)->name);
	int w;
	if (d) {
		if (!*d || !strcmp(d, "off")) return -1;
		w = snprintf(out, n, "%s", d);
	} else if ((d = getenv("XDG_CACHE_HOME")) && *d == '/') {
		w = snprintf(out, n, "%s/gpuprof", d);
	} else if ((d = getenv("HOME")) && *d == '/') {
		w = snprintf(out, n, "%s/.cache/gpuprof", d);
	} else {
		return -1;
	}
	return w > 0 && (size_t)w < n ? 0 : -1;
}

/* The key of the trace at path (r its reader) and its file's name in dir;
 * 0, or -1 when it has none (no footer: not cleanly closed) */
static int ix_key_of(const char *path, gp_reader *r, enum attr_rule rule, const struct step_detect_opts *detect,
		     struct ix_key *k, const char *dir, char *file, size_t n)
{
	struct stat st, ex;
	struct gp_footer_info fi;
	if (stat(path, &st) || stat("/proc/self/exe", &ex) || gp_reader_footer(r, &fi) < 0 || !fi.present) return -1;
	memset(k, 0, sizeof(*k));
	memcpy(k->magic, IX_MAGIC, 8);
	k->version = IX_VERSION;
	k->rule = (uint32_t)rule;
	k->dev = (uint64_t)st.st_dev;
	k->ino = (uint64_t)st.st_ino;
	k->size = (uint64_t)st.st_size;
	k->mtime_ns = mtime_ns(&st);
	k->start_trace_ns = gp_reader_header(r)->start_trace_ns;
	k->index_offset = fi.index_offset;
	k->record_count = fi.record_count;
	k->exe_size = (uint64_t)ex.st_size;
	k->exe_mtime_ns = mtime_ns(&ex);
	k->want = detect ? detect->want : STEP_WANT_AUTO;
	if (detect && detect->range_name) {
		if (strlen(detect->range_name) >= sizeof(k->range_name)) return -1;
		k->has_range = 1;
		strcpy(k->range_name, detect->range_name);
	}
	int w = snprintf(file, n, "%s/%" PRIx64 "-%" PRIx64 ".steps", dir, k->dev, k->ino);
	return w > 0 && (size_t)w < n ? 0 : -1;
}

/* mkdir -p of dir (0700: the steps of the user's traces) */
static int ix_mkdir(char *dir)
{
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/') continue;
		*p = 0;
		int rc = mkdir(dir, 0700);
		*p = '/';
		if (rc && errno != EEXIST) return -1;
	}
	return mkdir(dir, 0700) && errno != EEXIST ? -1 : 0;
}

struct ix_file { uint64_t mtime, size; char name[256]; };

static int cmp_newest(const void *x, const void *y)
{
	const struct ix_file *a = x, *b = y;
	return a->mtime != b->mtime ? (a->mtime > b->mtime ? -1 : 1) : strcmp(a->name, b->name);
}

/* The indexes of dir past IX_DIR_MAX, the most recently used first (an
 * index's modification time: written, or opened by ix_open), removed
 * (never keep, the one just written) */
static void ix_prune(const char *dir, const char *keep)
{
	DIR *d = opendir(dir);
	if (!d) return;
	struct ix_file *v = NULL;
	size_t n = 0, cap = 0;
	char path[4400];
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		struct stat st;
		if (l < 7 || l >= sizeof(v->name) || strcmp(e->d_name + l - 6, ".steps")) continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) || !S_ISREG(st.st_mode)) continue;
		VEC_PUSH(v, n, cap, ((struct ix_file){ mtime_ns(&st), (uint64_t)st.st_size, "" }));
		strcpy(v[n - 1].name, e->d_name);
	}
	closedir(d);
	qsort(v, n, sizeof(*v), cmp_newest);
	uint64_t total = 0, max = IX_DIR_MAX;
	testenv(TESTENV_CACHE_MAX, &max);
	for (size_t i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, v[i].name);
		if ((total += v[i].size) > max && strcmp(path, keep)) unlink(path);
	}
	free(v);
}

/* The index in file, when whole and of key k; else NULL */
static struct step_index *ix_open(const char *file, const struct ix_key *k)
{
	FILE *f = fopen(file, "rb");
	if (!f) return NULL;
	struct step_index *ix = xcalloc(1, sizeof(*ix));
	ix->f = f;
	struct stat st;
	char end[8];
	/* whole: its counts and its size agree, and it ends as written */
	if (fread(&ix->h, sizeof(ix->h), 1, f) != 1 || memcmp(&ix->h.key, k, sizeof(*k)) || fstat(fileno(f), &st) ||
	    ix->h.nsteps > ((uint64_t)st.st_size - sizeof(ix->h)) / sizeof(struct ix_step) ||
	    (uint64_t)st.st_size != sizeof(ix->h) + ix->h.nsteps * sizeof(struct ix_step) + 8 ||
	    fseek(f, -8, SEEK_END) || fread(end, 8, 1, f) != 1 || memcmp(end, IX_END, 8) ||
	    fseek(f, (long)sizeof(ix->h), SEEK_SET)) {
		step_index_close(ix);
		return NULL;
	}
	/* used now: the directory is pruned least recently used first (a
	 * read-only one is pruned by when each was written) */
	futimens(fileno(f), NULL);
	return ix;
}

struct ix_writer {
	FILE *f;
	uint64_t n;
	int err;
};

/* steps_bound_fn */
static void put_step(void *arg, const struct step_bound *b)
{
	struct ix_writer *w = arg;
	const struct ix_step x = { (uint32_t)b->plan, (uint32_t)b->partial, b->number, b->s, b->e };
	w->err |= fwrite(&x, sizeof(x), 1, w->f) != 1;
	w->n++;
}

void step_index_save(const char *path, gp_reader *r, struct steps_pipe *p, enum attr_rule rule,
		     const struct step_detect_opts *detect, int verbose)
{
	char dir[4096], file[4200], tmp[4300];
	struct ix_head h = { .nplans = step_detect_nplans(p->detect) };
	struct gp_integrity in;
	gp_reader_integrity(r, &in);
	/* the trace method's steps are whole once their pass has run */
	if ((!p->steps_done && steps_pipe_trace_planned(p)) || in.frames_corrupt || in.truncated ||
	    ix_dir(dir, sizeof(dir)) || ix_key_of(path, r, rule, detect, &h.key, dir, file, sizeof(file)))
		return;
	/* a whole index of the same key holds these steps already */
	struct step_index *same = ix_open(file, &h.key);
	if (same) {
		step_index_close(same);
		return;
	}
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", file, (int)getpid());
	FILE *f = NULL;
	if (ix_mkdir(dir) || !(f = fopen(tmp, "wb"))) goto fail;
	struct ix_writer w = { f, 0, 0 };
	w.err |= fwrite(&h, sizeof(h), 1, f) != 1;
	steps_pipe_bounds(p, put_step, &w);
	h.nsteps = w.n;
	w.err |= fwrite(IX_END, 8, 1, f) != 1;
	w.err |= fseek(f, 0, SEEK_SET) || fwrite(&h, sizeof(h), 1, f) != 1;
	w.err |= fclose(f) != 0;
	f = NULL;
	if (w.err || rename(tmp, file)) goto fail;
	ix_prune(dir, file);
	return;
fail:
	if (verbose) fprintf(stderr, "%s: the steps' index could not be written in %s: %s\n", g_cmd, dir, strerror(errno));
	if (f) fclose(f);
	unlink(tmp);
}

struct step_index *step_index_open(const char *path, gp_reader *r, enum attr_rule rule,
				   const struct step_detect_opts *detect)
{
	char dir[4096], file[4200];
	struct ix_key k;
	if (ix_dir(dir, sizeof(dir)) || ix_key_of(path, r, rule, detect, &k, dir, file, sizeof(file))) return NULL;
	return ix_open(file, &k);
}

size_t step_index_nplans(const struct step_index *ix) { return (size_t)ix->h.nplans; }

int step_index_bounds(struct step_index *ix, steps_bound_fn fn, void *arg)
{
	struct ix_step x;
	for (uint64_t i = 0; i < ix->h.nsteps; i++) {
		if (fread(&x, sizeof(x), 1, ix->f) != 1 || x.plan >= ix->h.nplans || x.partial > 1) return -1;
		const struct step_bound b = { x.plan, x.number, x.s, x.e, (int)x.partial };
		fn(arg, &b);
	}
	return 0;
}

void step_index_close(struct step_index *ix)
{
	if (!ix) return;
	if (ix->f) fclose(ix->f);
	free(ix);
}
