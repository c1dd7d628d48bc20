/* cmd_trigger.c — `gpuprof trigger [--steps K | --seconds T] [--wait]
 * PID... | --all [--job ROOT]`: asks running processes traced with a control
 * channel (gpuprof run --flight-recorder or --sample-steps) to capture K
 * whole steps (or T seconds) of GPU activity, through the control channel
 * (libprof/gp_control.h, docs/FLIGHT.md): one request file per process,
 * link()ed into place so a pending request is never replaced, then the
 * process's answer.  One line per process; exit 0 when every process
 * accepted (with --wait: finished its capture), 2 otherwise. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gp_control.h"
#include "gp_settings.h"
#include "cmd/cmd.h"
#include "common/tool.h"

#define LEAD_S 2.0           /* --all: steps start this far ahead of the fastest process */
#define PENDING_RETRY_MS 3000 /* another request pending: how long to retry */

void cmd_trigger_help(FILE *f)
{
	fprintf(f, "usage: gpuprof trigger [--steps K | --seconds T] [--wait] [--timeout S] PID...\n"
		   "       gpuprof trigger [options] --all [--job ROOT_PID]\n\n"
		   "Asks traced processes to capture GPU activity (kernels, copies) for K whole training\n"
		   "steps (NVTX ranges named like 'step N'), or T seconds in a process without steps.\n"
		   "The processes must run with a control channel: `gpuprof run --flight-recorder` (the\n"
		   "capture and the history before it become a trace file) or `--sample-steps` (the\n"
		   "capture is a span of the trace).  Only processes of your own user can be triggered.\n\n"
		   "  --steps K       whole steps to capture (default: the job's GPUPROF_TRIGGER_STEPS, 5)\n"
		   "  --seconds T     length in a process without steps (default: GPUPROF_TRIGGER_SECONDS, 5 s)\n"
		   "  --all           every process of yours with a control channel; step captures start\n"
		   "                  at the same step number in all of them\n"
		   "  --job ROOT_PID  with --all: only the processes of the job whose first traced process\n"
		   "                  is ROOT_PID\n"
		   "  --wait          wait until each capture is written, print its file\n"
		   "  --timeout S     seconds to wait for an answer (default 10; with --wait 600)\n"
		   "  -h, --help      this text\n\n"
		   "The control directory is GPUPROF_CONTROL_DIR, else $XDG_RUNTIME_DIR/gpuprof, else\n"
		   "/tmp/gpuprof-UID.  Exit status: 0 when every process accepted (with --wait: wrote its\n"
		   "capture), 1 usage error, 2 otherwise (one line per process says why).\n");
}

struct target {
	int pid;
	uint64_t id;
	int64_t step;          /* from the registration, -1 none */
	double per_s, age_s;
	int state;             /* 0 to send, 1 sent, 2 answered (final), 3 failed */
	int ok;
	char status[32];
};

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* The pid a control file's name starts with ("PID."), or 0. */
static int file_pid(const char *name)
{
	char *end;
	long pid = strtol(name, &end, 10);
	return end == name || *end != '.' || pid <= 0 || pid > INT32_MAX ? 0 : (int)pid;
}

static int gone(int pid) { return kill((pid_t)pid, 0) != 0 && errno == ESRCH; }

/* A process that is gone leaves files behind: those of `pid` removed, or
 * (pid 0) those of every process that is gone (it was killed, or nobody
 * read its last answer), once per run. */
static void remove_stale(const char *dir, int pid)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		int p = file_pid(e->d_name);
		if (!p || (pid ? p != pid : !gone(p)))
			continue;
		char path[PATH_MAX + 300];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

/* The control file DIR/PID.WHAT (its path into p) into buf; 0, or -1
 * (errno set, err says why). */
static int read_control(char p[PATH_MAX + 64], const char *dir, int pid, const char *what, char *buf, char *err,
			size_t errsz)
{
	size_t len;
	uid_t owner;
	gp_control_path(p, PATH_MAX + 64, dir, pid, what);
	return gp_control_read(p, geteuid(), buf, GP_CONTROL_FILE_MAX, &len, &owner, err, errsz);
}

/* Reads DIR/PID.proc into t; 0, or -1 after the process's line. */
static int registration(const char *dir, struct target *t)
{
	if (gone(t->pid)) {
		remove_stale(dir, t->pid);
		return tool_fail(-1, "pid %d: not running", t->pid);
	}
	char p[PATH_MAX + 64], buf[GP_CONTROL_FILE_MAX], err[600], v[64];
	if (read_control(p, dir, t->pid, "proc", buf, err, sizeof(err)) != 0) {
		if (errno == ENOENT)
			tool_err("pid %d: not traced with a control channel (no %s; run the job with "
				 "`gpuprof run --flight-recorder` or `--sample-steps`)", t->pid, p);
		else
			tool_err("pid %d: %s", t->pid, err);
		return -1;
	}
	t->step = -1;
	if (gp_control_kv(buf, "step", v, sizeof(v)) == 0)
		t->step = strtoll(v, NULL, 10);
	if (gp_control_kv(buf, "steps_per_s", v, sizeof(v)) == 0)
		t->per_s = strtod(v, NULL);
	if (gp_control_kv(buf, "updated_ns", v, sizeof(v)) == 0)
		t->age_s = clock_s(CLOCK_REALTIME) - (double)strtoull(v, NULL, 10) / 1e9;
	if (t->age_s < 0)
		t->age_s = 0;
	return 0;
}

