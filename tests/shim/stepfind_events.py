#!/usr/bin/env python3
"""stepfind_events.py — the calls a trace's job fed (or would have fed) the
shim's step finder, one a line: time, thread, class, value (GPS_SIG_MAKE's:
features/gps_period.h), in time order.  As nvidia/gps_cupti_markers.c
classifies them: a copy's class by its direction and its value its bytes, a
synchronisation's the call, a kernel launch's its kernel (a CRC of the name,
standing for the function), a graph launch's its graph id; the bytes, kernel
and graph from the GPU operation of the call's correlation id.  For
test_shim_unit's replays (tests/shim/jax_flax_h100.events).

  python3 tests/shim/stepfind_events.py TRACE [GPUPROF] > FILE
"""
import json
import subprocess
import sys
import zlib

HTOD, DTOH, COPY, SYNC, GRAPH, KERNEL = 1, 2, 3, 4, 5, 6
SYNCS = {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cuStreamSynchronize",
         "cuCtxSynchronize", "cuEventSynchronize"}


def classify(r, ops):
    n = r["name"].split("_pt")[0]  # a per-thread-stream twin as its base call
    if n in ("cuMemcpyHtoD_v2", "cuMemcpyHtoDAsync_v2"):
        return HTOD, ops[0]["bytes"] if ops else 0
    if n in ("cuMemcpyDtoH_v2", "cuMemcpyDtoHAsync_v2"):
        return DTOH, ops[0]["bytes"] if ops else 0
    if n in ("cuMemcpy", "cuMemcpyAsync", "cudaMemcpy", "cudaMemcpyAsync"):
        kind = ops[0].get("kind") if ops else None
        c = HTOD if kind == "HtoD" and n.startswith("cuda") else DTOH if kind == "DtoH" and n.startswith("cuda") else COPY
        return c, ops[0]["bytes"] if ops else 0
    if n in SYNCS:
        return SYNC, r["cbid"] + (1 << 16 if r["domain"] == "runtime" else 0)
    if n in ("cuGraphLaunch", "cudaGraphLaunch"):
        return GRAPH, ops[0]["graph_id"] if ops else 0
    if n.startswith(("cuLaunchKernel", "cudaLaunchKernel", "cuLaunchCooperativeKernel", "cudaLaunchCooperativeKernel")):
        return KERNEL, zlib.crc32(ops[0]["name"].encode()) if ops else 0
    return None


def main():
    gpuprof = sys.argv[2] if len(sys.argv) > 2 else "build/bin/gpuprof"
    out = subprocess.run([gpuprof, "dump", "--json", "--type", "api,kernel,memcpy", sys.argv[1]],
                         capture_output=True, text=True, check=True).stdout
    recs = [json.loads(line) for line in out.splitlines()]
    ops = {}
    for r in recs:
        if r["type"] != "api":
            ops.setdefault(r["corr"], []).append(r)
    ev = []
    for r in recs:
        if r["type"] == "api":
            cv = classify(r, ops.get(r["corr"], []))
            if cv:
                ev.append((r["start"], r["tid"], cv[0], cv[1]))
    for t, tid, c, v in sorted(ev):
        print(t, tid, c, v)


if __name__ == "__main__":
    main()
