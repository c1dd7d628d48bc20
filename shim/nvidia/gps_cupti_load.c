/* gps_cupti_load.c — finds and dlopens libcupti, then binds the functions of
 * nvidia/gps_cupti_fns.h.  The search order is a security rule (which paths taken
 * from the environment end up loaded into the job); docs/CONFIG.md documents
 * it and must change with it:
 *   1. GPUPROF_CUPTI=path (only that; failure is reported, no fallback)
 *   2. a libcupti already loaded in the process (libcupti.so.13/.12/.so)
 *   3. $CUDA_HOME (or /usr/local/cuda when unset): lib64, extras/CUPTI/lib64,
 *      targets/x86_64-linux/lib
 *   4. pip wheels: nvidia/cu13/lib and nvidia/cuda_cupti/lib under the
 *      site-packages of a loaded object (torch, nvidia libs), then of
 *      $VIRTUAL_ENV / $CONDA_PREFIX, then beside /proc/self/exe
 *   5. the dynamic linker's own search (LD_LIBRARY_PATH, ld.so.cache)
 */
#include <dlfcn.h>
#include <glob.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/gps_core.h"
#include "nvidia/gps_cupti_fns.h"

#define GPS_X_DEF(name, req) __typeof__(name) *gps_p_##name;
GPS_CUPTI_FUNCS(GPS_X_DEF)
#undef GPS_X_DEF

static const char *const sonames[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so"};
static char loaded_from[PATH_MAX];
static void *handle;

const char *gps_cupti_loaded_path(void) { return loaded_from; }
void *gps_cupti_handle(void) { return handle; }

const char *gps_cupti_errstr(CUptiResult r)
{
	const char *s = NULL;
	if (gps_p_cuptiGetResultString && gps_p_cuptiGetResultString(r, &s) == CUPTI_SUCCESS && s)
		return s;
	return "unknown CUPTI error";
}

/* dlsym every function; 0 if all required ones are there. */
static int bind_all(void *h, const char *from)
{
	const char *missing = NULL;
#define GPS_X_BIND(name, req)                                        \
	gps_p_##name = (__typeof__(name) *)dlsym(h, #name);          \
	if (!gps_p_##name && (req) && !missing)                      \
		missing = #name;
	GPS_CUPTI_FUNCS(GPS_X_BIND)
#undef GPS_X_BIND
	if (missing) {
		gps_warn("%s is not a usable CUPTI (no %s); tracing off", from, missing);
#define GPS_X_CLEAR(name, req) gps_p_##name = NULL;
		GPS_CUPTI_FUNCS(GPS_X_CLEAR)
#undef GPS_X_CLEAR
		return -1;
	}
	return 0;
}

static int try_path(const char *path)
{
	if (access(path, R_OK) != 0)
		return -1;
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return -1;
	handle = h;
	snprintf(loaded_from, sizeof loaded_from, "%s", path);
	return 0;
}

static int try_dir(const char *dir)
{
	char p[PATH_MAX];
	for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
		if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, sonames[i]) >= sizeof p)
			continue;
		if (try_path(p) == 0)
			return 0;
	}
	return -1;
}

/* site-packages dir -> the nvidia wheel dirs that ship libcupti */
static int try_site_packages(const char *sp)
{
	static const char *const sub[] = {"nvidia/cu13/lib", "nvidia/cuda_cupti/lib",
					  "nvidia/cu12/lib"};
	char d[PATH_MAX];
	for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
		if ((size_t)snprintf(d, sizeof d, "%s/%s", sp, sub[i]) >= sizeof d)
			continue;
		if (try_dir(d) == 0)
			return 0;
	}
	return -1;
}

/* prefix (venv / conda / install root) -> lib/python3.X/site-packages */
static int try_prefix(const char *prefix)
{
	char pat[PATH_MAX];
	if ((size_t)snprintf(pat, sizeof pat, "%s/lib/python3*/site-packages", prefix) >= sizeof pat)
		return -1;
	glob_t g;
	int rc = -1;
	if (glob(pat, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc && rc; i++)
			rc = try_site_packages(g.gl_pathv[i]);
		globfree(&g);
	}
	return rc;
}

struct sp_search { char found[PATH_MAX]; };

static int find_site_packages(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct sp_search *s = arg;
	const char *n = info->dlpi_name;
	const char *k = n ? strstr(n, "/site-packages/") : NULL;
	if (!k)
		return 0;
	size_t len = (size_t)(k - n) + strlen("/site-packages");
	if (len >= sizeof s->found)
		return 0;
	memcpy(s->found, n, len);
	s->found[len] = 0;
	return 1;
}

static int search(void)
{
	/* 2. already loaded (e.g. by torch/kineto, or by the job) */
	for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
		void *h = dlopen(sonames[i], RTLD_NOW | RTLD_NOLOAD);
		if (h) {
			handle = h;
			snprintf(loaded_from, sizeof loaded_from, "%s (already loaded)", sonames[i]);
			return 0;
		}
	}
	/* 3. CUDA_HOME */
	const char *home = getenv("CUDA_HOME");
	if (!home || !*home)
		home = getenv("CUDA_PATH");
	if (!home || !*home)
		home = "/usr/local/cuda";
	static const char *const sub[] = {"lib64", "extras/CUPTI/lib64", "targets/x86_64-linux/lib",
					  "targets/sbsa-linux/lib"};
	char d[PATH_MAX];
	for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++) {
		if ((size_t)snprintf(d, sizeof d, "%s/%s", home, sub[i]) < sizeof d && try_dir(d) == 0)
			return 0;
	}
	/* 4. pip wheels */
	struct sp_search s = {{0}};
	if (dl_iterate_phdr(find_site_packages, &s) && try_site_packages(s.found) == 0)
		return 0;
	const char *envs[] = {"VIRTUAL_ENV", "CONDA_PREFIX"};
	for (size_t i = 0; i < 2; i++) {
		const char *p = getenv(envs[i]);
		if (p && *p && try_prefix(p) == 0)
			return 0;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n > 0) {
		exe[n] = 0;
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = 0; /* .../bin */
			slash = strrchr(exe, '/');
			if (slash) {
				*slash = 0; /* prefix */
				if (try_prefix(exe) == 0)
					return 0;
			}
		}
	}
	/* 5. the linker's paths */
	for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++) {
		void *h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
		if (h) {
			handle = h;
			snprintf(loaded_from, sizeof loaded_from, "%s (linker search)", sonames[i]);
			return 0;
		}
	}
	return -1;
}

int gps_cupti_load(void)
{
	if (handle)
		return 0;
	const char *want = gps.cfg.cupti_path;
	if (want[0]) {
		if (try_path(want) != 0) {
			const char *e = dlerror();
			gps_warn("cannot load CUPTI from GPUPROF_CUPTI=%s (%s); job runs untraced", want,
				 e ? e : "not readable");
			return -1;
		}
	} else if (search() != 0) {
		gps_warn("libcupti not found (set GPUPROF_CUPTI=/path/to/libcupti.so or CUDA_HOME); "
			 "CUDA activity is not traced, the job runs on");
		return -1;
	}
	if (bind_all(handle, loaded_from) != 0) {
		handle = NULL;
		return -1;
	}
	return 0;
}
