/* bench_libprof — libprof costs: ns per gp_emit (1/2/4 threads, writer
 * running), offline writer throughput, bytes per event on disk for a
 * realistic training-step mix, reader records/s in file order.
 * `make bench-libprof`.  Prints a table; numbers depend on the machine.
 * Usage: bench_libprof [steps [M events/s for the drop test [keep-mix-path]]] */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "gp_trace.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }
static int64_t jitter(int64_t amp) { return (int64_t)(rnd() % (uint64_t)(2 * amp + 1)) - amp; }

/* ------------------------------------------------------------ emit cost
 * Three separate questions, answered separately:
 *  1. pure gp_emit cost: writer paused, each thread's ring large and already
 *     faulted in (a warm-up lap, then a flush), so the timing holds only the
 *     copy into the ring.  Per-thread CPU time (CLOCK_THREAD_CPUTIME_ID) per
 *     event, so 4 threads on 2 cores are not charged for waiting their turn.
 *  2. writer throughput: events/s one gp_recorder_flush drains (encode +
 *     compress + write) from full rings.
 *  3. realistic rate with the writer running: ~1 M events/s per process (the
 *     workload's ceiling) spread over the threads, default recorder options
 *     (ring size, 500 ms flush): drops must be 0. */
static double thread_cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

struct earg {
	gp_recorder *rec; long n; int rounds; double rate; /* events/s for this thread, 0 = flat out */
	double ns, wall_ns; uint64_t full; pthread_barrier_t *bar;
};

static long emit_n(gp_recorder *rec, gp_record *r, long base, long n)
{
	long full = 0;
	for (long i = base; i < base + n; i++) {
		r->u.api.start_ns = (uint64_t)i * 1000; r->u.api.end_ns = r->u.api.start_ns + 500;
		r->u.api.correlation_id = (uint64_t)i;
		if (gp_emit(rec, r)) full++;
	}
	return full;
}

static void *emitter_pure(void *p)
{
	struct earg *a = p;
	gp_record r = { .type = GP_REC_API };
	r.u.api.domain = 1; r.u.api.cbid = 211; r.u.api.name_id = 1;
	a->full += (uint64_t)emit_n(a->rec, &r, 0, a->n); /* warm-up lap: creates + faults the ring */
	a->ns = a->wall_ns = 1e30;
	for (int k = 0; k < a->rounds; k++) {
		pthread_barrier_wait(a->bar);   /* main flushes (empties the rings) */
		pthread_barrier_wait(a->bar);
		double c0 = thread_cpu_s(), t0 = now_s();
		a->full += (uint64_t)emit_n(a->rec, &r, 0, a->n);
		double c = (thread_cpu_s() - c0) * 1e9 / (double)a->n, w = (now_s() - t0) * 1e9 / (double)a->n;
		if (c < a->ns) a->ns = c;
		if (w < a->wall_ns) a->wall_ns = w;
	}
	pthread_barrier_wait(a->bar);
	return NULL;
}

/* API record entries are 56 bytes in the ring; 1 M of them per thread. */
#define PURE_N 1000000L
static void bench_emit_pure(const char *dir, int nth, double *ns, double *wall_ns, uint64_t *full,
			    double *writer_mev_s)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/emit%d.gpuprof", dir, nth);
	unlink(path);
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1, .ring_bytes = 64 << 20,
				      .max_memory_bytes = (size_t)(nth + 1) * (64 << 20) };
	gp_recorder *rec;
	if (gp_recorder_create(&o, &rec)) { fprintf(stderr, "create failed\n"); exit(1); }
	gp_recorder_pause_writer(rec, 1);
	pthread_t th[8];
	struct earg a[8];
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, (unsigned)nth + 1);
	int rounds = 3;
	for (int i = 0; i < nth; i++) {
		a[i] = (struct earg){ .rec = rec, .n = PURE_N, .rounds = rounds, .bar = &bar };
		pthread_create(&th[i], NULL, emitter_pure, &a[i]);
	}
	double wbest = 1e30;
	for (int k = 0; k < rounds; k++) {
		pthread_barrier_wait(&bar);
		double t0 = now_s();
		gp_recorder_flush(rec);   /* drains what the last lap wrote: nth * n events */
		double dt = now_s() - t0;
		if (dt < wbest) wbest = dt;
		pthread_barrier_wait(&bar);
	}
	pthread_barrier_wait(&bar);
	double sum = 0, wsum = 0;
	*full = 0;
	for (int i = 0; i < nth; i++) { pthread_join(th[i], NULL); sum += a[i].ns; wsum += a[i].wall_ns; *full += a[i].full; }
	gp_recorder_close(rec);
	pthread_barrier_destroy(&bar);
	unlink(path);
	*ns = sum / nth;
	*wall_ns = wsum / nth;
	*writer_mev_s = (double)nth * (double)PURE_N / wbest / 1e6;
}

