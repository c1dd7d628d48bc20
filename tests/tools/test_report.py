"""test_report.py — `gpuprof report`: the page's data equals what the other
commands say, its series are recomputed here from `gpuprof dump --json`, and
the page loads in headless Chromium with no console error and every chart
drawn.

Data (<script id="gpuprof-data">, docs/REPORT.md):
  - each run's "info" is `gpuprof info --json` of the trace;
  - "stats" has every table of `gpuprof stats --format json` (the default
    set), each the first rows_max rows of it, and "stats_rows" their counts;
  - "steps" is `gpuprof steps --format json` (all but step_rows), the same way;
  - each process's step_series are the rows of `gpuprof steps --per-step`
    (times, buckets, flags), every step or the sample the docs describe;
  - the busy %, counter and memory series are recomputed from the records:
    the union of kernel (copy) intervals per bin, the mean of the samples per
    bin, the bytes held (allocations minus frees, a free without a size
    taking its allocation's) at most in each bin; the busy % also where the
    page sums each device's busy time per bin as its unions stream (a trace
    with settings, cut every 8 intervals: GPUPROF_UNION_LAG=8);
  - each run's "advise" is what `gpuprof advise --format json` says of the
    trace (with the same --method, --step-range, --site); on gen_advise's
    sync trace (with stacks) its first finding is the sync one at
    train.py:57; a trace without steps gets no finding and a line on why, a
    --step-range no trace has gets {"error"} naming it;
  - with --method trace, the stats tables (their steps table too), the steps
    view and the findings all equal their commands' with --method trace;
  - report reads a 2e5-event bigtrace at most 3 times on one thread (the
    bytes it preads, strace; skipped without strace), and 3 passes with
    --threads 4 (the slices' reads across their cuts added).

Page: headless Chromium (the speedscope test installs it) with every host
name unresolvable, a script put before the page's that records errors, and
one after it that, once the page has drawn, counts per chart the pixels of
its series colour on its canvas, and lists the findings' cards (the same
findings as advise, in its order; info ones folded away, last).  A copy of
the page without uPlot shows the
fallback (a note per chart, the tables) with no error.  Size: a trace of
20,000 steps gives a page of at most 3 MB.  Bad use: no trace, no -o, a bad
count, a missing trace (exit 1, 1, 1, 2; no page left behind).  The
committed examples/mnist-h200-report.html is what this build writes.

Needs chromium for the page checks; a gpuprof built without uPlot gets them
with the pinned uPlot (scripts/setup-uplot.sh installs it into $B/npm) put
into the pages as the build would.  Without chromium or uPlot they are
skipped, saying why; the data checks always run."""
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tt import B, GPUPROF, HERE, chromium, eq, expect, fail, finish, gen, gp, tmpdir, union  # noqa: E402

GEN_DIFF = os.path.abspath(os.path.join(B, "tests", "tools", "gen_diff"))
GEN_STEPS = os.path.abspath(os.path.join(B, "tests", "tools", "gen_steps"))
GEN_ADVISE = os.path.abspath(os.path.join(B, "tests", "tools", "gen_advise"))
MNIST = os.path.join(HERE, "..", "..", "examples", "mnist-h200.gpuprof")
BUCKETS = ["compute", "comm", "memory", "host_wait", "sync", "launch", "other"]


def page_data(html):
    m = re.search(r'<script type="application/json" id="gpuprof-data">(.*?)</script>', html, re.S)
    expect(m is not None, "the page has its data element")
    return json.loads(m.group(1)) if m else {}


def report(out, *traces, extra=()):
    p = gp("report", "-o", out, *extra, *traces)
    if p.returncode != 0:
        return None, {}
    with open(out) as f:
        html = f.read()
    return html, page_data(html)


def dump(trace):
    p = gp("dump", "--json", "--abs-time", trace)  # the page counts from the trace clock
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]


def check_tables(what, page_tables, page_counts, full, rows_max):
    eq(sorted(page_tables), sorted(full), f"{what}: the tables in the page")
    for name, rows in full.items():
        eq(page_tables.get(name), rows[:rows_max], f"{what}: table {name} (first {rows_max} rows)")
        eq(page_counts.get(name), len(rows), f"{what}: table {name} row count")


def flag_of(row):
    f = row["flags"] or ""
    if "partial" in f or "no GPU record" in f:
        return 3
    if "warm-up" in f:
        return 1
    if "outlier" in f:
        return 2
    return 0


