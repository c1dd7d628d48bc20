/* The control channel's directory, file and request rules
 * (libprof/gp_control.c): the directory is made 0700 and refused when it is
 * a symbolic link, not a directory, group/other accessible or another
 * user's; a request round-trips and every malformed one is refused with a
 * reason; an exclusive write never replaces a pending request; a reader
 * refuses symbolic links, FIFOs, files of another uid (as root: chown) and
 * oversized files. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "gp_control.h"
#include "tl.h"

static void dirs(const char *base)
{
	char d[600], out[700], err[300];
	snprintf(d, sizeof(d), "%s/ctl", base);
	CHECK(gp_control_dir(d, out, sizeof(out), 0, err, sizeof(err)) == -1, "missing dir accepted without create");
	CHECK(gp_control_dir(d, out, sizeof(out), 1, err, sizeof(err)) == 0, "create: %s", err);
	struct stat st;
	CHECK(stat(d, &st) == 0 && (st.st_mode & 07777) == 0700 && !strcmp(out, d), "made 0700: %o", st.st_mode);
	CHECK(gp_control_dir(d, out, sizeof(out), 1, err, sizeof(err)) == 0, "exists: %s", err);
	chmod(d, 0755);
	CHECK(gp_control_dir(d, out, sizeof(out), 1, err, sizeof(err)) == -1 && strstr(err, "0755"),
	      "group/other accessible dir accepted: %s", err);
	chmod(d, 0700);
	char l[600];
	snprintf(l, sizeof(l), "%s/link", base);
	symlink(d, l);
	CHECK(gp_control_check_dir(l, geteuid(), err, sizeof(err)) == -1 && strstr(err, "symbolic link"),
	      "symlink accepted: %s", err);
	unlink(l);
	CHECK(gp_control_check_dir(d, geteuid() + 1, err, sizeof(err)) == -1 && strstr(err, "owned by uid"),
	      "another user's dir accepted: %s", err);
	char f[600];
	snprintf(f, sizeof(f), "%s/file", base);
	close(open(f, O_CREAT | O_WRONLY, 0600));
	CHECK(gp_control_check_dir(f, geteuid(), err, sizeof(err)) == -1 && strstr(err, "not a directory"),
	      "file accepted: %s", err);
	unlink(f);
	/* defaults: XDG_RUNTIME_DIR/gpuprof, else /tmp/gpuprof-UID */
	setenv("XDG_RUNTIME_DIR", base, 1);
	char want[700];
	snprintf(want, sizeof(want), "%s/gpuprof", base);
	CHECK(gp_control_dir(NULL, out, sizeof(out), 1, err, sizeof(err)) == 0 && !strcmp(out, want), "xdg: %s %s", out,
	      err);
	rmdir(want);
	setenv("XDG_RUNTIME_DIR", "relative", 1);
	gp_control_dir("", out, sizeof(out), 0, err, sizeof(err));
	snprintf(want, sizeof(want), "/tmp/gpuprof-%d", (int)geteuid());
	CHECK(!strcmp(out, want), "fallback %s", out);
	unsetenv("XDG_RUNTIME_DIR");
}

