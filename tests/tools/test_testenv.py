"""test_testenv.py — the test-only settings (common/testenv.h, docs/CLI.md
"Test settings") take the values their table says and nothing else: a
value outside it (a switch set to 0, a word, a duration with a blank)
leaves the tools as they are without it.

On gen_cuts' trace (NVTX ranges and steps across every cut), `stats
--verbose` at 4 threads:
 * GPUPROF_PREPASS_DUMP=1 lists the pre-pass on stderr; 0, 'yes' and an
   empty value do not;
 * GPUPROF_PREPASS_ONE_THREAD=1 runs the pre-pass on this thread (no
   "in 4 slices"); 0 and 'yes' leave it in slices;
 * GPUPROF_STEPS_LEAD=1us makes every steps slice read again on one thread
   (a lead-in shorter than a step); '1 us' is not a duration: the lead-ins
   reach one pass's state as without it."""
import os
import subprocess

import tt

GEN_CUTS = os.path.abspath(os.path.join(tt.B, "tests", "tools", "gen_cuts"))


def verbose(path, report, **env):
    e = dict(os.environ, **env)
    p = subprocess.run([tt.GPUPROF, "stats", "--threads", "4", "--verbose", "--report", report, path],
                       capture_output=True, text=True, env=e)
    tt.expect(p.returncode == 0, f"stats {report} {env}: exit {p.returncode}: {p.stderr[-300:]}")
    return p.stderr


d = tt.tmpdir()
path = os.path.join(d.name, "cuts.gpuprof")
subprocess.run([GEN_CUTS, path], check=True, capture_output=True)

for v, on in (("1", True), ("0", False), ("yes", False), ("", False)):
    got = "prepass range " in verbose(path, "nvtx", GPUPROF_PREPASS_DUMP=v)
    tt.eq(got, on, f"GPUPROF_PREPASS_DUMP={v!r}: the pre-pass listed")
for v, on in (("1", True), ("0", False), ("yes", False)):
    got = "in 4 slices" not in verbose(path, "nvtx", GPUPROF_PREPASS_ONE_THREAD=v)
    tt.eq(got, on, f"GPUPROF_PREPASS_ONE_THREAD={v!r}: the pre-pass on one thread")
for v, again in (("1us", True), ("1 us", False)):
    got = "read again on one thread" in verbose(path, "steps", GPUPROF_STEPS_LEAD=v)
    tt.eq(got, again, f"GPUPROF_STEPS_LEAD={v!r}: steps slices read again")

tt.finish()
