/* stepopt.c — see stepopt.h. */
#include "cmd/stepopt.h"

#include <string.h>

#include "common/tool.h"
#include "common/util.h"

int stepopt_parse(int c, const char *arg, struct step_detect_opts *d, uint64_t *kernel_wait_ns)
{
	switch (c) {
	case 'm':
		if (!strcmp(arg, "auto")) d->want = STEP_WANT_AUTO;
		else if (!strcmp(arg, "nvtx")) d->want = STEP_WANT_NVTX;
		else if (!strcmp(arg, "trace")) d->want = STEP_WANT_TRACE;
		else return tool_fail(-1, "unknown --method '%s' (auto, nvtx, trace)", arg);
		return 1;
	case 'n':
		if (!*arg) return tool_fail(-1, "--step-range needs a name");
		d->range_name = arg;
		return 1;
	case 'w':
		if (!kernel_wait_ns) return 0;
		if (!parse_duration_ns(arg, kernel_wait_ns) && *kernel_wait_ns) return 1;
		return tool_fail(-1, "bad --kernel-wait '%s' (a duration > 0: 30ns, 10us)", arg);
	}
	return 0;
}

int stepopt_check(const struct step_detect_opts *d)
{
	if (!d->range_name || d->want != STEP_WANT_TRACE) return 0;
	return tool_fail(-1, "--step-range names NVTX ranges: it does not go with --method trace");
}
