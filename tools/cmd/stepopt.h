/* stepopt.h — the step options of the commands that find steps (stats,
 * advise, report, diff), parsed and checked here, once (docs/STEPS.md):
 *
 *   --method auto|nvtx|trace   how steps are found (getopt value 'm')
 *   --step-range NAME          the steps are the NVTX ranges NAME ('n')
 *   --kernel-wait T            idle gaps up to T before launched work
 *                              count as launch ('w'; stats, advise)
 *
 * Each command's option table maps the names to those values; its help
 * says them in its own words. */
#ifndef GPUPROF_CMD_STEPOPT_H
#define GPUPROF_CMD_STEPOPT_H

#include <stdint.h>

#include "analysis/steps/step_detect.h"

/* Handles option c with its argument: 1 taken, 0 not a step option ('w'
 * too where kernel_wait_ns is NULL), -1 a bad value (the message
 * printed). */
int stepopt_parse(int c, const char *arg, struct step_detect_opts *d, uint64_t *kernel_wait_ns);
/* After all options: 0, or -1 with the message printed (--step-range
 * names NVTX ranges: not with --method trace). */
int stepopt_check(const struct step_detect_opts *d);

#endif