static void requests(void)
{
	struct gp_control_request rq = { .id = 77, .steps = 5, .seconds_ns = 2000000000ull, .start_step = 300, .from_pid = 1234, .wait = 1 };
	char buf[512], err[200];
	int n = gp_control_request_format(&rq, buf, sizeof(buf));
	CHECK(n > 0, "format");
	struct gp_control_request back;
	CHECK(gp_control_request_parse(buf, (size_t)n, &back, err, sizeof(err)) == 0, "parse: %s", err);
	CHECK(back.id == 77 && back.steps == 5 && back.seconds_ns == 2000000000ull && back.start_step == 300 &&
		      back.from_pid == 1234 && back.wait == 1,
	      "round trip");
	const char *ok = "gpuprof-request 1\nid=9\n";
	CHECK(gp_control_request_parse(ok, strlen(ok), &back, err, sizeof(err)) == 0 && back.start_step == -1 &&
		      back.steps == 0,
	      "minimal request: %s", err);
	static const struct {
		const char *text, *why;
	} bad[] = {
		{ "", "empty" },
		{ "garbage\x01\xff", "first line" },
		{ "gpuprof-request 2\nid=1\n", "first line" },
		{ "gpuprof-request 1\nsteps=3\n", "no id" },
		{ "gpuprof-request 1\nid=0\n", "id" },
		{ "gpuprof-request 1\nid=1\nid=2\n", "twice" },
		{ "gpuprof-request 1\nid=1\nsteps=-3\n", "steps" },
		{ "gpuprof-request 1\nid=1\nsteps=100001\n", "steps" },
		{ "gpuprof-request 1\nid=1\nsteps=3x\n", "steps" },
		{ "gpuprof-request 1\nid=1\nseconds_ns=99999999999999999999999\n", "seconds_ns" },
		{ "gpuprof-request 1\nid=1\nstart_step=-2\n", "start_step" },
		{ "gpuprof-request 1\nid=1\nwait=2\n", "wait" },
		{ "gpuprof-request 1\nid=1\nrm -rf=/\n", "unknown key" },
		{ "gpuprof-request 1\nid=1\nnoequals\n", "key=value" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		CHECK(gp_control_request_parse(bad[i].text, strlen(bad[i].text), &back, err, sizeof(err)) == -1 &&
			      strstr(err, bad[i].why),
		      "request %zu accepted or wrong reason '%s' (want '%s')", i, err, bad[i].why);
	}
	const char nul[] = "gpuprof-request 1\nid=1\0\n";
	CHECK(gp_control_request_parse(nul, sizeof(nul) - 1, &back, err, sizeof(err)) == -1 && strstr(err, "NUL"),
	      "NUL accepted");
	char longl[600];
	memset(longl, 'a', sizeof(longl));
	memcpy(longl, "gpuprof-request 1\nid=", 21);
	CHECK(gp_control_request_parse(longl, sizeof(longl), &back, err, sizeof(err)) == -1 && strstr(err, "longer"),
	      "a long line accepted: %s", err);
	char v[32];
	const char *kv = "gpuprof-proc 1\nstate=armed\nstep=41\n";
	CHECK(gp_control_kv(kv, "step", v, sizeof(v)) == 0 && !strcmp(v, "41") &&
		      gp_control_kv(kv, "ste", v, sizeof(v)) == -1 && gp_control_kv(kv, "gpuprof-proc 1", v, 4) == -1,
	      "kv");
}

static void files(const char *base)
{
	char d[600], p[700], buf[GP_CONTROL_FILE_MAX], err[300];
	snprintf(d, sizeof(d), "%s/ctl", base);
	size_t len;
	uid_t owner;
	CHECK(gp_control_write(d, "1.req", "first\n", 6, 1) == 0, "exclusive write");
	CHECK(gp_control_write(d, "1.req", "second\n", 7, 1) == -1 && errno == EEXIST, "second request replaced");
	snprintf(p, sizeof(p), "%s/1.req", d);
	CHECK(gp_control_read(p, geteuid(), buf, sizeof(buf), &len, &owner, err, sizeof(err)) == 0 &&
		      !strcmp(buf, "first\n") && owner == geteuid(),
	      "pending request kept: %s", buf);
	CHECK(gp_control_write(d, "1.req", "third\n", 6, 0) == 0, "replacing write");
	CHECK(gp_control_read(p, geteuid(), buf, sizeof(buf), &len, &owner, err, sizeof(err)) == 0 &&
		      !strcmp(buf, "third\n"),
	      "replaced: %s", buf);
	char tmp[700];
	snprintf(tmp, sizeof(tmp), "%s/.1.req.tmp.%d", d, (int)getpid());
	CHECK(access(tmp, F_OK) != 0, "temporary file left");
	/* a symbolic link and a FIFO are not read (nor waited on) */
	char l[700], fifo[700];
	snprintf(l, sizeof(l), "%s/2.req", d);
	symlink(p, l);
	CHECK(gp_control_read(l, geteuid(), buf, sizeof(buf), &len, &owner, err, sizeof(err)) == -1, "symlink read");
	snprintf(fifo, sizeof(fifo), "%s/3.req", d);
	mkfifo(fifo, 0600);
	CHECK(gp_control_read(fifo, geteuid(), buf, sizeof(buf), &len, &owner, err, sizeof(err)) == -1 &&
		      strstr(err, "regular"),
	      "fifo read: %s", err);
	/* another user's file: refused, its owner named */
	if (geteuid() == 0) {
		CHECK(chown(p, 12345, 12345) == 0, "chown");
		/* a job running as root takes its own (root's) files only */
		CHECK(gp_control_read(p, 0, buf, sizeof(buf), &len, &owner, err, sizeof(err)) == -1 && errno == EPERM,
		      "uid 12345's request accepted by a root job");
		CHECK(gp_control_read(p, 12345, buf, sizeof(buf), &len, &owner, err, sizeof(err)) == 0,
		      "the owner's own request refused: %s", err);
		CHECK(chown(p, 0, 0) == 0, "chown root");
		CHECK(gp_control_read(p, 12345, buf, sizeof(buf), &len, &owner, err, sizeof(err)) == 0,
		      "root's request refused: %s", err);
		CHECK(chown(p, 12345, 12345) == 0, "chown");
		CHECK(gp_control_read(p, 4242, buf, sizeof(buf), &len, &owner, err, sizeof(err)) == -1 &&
			      errno == EPERM && owner == 12345 && strstr(err, "uid 12345"),
		      "another uid's request accepted: %s", err);
	} else {
		CHECK(gp_control_read(p, geteuid() + 1, buf, sizeof(buf), &len, &owner, err, sizeof(err)) == -1 &&
			      errno == EPERM,
		      "another uid's file accepted");
	}
	/* too large */
	char big[GP_CONTROL_FILE_MAX + 10];
	memset(big, 'x', sizeof(big));
	CHECK(gp_control_write(d, "4.req", big, sizeof(big), 0) == 0, "big write");
	snprintf(p, sizeof(p), "%s/4.req", d);
	CHECK(gp_control_read(p, geteuid(), buf, sizeof(buf), &len, &owner, err, sizeof(err)) == -1 &&
		      strstr(err, "larger"),
	      "big file read: %s", err);
	char cmd[800];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d);
	CHECK(system(cmd) == 0, "cleanup");
}

int main(void)
{
	char *base = tl_tmpdir();
	umask(022);
	dirs(base);
	requests();
	files(base);
	rmdir(base);
	if (tl_failures) {
		fprintf(stderr, "%d failures\n", tl_failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
