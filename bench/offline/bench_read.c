/* bench_read.c — reader throughput: records/s of gp_reader_next (file order)
 * and gp_reader_next_ordered (time order) with 1..N decoding threads, on a
 * trace (e.g. from `make bigtrace`).  The consumer does nothing but touch
 * each record's type, so this is the reader's own rate.
 *
 *   bench_read [-r RUNS] [-o file|time] FILE [THREADS...]  (default: 1 2 4 8 16, capped at 256)
 *   bench_read -w NS FILE                   a window: the last NS ns of the trace
 *
 * Prints a table: threads, M records/s in file order and time order (best of
 * RUNS runs each, default 3), and whether every run delivered the same records (an
 * order-sensitive checksum, printed too) as the 1-thread run.  -o runs one order only, so
 * that `valgrind --tool=callgrind` or `perf stat` count the work of that order alone.  With -w: the wall time
 * from open to the last record of the window (time order, the reader's
 * default threads), the records in it, and the chunks read of all. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gp_trace.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Records/s of one pass; *sum: order-sensitive checksum of (type, time). */
static double pass(const char *path, int threads, int ordered, uint64_t *n, uint64_t *sum)
{
	struct gp_reader_opts o = { .sz = sizeof(o), .threads = threads };
	gp_reader *r;
	if (gp_reader_open_opts(path, &o, &r)) {
		fprintf(stderr, "bench_read: cannot read %s: %s\n", path, gp_reader_errmsg(NULL));
		exit(1);
	}
	const gp_record *rec;
	uint64_t k = 0, h = 1469598103934665603ull;
	double t0 = now_s();
	int rc;
	while ((rc = ordered ? gp_reader_next_ordered(r, &rec) : gp_reader_next(r, &rec)) > 0) {
		k++;
		h = (h ^ (rec->type * 1000003ull + gp_record_time(rec))) * 1099511628211ull;
	}
	double dt = now_s() - t0;
	gp_reader_close(r);
	if (rc < 0) { fprintf(stderr, "bench_read: read error %d\n", rc); exit(1); }
	*n = k; *sum = h;
	return (double)k / dt;
}

/* -w: open, window on the trace's last `last` ns, read it in time order */
static int window(const char *path, uint64_t last)
{
	double t0 = now_s();
	struct gp_reader_opts o = { .sz = sizeof(o), .threads = gp_reader_threads_default() };
	gp_reader *r;
	if (gp_reader_open_opts(path, &o, &r)) {
		fprintf(stderr, "bench_read: cannot read %s: %s\n", path, gp_reader_errmsg(NULL));
		return 1;
	}
	uint64_t first, end;
	if (gp_reader_time_range(r, &first, &end)) { fprintf(stderr, "bench_read: no timed records\n"); return 1; }
	uint64_t from = end > first + last ? end - last : first;
	gp_reader_set_time_window(r, from, UINT64_MAX);
	const gp_record *rec;
	uint64_t n = 0, in = 0;
	while (gp_reader_next_ordered(r, &rec) > 0) {
		n++;
		in += gp_record_time(rec) >= from;
	}
	double dt = now_s() - t0;
	struct gp_integrity g;
	gp_reader_integrity(r, &g);
	struct gp_footer_info f;
	gp_reader_footer(r, &f);
	printf("window: last %.3f s of %.3f s: %.3f s wall (open + read), %llu records timed inside, "
	       "%llu records read, %llu of %llu chunks decoded\n", (double)last / 1e9, (double)(end - first) / 1e9,
	       dt, (unsigned long long)in, (unsigned long long)n, (unsigned long long)g.frames_ok,
	       (unsigned long long)f.chunk_count);
	gp_reader_close(r);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "-w")) return window(argv[3], strtoull(argv[2], NULL, 0));
	int runs = 3, ord0 = 0, ord1 = 2, bad = 0;
	while (argc > 2 && argv[1][0] == '-') {
		if (!strcmp(argv[1], "-r")) runs = atoi(argv[2]);
		else if (!strcmp(argv[1], "-o") && !strcmp(argv[2], "file")) ord1 = 1;
		else if (!strcmp(argv[1], "-o") && !strcmp(argv[2], "time")) ord0 = 1;
		else bad = 1;
		argc -= 2;
		argv += 2;
	}
	if (argc < 2 || runs < 1 || bad) {
		fprintf(stderr, "usage: bench_read [-r RUNS] [-o file|time] FILE [THREADS...] | bench_read -w NS FILE\n");
		return 1;
	}
	int deflt[] = { 1, 2, 4, 8, 16 }, nt = argc > 2 ? argc - 2 : 5;
	int *th = malloc((size_t)nt * sizeof(int));
	for (int i = 0; i < nt; i++) th[i] = argc > 2 ? atoi(argv[i + 2]) : deflt[i];
	printf("reader throughput, %s (%ld cores online)\n\n", argv[1], sysconf(_SC_NPROCESSORS_ONLN));
	printf("| threads | file order (M rec/s) | time order (M rec/s) | same records as 1 thread |\n");
	printf("|---:|---:|---:|---|\n");
	uint64_t ref_n[2] = { 0 }, ref_sum[2] = { 0 };
	for (int i = 0; i < nt; i++) {
		double best[2] = { 0, 0 };
		int same = 1;
		for (int ord = ord0; ord < ord1; ord++)
			for (int rep = 0; rep < runs; rep++) {
				uint64_t n, sum;
				double rate = pass(argv[1], th[i], ord, &n, &sum);
				if (rate > best[ord]) best[ord] = rate;
				if (!ref_n[ord]) { ref_n[ord] = n; ref_sum[ord] = sum; }
				same &= n == ref_n[ord] && sum == ref_sum[ord];
			}
		char rate[2][32];
		for (int ord = 0; ord < 2; ord++)
			snprintf(rate[ord], sizeof(rate[ord]), ord >= ord0 && ord < ord1 ? "%.1f" : "-", best[ord] / 1e6);
		printf("| %d | %s | %s | %s |\n", th[i], rate[0], rate[1], same ? "yes" : "NO");
	}
	for (int ord = ord0; ord < ord1; ord++)
		printf("%s order: %llu records, checksum %016llx\n", ord ? "time" : "file", (unsigned long long)ref_n[ord],
		       (unsigned long long)ref_sum[ord]);
	free(th);
	return 0;
}
