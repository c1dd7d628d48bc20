/* gzout.h — an output file of the commands ("-": stdout), gzip-compressed
 * (zlib, RFC 1952) when asked: a stdio FILE, so the writers keep using
 * fprintf, whose bytes go through gzwrite when compression is asked for. */
#ifndef GPUPROF_COMMON_GZOUT_H
#define GPUPROF_COMMON_GZOUT_H

#include <stdio.h>

/* Whether a path names a gzip file: ends in ".gz". */
int gzout_wanted(const char *path);
/* Opens path ("-": stdout) for writing, compressed when gzip (level 3: a
 * JSON trace shrinks about 10x at ~100 MB/s).  NULL with errno set. */
FILE *gzout_open(const char *path, int gzip);
/* Closes it (stdout: flushed, and for gzip its stream finished); 0, or -1
 * when anything failed to be written. */
int gzout_close(FILE *f);

#endif
