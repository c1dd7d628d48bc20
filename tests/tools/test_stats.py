"""`gpuprof stats` figures against hand-computed values for the trace that
tests/tools/gen_trace.c writes (its header comment has the timeline).
All times in ns after T0.  StdDev is the sample standard deviation (n-1)."""
import json
import math
import os

import tt

with tt.tmpdir() as d:
    trace = tt.gen(os.path.join(d, "t.gpuprof"))
    out = json.loads(tt.gp("stats", "--format", "json", trace).stdout)
    # the same trace with NVTX ranges written at push time instead of at pop
    # time: every figure must be the same
    early = tt.gen(os.path.join(d, "early.gpuprof"), ranges_first=True)
    tt.eq(json.loads(tt.gp("stats", "--format", "json", early).stdout), out, "stats independent of range order")

    # ---------------- api: durations (end-start) per name
    # cudaLaunchKernel corr 2,3,4,7: 4000, 2000, 3000, 4000
    #   total 13000, avg 3250, median of [2000,3000,4000,4000] = 3500
    #   stddev: deviations -1250,-250,750,750 -> squares 1562500+62500+562500+562500
    #   = 2750000; /3 = 916666.7; sqrt = 957.4
    # cudaDeviceSynchronize 7000 (1); cudaMemcpyAsync 3000+3000 = 6000 (2)
    # cuLaunchKernel 1000 (1, driver); cudaMemsetAsync 1000 (1)
    # sum of totals 13000+7000+6000+1000+1000 = 28000
    #   -> 46.4 %, 25.0 %, 21.4 %, 3.6 %, 3.6 %
    # order: total desc, then name: "cuLaunchKernel" < "cudaMemsetAsync" ('L' < 'd')
    api = out["api"]
    tt.eq([r["name"] for r in api],
          ["cudaLaunchKernel", "cudaDeviceSynchronize", "cudaMemcpyAsync", "cuLaunchKernel",
           "cudaMemsetAsync"], "api order")
    lk = api[0]
    tt.eq((lk["total_ns"], lk["num_calls"], lk["min_ns"], lk["max_ns"]), (13000, 4, 2000, 4000), "cudaLaunchKernel totals")
    tt.approx(lk["avg_ns"], 3250, "cudaLaunchKernel avg")
    tt.approx(lk["med_ns"], 3500, "cudaLaunchKernel median")
    tt.approx(lk["stddev_ns"], math.sqrt(2750000 / 3), "cudaLaunchKernel stddev")
    tt.approx(lk["time_pct"], 100 * 13000 / 28000, "cudaLaunchKernel time %")
    tt.eq((api[2]["total_ns"], api[2]["num_calls"]), (6000, 2), "cudaMemcpyAsync")
    tt.approx(api[1]["time_pct"], 25.0, "cudaDeviceSynchronize time %")

    # ---------------- kernels (demangled names)
    # my_plain_kernel: corr 3 [40000,60000) 20000, corr 9 [120000,125000) 5000
    #   total 25000, avg 12500, med 12500, stddev sqrt(2*7500^2/1) = 10606.6
    # vecAdd: corr 2 10000, corr 4 6000, corr 7 8000 -> total 24000, avg 8000,
    #   med 8000, stddev sqrt((2000^2+2000^2+0)/2) = 2000
    # kernel time 49000 -> 51.0 %, 49.0 %
    k = out["kernels"]
    tt.eq([r["name"] for r in k], ["my_plain_kernel", "vecAdd(float const*, float const*, float*, int)"],
          "kernel names (demangled; a C name stays as is)")
    tt.eq((k[0]["total_ns"], k[0]["instances"], k[0]["min_ns"], k[0]["max_ns"]), (25000, 2, 5000, 20000), "my_plain_kernel")
    tt.approx(k[0]["stddev_ns"], 7500 * math.sqrt(2), "my_plain_kernel stddev")
    tt.approx(k[0]["time_pct"], 100 * 25000 / 49000, "my_plain_kernel time %")
    tt.eq((k[1]["total_ns"], k[1]["instances"]), (24000, 3), "vecAdd")
    tt.approx(k[1]["med_ns"], 8000, "vecAdd median")
    tt.approx(k[1]["stddev_ns"], 2000, "vecAdd stddev")

    # ---------------- memops by time: HtoD 20000, DtoH 12000, memset 2000 = 34000
    m = out["memops"]
    tt.eq([(r["operation"], r["total_ns"], r["count"]) for r in m],
          [("[CUDA memcpy Host-to-Device]", 20000, 1), ("[CUDA memcpy Device-to-Host]", 12000, 1),
           ("[CUDA memset]", 2000, 1)], "memops")
    tt.approx(m[0]["time_pct"], 100 * 20000 / 34000, "HtoD time %")
    # ---------------- memsize (bytes in JSON): DtoH 3e6, memset 2e6, HtoD 1e6
    s = out["memsize"]
    tt.eq([(r["operation"], r["total_bytes"]) for r in s],
          [("[CUDA memcpy Device-to-Host]", 3000000), ("[CUDA memset]", 2000000),
           ("[CUDA memcpy Host-to-Device]", 1000000)], "memsize")

    # ---------------- nvtx
    # epoch (start/end, domain mydomain) [500,300000) = 299500
    # train_step [0,100000) 100000 + [200000,260000) 60000 = 160000, med 80000,
    #   stddev sqrt(2*20000^2/1) = 28284.3
    # forward 39000 + 29000 = 68000; backward 40000
    # sum 299500+160000+68000+40000 = 567500 -> epoch 52.8 %, train_step 28.2 %
    # GPU kernel time of kernels whose launch call started inside the range on
    # the same thread (corr -> API start):
    #   corr 2 (API at 10000, kernel 10000 ns): train_step#1, forward#1
    #   corr 3 (20000, 20000 ns): train_step#1, forward#1
    #   corr 4 (55000, 6000 ns): train_step#1, backward
    #   corr 7 (202000, 8000 ns): train_step#2, forward#2
    #   corr 9 (worker thread, no push/pop range there): none
    #   train_step = 10000+20000+6000+8000 = 44000; forward = 10000+20000+8000 =
    #   38000; backward = 6000; memcpy/memset are not kernels
    n = {r["range"]: r for r in out["nvtx"]}
    tt.eq([r["range"] for r in out["nvtx"]], ["mydomain:epoch", "train_step", "forward", "backward"], "nvtx order")
    tt.eq((n["train_step"]["total_ns"], n["train_step"]["instances"]), (160000, 2), "train_step")
    tt.approx(n["train_step"]["stddev_ns"], 20000 * math.sqrt(2), "train_step stddev")
    tt.approx(n["mydomain:epoch"]["time_pct"], 100 * 299500 / 567500, "epoch time %")
    tt.eq(n["train_step"]["gpu_kernel_ns"], 44000, "train_step GPU kernel time")
    tt.eq(n["forward"]["gpu_kernel_ns"], 38000, "forward GPU kernel time")
    tt.eq(n["backward"]["gpu_kernel_ns"], 6000, "backward GPU kernel time")
    tt.eq(n["mydomain:epoch"]["style"], "StartEnd", "epoch style")

    # ---------------- util, device 0
    # span: first GPU op start 6000 (HtoD) .. last end 256000 (DtoH) = 250000
    # kernel union: [30000,60000) (two adjacent kernels), [70000,76000),
    #   [120000,125000), [210000,218000) -> busy 30000+6000+5000+8000 = 49000,
    #   19.6 %; gaps 10000, 44000, 85000 -> 3, largest 85000
    # copies: [6000,26000) + [72000,74000) + [244000,256000) = 34000
    # overlap with kernels: memset [72000,74000) inside [70000,76000) = 2000
    #   -> 2000/34000 = 5.9 % of copy time
    # stream 7 kernels [30000,60000), [210000,218000): busy 38000, 1 gap 150000
    # stream 8 kernels [70000,76000), [120000,125000): busy 11000, 1 gap 44000
    u = {r["stream"]: r for r in out["util"]}
    dev = u["all"]
    tt.eq((dev["kernels"], dev["busy_ns"], dev["span_ns"], dev["idle_gaps"], dev["largest_gap_ns"], dev["copy_ns"]),
          (5, 49000, 250000, 3, 85000, 34000), "device util")
    tt.approx(dev["busy_pct"], 19.6, "device busy %")
    tt.approx(dev["overlap_pct"], 100 * 2000 / 34000, "compute/copy overlap %")
    tt.eq((u["7"]["busy_ns"], u["7"]["idle_gaps"], u["7"]["largest_gap_ns"]), (38000, 1, 150000), "stream 7")
    tt.eq((u["8"]["busy_ns"], u["8"]["idle_gaps"], u["8"]["largest_gap_ns"]), (11000, 1, 44000), "stream 8")

    # ---------------- --since/--until (relative to the trace start)
    # [195us, 300us): api calls starting there: corr 7 (4000) and 8 (3000)
    w = json.loads(tt.gp("stats", "--format", "json", "--report", "api", "--since", "195us",
                         "--until", "300us", trace).stdout)
    tt.eq(sorted((r["name"], r["total_ns"]) for r in w["api"]),
          [("cudaLaunchKernel", 4000), ("cudaMemcpyAsync", 3000)], "--since/--until window")

    # ---------------- usage errors
    tt.eq(tt.gp("stats", "--report", "nope", trace, check=False).returncode, 1, "unknown report exit")
    tt.eq(tt.gp("stats", "--format", "xml", trace, check=False).returncode, 1, "unknown format exit")
tt.finish()
