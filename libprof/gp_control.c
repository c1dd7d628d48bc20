/* gp_control.c — the control channel's directory, paths and file formats
 * (gp_control.h).  Unit-tested in tests/libprof/test_control.c. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gp_control.h"
#include "write/gp_out.h"

static int fail(char *err, size_t errn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errn, const char *fmt, ...)
{
	if (err && errn) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errn, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int gp_control_check_dir(const char *path, uid_t uid, char *err, size_t errn)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return fail(err, errn, "%s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return fail(err, errn, "%s is a symbolic link", path);
	if (!S_ISDIR(st.st_mode))
		return fail(err, errn, "%s is not a directory", path);
	if (st.st_uid != uid)
		return fail(err, errn, "%s is owned by uid %ld, not by us", path, (long)st.st_uid);
	if (st.st_mode & 077)
		return fail(err, errn, "%s is group/other accessible (mode %04o; it must be 0700)", path,
			    (unsigned)(st.st_mode & 07777));
	return 0;
}

int gp_control_dir(const char *dir, char *out, size_t n, int create, char *err, size_t errn)
{
	uid_t uid = geteuid();
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int w;
	if (dir && *dir)
		w = snprintf(out, n, "%s", dir);
	else if (xdg && xdg[0] == '/')
		w = snprintf(out, n, "%s/gpuprof", xdg);
	else
		w = snprintf(out, n, "/tmp/gpuprof-%ld", (long)uid);
	if (w < 0 || (size_t)w >= n)
		return fail(err, errn, "control directory path too long");
	/* mkdir never follows a symbolic link at the last component, and the
	 * check below refuses one that was there (or another user's directory
	 * planted in /tmp before us) */
	if (create && mkdir(out, 0700) != 0 && errno != EEXIST)
		return fail(err, errn, "cannot create %s: %s", out, strerror(errno));
	return gp_control_check_dir(out, uid, err, errn);
}

