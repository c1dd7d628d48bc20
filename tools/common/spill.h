/* spill.h — an append-only array of fixed-size records whose first
 * mem_cap bytes live in memory and the rest in an unlinked temporary file,
 * so that what a command keeps per step (rows, per-step state, a table's
 * rows until printed) costs disk past the cap, not memory.
 *
 * Records sit in blocks of 32 to 64 KiB, a power of two of records a
 * block (a record never straddles two; a record over 64 KiB is a block).
 * The blocks within the cap stay in memory; the later ones are written to
 * a file made in $TMPDIR (default /tmp) and unlinked at once (nothing is
 * left behind, whatever ends the process), with pwrite, and read back
 * with pread through a small cache of blocks (written back when changed).
 *
 * $GPUPROF_SPILL_MEM (bytes) lowers every spill's cap (docs/CLI.md).
 *
 * Errors: when the file cannot be made or written (no such $TMPDIR, disk
 * full), one "warning: cannot spill ..." line is printed for the process
 * (tool_warn) and the spill keeps its later blocks in memory instead: the
 * results stay right, only the memory bound is lost.  spill_failed says so.
 *
 * Pointers: a record pointer from spill_push, spill_at or spill_get is
 * valid through the next 7 calls on the same spill (its cache holds 8
 * blocks, the least recently used one leaves); one from spill_reader_at
 * through the next 3 calls on the same reader (4 blocks).  So a few
 * records may be held at once; copy one to keep it longer.
 *
 * Threads: one thread uses a spill.  Once sealed (spill_seal), any number
 * of threads may read what was written before, each through a
 * spill_reader of its own (its own cache); the spill itself is not used
 * meanwhile.  After the readers are freed it may change again (and be
 * sealed again for new readers). */
#ifndef GPUPROF_COMMON_SPILL_H
#define GPUPROF_COMMON_SPILL_H

#include <stddef.h>

struct spill;
struct spill_reader;

/* Records of recsz bytes (> 0), the first mem_cap bytes' worth in memory
 * (0: every block but those cached goes to the file). */
struct spill *spill_new(size_t recsz, size_t mem_cap);
void spill_free(struct spill *s); /* NULL ok */
/* A new record at the end, zeroed. */
void *spill_push(struct spill *s);
/* Record i (< spill_count), to change in place: written back to the file
 * when its block leaves the cache. */
void *spill_at(struct spill *s, size_t i);
/* Record i (< spill_count), to read. */
const void *spill_get(struct spill *s, size_t i);
size_t spill_count(const struct spill *s);
/* Drops the records from n on (n <= spill_count). */
void spill_truncate(struct spill *s, size_t n);
/* Whether writing the file failed (the spill then holds all in memory). */
int spill_failed(const struct spill *s);

/* A spill of bytes (recsz 1) as a stream: spill_write appends p[0..n),
 * spill_read copies at most n bytes from offset off to dst and returns how
 * many (fewer past the end). */
void spill_write(struct spill *s, const void *p, size_t n);
size_t spill_read(struct spill *s, size_t off, void *dst, size_t n);

/* Every block in memory or in the file, for readers (spill_reader_new). */
void spill_seal(struct spill *s);
/* A reader of a sealed spill, with its own cache (one per thread). */
struct spill_reader *spill_reader_new(const struct spill *s);
/* Record i (< spill_count when sealed), inline below. */
static inline const void *spill_reader_at(struct spill_reader *rd, size_t i);
void spill_reader_free(struct spill_reader *rd); /* NULL ok */

/* spill_reader_at's path for runs of reads in one block (the index's
 * queries, most of stats' reads) costs a shift and a compare, no call: a
 * reader starts with its last block (spill.c keeps it); another block
 * goes to spill_reader_at_miss. */
struct spill_reader_hit { size_t b; const unsigned char *p; size_t recsz; unsigned shift; };
const void *spill_reader_at_miss(struct spill_reader *rd, size_t i);
static inline const void *spill_reader_at(struct spill_reader *rd, size_t i)
{
	const struct spill_reader_hit *h = (const struct spill_reader_hit *)rd;
	if (i >> h->shift == h->b) return h->p + (i & (((size_t)1 << h->shift) - 1)) * h->recsz;
	return spill_reader_at_miss(rd, i);
}

#endif
