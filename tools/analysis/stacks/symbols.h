/* symbols.h — offline native symbolisation for recorded call stacks: a small
 * bounded ELF64 reader (.symtab, else .dynsym) with a per-path cache.  The
 * traced job's files are read after the fact, on the machine that runs the
 * tool, so a file that is missing, changed or not ELF just gives no name. */
#ifndef GPUPROF_ANALYSIS_STACKS_SYMBOLS_H
#define GPUPROF_ANALYSIS_STACKS_SYMBOLS_H

#include <stdint.h>

struct symcache;

struct symcache *symcache_new(void);
void symcache_free(struct symcache *c); /* NULL ok */

/* Name of the function containing the byte at `file_offset` of the ELF file
 * `path` (the offset a GP_REC_MODULE maps an address to), demangled; NULL
 * when the file is unreadable, not ELF64, or no symbol covers it.  The
 * string lives as long as the cache. */
const char *symcache_lookup(struct symcache *c, const char *path, uint64_t file_offset);

#endif
