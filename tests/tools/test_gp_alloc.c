/* test_gp_alloc.c — libprof/gp_alloc: the allocation-call table against the
 * installed CUPTI's callback ids.  Every id of cupti_runtime_cbid.h and
 * cupti_driver_cbid.h (the fake CUPTI's generated X(id, "name") lists) is
 * classified here by name, with the rules gp_alloc.h states, and
 * gp_alloc_kind must agree for every one: an allocation call a newer CUPTI
 * adds fails this test until gp_alloc.c has it. */
#include "gp_alloc.h"
#include "gp_trace.h"

#include "cbid_check.h"

/* gp_alloc.h's rules, by name. */
static enum gp_alloc_kind by_name(uint32_t domain, const char *name)
{
	char c[256];
	clean(name, c, sizeof(c));
	if (strstr(c, "Array")) return GP_ALLOC_NONE;
	if (domain == GP_API_RUNTIME) {
		if (starts(c, "cudaMallocHost") || starts(c, "cudaHostAlloc")) return GP_ALLOC_HOST;
		if (starts(c, "cudaMallocManaged")) return GP_ALLOC_MANAGED;
		if (strstr(c, "Async") && starts(c, "cudaMalloc")) return GP_ALLOC_ASYNC;
		if (starts(c, "cudaMalloc")) return GP_ALLOC_DEVICE;
	} else {
		if (starts(c, "cuMemAllocHost") || starts(c, "cuMemHostAlloc")) return GP_ALLOC_HOST;
		if (starts(c, "cuMemAllocManaged")) return GP_ALLOC_MANAGED;
		if (strstr(c, "Async") && starts(c, "cuMemAlloc")) return GP_ALLOC_ASYNC;
		if (starts(c, "cuMemAlloc")) return GP_ALLOC_DEVICE;
		if (!strcmp(c, "cuMemCreate")) return GP_ALLOC_VMM;
	}
	return GP_ALLOC_NONE;
}

static int want_of(uint32_t domain, const char *name) { return (int)by_name(domain, name); }
static int kind_of(uint32_t domain, uint32_t cbid) { return (int)gp_alloc_kind(domain, cbid); }

int main(void)
{
	size_t ar = 0, ad = 0;
	size_t nr = check_domain(GP_API_RUNTIME, runtime, NRUNTIME, &ar, want_of, kind_of, gp_alloc_name);
	size_t nd = check_domain(GP_API_DRIVER, driver, NDRIVER, &ad, want_of, kind_of, gp_alloc_name);
	CHECK(nr > 400 && nd > 600, "runtime %zu, driver %zu callback ids", nr, nd);
	CHECK(ar >= 10 && ad >= 14, "runtime %zu, driver %zu allocation calls", ar, ad);

	/* spot checks, by the ids CUPTI has had since they were added */
	CHECK(gp_alloc_kind(GP_API_RUNTIME, 20) == GP_ALLOC_DEVICE, "cudaMalloc");
	CHECK(gp_alloc_kind(GP_API_RUNTIME, 373) == GP_ALLOC_ASYNC, "cudaMallocAsync");
	CHECK(gp_alloc_kind(GP_API_RUNTIME, 25) == GP_ALLOC_HOST, "cudaMallocHost");
	CHECK(gp_alloc_kind(GP_API_RUNTIME, 22) == GP_ALLOC_NONE, "cudaFree");
	CHECK(gp_alloc_kind(GP_API_DRIVER, 243) == GP_ALLOC_DEVICE, "cuMemAlloc_v2");
	CHECK(gp_alloc_kind(GP_API_DRIVER, 549) == GP_ALLOC_VMM, "cuMemCreate");
	CHECK(gp_alloc_kind(GP_API_DRIVER, 547) == GP_ALLOC_NONE, "cuMemAddressReserve: address space only");
	CHECK(gp_alloc_kind(GP_API_DRIVER, 20) == GP_ALLOC_NONE, "driver 20 is not cudaMalloc");
	CHECK(gp_alloc_kind(0, 20) == GP_ALLOC_NONE && gp_alloc_kind(3, 20) == GP_ALLOC_NONE, "bad domain");
	CHECK(gp_alloc_kind(GP_API_DRIVER, UINT32_MAX) == GP_ALLOC_NONE, "cbid max");
	CHECK(gp_alloc_on_device(GP_ALLOC_DEVICE) && gp_alloc_on_device(GP_ALLOC_ASYNC) &&
	      gp_alloc_on_device(GP_ALLOC_VMM) && !gp_alloc_on_device(GP_ALLOC_HOST) &&
	      !gp_alloc_on_device(GP_ALLOC_MANAGED) && !gp_alloc_on_device(GP_ALLOC_NONE), "on device");

	printf("test_gp_alloc: %zu runtime and %zu driver ids checked (%zu + %zu allocation calls), %d failures\n",
	       nr, nd, ar, ad, failures);
	return failures ? 1 : 0;
}