/* --all: every registered process of ours that runs (optionally of one job) */
static int find_all(const char *dir, int job, struct target **out, size_t *n)
{
	DIR *d = opendir(dir);
	if (!d) return tool_fail(-1, "cannot read %s: %s", dir, strerror(errno));
	size_t cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		int pid = file_pid(e->d_name);
		if (!pid || strcmp(strchr(e->d_name, '.'), ".proc"))
			continue;
		if (gone(pid)) {
			remove_stale(dir, pid);
			continue;
		}
		char p[PATH_MAX + 64], buf[GP_CONTROL_FILE_MAX], err[300], v[32];
		if (job > 0 && (read_control(p, dir, pid, "proc", buf, err, sizeof(err)) != 0 ||
				gp_control_kv(buf, "root_pid", v, sizeof(v)) != 0 || (atoi(v) != job && pid != job)))
			continue;
		struct target t = {.pid = pid};
		VEC_PUSH(*out, *n, cap, t);
	}
	closedir(d);
	if (!*n)
		return tool_fail(-1, "no running process with a control channel in %s%s", dir,
				 job > 0 ? " for that job" : "");
	return 0;
}

static uint64_t new_id(int pid)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t x = ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^ ((uint64_t)getpid() << 20) ^
		     (uint64_t)pid;
	return (x & (UINT64_MAX / 4)) | 1;
}

/* Writes t's request; 0, or -1 after its line. */
static int send_request(const char *dir, struct target *t, const struct gp_control_request *base)
{
	struct gp_control_request rq = *base;
	rq.id = t->id = new_id(t->pid);
	rq.from_pid = (int32_t)getpid();
	char text[1024], name[64];
	int n = gp_control_request_format(&rq, text, sizeof(text));
	snprintf(name, sizeof(name), "%d.req", t->pid);
	for (int waited = 0;; waited += 50) {
		if (n > 0 && gp_control_write(dir, name, text, (size_t)n, 1) == 0)
			return 0;
		if (errno != EEXIST || waited >= PENDING_RETRY_MS)
			break;
		sleep_ms(50); /* another request is pending: the job takes one per tick */
	}
	if (errno == EEXIST)
		tool_err("pid %d: another request is still pending after %d s; try again", t->pid,
			 PENDING_RETRY_MS / 1000);
	else
		tool_err("pid %d: cannot write the request into %s: %s", t->pid, dir, strerror(errno));
	return -1;
}

/* Our request is still there (never taken): removed when it is ours. */
static void withdraw(const char *dir, const struct target *t)
{
	char p[PATH_MAX + 64], buf[GP_CONTROL_FILE_MAX], err[300], v[32];
	if (read_control(p, dir, t->pid, "req", buf, err, sizeof(err)) == 0 &&
	    gp_control_kv(buf, "id", v, sizeof(v)) == 0 && strtoull(v, NULL, 10) == t->id)
		unlink(p);
}

/* Looks at t's answer once: 1 when t is settled (printed), 0 not yet. */
static int check_reply(const char *dir, struct target *t, int wait_done)
{
	char p[PATH_MAX + 64], buf[GP_CONTROL_FILE_MAX], err[600], status[32], msg[1200], file[PATH_MAX];
	gp_control_reply_path(p, sizeof(p), dir, t->pid, t->id);
	size_t len;
	uid_t owner;
	if (gp_control_read(p, geteuid(), buf, sizeof(buf), &len, &owner, err, sizeof(err)) != 0)
		return 0;
	if (gp_control_kv(buf, "status", status, sizeof(status)) != 0)
		return 0;
	msg[0] = file[0] = 0;
	gp_control_kv(buf, "message", msg, sizeof(msg));
	gp_control_kv(buf, "file", file, sizeof(file));
	int accepted = !strcmp(status, "accepted");
	if (accepted && strcmp(t->status, "accepted")) {
		printf("pid %d: accepted: %s\n", t->pid, msg);
		fflush(stdout);
	}
	snprintf(t->status, sizeof(t->status), "%s", status);
	if (accepted && wait_done)
		return 0;
	unlink(p);
	if (accepted) {
		t->ok = 1;
	} else if (!strcmp(status, "done")) {
		printf("pid %d: done: %s%s%s\n", t->pid, msg, file[0] ? " -> " : "", file);
		t->ok = 1;
	} else {
		tool_err("pid %d: %s: %s", t->pid, status, msg);
	}
	return 1;
}

