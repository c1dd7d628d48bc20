/* gzout.c — see gzout.h.  fopencookie() puts a gzFile behind a FILE. */
#include "common/gzout.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

int gzout_wanted(const char *path)
{
	size_t n = strlen(path);
	return n > 3 && !strcmp(path + n - 3, ".gz");
}

static ssize_t gz_write(void *c, const char *buf, size_t n)
{
	size_t done = 0;
	while (done < n) {
		/* gzwrite takes an unsigned count */
		unsigned chunk = n - done > (1u << 30) ? 1u << 30 : (unsigned)(n - done);
		int k = gzwrite((gzFile)c, buf + done, chunk);
		if (k <= 0) { errno = EIO; return done ? (ssize_t)done : -1; }
		done += (size_t)k;
	}
	return (ssize_t)done;
}

static int gz_close(void *c)
{
	return gzclose((gzFile)c) == Z_OK ? 0 : -1;
}

FILE *gzout_open(const char *path, int gzip)
{
	int to_stdout = !strcmp(path, "-");
	if (!gzip) return to_stdout ? stdout : fopen(path, "w");
	gzFile z;
	if (to_stdout) {
		fflush(stdout);
		int fd = dup(STDOUT_FILENO);
		if (fd < 0) return NULL;
		z = gzdopen(fd, "wb3");
		if (!z) close(fd);
	} else {
		z = gzopen(path, "wb3");
	}
	if (!z) { if (!errno) errno = ENOMEM; return NULL; }
	gzbuffer(z, 1u << 18);
	cookie_io_functions_t io = { .write = gz_write, .close = gz_close };
	FILE *f = fopencookie(z, "w", io);
	if (!f) { gzclose(z); return NULL; }
	setvbuf(f, NULL, _IOFBF, 1u << 16);
	return f;
}

int gzout_close(FILE *f)
{
	int err = ferror(f);
	if (f == stdout) return fflush(stdout) || err ? -1 : 0;
	return fclose(f) || err ? -1 : 0;
}
