"""`gpuprof dump --json`: the JSON-lines schema other scripts rely on
(docs/CLI.md), time order, --type filtering and string escaping."""
import json
import os

import tt

REQUIRED = {
    "api": ["pid", "tid", "start", "end", "dur", "domain", "cbid", "name", "corr", "status"],
    "kernel": ["pid", "start", "end", "dur", "device", "context", "stream", "corr", "name", "demangled",
               "grid", "block", "registers", "static_smem", "dynamic_smem", "graph_id", "graph_node_id"],
    "memcpy": ["pid", "start", "end", "dur", "device", "stream", "corr", "bytes", "kind", "src_kind",
               "dst_kind", "async"],
    "memset": ["pid", "start", "end", "dur", "device", "stream", "corr", "bytes", "value"],
    "nvtx_range": ["pid", "start", "end", "dur", "domain", "message", "kind", "depth", "category", "color",
                   "tid", "end_tid", "unterminated"],
    "nvtx_mark": ["pid", "ts", "domain", "message"],
    "device": ["pid", "device", "name", "sm_count", "cc", "global_mem"],
    "dropped": ["pid", "ts", "count", "where"],
}

with tt.tmpdir() as d:
    trace = tt.gen(os.path.join(d, "t.gpuprof"))
    lines = tt.gp("dump", "--json", trace).stdout.splitlines()
    recs = [json.loads(l) for l in lines]  # every line must be JSON
    by = {}
    for r in recs:
        tt.expect("type" in r and "pid" in r, f"type/pid missing: {r}")
        by.setdefault(r["type"], []).append(r)
    tt.expect("string" not in by, "string records must not be dumped")
    for t, keys in REQUIRED.items():
        tt.expect(t in by, f"no {t} records")
        for r in by.get(t, []):
            missing = [k for k in keys if k not in r]
            tt.expect(not missing, f"{t} lacks {missing}: {r}")
            if "start" in r:
                tt.eq(r["dur"], r["end"] - r["start"], f"{t} dur")
    tt.eq(len(by["api"]), 9, "api count")
    tt.eq(len(by["kernel"]), 5, "kernel count")
    tt.eq({a["domain"] for a in by["api"]}, {"runtime", "driver"}, "api domains")
    tt.eq({a["tid"] for a in by["api"]}, {1000, 1001}, "api tids")
    k2 = [k for k in by["kernel"] if k["corr"] == 2][0]
    tt.eq((k2["grid"], k2["block"], k2["stream"], k2["dynamic_smem"]), ([4096, 1, 1], [256, 1, 1], 7, 1024), "kernel corr 2")
    tt.eq(k2["demangled"], "vecAdd(float const*, float const*, float*, int)", "demangled")
    tt.eq(sorted((m["kind"], m["src_kind"], m["dst_kind"], m["async"]) for m in by["memcpy"]),
          [("DtoH", "device", "pinned", True), ("HtoD", "pageable", "device", True)], "memcpy kinds")
    tt.eq(by["device"][0]["cc"], "9.0", "device cc")
    ep = [r for r in by["nvtx_range"] if r["kind"] == "startend"][0]
    tt.eq((ep["domain"], ep["message"], ep["tid"], ep["end_tid"]), ("mydomain", "epoch", 1000, 1001), "start/end range")
    tt.eq(by["dropped"][0]["where"], "ring", "dropped where")
    # JSON escaping: quotes, tab, control char, invalid UTF-8 -> U+FFFD, valid é kept
    weird = [m for m in by["nvtx_mark"] if m["message"].startswith("odd")][0]["message"]
    tt.eq(weird, 'odd "quoted"\ttab\x01 ctl \ufffd bad utf8 \u00e9', "escaped message")
    # time order: timed records non-decreasing, metadata first.  NVTX ranges
    # are the exception: the recorder writes a range when it is popped, after
    # the calls inside it, and the reader merges sources without re-sorting
    # within one (docs/CLI.md).
    times = [r.get("start", r.get("ts")) for r in recs if r["type"] in
             ("api", "kernel", "memcpy", "memset", "nvtx_mark", "dropped")]
    tt.expect(times == sorted(times), "records are not in time order")
    first_timed = next(i for i, r in enumerate(recs) if r["type"] in ("api", "kernel", "nvtx_range"))
    tt.expect(all(r["type"] not in ("source", "process", "thread", "device") for r in recs[first_timed:]),
              "metadata after timed records")

    # --type filter
    f = [json.loads(l) for l in tt.gp("dump", "--json", "--type", "kernel,memset", trace).stdout.splitlines()]
    tt.eq(sorted({r["type"] for r in f}), ["kernel", "memset"], "--type filter types")
    tt.eq(len(f), 6, "--type filter count")
    tt.eq(tt.gp("dump", "--type", "bogus", trace, check=False).returncode, 1, "bad --type exit")
    # text dump: one line per record, control characters escaped
    text = tt.gp("dump", trace).stdout
    tt.expect("\\x09tab\\x01" in text, "text dump escapes control characters")
    tt.eq(len(text.splitlines()), len(recs), "text and json dump have the same records")
tt.finish()