int cmd_trigger(int argc, char **argv)
{
	enum { O_STEPS = 256, O_SECONDS, O_ALL, O_JOB, O_WAIT, O_TIMEOUT };
	static const struct option opts[] = {
		{ "steps", required_argument, NULL, O_STEPS },
		{ "seconds", required_argument, NULL, O_SECONDS },
		{ "all", no_argument, NULL, O_ALL },
		{ "job", required_argument, NULL, O_JOB },
		{ "wait", no_argument, NULL, O_WAIT },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ 0 },
	};
	struct gp_control_request base = {.start_step = -1};
	int all = 0, wait_done = 0, job = 0, c;
	double timeout = -1;
	uint64_t v;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case O_STEPS:
			if (gp_parse_uint(optarg, 1, 100000, &v))
				return tool_usage("--steps needs a whole number from 1 to 100000");
			base.steps = (uint32_t)v;
			break;
		case O_SECONDS:
			if (gp_parse_duration(optarg, 0, &v) || v < 1000000ull || v > 3600ull * 1000000000ull)
				return tool_usage("--seconds needs a duration from 1ms to 1h (seconds when no unit)");
			base.seconds_ns = v;
			break;
		case O_ALL: all = 1; break;
		case O_JOB:
			if (gp_parse_uint(optarg, 1, INT32_MAX, &v)) return tool_usage("--job needs a pid");
			job = (int)v;
			break;
		case O_WAIT: wait_done = 1; break;
		case O_TIMEOUT: {
			char *end;
			timeout = strtod(optarg, &end);
			if (end == optarg || *end || !(timeout >= 0.1 && timeout <= 86400))
				return tool_usage("--timeout needs seconds from 0.1 to 86400");
			break;
		}
		default: tool_see_help(); return EXIT_USAGE;
		}
	}
	if (all == (optind < argc)) return tool_usage_see_help(all ? "--all takes no pid" : "no pid given (or --all)");
	if (job && !all) return tool_usage("--job goes with --all");
	if (timeout < 0)
		timeout = wait_done ? 600 : 10;
	char dir[PATH_MAX], err[600];
	if (gp_control_dir(getenv(gp_setting_get(GP_SET_CONTROL_DIR)->name), dir, sizeof(dir), 0, err, sizeof(err)))
		return tool_fail(EXIT_BADINPUT, "no usable control directory: %s", err);
	base.wait = (uint32_t)wait_done;
	remove_stale(dir, 0);
	struct target *ts = NULL;
	size_t n = 0, cap = 0;
	if (all) {
		if (find_all(dir, job, &ts, &n))
			return EXIT_BADINPUT;
	} else {
		for (int i = optind; i < argc; i++) {
			if (gp_parse_uint(argv[i], 1, INT32_MAX, &v)) {
				tool_err("'%s' is not a pid", argv[i]);
				free(ts);
				return EXIT_USAGE;
			}
			struct target t = {.pid = (int)v};
			VEC_PUSH(ts, n, cap, t);
		}
	}
	int failed = 0;
	for (size_t i = 0; i < n; i++)
		if (registration(dir, &ts[i])) {
			ts[i].state = 3;
			failed = 1;
		}
	/* --all: the same first step everywhere, far enough ahead that every
	 * process sees its request first (a process polls every flush
	 * interval; its registration is up to a second old) */
	if (all && n > 1) {
		int64_t s = -1;
		for (size_t i = 0; i < n; i++) {
			if (ts[i].state == 3 || ts[i].step < 0 || !(ts[i].per_s > 0))
				continue;
			int64_t at = ts[i].step + (int64_t)ceil(ts[i].per_s * (ts[i].age_s + LEAD_S));
			if (at > s)
				s = at;
		}
		base.start_step = s;
		if (s >= 0) {
			printf("start step %" PRId64 "\n", s);
			fflush(stdout);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (ts[i].state == 0) {
			if (send_request(dir, &ts[i], &base)) {
				ts[i].state = 3;
				failed = 1;
			} else {
				ts[i].state = 1;
			}
		}
	double deadline = mono_s() + timeout;
	for (;;) {
		int open = 0;
		for (size_t i = 0; i < n; i++) {
			if (ts[i].state != 1)
				continue;
			if (check_reply(dir, &ts[i], wait_done)) {
				ts[i].state = 2;
				failed |= !ts[i].ok;
			} else if (gone(ts[i].pid)) {
				withdraw(dir, &ts[i]);
				if (!check_reply(dir, &ts[i], 0)) { /* its last answer */
					tool_err("pid %d: exited before %s", ts[i].pid,
						 strcmp(ts[i].status, "accepted") ? "answering" : "its capture was written");
					failed = 1;
				}
				failed |= !ts[i].ok;
				ts[i].state = 2;
			} else {
				open = 1;
			}
		}
		if (!open)
			break;
		if (mono_s() > deadline) {
			for (size_t i = 0; i < n; i++)
				if (ts[i].state == 1) {
					withdraw(dir, &ts[i]);
					tool_err("pid %d: no %s within %.1f s", ts[i].pid,
						 strcmp(ts[i].status, "accepted") ? "answer (is the job's flush thread running?)"
										  : "finished capture",
						 timeout);
				}
			failed = 1;
			break;
		}
		sleep_ms(20);
	}
	free(ts);
	return failed ? EXIT_BADINPUT : EXIT_OK;
}
