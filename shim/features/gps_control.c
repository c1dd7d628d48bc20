/* gps_control.c — this process's end of the control channel
 * (gps_control.h).  A request is PID.req in the per-user 0700 directory: the
 * flush thread looks for it every tick (one failed open(2) when there is
 * none), takes it only when it is a regular file of our user or root
 * (O_NOFOLLOW, fstat), removes it whatever it holds, and parses it; anything
 * else is refused with one gpuprof: line and an answer the requester can
 * read, and changes nothing.  No signal, no thread, no socket: a job that
 * owns every signal and a system without a writable /run still work. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/gps_core.h"
#include "features/gps_control.h"

static char dir[GP_SETTING_TEXT_MAX];
static int on;      /* the directory is ours and usable */
static int serving; /* requests are taken and the process registered */

int gps_control_on(void) { return on; }
int gps_control_serving(void) { return on && serving; }
const char *gps_control_dir(void) { return on ? dir : ""; }

static void path_of(char *out, size_t n, const char *suffix)
{
	if (gp_control_path(out, n, dir, (int)gps.pid, suffix) != 0)
		out[0] = 0;
}

int gps_control_init(int serve)
{
	char err[512];
	if (gp_control_dir(gps.cfg.control_dir, dir, sizeof dir, 1, err, sizeof err) != 0) {
		gps_warn("control channel off: %s", err);
		on = 0;
		return -1;
	}
	on = 1;
	serving = serve;
	char p[4200];
	path_of(p, sizeof p, "req"); /* left by a process that had our pid */
	unlink(p);
	return 0;
}

int gps_control_poll(struct gp_control_request *rq)
{
	if (!on || !serving)
		return 0;
	char p[4200], buf[GP_CONTROL_FILE_MAX], err[600];
	path_of(p, sizeof p, "req");
	size_t len = 0;
	uid_t owner = (uid_t)-1;
	int rc = gp_control_read(p, geteuid(), buf, sizeof buf, &len, &owner, err, sizeof err);
	if (rc != 0 && errno == ENOENT)
		return 0;
	/* taken whatever it holds: a bad request must not be read again */
	unlink(p);
	if (rc != 0) {
		if (errno == EPERM)
			gps_warn("trigger request from uid %ld refused (only uid %ld and root may trigger this job)",
				 (long)owner, (long)geteuid());
		else
			gps_warn("trigger request refused: %s", err);
		return -1; /* no answer: the requester is not ours to answer */
	}
	if (gp_control_request_parse(buf, len, rq, err, sizeof err) != 0) {
		gps_warn("trigger request refused: malformed (%s)", err);
		/* the id, when there is one, lets a requester learn why */
		char idbuf[32];
		unsigned long long id;
		if (gp_control_kv(buf, "id", idbuf, sizeof idbuf) == 0 && sscanf(idbuf, "%llu", &id) == 1 && id)
			gps_control_reply(id, "refused", err, NULL);
		return -1;
	}
	return 1;
}

void gps_control_reply(uint64_t id, const char *status, const char *message, const char *file)
{
	if (!on || !serving)
		return;
	char name[96], text[GP_CONTROL_FILE_MAX], msg[1024], fn[1024];
	snprintf(name, sizeof name, "%d.reply.%llu", (int)gps.pid, (unsigned long long)id);
	snprintf(msg, sizeof msg, "%s", message ? message : "");
	snprintf(fn, sizeof fn, "%s", file ? file : "");
	/* a newline in a value would start a key of its own */
	for (char *q = msg; *q; q++)
		if (*q == '\n' || *q == '\r')
			*q = ' ';
	for (char *q = fn; *q; q++)
		if (*q == '\n' || *q == '\r')
			*q = '?';
	int n = snprintf(text, sizeof text, "gpuprof-reply %d\nid=%llu\npid=%d\nstatus=%s\nmessage=%s\nfile=%s\n",
			 GP_CONTROL_VERSION, (unsigned long long)id, (int)gps.pid, status, msg, fn);
	if (n <= 0 || (size_t)n >= sizeof text)
		return;
	if (gp_control_write(dir, name, text, (size_t)n, 0) != 0)
		gps_info("cannot answer trigger request %llu in %s: %s", (unsigned long long)id, dir, strerror(errno));
}

void gps_control_register(const char *lines)
{
	if (!on || !serving)
		return;
	char name[64], text[GP_CONTROL_FILE_MAX];
	snprintf(name, sizeof name, "%d.proc", (int)gps.pid);
	int n = snprintf(text, sizeof text, "gpuprof-proc %d\n%s", GP_CONTROL_VERSION, lines);
	if (n <= 0 || (size_t)n >= sizeof text)
		return;
	if (gp_control_write(dir, name, text, (size_t)n, 0) != 0) {
		gps_warn("control channel off: cannot write %s/%s: %s", dir, name, strerror(errno));
		serving = 0;
	}
}

void gps_control_final(void)
{
	if (!on)
		return;
	char p[4200];
	path_of(p, sizeof p, "proc");
	unlink(p);
	path_of(p, sizeof p, "req");
	unlink(p);
}

void gps_control_after_fork_child(void)
{
	/* a child that traces registers under its own pid (gps.pid is the
	 * child's by now); the parent's files stay the parent's */
	if (on) {
		char p[4200];
		path_of(p, sizeof p, "req");
		unlink(p);
	}
}
