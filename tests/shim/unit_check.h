/* unit_check.h — the check macro of the shim's C unit tests
 * (test_shim_unit.c, test_settings.c): a failed check prints its line and
 * message and counts; main returns failures != 0. */
#ifndef UNIT_CHECK_H
#define UNIT_CHECK_H
#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			failures++;                                          \
			fprintf(stderr, "FAIL line %d: ", __LINE__);         \
			fprintf(stderr, __VA_ARGS__);                        \
			fprintf(stderr, "\n");                               \
		}                                                            \
	} while (0)

#endif