static void *emitter_rate(void *p)
{
	struct earg *a = p;
	gp_record r = { .type = GP_REC_API };
	r.u.api.domain = 1; r.u.api.cbid = 211; r.u.api.name_id = 1;
	/* bursts of 100 events (a training step's launches come in bursts), paced
	 * to the rate; no catch-up beyond one burst, like a real job */
	const long burst = 100;
	double period = (double)burst / a->rate, t0 = now_s(), next = t0;
	long done = 0;
	double in_emit = 0;
	while (done < a->n) {
		double b0 = now_s();
		a->full += (uint64_t)emit_n(a->rec, &r, done, burst);
		in_emit += now_s() - b0;
		done += burst;
		next += period;
		double now = now_s();
		if (next > now) {
			struct timespec ts = { 0, (long)((next - now) * 1e9) };
			nanosleep(&ts, NULL);
		} else if (now - next > period) next = now;
	}
	a->wall_ns = (now_s() - t0) * 1e9 / (double)a->n;
	a->ns = in_emit * 1e9 / (double)a->n;   /* time inside gp_emit, per event */
	return NULL;
}

/* Default options: what the shim gets when the user sets nothing. */
static void bench_emit_rate(const char *dir, int nth, double total_rate, double secs, uint64_t *full,
			    double *achieved, double *ns)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/rate%d.gpuprof", dir, nth);
	unlink(path);
	struct gp_recorder_opts o = { .sz = sizeof(o), .path = path, .rank = -1 };
	gp_recorder *rec;
	if (gp_recorder_create(&o, &rec)) { fprintf(stderr, "create failed\n"); exit(1); }
	pthread_t th[8];
	struct earg a[8];
	long n = (long)(total_rate * secs / nth);
	double t0 = now_s();
	for (int i = 0; i < nth; i++) {
		a[i] = (struct earg){ .rec = rec, .n = n, .rate = total_rate / nth };
		pthread_create(&th[i], NULL, emitter_rate, &a[i]);
	}
	*full = 0;
	*ns = 0;
	for (int i = 0; i < nth; i++) { pthread_join(th[i], NULL); *full += a[i].full; *ns += a[i].ns / nth; }
	*achieved = (double)n * nth / (now_s() - t0) / 1e6;
	gp_recorder_close(rec);
	unlink(path);
}

/* ------------------------------------------------------------ training mix */
#define NK 66
struct kdesc { uint32_t name, grid[3], block[3], regs, smem; uint64_t dur; };

