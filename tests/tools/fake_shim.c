/* fake_shim.c — stands in for libgpuprof.so in the `gpuprof run` tests (no
 * GPU, no CUPTI): a process started with FAKE_SHIM_TRACE=1 appends the
 * summary block a shim writes at exit to $GPUPROF_SUMMARY (one write with
 * O_APPEND), one line as the real shim's final flush writes it: "pid=N
 * events=42 dropped=1 bytes=1200000 threads=2 file=<GPUPROF_OUTPUT or
 * trace-PID.gpuprof>"; with FAKE_SHIM_COPY=TRACE the file is made a copy of
 * TRACE. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* FAKE_SHIM_COPY=TRACE: the "trace file" is a copy of TRACE (gpuprof run
 * reports the file as it is on disk). */
static void copy_trace(const char *to)
{
	const char *from = getenv("FAKE_SHIM_COPY");
	if (!from || !*from)
		return;
	int in = open(from, O_RDONLY | O_CLOEXEC), out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	char buf[65536];
	ssize_t n;
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) break;
	if (in >= 0) close(in);
	if (out >= 0) close(out);
}

static void write_summary(void)
{
	const char *path = getenv("GPUPROF_SUMMARY");
	if (!path)
		return;
	const char *out = getenv("GPUPROF_OUTPUT");
	char file[512], buf[1024];
	if (out && *out) snprintf(file, sizeof(file), "%s", out);
	else snprintf(file, sizeof(file), "trace-%d.gpuprof", (int)getpid());
	int n = snprintf(buf, sizeof(buf), "pid=%d events=42 dropped=1 bytes=1200000 threads=2 file=%s\n",
			 (int)getpid(), file);
	copy_trace(file);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, buf, (size_t)n) != n) { /* nothing sensible to do in a test shim */ }
	close(fd);
}

__attribute__((constructor)) static void init(void)
{
	const char *t = getenv("FAKE_SHIM_TRACE");
	if (t && !strcmp(t, "1"))
		atexit(write_summary);
}