int gp_control_path(char *out, size_t n, const char *dir, int pid, const char *suffix)
{
	int w = snprintf(out, n, "%s/%d.%s", dir, pid, suffix);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

int gp_control_reply_path(char *out, size_t n, const char *dir, int pid, uint64_t id)
{
	int w = snprintf(out, n, "%s/%d.reply.%" PRIu64, dir, pid, id);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* ------------------------------------------------------------ key=value */
int gp_control_kv(const char *text, const char *key, char *out, size_t n)
{
	size_t kl = strlen(key);
	const char *p = strchr(text, '\n');
	while (p) {
		p++;
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len > kl && !strncmp(p, key, kl) && p[kl] == '=') {
			size_t vl = len - kl - 1;
			if (vl >= n)
				vl = n ? n - 1 : 0;
			if (n) {
				memcpy(out, p + kl + 1, vl);
				out[vl] = 0;
			}
			return 0;
		}
		p = e;
	}
	return -1;
}

/* ------------------------------------------------------------ requests */
int gp_control_request_format(const struct gp_control_request *rq, char *out, size_t n)
{
	int w = snprintf(out, n,
			 "gpuprof-request %d\nid=%" PRIu64 "\nsteps=%u\nseconds_ns=%" PRIu64 "\nstart_step=%" PRId64
			 "\nfrom_pid=%d\nwait=%u\n",
			 GP_CONTROL_VERSION, rq->id, rq->steps, rq->seconds_ns, rq->start_step, rq->from_pid, rq->wait ? 1u : 0u);
	return w < 0 || (size_t)w >= n ? -1 : w;
}

static int num(const char *v, int sign, uint64_t max, int64_t *out)
{
	const char *p = v;
	int neg = 0;
	if (sign && *p == '-') {
		neg = 1;
		p++;
	}
	if (*p < '0' || *p > '9')
		return -1;
	uint64_t x = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (x > (UINT64_MAX - 9) / 10)
			return -1;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	if (*p || x > max)
		return -1;
	*out = neg ? -(int64_t)x : (int64_t)x;
	return 0;
}

int gp_control_request_parse(const char *text, size_t len, struct gp_control_request *rq, char *err,
			     size_t errn)
{
	struct gp_control_request r = { .start_step = -1 };
	char line[256];
	int seen = 0, first = 1;
	enum {
		K_ID = 1,
		K_STEPS = 2,
		K_SECS = 4,
		K_START = 8,
		K_FROM = 16,
		K_WAIT = 32
	};
	if (memchr(text, 0, len))
		return fail(err, errn, "a NUL byte in the request");
	for (size_t off = 0; off < len;) {
		const char *p = text + off;
		const char *e = memchr(p, '\n', len - off);
		size_t l = e ? (size_t)(e - p) : len - off;
		off += l + (e ? 1 : 0);
		if (l >= sizeof line)
			return fail(err, errn, "a line longer than %zu bytes", sizeof line - 1);
		memcpy(line, p, l);
		line[l] = 0;
		if (first) {
			char want[32];
			snprintf(want, sizeof want, "gpuprof-request %d", GP_CONTROL_VERSION);
			if (strcmp(line, want))
				return fail(err, errn, "not a gpuprof-request %d (first line)", GP_CONTROL_VERSION);
			first = 0;
			continue;
		}
		if (!l)
			continue;
		char *eq = strchr(line, '=');
		if (!eq)
			return fail(err, errn, "line '%.60s' is not key=value", line);
		*eq = 0;
		const char *k = line, *v = eq + 1;
		int bit;
		int64_t x;
		int bad;
		if (!strcmp(k, "id")) {
			bit = K_ID;
			bad = num(v, 0, UINT64_MAX / 2, &x) || x == 0;
			r.id = (uint64_t)x;
		} else if (!strcmp(k, "steps")) {
			bit = K_STEPS;
			bad = num(v, 0, 100000, &x);
			r.steps = (uint32_t)x;
		} else if (!strcmp(k, "seconds_ns")) {
			bit = K_SECS;
			bad = num(v, 0, 3600ull * 1000000000ull, &x);
			r.seconds_ns = (uint64_t)x;
		} else if (!strcmp(k, "start_step")) {
			bit = K_START;
			bad = num(v, 1, INT64_MAX / 2, &x) || x < -1;
			r.start_step = x;
		} else if (!strcmp(k, "from_pid")) {
			bit = K_FROM;
			bad = num(v, 0, INT32_MAX, &x);
			r.from_pid = (int32_t)x;
		} else if (!strcmp(k, "wait")) {
			bit = K_WAIT;
			bad = num(v, 0, 1, &x);
			r.wait = (uint32_t)x;
		} else {
			return fail(err, errn, "unknown key '%.40s'", k);
		}
		if (bad)
			return fail(err, errn, "bad value for %s", k);
		if (seen & bit)
			return fail(err, errn, "%s given twice", k);
		seen |= bit;
	}
	if (first)
		return fail(err, errn, "an empty request");
	if (!(seen & K_ID))
		return fail(err, errn, "no id");
	*rq = r;
	return 0;
}

/* ------------------------------------------------------------ files */
int gp_control_write(const char *dir, const char *name, const char *text, size_t len, int exclusive)
{
	char tmp[4096], dst[4096];
	if (snprintf(tmp, sizeof tmp, "%s/.%s.tmp.%d", dir, name, (int)getpid()) >= (int)sizeof tmp ||
	    snprintf(dst, sizeof dst, "%s/%s", dir, name) >= (int)sizeof dst) {
		errno = ENAMETOOLONG;
		return -1;
	}
	unlink(tmp); /* a leftover of a process that had our pid */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int e = 0;
	size_t w = gp_write_all(fd, text, len, 0, &e);
	/* closed once whatever happened: in a threaded process a second close
	 * could close another thread's new file */
	if (close(fd) != 0 && !e)
		e = errno;
	if (w != len || e) {
		unlink(tmp);
		errno = e ? e : ENOSPC;
		return -1;
	}
	int rc = exclusive ? link(tmp, dst) : rename(tmp, dst);
	e = errno;
	if (exclusive || rc != 0)
		unlink(tmp);
	errno = e;
	return rc;
}

int gp_control_read(const char *path, uid_t uid, char *buf, size_t n, size_t *len, uid_t *owner, char *err,
		    size_t errn)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		fail(err, errn, "%s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		fail(err, errn, "%s is not a regular file", path);
		errno = EINVAL;
		return -1;
	}
	if (owner)
		*owner = st.st_uid;
	if (st.st_uid != uid && st.st_uid != 0) {
		close(fd);
		fail(err, errn, "%s is owned by uid %ld", path, (long)st.st_uid);
		errno = EPERM;
		return -1;
	}
	size_t got = 0;
	for (;;) {
		if (got + 1 >= n) {
			close(fd);
			fail(err, errn, "%s is larger than %zu bytes", path, n - 1);
			errno = EFBIG;
			return -1;
		}
		ssize_t r = read(fd, buf + got, n - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			fail(err, errn, "%s: %s", path, strerror(e));
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	buf[got] = 0;
	if (len)
		*len = got;
	return 0;
}
