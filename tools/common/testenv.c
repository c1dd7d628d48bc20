/* testenv.c — see testenv.h. */
#include "common/testenv.h"

#include <stdlib.h>

#include "gp_settings.h"
#include "common/util.h"

static const struct {
	const char *name;
	uint64_t min, max; /* a number's range (gp_parse_uint: digits only) */
	int duration;      /* else a duration ("1us", "50ms": parse_duration_ns) */
} testenvs[] = {
	[TESTENV_UNION_LAG] = { "GPUPROF_UNION_LAG", 1, SIZE_MAX, 0 },
	[TESTENV_STEPS_LEAD] = { "GPUPROF_STEPS_LEAD", 0, 0, 1 },
	[TESTENV_PREPASS_ONE_THREAD] = { "GPUPROF_PREPASS_ONE_THREAD", 1, 1, 0 },
	[TESTENV_PREPASS_DUMP] = { "GPUPROF_PREPASS_DUMP", 1, 1, 0 },
	[TESTENV_SPILL_MEM] = { "GPUPROF_SPILL_MEM", 0, UINT64_MAX, 0 },
	[TESTENV_SUMMARY_EXACT] = { "GPUPROF_SUMMARY_EXACT", 1, SIZE_MAX, 0 },
	[TESTENV_CACHE_MAX] = { "GPUPROF_CACHE_MAX", 0, UINT64_MAX, 0 },
};

int testenv(enum testenv id, uint64_t *v)
{
	const char *s = getenv(testenvs[id].name);
	uint64_t x;
	if (!s || (testenvs[id].duration ? parse_duration_ns(s, &x)
					 : gp_parse_uint(s, testenvs[id].min, testenvs[id].max, &x)))
		return -1;
	if (v) *v = x;
	return 0;
}
