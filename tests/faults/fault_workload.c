/* fault_workload.c — "training jobs" that misbehave, for the fault suite.
 * Linked against the fake libcudart (tests/fake), run with and without the
 * shim; each mode prints what it did on stdout so the tests can compare the
 * trace (and the untraced run) against it.
 *
 *   sighandler SIG before|after|chain READY MARKER
 *       installs its own handler for SIG (TERM or INT) before or after the
 *       first CUDA call; launches until the signal; the handler writes
 *       MARKER.  before/after: the handler sets a flag, main prints
 *       "launches=N" and exits 3.  chain: the handler chains to the previous
 *       handler (the shim's, when traced) or restores it and re-raises, so the
 *       job dies of SIG; MARKER then holds "launches=N".
 *   segv N SLEEPMS     N launches, sleep, then a store to a read-only page
 *                      (SIGSEGV)
 *   spin               launch + 1 ms sleep forever; every 20 launches prints
 *                      "N MONO_NS" (CLOCK_MONOTONIC, the trace clock)
 *   fork NTHR NLAUNCH NCHILD ROUNDS
 *                      NTHR threads launch NLAUNCH each while main forks
 *                      ROUNDS x NCHILD DataLoader-like children (no CUDA, one
 *                      NVTX mark, malloc, exit(0)); prints totals
 *   threads NTHR NLAUNCH
 *                      NTHR threads start together; even ones launch NLAUNCH,
 *                      odd ones NLAUNCH/2 and exit while the others run;
 *                      prints "tid=T launches=N" per thread
 *   burst N            N launches + a checksum line (disk-full tests)
 *   evil               kernel names / NVTX messages / thread name with shell
 *                      metacharacters and terminal escapes */
#include <cuda_runtime_api.h>
#include <nvtx3/nvToolsExt.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_api.h"

static void k_step(void) {}
static void k_aux(void) {}

static void launch(void (*k)(void), unsigned gx)
{
	dim3 g = {gx, 1, 1}, b = {64, 1, 1};
	cudaLaunchKernel((const void *)k, g, b, NULL, 0, NULL);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void touch(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (text && write(fd, text, strlen(text)) < 0) {
			/* the test notices the missing content */
		}
		close(fd);
	}
}

/* ------------------------------------------------------------ sighandler */
static volatile sig_atomic_t got_signal;
static atomic_long launches;
static const char *marker_path;
static struct sigaction prev_act;
static int chain_mode;

/* async-signal-safe "launches=N\n" */
static size_t fmt_launches(char *buf, long n)
{
	static const char pfx[] = "launches=";
	size_t o = sizeof pfx - 1;
	memcpy(buf, pfx, o);
	char d[24];
	int k = 0;
	do {
		d[k++] = (char)('0' + n % 10);
		n /= 10;
	} while (n > 0);
	while (k > 0)
		buf[o++] = d[--k];
	buf[o++] = '\n';
	return o;
}

static void job_handler(int sig, siginfo_t *si, void *uc)
{
	char buf[48];
	size_t n = fmt_launches(buf, atomic_load(&launches));
	int fd = open(marker_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, buf, n) < 0) {
			/* nothing to do in a handler */
		}
		close(fd);
	}
	got_signal = sig;
	if (!chain_mode)
		return;
	/* what frameworks do: hand the signal on to whoever had it before */
	if ((prev_act.sa_flags & SA_SIGINFO) && prev_act.sa_sigaction) {
		prev_act.sa_sigaction(sig, si, uc);
	} else if (prev_act.sa_handler != SIG_DFL && prev_act.sa_handler != SIG_IGN) {
		prev_act.sa_handler(sig);
	} else {
		sigaction(sig, &prev_act, NULL);
		raise(sig);
	}
}

static void install_job_handler(int sig)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = job_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, &prev_act);
}

static int mode_sighandler(int argc, char **argv)
{
	if (argc < 6)
		return 2;
	int sig = !strcmp(argv[2], "INT") ? SIGINT : SIGTERM;
	const char *when = argv[3];
	marker_path = argv[5];
	chain_mode = !strcmp(when, "chain");
	fakeRegisterKernel((const void *)k_step, "k_step");
	if (!strcmp(when, "before"))
		install_job_handler(sig);
	launch(k_step, 1); /* CUDA init: the shim's trace starts here */
	atomic_fetch_add(&launches, 1);
	if (strcmp(when, "before"))
		install_job_handler(sig);
	for (int i = 0; i < 20; i++) {
		launch(k_step, 1);
		atomic_fetch_add(&launches, 1);
	}
	touch(argv[4], NULL);
	while (!got_signal) {
		launch(k_step, 2);
		atomic_fetch_add(&launches, 1);
		sleep_ms(2);
	}
	cudaDeviceSynchronize();
	printf("launches=%ld\n", atomic_load(&launches));
	printf("signal=%d\n", (int)got_signal);
	return 3;
}