def check_step_series(what, proc, rows, base_ns):
    ss = proc["step_series"]
    mine = [r for r in rows if r["pid"] == proc["pid"]]
    if not mine:
        eq(ss, None, f"{what}: no step series without steps")
        return
    eq(ss["total"], len(mine), f"{what}: steps in total")
    stride = ss["stride"]
    keep = [i for i, r in enumerate(mine) if i % stride == 0 or flag_of(r) != 0]
    eq(ss["shown"], len(keep), f"{what}: steps shown")
    eq(ss["index"], keep, f"{what}: the steps shown (every {stride}th and every flagged one)")
    eq(ss["time_ns"], [mine[i]["time_ns"] for i in keep], f"{what}: step times")
    # the GPU work launched in a step: its kernels' time, and its memops' (not in step_rows)
    expect(all(g == mine[i]["kernel_time_ns"] if not mine[i]["memops"] else g >= mine[i]["kernel_time_ns"]
               for g, i in zip(ss["gpu_ns"], keep)), f"{what}: GPU work per step")
    eq(ss["flag"], [flag_of(mine[i]) for i in keep], f"{what}: step flags")
    eq(ss["number"], [mine[i]["step"] for i in keep], f"{what}: step numbers")
    for b in BUCKETS:
        eq(ss["buckets"][b], [mine[i][b + "_ns"] for i in keep], f"{what}: bucket {b}")
    # the buckets add up to the step time, step by step
    eq([sum(ss["buckets"][b][k] for b in BUCKETS) for k in range(len(keep))], ss["time_ns"],
       f"{what}: buckets add up to the step time")
    starts = [mine[i]["start_ns"] / 1e9 for i in keep]
    expect(len(starts) == len(ss["start_s"]) and all(abs(x - y) <= 1e-8 * max(1, abs(y)) for x, y in
                                                    zip(ss["start_s"], starts)), f"{what}: step starts")


def covered(u, a, b):
    return sum(max(0, min(e, b) - max(s, a)) for s, e in u)


