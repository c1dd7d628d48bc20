/* test_gp_launch.c — libprof/gp_launch: the launch-call table against the
 * installed CUPTI's callback ids.  Every id of cupti_runtime_cbid.h and
 * cupti_driver_cbid.h (as the fake CUPTI's generated X(id, "name") lists
 * have them) is classified here by name, with the rules gp_launch.h states,
 * and gp_launch_kind must agree for every one: a launch call a newer CUPTI
 * adds fails this test until gp_launch.c has it.  Plus spot checks that do
 * not depend on the toolkit. */
#include "gp_launch.h"
#include "gp_trace.h"

#include "cbid_check.h"

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

static int want_of(uint32_t domain, const char *name) { return (int)by_name(domain, name); }
static int kind_of(uint32_t domain, uint32_t cbid) { return (int)gp_launch_kind(domain, cbid); }

int main(void)
{
	size_t lr = 0, ld = 0;
	size_t nr = check_domain(GP_API_RUNTIME, runtime, NRUNTIME, &lr, want_of, kind_of, gp_launch_name);
	size_t nd = check_domain(GP_API_DRIVER, driver, NDRIVER, &ld, want_of, kind_of, gp_launch_name);
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