/* ------------------------------------------------------------ segv */
static int mode_segv(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	int n = atoi(argv[2]);
	fakeRegisterKernel((const void *)k_step, "k_step");
	for (int i = 0; i < n; i++)
		launch(k_step, (unsigned)i + 1);
	cudaDeviceSynchronize();
	printf("launches=%d\n", n);
	fflush(stdout);
	sleep_ms(atol(argv[3]));
	/* a store to a read-only page: a real SIGSEGV that UBSan's null
	 * check does not turn into a report + exit(1) */
	volatile int *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED)
		raise(SIGSEGV);
	*ro = 1;
	return 0;
}

/* ------------------------------------------------------------ spin */
static int mode_spin(void)
{
	fakeRegisterKernel((const void *)k_step, "k_step");
	for (long n = 1;; n++) {
		launch(k_step, 1);
		if (n % 20 == 0) {
			printf("%ld %llu\n", n, (unsigned long long)mono_ns());
			fflush(stdout);
		}
		sleep_ms(1);
	}
	return 0;
}

/* ------------------------------------------------------------ fork */
static int fork_nlaunch;

static void *fork_launcher(void *arg)
{
	(void)arg;
	for (int i = 0; i < fork_nlaunch; i++) {
		launch(k_step, 4);
		if (i % 50 == 49)
			sleep_ms(1);
	}
	cudaStreamSynchronize(NULL);
	return NULL;
}

static int mode_fork(int argc, char **argv)
{
	if (argc < 6)
		return 2;
	int nthr = atoi(argv[2]), nchild = atoi(argv[4]), rounds = atoi(argv[5]);
	fork_nlaunch = atoi(argv[3]);
	if (nthr < 1 || nthr > 64 || nchild < 1 || nchild > 64)
		return 2;
	fakeRegisterKernel((const void *)k_step, "k_step");
	void *dev = NULL;
	cudaMalloc(&dev, 4096);
	pthread_t th[64];
	for (int i = 0; i < nthr; i++)
		pthread_create(&th[i], NULL, fork_launcher, NULL);
	int ok = 0, bad = 0;
	fflush(stdout);
	for (int r = 0; r < rounds; r++) {
		pid_t kids[64];
		for (int c = 0; c < nchild; c++) {
			kids[c] = fork();
			if (kids[c] == 0) {
				/* a DataLoader worker: Python, NVTX-annotated
				 * collate code maybe, never CUDA */
				nvtxMarkA("worker-start");
				unsigned long s = 0;
				for (int k = 0; k < 200; k++) {
					char *p = malloc(4096);
					if (!p)
						_exit(5);
					memset(p, k, 4096);
					s += (unsigned char)p[k];
					free(p);
				}
				sleep_ms(5);
				exit(s == 0 ? 6 : 0); /* atexit handlers run, as in Python */
			}
		}
		for (int c = 0; c < nchild; c++) {
			int st = -1;
			if (kids[c] > 0 && waitpid(kids[c], &st, 0) == kids[c] && WIFEXITED(st) &&
			    WEXITSTATUS(st) == 0)
				ok++;
			else
				bad++;
		}
	}
	for (int i = 0; i < nthr; i++)
		pthread_join(th[i], NULL);
	cudaFree(dev);
	printf("launches=%d\n", nthr * fork_nlaunch);
	printf("children_ok=%d children_bad=%d\n", ok, bad);
	return bad ? 1 : 0;
}

/* ------------------------------------------------------------ threads */
static pthread_barrier_t start_barrier;
static int thr_nlaunch;
struct thr_out { int id; unsigned tid; int launches; };

static void *thr_main(void *arg)
{
	struct thr_out *o = arg;
	char name[16];
	snprintf(name, sizeof name, "t%02d", o->id);
	pthread_setname_np(pthread_self(), name);
	o->tid = (unsigned)syscall(SYS_gettid);
	pthread_barrier_wait(&start_barrier);
	int n = (o->id & 1) ? thr_nlaunch / 2 : thr_nlaunch;
	for (int i = 0; i < n; i++)
		launch(k_aux, (unsigned)o->id + 1);
	o->launches = n;
	return NULL; /* odd threads exit while the even ones still launch */
}

