/* gps_log.c — the shim's only output: "gpuprof: ..." lines on stderr, written
 * with one write(2) so lines from several threads/processes don't interleave.
 * Never stdout: the traced job's output must stay byte-identical. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/gps_log.h"

static void write_all(const char *buf, size_t len)
{
	int saved = errno; /* the job may be inspecting errno around its calls */
	while (len > 0) {
		ssize_t n = write(2, buf, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		buf += n;
		len -= (size_t)n;
	}
	errno = saved;
}

static enum gps_log_level max_level = GPS_LOG_INFO;

void gps_log_set_level(enum gps_log_level level) { max_level = level; }

void gps_log(enum gps_log_level level, const char *fmt, ...)
{
	if (level > max_level)
		return;
	char buf[1024];
	int n = snprintf(buf, sizeof buf, "gpuprof: ");
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	size_t len = (size_t)n + (size_t)m;
	if (len > sizeof buf - 2)
		len = sizeof buf - 2;
	buf[len++] = '\n';
	write_all(buf, len);
}

void gps_log_raw(const char *msg)
{
	char buf[512];
	size_t n = 0;
	static const char pfx[] = "gpuprof: ";
	memcpy(buf, pfx, sizeof pfx - 1);
	n = sizeof pfx - 1;
	while (*msg && n < sizeof buf - 1)
		buf[n++] = *msg++;
	buf[n++] = '\n';
	write_all(buf, n);
}
