/* gen_common.h — what the test trace generators (gen_trace.c, gen_ranks.c,
 * gen_stacks.c) share: the one writer (open/close), an append that exits on error, STRING
 * records, and the SOURCE/PROCESS records every trace starts with.
 * Header-only and static inline: each generator is one C file, and a helper
 * a generator does not use costs nothing (and draws no unused warning). */
#ifndef GEN_COMMON_H
#define GEN_COMMON_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gp_trace.h"

static gp_writer *w;
static const char *gen_prog = "gen"; /* names the generator in its messages */

static inline void put(uint32_t src, gp_record *r)
{
	int rc = gp_writer_append(w, src, r);
	if (rc < 0) {
		fprintf(stderr, "%s: append: %s\n", gen_prog, gp_strerror(rc));
		exit(1);
	}
}

/* Opens the one writer (zstd level 3) or exits 1 with the cause. */
static inline void gen_open(const char *out, const gp_header *h)
{
	int rc = gp_writer_open(out, h, 3, &w);
	if (rc < 0) {
		fprintf(stderr, "%s: open %s: %s\n", gen_prog, out, gp_strerror(rc));
		exit(1);
	}
}

/* Closes it; the generator's exit status (1 when the close failed). */
static inline int gen_close(void)
{
	int rc = gp_writer_close(w);
	if (rc < 0) {
		fprintf(stderr, "%s: close: %s\n", gen_prog, gp_strerror(rc));
		return 1;
	}
	return 0;
}

/* STRING record `s` with id `id`. */
static inline void str_id(uint32_t id, const char *s)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_STRING;
	r.u.string.id = id;
	r.u.string.len = (uint32_t)strlen(s);
	r.u.string.str = s;
	put(0, &r);
}

/* SOURCE records 1..n of process pid: kinds[s], tids[s], names[s] (string
 * ids, 0 = none); index 0 of each array is unused. */
static inline void sources(uint32_t pid, uint32_t n, const uint32_t *kinds, const uint32_t *tids,
			   const uint32_t *names)
{
	gp_record r;
	for (uint32_t s = 1; s <= n; s++) {
		memset(&r, 0, sizeof(r));
		r.type = GP_REC_SOURCE;
		r.u.source.source_id = s; r.u.source.kind = kinds[s]; r.u.source.pid = pid;
		r.u.source.tid = tids[s]; r.u.source.name_id = names[s];
		put(0, &r);
	}
}

/* The PROCESS record (parent pid 1). */
static inline void process(uint32_t pid, uint32_t cmd_id, uint32_t host_id, int32_t rank, uint64_t start_ns)
{
	gp_record r;
	memset(&r, 0, sizeof(r));
	r.type = GP_REC_PROCESS;
	r.u.process.pid = pid; r.u.process.ppid = 1; r.u.process.name_id = cmd_id;
	r.u.process.host_id = host_id; r.u.process.rank = rank; r.u.process.start_ns = start_ns;
	put(0, &r);
}
#endif
