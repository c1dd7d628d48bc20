/* Recorder edge cases: async (signal-style) flush makes data readable while
 * the job runs; fork child forgets the parent's recorder and records its
 * own; file modes; write errors (file size limit) are counted, not fatal;
 * thread kind reaches the source record; double close is harmless. */
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "tl.h"

static uint64_t count_api(const char *path, int *truncated, uint32_t *kind_of_1)
{
	gp_reader *r;
	if (gp_reader_open(path, &r)) return UINT64_MAX;
	const gp_record *rec;
	uint64_t n = 0;
	while (gp_reader_next(r, &rec) == 1) {
		if (rec->type == GP_REC_API) n++;
		if (kind_of_1 && rec->type == GP_REC_SOURCE && rec->u.source.source_id == 1) *kind_of_1 = rec->u.source.kind;
	}
	struct gp_integrity in;
	gp_reader_integrity(r, &in);
	if (truncated) *truncated = in.truncated;
	gp_reader_close(r);
	return n;
}

static void emit_n(gp_recorder *rec, int n, uint64_t base)
{
	gp_record r = { .type = GP_REC_API };
	for (int i = 0; i < n; i++) {
		r.u.api.start_ns = base + (uint64_t)i * 100;
		r.u.api.end_ns = r.u.api.start_ns + 50;
		r.u.api.correlation_id = base + (uint64_t)i;
		r.u.api.name_id = gp_intern(rec, "cudaLaunchKernel");
		gp_emit(rec, &r);
	}
}

int main(void)
{
	char *dir = tl_tmpdir();
	char path[600], cpath[600];
	umask(022);

	/* async flush + thread kind + file mode (private dir: 0640) */
	snprintf(path, sizeof(path), "%s/a.gpuprof", dir);
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1, .flush_interval_ms = 3600000 };
	gp_recorder *rec;
	REQUIRE(gp_recorder_create(&o, &rec) == 0, "create");
	struct gp_recorder_opts o2 = o;
	gp_recorder *dup;
	CHECK(gp_recorder_create(&o2, &dup) == GP_ERR_IO, "second create on the same path must fail (O_EXCL)");
	gp_recorder_set_thread_kind(rec, GP_SOURCE_ACTIVITY);
	emit_n(rec, 1000, 1000);
	int rc = gp_recorder_flush_signal(rec, 5000);
	CHECK(rc == 0, "async flush: %s", gp_strerror(rc));
	int trunc = 0;
	uint32_t kind = 0;
	uint64_t n = count_api(path, &trunc, &kind);
	CHECK(n == 1000 && trunc, "after async flush a live trace has %llu records (truncated=%d, no footer yet)", (unsigned long long)n, trunc);
	CHECK(kind == GP_SOURCE_ACTIVITY, "thread kind %u in source record", kind);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640, "mode %o, expected 0640", st.st_mode & 0777);
	printf("async flush: 1000 records readable from the live trace; thread kind recorded; mode 0640\n");

	/* fork: child forgets the parent's recorder, records its own trace */
	snprintf(cpath, sizeof(cpath), "%s/child.gpuprof", dir);
	pid_t pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (pid == 0) {
		gp_recorder_forget_after_fork(rec);
		struct gp_recorder_opts oc = { .sz = sizeof(oc), .path = cpath, .rank = -1 };
		gp_recorder *c;
		if (gp_recorder_create(&oc, &c)) _exit(2);
		emit_n(c, 300, 50000);
		gp_recorder_close(c);
		_exit(0);
	}
	emit_n(rec, 500, 90000);
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
	gp_recorder_close(rec);
	gp_recorder_close(rec); /* not live any more: no-op */
	gp_recorder_close(NULL);
	n = count_api(path, &trunc, NULL);
	CHECK(n == 1500 && !trunc, "parent trace: %llu API records (expected 1500), truncated=%d", (unsigned long long)n, trunc);
	n = count_api(cpath, &trunc, NULL);
	CHECK(n == 300 && !trunc, "child trace: %llu API records (expected 300)", (unsigned long long)n);
	printf("fork: child forgot the parent's recorder and wrote its own complete trace; parent trace intact\n");

	/* world-writable directory: 0600 */
	char ww[400];
	snprintf(ww, sizeof(ww), "%s/ww", dir);
	mkdir(ww, 0777);
	chmod(ww, 01777);
	snprintf(path, sizeof(path), "%s/m.gpuprof", ww);
	o.path = path;
	REQUIRE(gp_recorder_create(&o, &rec) == 0, "create in ww dir");
	gp_recorder_close(rec);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode %o in world-writable dir, expected 0600", st.st_mode & 0777);
	printf("file mode: 0600 in a world-writable directory\n");

	/* write errors: a 64 KiB file size limit (in a child: the limit is per process) */
	snprintf(path, sizeof(path), "%s/limit.gpuprof", dir);
	pid = fork();
	if (pid == 0) {
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = { 64 << 10, 64 << 10 };
		setrlimit(RLIMIT_FSIZE, &rl);
		struct gp_recorder_opts ol = { .sz = sizeof(ol), .path = path, .rank = -1, .zstd_level = 1 };
		gp_recorder *l;
		if (gp_recorder_create(&ol, &l)) _exit(2);
		gp_record r = { .type = GP_REC_API };
		uint64_t s = 1;
		for (int i = 0; i < 300000; i++) {
			r.u.api.start_ns = tl_rand(&s);
			r.u.api.end_ns = tl_rand(&s);
			r.u.api.correlation_id = tl_rand(&s);
			gp_emit(l, &r);
			if (i % 20000 == 0) gp_recorder_flush(l);
		}
		gp_recorder_flush(l);
		struct gp_recorder_stats2 s2 = { .sz = sizeof(s2) };
		gp_recorder_get_stats2(l, &s2);
		gp_recorder_close(l);
		printf("write errors: %llu failed writes (errno %d), %llu records counted as GP_DROP_WRITE\n",
		       (unsigned long long)s2.write_errors, s2.last_write_errno, (unsigned long long)s2.dropped_write);
		fflush(stdout);
		_exit(s2.write_errors > 0 && s2.dropped_write > 0 ? 0 : 3);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "size-limited child: status %d", status);
	n = count_api(path, &trunc, NULL);
	CHECK(n != UINT64_MAX && n < 300000 && trunc, "size-limited trace readable: %llu records, truncated=%d", (unsigned long long)n, trunc);
	printf("size-limited trace still readable: %llu records before the limit\n", (unsigned long long)n);

	char cmd[700];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {}
	if (tl_failures) {
		fprintf(stderr, "%d checks failed\n", tl_failures);
		return 1;
	}
	return 0;
}
