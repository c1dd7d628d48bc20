/* cbid_check.h — what test_gp_launch.c and test_gp_alloc.c share: a libprof
 * table of API calls by callback id checked against every id of the
 * installed CUPTI's cupti_runtime_cbid.h and cupti_driver_cbid.h (the fake
 * CUPTI's generated X(id, "name") lists), each classified by name with the
 * rules the table's header states.  A test defines by_name and includes
 * this once. */
#ifndef GPUPROF_TESTS_CBID_CHECK_H
#define GPUPROF_TESTS_CBID_CHECK_H

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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
#define NRUNTIME (sizeof(runtime) / sizeof(runtime[0]))
#define NDRIVER (sizeof(driver) / sizeof(driver[0]))

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

/* Every id of v: the table's kind (kind_of) is the kind by name (want_of;
 * 0: none), and the table names the calls it lists by CUPTI's name and no
 * other (name_of).  Returns n; *listed counts the ids of a kind. */
static size_t check_domain(uint32_t domain, const struct cbid *v, size_t n, size_t *listed,
			   int (*want_of)(uint32_t, const char *), int (*kind_of)(uint32_t, uint32_t),
			   const char *(*name_of)(uint32_t, uint32_t))
{
	for (size_t i = 0; i < n; i++) {
		int want = want_of(domain, v[i].name), got = kind_of(domain, v[i].id);
		CHECK(got == want, "domain %u cbid %u %s: kind %d, by name %d", domain, v[i].id, v[i].name, got, want);
		const char *nm = name_of(domain, v[i].id);
		if (want) {
			CHECK(nm && !strcmp(nm, v[i].name), "domain %u cbid %u: name %s, CUPTI %s", domain, v[i].id,
			      nm ? nm : "(null)", v[i].name);
			++*listed;
		} else {
			CHECK(!nm, "domain %u cbid %u %s: named %s", domain, v[i].id, v[i].name, nm);
		}
	}
	return n;
}

#endif