static int mode_threads(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	int nthr = atoi(argv[2]);
	thr_nlaunch = atoi(argv[3]);
	if (nthr < 1 || nthr > 256)
		return 2;
	fakeRegisterKernel((const void *)k_aux, "k_aux");
	void *dev = NULL;
	cudaMalloc(&dev, 4096);
	pthread_barrier_init(&start_barrier, NULL, (unsigned)nthr);
	pthread_t th[256];
	struct thr_out out[256];
	for (int i = 0; i < nthr; i++) {
		out[i].id = i;
		pthread_create(&th[i], NULL, thr_main, &out[i]);
	}
	long total = 0;
	for (int i = 0; i < nthr; i++) {
		pthread_join(th[i], NULL);
		total += out[i].launches;
	}
	cudaFree(dev);
	for (int i = 0; i < nthr; i++)
		printf("tid=%u launches=%d\n", out[i].tid, out[i].launches);
	printf("total=%ld\n", total);
	return 0;
}

/* ------------------------------------------------------------ burst */
static int mode_burst(int argc, char **argv)
{
	int n = argc >= 3 ? atoi(argv[2]) : 1000;
	fakeRegisterKernel((const void *)k_step, "k_step");
	unsigned char h[256], back[256];
	void *d = NULL;
	cudaMalloc(&d, sizeof h);
	unsigned long sum = 0;
	for (int i = 0; i < n; i++) {
		launch(k_step, (unsigned)(i % 97) + 1);
		if (i % 100 == 0) {
			memset(h, i & 0xff, sizeof h);
			cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
			cudaMemcpy(back, d, sizeof back, cudaMemcpyDeviceToHost);
			sum += back[i % sizeof back];
		}
	}
	cudaDeviceSynchronize();
	cudaFree(d);
	printf("launches=%d checksum=%lu\n", n, sum);
	return 0;
}

/* ------------------------------------------------------------ evil */
/* Names a hostile (or just odd) program could produce; the tools must show
 * them, never run them, never pass escapes through to the terminal. */
static const char *const evil_kernels[] = {
	"k_$(touch pwned_subst)",
	"k_`touch pwned_backtick`",
	"k;touch pwned_semicolon|touch pwned_pipe&&touch pwned_and",
	"k_\x1b]0;owned-title\x07\x1b[2J\x1b[31mred",
	"k'); DROP TABLE kernels; --\"",
	"k_<script>alert(1)</script>\\\"},{\"ph\":\"X",
};

static void k_e0(void) {}
static void k_e1(void) {}
static void k_e2(void) {}
static void k_e3(void) {}
static void k_e4(void) {}
static void k_e5(void) {}

static int mode_evil(void)
{
	void (*const fns[])(void) = {k_e0, k_e1, k_e2, k_e3, k_e4, k_e5};
	pthread_setname_np(pthread_self(), "\x1b[1m$(id)`id`");
	for (int i = 0; i < 6; i++)
		fakeRegisterKernel((const void *)fns[i], evil_kernels[i]);
	nvtxRangePushA("\x1b[31mrange$(touch pwned_nvtx)\x1b[0m");
	for (int i = 0; i < 6; i++)
		launch(fns[i], (unsigned)i + 1);
	nvtxMarkA("mark;touch pwned_mark\r\n\x1b[A");
	nvtxRangePop();
	cudaDeviceSynchronize();
	printf("evil=6\n");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: fault_workload MODE ...\n");
		return 2;
	}
	const char *m = argv[1];
	if (!strcmp(m, "sighandler"))
		return mode_sighandler(argc, argv);
	if (!strcmp(m, "segv"))
		return mode_segv(argc, argv);
	if (!strcmp(m, "spin"))
		return mode_spin();
	if (!strcmp(m, "fork"))
		return mode_fork(argc, argv);
	if (!strcmp(m, "threads"))
		return mode_threads(argc, argv);
	if (!strcmp(m, "burst"))
		return mode_burst(argc, argv);
	if (!strcmp(m, "evil"))
		return mode_evil();
	fprintf(stderr, "fault_workload: unknown mode %s\n", m);
	return 2;
}