static uint64_t gen_mix(gp_writer *w, int steps)
{
	gp_record r;
	const char *api_names[] = { "cudaLaunchKernel", "cudaGetLastError", "cudaStreamGetCaptureInfo",
				    "cudaMemcpyAsync", "cudaStreamSynchronize", "cudaEventRecord" };
	uint32_t id = 1;
	for (int i = 0; i < 6; i++) {
		r = (gp_record){ .type = GP_REC_STRING };
		r.u.string = (gp_rec_string){ id++, (uint32_t)strlen(api_names[i]), api_names[i] };
		gp_writer_append(w, 0, &r);
	}
	struct kdesc k[NK];
	char name[128];
	for (int i = 0; i < NK; i++) {
		int len = snprintf(name, sizeof(name), "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_%02d_layer_opEEvi", i);
		r = (gp_record){ .type = GP_REC_STRING };
		r.u.string = (gp_rec_string){ id, (uint32_t)len, name };
		gp_writer_append(w, 0, &r);
		k[i] = (struct kdesc){ id++, { (uint32_t)(64 + rnd() % 4000), (uint32_t)(1 + rnd() % 4), 1 },
				       { (uint32_t)(128 << (rnd() % 3)), 1, 1 }, (uint32_t)(32 + rnd() % 96),
				       (uint32_t)(rnd() % 3) * 16384, 20000 + rnd() % 900000 };
	}
	const char *nv[] = { "step", "forward", "backward", "optimizer", "layer" };
	uint32_t nvid[5];
	for (int i = 0; i < 5; i++) {
		r = (gp_record){ .type = GP_REC_STRING };
		r.u.string = (gp_rec_string){ id, (uint32_t)strlen(nv[i]), nv[i] };
		nvid[i] = id++;
		gp_writer_append(w, 0, &r);
	}
	r = (gp_record){ .type = GP_REC_SOURCE };
	r.u.source = (gp_rec_source){ 1, GP_SOURCE_THREAD, 1234, 1234, 0 };
	gp_writer_append(w, 0, &r);
	r.u.source = (gp_rec_source){ 2, GP_SOURCE_ACTIVITY, 1234, 1240, 0 };
	gp_writer_append(w, 0, &r);

	uint64_t events = 0, t = 1700000000000000000ull, gpu = t, corr = 1;
	for (int s = 0; s < steps; s++) {
		uint64_t step_start = t;
		/* input copy */
		for (int m = 0; m < 2; m++) {
			uint64_t a0 = t, a1 = t + 6000 + (uint64_t)jitter(800);
			r = (gp_record){ .type = GP_REC_API };
			r.u.api = (gp_rec_api){ a0, a1, corr, 1, 51, 4, 0, 0, 0 };
			gp_writer_append(w, 1, &r); events++;
			uint64_t g0 = (gpu > a1 ? gpu : a1) + 1500 + (uint64_t)jitter(300);
			r = (gp_record){ .type = GP_REC_MEMCPY };
			r.u.memcpy = (gp_rec_memcpy){ .start_ns = g0, .end_ns = g0 + 180000 + (uint64_t)jitter(5000), .correlation_id = corr,
				.bytes = m ? 4 : 8 << 20, .device_id = 0, .context_id = 1, .stream_id = 7,
				.copy_kind = m ? GP_COPY_DTOH : GP_COPY_HTOD, .src_kind = m ? GP_MEM_DEVICE : GP_MEM_PINNED,
				.dst_kind = m ? GP_MEM_PINNED : GP_MEM_DEVICE, .flags = 1 };
			gp_writer_append(w, 2, &r); events++;
			gpu = r.u.memcpy.end_ns; corr++; t = a1 + 2000 + (uint64_t)jitter(300);
		}
		uint64_t phase_start = t;
		int phase = 0;
		for (int i = 0; i < NK; i++) {
			for (int extra = 0; extra < 2; extra++) {
				uint64_t a0 = t, a1 = t + 400 + (uint64_t)jitter(150);
				r = (gp_record){ .type = GP_REC_API };
				r.u.api = (gp_rec_api){ a0, a1, corr++, 1, extra ? 10 : 212, extra ? 2u : 3u, 0, 0, 0 };
				gp_writer_append(w, 1, &r); events++;
				t = a1 + 200 + (uint64_t)jitter(80);
			}
			uint64_t a0 = t, a1 = t + 4500 + (uint64_t)jitter(1200);
			r = (gp_record){ .type = GP_REC_API };
			r.u.api = (gp_rec_api){ a0, a1, corr, 1, 211, 1, 0, 0, 0 };
			gp_writer_append(w, 1, &r); events++;
			uint64_t g0 = (gpu > a1 ? gpu : a1) + 1200 + (uint64_t)jitter(200);
			r = (gp_record){ .type = GP_REC_KERNEL };
			gp_rec_kernel *kk = &r.u.kernel;
			kk->start_ns = g0; kk->end_ns = g0 + k[i].dur + (uint64_t)jitter((int64_t)k[i].dur / 100);
			kk->correlation_id = corr; kk->device_id = 0; kk->context_id = 1; kk->stream_id = 7;
			memcpy(kk->grid, k[i].grid, 12); memcpy(kk->block, k[i].block, 12);
			kk->registers = k[i].regs; kk->dynamic_smem = k[i].smem; kk->name_id = k[i].name;
			gp_writer_append(w, 2, &r); events++;
			gpu = kk->end_ns; corr++; t = a1 + 1500 + (uint64_t)jitter(400);
			if (i % 6 == 5) { /* a per-layer NVTX range */
				r = (gp_record){ .type = GP_REC_NVTX_RANGE };
				r.u.nvtx_range = (gp_rec_nvtx_range){ .start_ns = t - 40000, .end_ns = t, .kind = GP_NVTX_PUSHPOP,
					.message_id = nvid[4], .depth = 2, .tid = 1234, .end_tid = 1234 };
				gp_writer_append(w, 1, &r); events++;
			}
			if (i == 21 || i == 49 || i == NK - 1) {
				r = (gp_record){ .type = GP_REC_NVTX_RANGE };
				r.u.nvtx_range = (gp_rec_nvtx_range){ .start_ns = phase_start, .end_ns = t, .kind = GP_NVTX_PUSHPOP,
					.message_id = nvid[1 + phase], .depth = 1, .tid = 1234, .end_tid = 1234 };
				gp_writer_append(w, 1, &r); events++;
				phase++; phase_start = t;
			}
		}
		uint64_t a0 = t, a1 = (gpu > t ? gpu : t) + 3000 + (uint64_t)jitter(500);
		r = (gp_record){ .type = GP_REC_API };
		r.u.api = (gp_rec_api){ a0, a1, corr++, 1, 131, 5, 0, 0, 0 };
		gp_writer_append(w, 1, &r); events++;
		t = a1 + 5000 + (uint64_t)jitter(1000);
		r = (gp_record){ .type = GP_REC_NVTX_RANGE };
		r.u.nvtx_range = (gp_rec_nvtx_range){ .start_ns = step_start, .end_ns = t, .kind = GP_NVTX_PUSHPOP,
			.message_id = nvid[0], .depth = 0, .tid = 1234, .end_tid = 1234 };
		gp_writer_append(w, 1, &r); events++;
	}
	return events;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/gpbench.XXXXXX";
	if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
	int steps = argc > 1 ? atoi(argv[1]) : 3000;
	printf("libprof bench (%ld CPUs online)\n", sysconf(_SC_NPROCESSORS_ONLN));
	printf("%-44s %14s\n", "metric", "value");
	double rate = argc > 2 ? atof(argv[2]) * 1e6 : 1e6;
	for (int nth = 1; nth <= 4; nth *= 2) {
		double ns, wns, wr; uint64_t full;
		bench_emit_pure(dir, nth, &ns, &wns, &full, &wr);
		char label[64];
		snprintf(label, sizeof(label), "gp_emit ns/event, %d thread%s, pure", nth, nth > 1 ? "s" : "");
		printf("%-44s %14.2f   (goal <= 15; wall %.1f ns/event/thread, %llu full)\n", label, ns, wns,
		       (unsigned long long)full);
		snprintf(label, sizeof(label), "writer drain M events/s, %d ring%s", nth, nth > 1 ? "s" : "");
		printf("%-44s %14.2f   (encode+zstd+write, one thread)\n", label, wr);
	}
	for (int nth = 1; nth <= 4; nth *= 2) {
		uint64_t full; double got, ns;
		bench_emit_rate(dir, nth, rate, 2.0, &full, &got, &ns);
		char label[64];
		snprintf(label, sizeof(label), "drops at %.1f M ev/s, %d thread%s, writer on", rate / 1e6, nth, nth > 1 ? "s" : "");
		printf("%-44s %14llu   (goal 0; achieved %.2f M ev/s, default opts)\n", label,
		       (unsigned long long)full, got);
		snprintf(label, sizeof(label), "gp_emit ns/event at that rate, %d thread%s", nth, nth > 1 ? "s" : "");
		printf("%-44s %14.2f   (wall time around bursts of 100; > 1 thread on 2 cores includes preemption)\n", label, ns);
	}
	char path[512];
	snprintf(path, sizeof(path), "%s/mix.gpuprof", dir);
	gp_header h = { .major = GP_FORMAT_MAJOR, .pid = 1234, .clock_id = GP_CLOCK_REALTIME, .rank = 0 };
	strcpy(h.producer, "bench"); strcpy(h.host, "benchhost");
	gp_writer *w;
	if (gp_writer_open(path, &h, 3, &w)) return 1;
	double t0 = now_s();
	uint64_t events = gen_mix(w, steps);
	gp_writer_close(w);
	double wt = now_s() - t0;
	struct stat st;
	stat(path, &st);
	/* raw = what the events occupy as in-memory records (the rings' unit) */
	double raw_mb = (double)events * (double)sizeof(gp_record) / 1e6;
	printf("%-44s %14llu\n", "training mix: steps", (unsigned long long)steps);
	printf("%-44s %14llu   (~%llu per step)\n", "training mix: events", (unsigned long long)events,
	       (unsigned long long)(events / (uint64_t)steps));
	printf("%-44s %14.2f   (goal <= 8)\n", "bytes/event on disk (incl. metadata, index)", (double)st.st_size / (double)events);
	printf("%-44s %14.2f   (%.1f M events/s, incl. generating them)\n", "offline writer MB/s (gp_record bytes in)",
	       raw_mb / wt, (double)events / wt / 1e6);

	double best = 1e30;
	uint64_t n = 0;
	for (int rep = 0; rep < 7; rep++) {
		gp_reader *r;
		if (gp_reader_open(path, &r)) return 1;
		const gp_record *rec;
		uint64_t sum = 0;
		n = 0;
		t0 = now_s();
		while (gp_reader_next(r, &rec) == 1) { sum += rec->type; n++; }
		double dt = now_s() - t0;
		if (dt < best) best = dt;
		gp_reader_close(r);
		if (sum == 0) printf("?\n");
	}
	printf("%-44s %14.1f   (goal >= 50)\n", "reader M records/s, file order, 1 core", (double)n / best / 1e6);
	gp_reader *r;
	gp_reader_open(path, &r);
	const gp_record *rec;
	t0 = now_s();
	uint64_t m = 0;
	while (gp_reader_next_ordered(r, &rec) == 1) m++;
	printf("%-44s %14.1f\n", "reader M records/s, time order", (double)m / (now_s() - t0) / 1e6);
	gp_reader_close(r);
	if (argc > 3) rename(path, argv[3]); /* keep the mix trace (profiling the reader) */
	else unlink(path);
	rmdir(dir);
	return 0;
}
