/* test_gp_launch.c — libprof/gp_launch: the launch-call table against the
 * installed CUPTI's callback ids.  Every id of cupti_runtime_cbid.h and
 * cupti_driver_cbid.h (as the fake CUPTI's generated X(id, "name") lists
 * have them) is classified here by name, with the rules gp_launch.h states,
 * and gp_launch_kind must agree for every one: a launch call a newer CUPTI
 * adds fails this test until gp_launch.c has it.  Plus spot checks that do
 * not depend on the toolkit. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "gp_launch.h"
#include "gp_trace.h"

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

struct cbid { unsigned id; const char *name; };
#define X(id, name) { id, name },
static const struct cbid runtime[] = {
#include "fake_cbid_runtime.h"
};
static const struct cbid driver[] = {
#include "fake_cbid_driver.h"
};
#undef X

static int starts(const char *s, const char *prefix) { return !strncmp(s, prefix, strlen(prefix)); }

/* The name without a runtime version suffix (_v + 4..6 digits). */
static void clean(const char *name, char *out, size_t n)
{
	snprintf(out, n, "%s", name);
	char *v = strrchr(out, '_');
	if (!v || v[1] != 'v') return;
	size_t d = 0;
	while (isdigit((unsigned char)v[2 + d])) d++;
	if (d >= 4 && d <= 6 && !v[2 + d]) *v = 0;
}

/* gp_launch.h's rules, by name. */
static enum gp_launch_kind by_name(uint32_t domain, const char *name)
{
	char c[256];
	clean(name, c, sizeof(c));
	if (domain == GP_API_RUNTIME) {
		if (starts(c, "cudaLaunchKernel") || starts(c, "cudaLaunchCooperativeKernel") ||
		    starts(c, "__cudaLaunchKernel") || !strcmp(c, "cudaLaunch") || !strcmp(c, "cudaLaunch_ptsz"))
			return GP_LAUNCH_KERNEL;
		if (starts(c, "cudaGraphLaunch")) return GP_LAUNCH_GRAPH;
		if (starts(c, "cudaMemcpy")) return GP_LAUNCH_MEMCPY;
		if (starts(c, "cudaMemset")) return GP_LAUNCH_MEMSET;
	} else {
		if (starts(c, "cuLaunchKernel") || starts(c, "cuLaunchCooperativeKernel") || !strcmp(c, "cuLaunch") ||
		    !strcmp(c, "cuLaunchGrid") || !strcmp(c, "cuLaunchGridAsync"))
			return GP_LAUNCH_KERNEL;
		if (starts(c, "cuGraphLaunch")) return GP_LAUNCH_GRAPH;
		if (starts(c, "cuMemcpy")) return GP_LAUNCH_MEMCPY;
		if (starts(c, "cuMemset")) return GP_LAUNCH_MEMSET;
	}
	return GP_LAUNCH_NONE;
}

static size_t check_domain(uint32_t domain, const struct cbid *v, size_t n, size_t *launches)
{
	for (size_t i = 0; i < n; i++) {
		enum gp_launch_kind want = by_name(domain, v[i].name), got = gp_launch_kind(domain, v[i].id);
		CHECK(got == want, "domain %u cbid %u %s: kind %d, by name %d", domain, v[i].id, v[i].name, got, want);
		const char *nm = gp_launch_name(domain, v[i].id);
		if (want != GP_LAUNCH_NONE) {
			CHECK(nm && !strcmp(nm, v[i].name), "domain %u cbid %u: name %s, CUPTI %s", domain, v[i].id,
			      nm ? nm : "(null)", v[i].name);
			++*launches;
		} else {
			CHECK(!nm, "domain %u cbid %u %s: named %s", domain, v[i].id, v[i].name, nm);
		}
	}
	return n;
}

int main(void)
{
	size_t lr = 0, ld = 0;
	size_t nr = check_domain(GP_API_RUNTIME, runtime, sizeof(runtime) / sizeof(runtime[0]), &lr);
	size_t nd = check_domain(GP_API_DRIVER, driver, sizeof(driver) / sizeof(driver[0]), &ld);
	/* a toolkit's lists are long: an empty one means the generator broke */
	CHECK(nr > 400 && nd > 600, "runtime %zu, driver %zu callback ids", nr, nd);
	CHECK(lr > 60 && ld > 100, "runtime %zu, driver %zu launch calls", lr, ld);

	/* spot checks, by the ids CUPTI has had since they were added */
	CHECK(gp_launch_kind(GP_API_RUNTIME, 211) == GP_LAUNCH_KERNEL, "cudaLaunchKernel");
	CHECK(gp_launch_kind(GP_API_RUNTIME, 311) == GP_LAUNCH_GRAPH, "cudaGraphLaunch");
	CHECK(gp_launch_kind(GP_API_RUNTIME, 41) == GP_LAUNCH_MEMCPY, "cudaMemcpyAsync");
	CHECK(gp_launch_kind(GP_API_RUNTIME, 51) == GP_LAUNCH_MEMSET, "cudaMemsetAsync");
	CHECK(gp_launch_kind(GP_API_RUNTIME, 284) == GP_LAUNCH_NONE, "cudaLaunchHostFunc runs no GPU work");
	CHECK(gp_launch_kind(GP_API_RUNTIME, 310) == GP_LAUNCH_NONE, "cudaGraphInstantiate");
	CHECK(gp_launch_kind(GP_API_RUNTIME, 76) == GP_LAUNCH_NONE, "cudaGraphicsMapResources");
	CHECK(gp_launch_kind(GP_API_RUNTIME, 165) == GP_LAUNCH_NONE, "cudaDeviceSynchronize");
	CHECK(gp_launch_kind(GP_API_DRIVER, 307) == GP_LAUNCH_KERNEL, "cuLaunchKernel");
	CHECK(gp_launch_kind(GP_API_DRIVER, 652) == GP_LAUNCH_KERNEL, "cuLaunchKernelEx");
	CHECK(gp_launch_kind(GP_API_DRIVER, 514) == GP_LAUNCH_GRAPH, "cuGraphLaunch");
	CHECK(gp_launch_kind(GP_API_DRIVER, 527) == GP_LAUNCH_NONE, "cuLaunchHostFunc");
	/* the domain decides: runtime 307 is cudaGraphAddDependencies */
	CHECK(gp_launch_kind(GP_API_RUNTIME, 307) == GP_LAUNCH_NONE, "runtime 307");
	CHECK(gp_launch_kind(0, 211) == GP_LAUNCH_NONE && gp_launch_kind(3, 211) == GP_LAUNCH_NONE, "bad domain");
	CHECK(gp_launch_kind(GP_API_RUNTIME, 0) == GP_LAUNCH_NONE, "cbid 0");
	CHECK(gp_launch_kind(GP_API_DRIVER, UINT32_MAX) == GP_LAUNCH_NONE, "cbid max");
	CHECK(gp_launch_runs_kernels(GP_LAUNCH_KERNEL) && gp_launch_runs_kernels(GP_LAUNCH_GRAPH) &&
	      !gp_launch_runs_kernels(GP_LAUNCH_MEMCPY) && !gp_launch_runs_kernels(GP_LAUNCH_MEMSET) &&
	      !gp_launch_runs_kernels(GP_LAUNCH_NONE), "runs kernels");

	printf("test_gp_launch: %zu runtime and %zu driver ids checked (%zu + %zu launch calls), %d failures\n",
	       nr, nd, lr, ld, failures);
	return failures ? 1 : 0;
}