def bins_of(info, nbins):
    t0, t1 = info["first_ns"], info["last_ns"]
    span = t1 - t0
    width = max(1, -(-span // nbins))
    n = -(-span // width)
    return t0, t1, width, n


def close(a, b, tol=1e-5):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def clip(iv, wins):
    return [(max(s, a), min(e, b)) for s, e in iv for a, b in wins if min(e, b) > max(s, a)]


def check_series(what, run, recs, nbins):
    """Busy %, counters and memory of each process, recomputed from the records."""
    info = run["info"]
    t0, t1, width, n = bins_of(info, nbins)
    base = info["start_trace_ns"]
    for proc in run["procs"]:
        pid = proc["pid"]
        # a windowed trace: GPU activity recorded only inside the windows
        wins = union([(r["start"], r["end"]) for r in recs if r["type"] == "window" and r["pid"] == pid])
        for dev in proc["devices"]:
            d = dev["device"]
            ker = [(r["start"], r["end"]) for r in recs
                   if r["type"] == "kernel" and r["pid"] == pid and r["device"] == d]
            cp = [(r["start"], r["end"]) for r in recs
                  if r["type"] in ("memcpy", "memset") and r["pid"] == pid and r["device"] == d]
            ker, cp = (union(clip(x, wins)) if wins else union(x) for x in (ker, cp))
            eq(len(dev["t_s"]), n, f"{what}: pid {pid} dev {d}: bins")
            eq(dev["busy_ns"], sum(e - s for s, e in ker), f"{what}: pid {pid} dev {d}: busy time")
            want_k, want_c = [], []
            for i in range(n):
                a, b = t0 + i * width, min(t1, t0 + (i + 1) * width)
                rec = covered(wins, a, b) if wins else b - a
                want_k.append(100.0 * covered(ker, a, b) / rec if rec else None)
                want_c.append(100.0 * covered(cp, a, b) / rec if rec else None)
            got_k, got_c = dev["series"]["GPU busy %"], dev["series"]["copy busy %"]
            expect(all(close(x, y) for x, y in zip(got_k, want_k)) and len(got_k) == n,
                   f"{what}: pid {pid} dev {d}: busy % per bin")
            expect(all(close(x, y) for x, y in zip(got_c, want_c)) and len(got_c) == n,
                   f"{what}: pid {pid} dev {d}: copy busy % per bin")
            mid = [(t0 + i * width + width // 2 - base) / 1e9 for i in range(n)]
            expect(len(mid) == len(dev["t_s"]) and all(abs(x - y) <= 1e-8 * max(1, abs(y)) for x, y in zip(dev["t_s"], mid)),
                   f"{what}: pid {pid} dev {d}: bin centres")
            for name, got in dev["series"].items():
                if name in ("GPU busy %", "copy busy %"):
                    continue
                expect(name.endswith("_util") or name.endswith("_pct"), f"{what}: {name} drawn beside busy %")
                check_counter(what, recs, pid, d, name, got, t0, t1, width, n)
        for c in proc["counters"]:
            expect(not (c["name"].endswith("_util") or c["name"].endswith("_pct")) or
                   c["device"] not in [x["device"] for x in proc["devices"]],
                   f"{what}: {c['name']} is not a percentage of a device drawn above")
            check_counter(what, recs, pid, c["device"], c["name"], c["v"], t0, t1, width, n)
        for m in proc["memory"]:
            ev = sorted(((r["ts"], r) for r in recs if r["type"] == "memory" and r["pid"] == pid and
                         r["device"] == m["device"] and r["mem_kind"] == m["kind"]),
                        key=lambda x: (x[0], 0 if x[1]["op"] == "alloc" else 1))
            live, level, pts = {}, 0, []
            for t, r in ev:
                if r["op"] == "alloc":
                    live[r["address"]] = r["bytes"]
                    level += r["bytes"]
                else:
                    level -= r["bytes"] or live.get(r["address"], 0)
                    live.pop(r["address"], None)
                pts.append((t, level))
            want = []
            for i in range(n):
                a, b = t0 + i * width, min(t1, t0 + (i + 1) * width)
                before = [v for t, v in pts if t <= a]
                inside = [v for t, v in pts if a < t <= b]
                want.append(max([before[-1] if before else 0] + inside))
            eq(m["bytes"], want, f"{what}: pid {pid} memory dev {m['device']} {m['kind']} per bin")
            eq(m["peak_bytes"], max([0] + [v for _, v in pts]), f"{what}: memory peak")
            # the peak marked: its first instant, and the bin it is the value of
            # (a bin holds the level at its start and what happens in (start, end])
            tp = next((t for t, v in pts if v == m["peak_bytes"]), None)
            want_bin = -1 if tp is None or m["peak_bytes"] <= 0 else \
                min(n - 1, 0 if tp <= t0 else (tp - t0 - 1) // width)
            eq(m["peak_bin"], want_bin, f"{what}: the memory peak's bin")
            expect(tp is not None and abs(m["peak_s"] - (tp - base) / 1e9) <= 1e-8 * max(1, abs(m["peak_s"])),
                   f"{what}: the memory peak's time {m['peak_s']}")
            if want_bin >= 0:
                eq(m["bytes"][want_bin], m["peak_bytes"], f"{what}: the peak's bin holds the peak")
            eq(m["end_bytes"], pts[-1][1], f"{what}: memory at the end")


def check_counter(what, recs, pid, dev, name, got, t0, t1, width, n):
    samples = [(r["ts"], r["value"]) for r in recs if r["type"] == "counter" and r["pid"] == pid and
               r["device"] == dev and r["name"] == name]
    want = []
    for i in range(n):
        a, b = t0 + i * width, min(t1, t0 + (i + 1) * width)
        v = [x for t, x in samples if a <= t < b or (i == n - 1 and t == b)]
        want.append(sum(v) / len(v) if v else None)
    expect(len(got) == n and all(close(x, y) for x, y in zip(got, want)), f"{what}: {name} dev {dev} per bin")


def advise_json(trace, extra=()):
    """`gpuprof advise --format json`'s object for the trace."""
    return json.loads(gp("advise", "--format", "json", *extra, trace).stdout)["advise"][0]


def check_data(what, trace, data, nbins=600, rows_max=50):
    """The page's numbers against info, stats, steps and advise (and the
    records)."""
    runs = data.get("runs", [])
    eq(len(runs), 1, f"{what}: one run")
    if not runs:
        return
    run = runs[0]
    eq(run["info"], json.loads(gp("info", "--json", trace).stdout), f"{what}: header = gpuprof info --json")
    check_tables(what + " stats", run["stats"], run["stats_rows"],
                 json.loads(gp("stats", "--format", "json", "--whole-trace", trace).stdout), rows_max)
    steps = json.loads(gp("steps", "--format", "json", trace).stdout)
    check_tables(what + " steps", run["steps"], run["steps_rows"], steps, rows_max)
    rows = json.loads(gp("steps", "--per-step", "--report", "step_rows", "--format", "json",
                         trace).stdout)["step_rows"]
    pids = [p["pid"] for p in run["info"]["processes"]] or [run["info"]["pid"]]
    eq([p["pid"] for p in run["procs"]], pids, f"{what}: one row per process")
    for proc in run["procs"]:
        check_step_series(f"{what} pid {proc['pid']}", proc, rows, run["info"]["start_trace_ns"])
    check_series(what, run, dump(trace), nbins)
    eq(run["advise"], advise_json(trace), f"{what}: findings = gpuprof advise --format json")


# ------------------------------------------------------------ the browser

ERRORS_FIRST = "<script>window.__errs=[];window.addEventListener('error',function(e){" \
               "window.__errs.push(String(e.message));});</script>"
# per chart: its canvas, and the pixels near the colour of its first series
CHECKER = """<script>
window.addEventListener('load', function () { setTimeout(function () {
  function near(d, i, c) {
    return Math.abs(d[i] - c[0]) + Math.abs(d[i + 1] - c[1]) + Math.abs(d[i + 2] - c[2]) < 60 && d[i + 3] > 128;
  }
  var colours = { steptime: [21, 101, 192], buckets: [230, 81, 0], busy: [46, 125, 50], memory: [21, 101, 192],
                  counter: [21, 101, 192] };
  var out = [];
  document.querySelectorAll('.chart').forEach(function (b) {
    var id = b.getAttribute('data-chart'), c = b.querySelector('canvas'), r = { id: id, canvas: !!c };
    if (c) {
      var d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, n = 0, ink = 0;
      var want = colours[id.split('-')[0]];
      for (var i = 0; i < d.length; i += 4) { if (d[i + 3]) ink++; if (want && near(d, i, want)) n++; }
      r.w = c.width; r.h = c.height; r.ink = ink; r.series = n;
      /* the red marks (the memory peak, step outliers) and the legend's text */
      var red = 0;
      for (var k = 0; k < d.length; k += 4) if (near(d, k, [198, 40, 40])) red++;
      r.red = red; r.legend = (b.querySelector('.u-legend') || b).textContent;
    }
    r.fallback = !!b.querySelector('.nocharts');
    out.push(r);
  });
  var found = [];
  document.querySelectorAll('#findings .finding').forEach(function (f) {
    found.push({ rule: f.getAttribute('data-rule'), severity: f.querySelector('.sev').textContent,
                 title: f.querySelector('.fhead strong').textContent, folded: !!f.closest('details.info-findings'),
                 text: f.textContent });
  });
  var fnotes = [];
  document.querySelectorAll('#findings p').forEach(function (p) { fnotes.push(p.textContent); });
  var pre = document.createElement('pre');
  pre.id = 'gpuprof-check';
  pre.textContent = JSON.stringify({ charts: out, errors: window.__errs, drawn: document.body.getAttribute('data-charts'),
                                     findings: found, findings_notes: fnotes });
  document.body.appendChild(pre);
}, 50); });
</script>"""


def load_page(browser, html, work, name):
    """(check object or None, chromium's console lines)"""
    html = html.replace("<head>", "<head>" + ERRORS_FIRST, 1)
    i = html.rfind("</body>")
    html = html[:i] + CHECKER + html[i:]
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(html)
    prof = tempfile.mkdtemp(prefix="chromium-", dir=work)
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader", "--enable-logging=stderr", "--v=0", "--disable-dev-shm-usage",
            "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
            f"--user-data-dir={prof}", "--window-size=1400,3000", "--virtual-time-budget=10000", "--dump-dom",
            "file://" + path]
    try:
        p = subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=90)
    except subprocess.TimeoutExpired:
        fail(f"{name}: chromium did not finish in 90 s")
        return None, []
    console = [ln for ln in p.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    m = re.search(r'<pre id="gpuprof-check">(.*?)</pre>', p.stdout, re.S)
    if not m:
        return None, console
    import html as h
    return json.loads(h.unescape(m.group(1))), console


def check_page(browser, html, work, name, want_charts, min_series=20):
    for attempt in range(3):  # a loaded machine may dump before the page ran
        res, console = load_page(browser, html, work, name)
        if res is not None:
            break
        print(f"{name}: no check result (attempt {attempt + 1}), loading again")
    if not expect(res is not None, f"{name}: the page ran and the checker reported"):
        return None
    eq(res["errors"], [], f"{name}: no uncaught error")
    eq([ln for ln in console if "rror" in ln or "Uncaught" in ln], [], f"{name}: no console error")
    charts = res["charts"]
    eq(sorted(c["id"].split("-")[0] for c in charts), sorted(want_charts), f"{name}: the charts on the page")
    eq(res["drawn"], str(len(charts)), f"{name}: every chart box was drawn")
    for c in charts:
        expect(c["canvas"] and c["w"] >= 300 and c["h"] >= 100, f"{name}: chart {c['id']} has its canvas: {c}")
        expect(c.get("series", 0) >= min_series, f"{name}: chart {c['id']} drew its series (pixels of its colour: "
               f"{c.get('series')})")
        if c["id"].startswith("memory"):
            expect(c.get("red", 0) >= 20 and "peak dev " in c.get("legend", ""),
                   f"{name}: chart {c['id']} marks the memory peak (red pixels {c.get('red')}, legend "
                   f"{c.get('legend', '')[:200]!r})")
    print(f"{name}: {len(charts)} charts drawn, no error")
    return res


def check_findings_drawn(res, adv, name):
    """The cards on the page: advise's findings in its order, the info ones
    folded away after the others; each names its severity, rule and title."""
    if res is None:
        return
    want = [(f["rule"], f["severity"], f["title"], f["severity"] == "info") for f in adv["findings"]]
    got = [(f["rule"], f["severity"], f["title"], f["folded"]) for f in res["findings"]]
    eq(got, want, f"{name}: the findings drawn = gpuprof advise's, in its order, info folded")
    for f, card in zip(adv["findings"], res["findings"]):
        expect(f["where"] in card["text"] and f["change"] in card["text"],
               f"{name}: card {f['rank']} shows where and what to change")


def without_uplot(html):
    """The page as a build without uPlot writes it: no uPlot style/script,
    "charts": false."""
    scripts = re.findall(r"<script>.*?</script>\n", html, re.S)
    styles = re.findall(r"<style>.*?</style>\n", html, re.S)
    out = html.replace(scripts[0], "", 1).replace(styles[0], "", 1)
    return out.replace('"charts":true', '"charts":false', 1)


def pinned_uplot():
    """(js, css) of the uPlot pinned in scripts/uplot.pin, installed into
    $B/npm by scripts/setup-uplot.sh when missing; None when it cannot be."""
    root = os.path.join(HERE, "..", "..")
    pin = dict(line.split("=", 1) for line in open(os.path.join(root, "scripts", "uplot.pin"))
               if "=" in line and not line.startswith("#"))
    pkg = os.path.join(B, "npm", "node_modules", "uplot")

    def read():
        out = []
        for k in ("js", "css"):
            rel, digest = pin[k].split()
            try:
                with open(os.path.join(pkg, rel), "rb") as f:
                    body = f.read()
            except OSError:
                return None
            if hashlib.sha256(body).hexdigest() != digest:
                return None
            out.append(body.decode())
        return out
    got = read()
    if got is None:
        subprocess.run([os.path.join(root, "scripts", "setup-uplot.sh"), B], capture_output=True, timeout=400)
        got = read()
    return got


def with_uplot(html, js, css):
    """The page as a build with uPlot writes it, from one built without."""
    i = html.rfind("<script>")
    html = html[:i] + "<script>" + js + "</script>\n" + html[i:]
    html = html.replace("<style>", "<style>" + css + "</style>\n<style>", 1)
    return html.replace('"charts":false', '"charts":true', 1)


d = tmpdir()
W = d.name

# a single-process step trace with counters and memory
one = os.path.join(W, "one.gpuprof")
subprocess.run([GEN_DIFF, "--warmup", "--jitter", "20000", "--counters", "--odd-name", one], check=True)
html_one, data = report(os.path.join(W, "one.html"), one)
check_data("gen_diff", one, data)
eq(data.get("charts"), True, "gen_diff: built with uPlot") if data.get("uplot_version") else None
proc = data["runs"][0]["procs"][0]
eq(sorted(proc["devices"][0]["series"]), sorted(["GPU busy %", "copy busy %", "nvml.gpu_util", "pm.sm_active_pct"]),
   "gen_diff: busy % beside nvml.gpu_util and pm.sm_active_pct")
eq([c["name"] for c in proc["counters"]], ["nvml.power_mw"], "gen_diff: the other counters")
eq([(m["kind"], m["peak_bytes"]) for m in proc["memory"]], [("pinned", 1 << 20), ("device", 96 << 20)],
   "gen_diff: memory series and peaks (64 MiB + 32 MiB device, 1 MiB pinned)")
eq(proc["memory"][1]["end_bytes"], 32 << 20, "gen_diff: the 64 MiB free (no size) took its allocation's size")
eq(html_one.count("</script>"), 3 if data.get("charts") else 2, "odd kernel name: no extra </script> in the page")
expect("relu</script>" in json.dumps(data), "odd kernel name: kept in the data")

# a merged two-rank trace: one row per rank
r0, r1, merged = (os.path.join(W, n) for n in ("r0.gpuprof", "r1.gpuprof", "merged.gpuprof"))
subprocess.run([GEN_DIFF, "--pid", "7000", "--rank", "0", "--counters", r0], check=True)
subprocess.run([GEN_DIFF, "--pid", "7001", "--rank", "1", "--gemm-ns", "150000", r1], check=True)
gp("merge", r0, r1, "-o", merged)
html_m, data_m = report(os.path.join(W, "merged.html"), merged)
check_data("merged", merged, data_m)
eq([(p["pid"], p["rank"]) for p in data_m["runs"][0]["procs"]], [(7000, 0), (7001, 1)], "merged: rows by rank")

# the committed H200 trace
html_mn, data_mn = report(os.path.join(W, "mnist.html"), MNIST)
check_data("mnist", MNIST, data_mn)

# the busy % summed per bin as each device's unions stream (a process whose
# settings say it is not windowed; a cut every 8 intervals:
# GPUPROF_UNION_LAG, docs/CLI.md), not from unions kept whole: the series
# recomputed here from the records still
streamed = os.path.join(W, "streamed.gpuprof")
subprocess.run([GEN_DIFF, "--warmup", "--jitter", "20000", "--counters", "--settings",
                "activity=kernel,memcpy,memset,peer,device api=default", streamed], check=True)
os.environ["GPUPROF_UNION_LAG"] = "8"
html_l, data_l = report(os.path.join(W, "lag.html"), streamed)
del os.environ["GPUPROF_UNION_LAG"]
check_data("gen_diff --settings, union lag 8", streamed, data_l)

# a generated trace with windows, and one with a window-less step set (gen_trace: counters, no steps)
gt = gen(os.path.join(W, "gt.gpuprof"))
html_gt, data_gt = report(os.path.join(W, "gt.html"), gt)
check_data("gen_trace", gt, data_gt)
win = os.path.join(W, "win.gpuprof")
subprocess.run([GEN_STEPS, "--windows", win], check=True)
html_w, data_w = report(os.path.join(W, "win.html"), win, extra=("--bins", "50"))
check_data("gen_steps --windows", win, data_w, nbins=50)
busy = data_w["runs"][0]["procs"][0]["devices"][0]["series"]["GPU busy %"]
expect(None in busy and any(v is not None for v in busy), "windowed trace: bins outside the window are null")

# findings: a trace with a known cause (gen_advise.c: sync, with stacks: the
# synchronising copy at train.py:57), its page's first finding that one
sync = os.path.join(W, "sync.gpuprof")
subprocess.run([GEN_ADVISE, "sync", "--stacks", sync], check=True)
html_s, data_s = report(os.path.join(W, "sync.html"), sync)
check_data("gen_advise sync", sync, data_s)
adv_s = advise_json(sync)
first = (data_s["runs"][0]["advise"]["findings"] or [{}])[0]
eq((first.get("rule"), first.get("severity")), ("sync", "high"), "sync: the first finding is sync, high")
expect("train.py:57" in first.get("where", ""), f"sync: the finding names the call site: {first.get('where')}")
eq(first, adv_s["findings"][0], "sync: the first finding = gpuprof advise's first")
# --site goes to advise too
html_si, data_si = report(os.path.join(W, "sync-inner.html"), sync, extra=("--site", "inner"))
eq(data_si["runs"][0]["advise"], advise_json(sync, ("--site", "inner")), "--site inner: = gpuprof advise --site inner")
# no steps (--method nvtx on a trace without NVTX): no finding, the line says why
nonvtx = os.path.join(W, "nonvtx.gpuprof")
subprocess.run([GEN_STEPS, "--steady", "--no-nvtx", nonvtx], check=True)
html_n, data_n = report(os.path.join(W, "nonvtx.html"), nonvtx, extra=("--method", "nvtx"))
adv_n = data_n["runs"][0]["advise"]
eq(adv_n, advise_json(nonvtx, ("--method", "nvtx")), "no steps: = gpuprof advise --method nvtx")
eq((adv_n["findings"], [p["counted"] for p in adv_n["processes"]]), ([], [0]), "no steps: no finding, 0 counted")
# advise cannot judge (--step-range no range has): the slot says why, the page is still written
html_e, data_e = report(os.path.join(W, "norange.html"), nonvtx, extra=("--step-range", "nope"))
p = gp("advise", "--step-range", "nope", nonvtx, check=False)
eq(data_e["runs"][0]["advise"], {"error": p.stderr.strip().split(": ", 1)[1]},
   "--step-range nope: {error} = gpuprof advise's message")
expect("nope" in data_e["runs"][0]["advise"]["error"], "--step-range nope: the error names the range")

# two traces, one page; options
html_2, data_2 = report(os.path.join(W, "two.html"), one, MNIST, extra=("--rows", "5", "--title", "two runs"))
eq([r["file"] for r in data_2.get("runs", [])], [one, MNIST], "two traces: two runs in order")
eq(data_2.get("rows_max"), 5, "--rows 5")
expect(all(len(t) <= 5 for r in data_2.get("runs", []) for t in r["stats"].values()), "--rows 5: tables cut")
expect("<title>gpuprof report: two runs</title>" in (html_2 or ""), "--title")

# size: 20,000 steps
big = os.path.join(W, "big.gpuprof")
subprocess.run([GEN_STEPS, "--steady", "--steps", "20000", big], check=True)
html_b, data_b = report(os.path.join(W, "big.html"), big)
size = len(html_b or "")
expect(0 < size <= 3 * 1024 * 1024, f"20,000 steps: page of {size} bytes, at most 3 MB")
ss = data_b["runs"][0]["procs"][0]["step_series"]
eq((ss["total"], ss["stride"]), (20000, 10), "20,000 steps: every 10th drawn")
expect(ss["shown"] <= 2100, f"20,000 steps: {ss['shown']} shown")
print(f"20,000 steps: page {size} bytes, {ss['shown']} steps drawn")

# a host that runs ahead (gen_advise fp32-ahead: steps of 100 us on the host,
# each launching 4 kernels of 2 ms): the step chart draws the GPU work per
# step, the steps table's times; the other pages their host steps
ahead = os.path.join(W, "ahead.gpuprof")
subprocess.run([GEN_ADVISE, "fp32-ahead", ahead], check=True)
html_a, data_a = report(os.path.join(W, "ahead.html"), ahead)
check_data("gen_advise fp32-ahead", ahead, data_a)
ss = data_a["runs"][0]["procs"][0]["step_series"]
eq((ss["runs_ahead"], ss["gpu_ns"], ss["time_ns"]), (True, [8000000] * 10, [100000] * 10),
   "runs ahead: GPU work 4 x 2 ms per step, host steps of 100 us")
eq([r["median_ns"] for r in data_a["runs"][0]["steps"]["steps"]], [8000000], "runs ahead: the steps table's median")
eq([p["step_series"]["runs_ahead"] for p in data["runs"][0]["procs"]], [False], "gen_diff: the host does not run ahead")

# one set of steps per page: with --method trace on a trace with NVTX steps,
# the stats tables (their steps table included), the steps view and the
# findings all follow it, as each command does with the same option
html_meth, data_meth = report(os.path.join(W, "method.html"), one, extra=("--method", "trace"))
run_m = data_meth["runs"][0]
check_tables("--method trace stats", run_m["stats"], run_m["stats_rows"],
             json.loads(gp("stats", "--format", "json", "--whole-trace", "--method", "trace", one).stdout), 50)
check_tables("--method trace steps", run_m["steps"], run_m["steps_rows"],
             json.loads(gp("steps", "--format", "json", "--method", "trace", one).stdout), 50)
eq(run_m["advise"], advise_json(one, ("--method", "trace")), "--method trace: = gpuprof advise --method trace")
expect(any(r.get("method") == "trace" for r in run_m["stats"].get("steps", [])), "--method trace: stats steps by trace")

# reads (docs/ARCHITECTURE.md, "The offline engine"): the stats pre-pass
# (advise's inputs too), then one pass for the tables, the steps, the busy %
# and advise's facts beside the steps (NVTX steps, none warm-up: this
# trace's); counted as the bytes pread from the trace over its size (strace,
# every pread64 of every thread, those it reports in two lines too; the
# header and index reads beside add a little).  With --threads the slices'
# readers also read the chunks across their cuts and the lead-ins (2 s of
# this 17 s trace before each cut) and ahead of where a slice stops: 4.1
# times at 4 threads, where a third pass of its own for the facts made it 6.4
GEN_BIG = os.path.abspath(os.path.join(B, "bench", "gen_bigtrace"))
if shutil.which("strace") and os.path.exists(GEN_BIG):
    bt, log = os.path.join(W, "bigtrace.gpuprof"), os.path.join(W, "strace.log")
    subprocess.run([GEN_BIG, "--seed", "7", "2e5", bt], check=True, capture_output=True)
    # LeakSanitizer cannot run under ptrace (an ASan build of this test)
    env = dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    for cmd in (("report", "-o", os.devnull), ("advise",)):
        for threads, most in ((1, 2.3), (4, 5.0)):
            subprocess.run(["strace", "-f", "-e", "trace=pread64", "-o", log, GPUPROF, cmd[0], "--threads", str(threads),
                            *cmd[1:], bt], check=True, capture_output=True, env=env)
            with open(log) as f:
                got = sum(int(m.group(1)) for m in re.finditer(r"pread64.*\) = (\d+)$", f.read(), re.M))
            reads = got / os.path.getsize(bt)
            expect(reads <= most, f"{cmd[0]} --threads {threads} reads a 2e5-event trace {reads:.2f} times "
                   f"(2 passes: at most {most})")
            print(f"{cmd[0]} --threads {threads}: {reads:.2f} reads of the trace")
    # a warm-up run longer than the facts take back (advise_facts.h
    # adv_facts_settle: 64 steps) makes them in a pass of their own, after
    # the steps: one read more than a trace of the same size whose warm-up
    # is taken back (small traces: the header and index reads weigh more)
    reads = {}
    for n in (3, 70):
        wt = os.path.join(W, f"warm{n}.gpuprof")
        subprocess.run([GEN_DIFF, "--steps", "2000", "--warmup-steps", str(n), wt],
                       check=True, capture_output=True)
        subprocess.run(["strace", "-f", "-e", "trace=pread64", "-o", log, GPUPROF, "advise", "--threads", "1", wt],
                       check=True, capture_output=True, env=env)
        with open(log) as f:
            reads[n] = sum(int(m.group(1)) for m in re.finditer(r"pread64.*\) = (\d+)$", f.read(), re.M)) / os.path.getsize(wt)
    expect(reads[70] - reads[3] >= 0.8, f"advise: a warm-up of 70 steps reads the trace {reads[70]:.2f} times, "
           f"one of 3 steps {reads[3]:.2f} times (one pass more)")
else:
    print("SKIP the reads of report: no strace or no build/bench/gen_bigtrace")

# bad use
out = os.path.join(W, "bad.html")
eq(gp("report", "-o", out, check=False).returncode, 1, "no trace: exit 1")
eq(gp("report", one, check=False).returncode, 1, "no -o: exit 1")
eq(gp("report", "--rows", "0", "-o", out, one, check=False).returncode, 1, "--rows 0: exit 1")
p = gp("report", "-o", out, one, os.path.join(W, "missing.gpuprof"), check=False)
eq(p.returncode, 2, "a missing trace: exit 2")
expect("missing.gpuprof" in p.stderr, "a missing trace: named in the message")
# the others are still shown, as advise judges them (issue #38)
expect(os.path.exists(out) and not [f for f in os.listdir(W) if f.startswith("bad.html.tmp")],
       "a missing trace among others: the page of the others (no temporary file)")
if os.path.exists(out):
    os.unlink(out)
p = gp("report", "-o", out, os.path.join(W, "missing.gpuprof"), check=False)
eq(p.returncode, 2, "only a missing trace: exit 2")
expect(not os.path.exists(out) and not [f for f in os.listdir(W) if f.startswith("bad.html")],
       "a report with no trace read leaves no page (nor temporary file)")
p = gp("report", "-o", "-", one)
expect(p.stdout.startswith("<!DOCTYPE html>") and p.stdout.rstrip().endswith("</html>"), "-o -: the page on stdout")
# a target that is not a regular file (/dev/null, a FIFO) is written in
# place: renaming the temporary page over it replaced /dev/null itself when
# run as root
fifo = os.path.join(W, "page.fifo")
os.mkfifo(fifo)
through = os.path.join(W, "page.through")
with open(through, "wb") as sink:  # a file, not a pipe nobody reads while report runs
    reader = subprocess.Popen(["cat", fifo], stdout=sink)
    p = gp("report", "-o", fifo, one, check=False)
    try:
        reader.wait(timeout=30)
    except subprocess.TimeoutExpired:
        reader.kill()
with open(through, "rb") as f:
    got = f.read()
eq(p.returncode, 0, "-o FIFO: exit 0")
expect(stat.S_ISFIFO(os.stat(fifo).st_mode), "-o FIFO: still a FIFO after the report")
expect(got.rstrip().endswith(b"</html>"), "-o FIFO: the page went through the FIFO")
expect(not [f for f in os.listdir(W) if f.startswith("page.fifo.tmp")], "-o FIFO: no temporary file")

# the committed example page is what this build writes (but for the command line in it)
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "mnist-h200-report.html")
if data.get("charts"):
    root = os.path.join(HERE, "..", "..")
    p = subprocess.run([os.path.abspath(os.path.join(B, "bin", "gpuprof")), "report", "-o", "-",
                        "examples/mnist-h200.gpuprof"], cwd=root, capture_output=True, text=True)
    with open(EXAMPLE) as f:
        committed = f.read()
    expect(p.stdout.replace("gpuprof report -o -", "gpuprof report -o examples/mnist-h200-report.html") == committed,
           "examples/mnist-h200-report.html is up to date (gpuprof report -o examples/mnist-h200-report.html "
           "examples/mnist-h200.gpuprof)")

# the browser
browser = chromium()
if not browser:
    print("skip: chromium not installed: page not loaded (apt-get install chromium; scripts/setup-speedscope.sh)")
else:
    built_in = data.get("charts")
    if not built_in:
        # this gpuprof was built without uPlot: the page's script is checked with
        # the pinned uPlot put in as the build would
        lib = pinned_uplot()
        if lib is None:
            print("skip: no uPlot (npm or the registry unreachable; make deps): charts not checked in the browser")
            finish()
        html_one, html_m, html_mn, html_w, html_b, html_s, html_a = (
            with_uplot(h, *lib) for h in (html_one, html_m, html_mn, html_w, html_b, html_s, html_a))
        print("gpuprof built without uPlot: the pinned uPlot put into the pages for the browser checks")
    check_page(browser, html_one, W, "one.html", ["steptime", "buckets", "busy", "memory", "counter"])
    check_page(browser, html_m, W, "merged.html", ["steptime", "buckets", "busy", "memory", "steptime", "buckets",
                                                   "busy", "counter"])
    res = check_page(browser, html_mn, W, "mnist.html", ["steptime", "buckets", "busy", "memory"])
    check_findings_drawn(res, advise_json(MNIST), "mnist.html")
    res = check_page(browser, html_s, W, "sync.html", ["steptime", "buckets", "busy"])
    check_findings_drawn(res, adv_s, "sync.html")
    if res:
        eq(res["findings"][0]["rule"], adv_s["findings"][0]["rule"], "sync.html: the first card = advise's first")
    # no steps, and advise's error: the slot says why, the page draws without error
    for h, name, want in ((html_n, "nonvtx.html", "no counted steps"),
                          (html_e, "norange.html", "gpuprof advise could not judge this trace: no NVTX range "
                                                   "named 'nope'")):
        res, console = load_page(browser, h, W, name)
        if expect(res is not None, f"{name}: the page ran"):
            eq(res["errors"], [], f"{name}: no uncaught error")
            eq(res["findings"], [], f"{name}: no finding card")
            expect(any(want in t for t in res["findings_notes"]), f"{name}: the slot says '{want}': "
                   f"{res['findings_notes']}")
    # 3 steps, one counted; busy % in one bin (the window): points, not lines
    check_page(browser, html_w, W, "win.html", ["steptime", "buckets", "busy"], min_series=1)
    check_page(browser, html_b, W, "big.html", ["steptime", "buckets", "busy"])
    check_page(browser, html_a, W, "ahead.html", ["steptime", "buckets", "busy"], min_series=1)
    # the fallback: same page without uPlot
    res, console = load_page(browser, without_uplot(html_one), W, "nouplot.html")
    if expect(res is not None, "no uPlot: the page ran"):
        eq(res["errors"], [], "no uPlot: no uncaught error")
        expect(res["charts"] and all(c["fallback"] and not c["canvas"] for c in res["charts"]),
               "no uPlot: every chart box says it was not drawn")
finish()
