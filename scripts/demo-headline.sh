#!/bin/sh
# demo-headline.sh GPUPROF TRACE OUTDIR — what `make demo` shows of a trace,
# the headline first: the steps and where their time goes, the findings of
# `gpuprof advise` (their ranked table; the details are in the HTML page),
# then the HTML report and the Perfetto file it writes into OUTDIR, and how
# to see every table.
G=$1 T=$2 O=$3
set -e
echo "== steps: $T"
"$G" stats --report steps,step_buckets "$T"
echo "== findings (gpuprof advise; each one's what/where/change in the report)"
# the ranked table and its notes, up to the first finding's details (" 1. [")
"$G" advise "$T" | awk '/^ 1\. \[/ { exit } { print }'
"$G" report -o "$O/demo-report.html" "$T"
"$G" export --format perfetto "$T" -o "$O/demo-perfetto.json"
echo "== files"
echo "demo: wrote $O/demo-report.html (findings, steps, charts, tables: open it in a browser)"
echo "demo: wrote $O/demo-perfetto.json (the timeline: open it in https://ui.perfetto.dev)"
echo "demo: every table: $G stats $T  (or make demo-full)"
