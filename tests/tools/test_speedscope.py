"""test_speedscope.py — the folded export loads in speedscope: speedscope's own
release bundle (npm package `speedscope`, pinned) runs in headless Chromium,
imports the file the way `speedscope FILE` does (index.html#localProfilePath=
a script calling speedscope.loadFileFromBase64), and shows it in the sandwich
view.  The test reads back what speedscope computed: the console line of its
collapsed-stack importer, the page title it sets after a successful import,
and the Total/Self weight of every frame in the sandwich table, which must
equal the sums over the folded lines.  The table is a virtualised list (only
the rows near the view are in the DOM), so the loader script also scrolls it
through and keeps a copy of every row speedscope drew (ROW_COLLECTOR).

Inputs: the folded export of the fake-CUDA workload recorded by the shim with
GPUPROF_STACKS=all (test_stacks_workload.py checks its content), and of the
gen_stacks trace (tests/tools/gen_stacks.c --odd-names: Python, ctx and odd frames, names
with ';', a newline and a trailing " 42");
a synthetic file whose table is longer than the window (write_long_table);
SPEEDSCOPE_EXTRA=a.folded:b.folded adds other files.

Needs node/npm and chromium; the npm package is installed into $B/npm on
first use (scripts/setup-speedscope.sh does the same for CI).  Without npm
access or chromium it skips, saying why."""
import base64
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tt import B, chromium, eq, expect, fail, finish, gp, tmpdir  # noqa: E402
from test_stacks_workload import CHAIN, record_workload  # noqa: E402

SPEEDSCOPE_VERSION = "1.25.0"
NPM_DIR = os.path.abspath(os.path.join(B, "npm"))
RELEASE = os.path.join(NPM_DIR, "node_modules", "speedscope", "dist", "release")
GEN_STACKS = os.path.abspath(os.path.join(B, "tests", "tools", "gen_stacks"))


def skip(why):
    print(f"skip: {why}")
    sys.exit(77)


def ensure_speedscope():
    if os.path.isfile(os.path.join(RELEASE, "index.html")):
        return
    if not shutil.which("npm"):
        skip("npm not installed (needed to fetch the speedscope package)")
    os.makedirs(NPM_DIR, exist_ok=True)
    try:
        p = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", NPM_DIR,
                            f"speedscope@{SPEEDSCOPE_VERSION}"], capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        skip("npm install speedscope timed out (registry unreachable?)")
    if p.returncode != 0 or not os.path.isfile(os.path.join(RELEASE, "index.html")):
        last = (p.stderr.strip().splitlines() or ["?"])[-1]
        skip(f"npm install speedscope@{SPEEDSCOPE_VERSION} failed (registry unreachable?): {last}")


def expected_weights(folded_text):
    """Per frame: (total, self) as speedscope's sandwich view defines them:
    total = weight of the lines the frame is on (once per line), self = weight
    of the lines it ends."""
    tot, slf = {}, {}
    for line in folded_text.splitlines():
        stack, _, w = line.rpartition(" ")
        frames = stack.split(";")
        for f in set(frames):
            tot[f] = tot.get(f, 0) + int(w)
        slf[frames[-1]] = slf.get(frames[-1], 0) + int(w)
    return {f: (tot[f], slf.get(f, 0)) for f in tot}


# speedscope's sandwich table draws only the rows within a screen or so of
# its scroll position (about 240 of 20 px in a 4000 px window); a file with
# more frames (the MNIST export has 439) would be compared on the first rows
# only.  Appended to the loader: once the table is drawn, scroll it a screen
# at a time, copying each row drawn (by symbol name), and at the bottom put
# the copies in <table id="gpuprof-sandwich-rows"> for --dump-dom.  It waits
# for the first rows by animation frames (speedscope sizes the list in one;
# a timer would let virtual time run to the dump first), then scrolls by hand
# with a scroll event of its own and a zero timer: once the page has loaded,
# headless Chromium draws no more frames before the dump, so neither a real
# scroll event nor another animation frame would come.
ROW_COLLECTOR = """
(function () {
  var copies = {}, order = [], waits = 0;
  function keep(table) {
    var trs = table.querySelectorAll('tr');
    for (var i = 0; i < trs.length; i++) {
      if (trs[i].cells.length !== 3) continue;
      var name = trs[i].cells[2].textContent;
      if (!(name in copies)) order.push(name);
      copies[name] = trs[i].outerHTML;
    }
  }
  function step() {
    var td = document.querySelector('td');
    if (!td) { if (++waits < 1000) requestAnimationFrame(step); return; }
    var table = td.closest('table'), list = table.parentNode.parentNode.parentNode;
    keep(table);
    if (list.scrollTop + list.clientHeight >= list.scrollHeight - 1) {
      var out = document.createElement('table');
      out.id = 'gpuprof-sandwich-rows';
      out.hidden = true;
      out.innerHTML = order.map(function (n) { return copies[n]; }).join('');
      document.body.appendChild(out);
      return;
    }
    list.scrollTop += list.clientHeight;
    list.dispatchEvent(new Event('scroll'));
    setTimeout(step, 0);
  }
  requestAnimationFrame(step);
})();
"""

# A Total or Self cell: "1,234 (5.6%)"; speedscope writes the share as "100%",
# ">99%", "N%", "N.N%", "N.NN%" or "<0.01%".
WEIGHT_CELL = re.compile(r"^([\d,]+) \((?:[\d.]+|<0\.01|>99)%\)$")


def sandwich_rows(dom):
    """{symbol name: (total, self)} from the rows the collector copied; None
    if it did not reach the end of the table."""
    start = dom.find('<table id="gpuprof-sandwich-rows"')
    if start < 0:
        return None
    part = dom[start:dom.find("</table>", start)]
    # rows: Total, Self, Symbol Name cells, in that order
    cells = [t for t in (html.unescape(t).strip() for t in re.split(r"<[^>]+>", part)) if t]
    rows = {}
    for i in range(len(cells) - 2):
        a, b = WEIGHT_CELL.match(cells[i]), WEIGHT_CELL.match(cells[i + 1])
        if a and b and not WEIGHT_CELL.match(cells[i + 2]):
            rows[cells[i + 2]] = (int(a.group(1).replace(",", "")), int(b.group(1).replace(",", "")))
    return rows


def load_in_speedscope(browser, folded_path, work):
    """Returns (console log, page title, {frame: (total, self)} as speedscope
    shows them, or None if the rows were not all read)."""
    site = os.path.join(work, "speedscope")
    if not os.path.isdir(site):
        shutil.copytree(RELEASE, site)
    name = os.path.basename(folded_path)
    with open(folded_path, "rb") as f:
        data = f.read()
    loader = os.path.join(work, name + ".js")
    with open(loader, "w") as f:
        f.write("speedscope.loadFileFromBase64(%s, %s);\n" % (json.dumps(name), json.dumps(base64.b64encode(data).decode())))
        f.write(ROW_COLLECTOR)
    url = f"file://{site}/index.html#localProfilePath={loader}&view=sandwich"
    profile_dir = tempfile.mkdtemp(prefix="chromium-", dir=work)
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader", "--allow-file-access-from-files", "--enable-logging=stderr", "--v=0",
            "--disable-dev-shm-usage", "--run-all-compositor-stages-before-draw", f"--user-data-dir={profile_dir}", "--window-size=1600,4000",
            "--virtual-time-budget=15000", "--dump-dom", url]
    try:
        p = subprocess.run(args, capture_output=True, text=True, errors="replace", timeout=60)
    except subprocess.TimeoutExpired:
        fail(f"{name}: chromium did not finish in 60 s")
        return "", "", None
    dom = p.stdout
    m = re.search(r"<title>([^<]*)</title>", dom)
    title = html.unescape(m.group(1)) if m else ""
    return p.stderr, title, sandwich_rows(dom)


def check(browser, folded_path, work, what):
    with open(folded_path) as f:
        text = f.read()
    want = expected_weights(text)
    # On a loaded machine Chromium may dump the page before the table is drawn
    # or scrolled through (the import itself already logged): try again, at
    # most three times.
    for attempt in range(3):
        log, title, rows = load_in_speedscope(browser, folded_path, work)
        if rows:
            break
        print(f"{what}: sandwich table not read to the end (attempt {attempt + 1}), loading again")
    expect(rows is not None, f"{what}: the sandwich table was scrolled to its end")
    rows = rows or {}
    name = os.path.basename(folded_path)
    expect("Importing as collapsed stack format" in log,
           f"{what}: speedscope's collapsed-stack importer ran (console: "
           f"{[ln for ln in log.splitlines() if 'CONSOLE' in ln][-3:]})")
    eq(title, f"{name} - speedscope", f"{what}: page title after the import")
    eq(rows, want, f"{what}: sandwich view (frame -> total, self)")
    expect(rows, f"{what}: speedscope shows frames")
    print(f"{what}: speedscope imported {len(text.splitlines())} stacks, {len(rows)} frames")
    return rows


def write_long_table(path):
    """A folded file whose sandwich table is longer than the window (604
    frames; speedscope draws about 240 rows at a time), with one leaf above
    99 % of the weight (shown ">99%"), shares below 0.01 % ("<0.01%"), a
    recursive frame (counted once per stack in Total) and C++/Python names
    with spaces: what the MNIST export brought and the small files do not."""
    with open(path, "w") as f:
        f.write("main;spin;spin (loop.py:3);spin;hot_leaf 100000000\n")
        for i in range(300):
            f.write(f"main;caller_{i} (model/layer.py:{i + 1});"
                    f"void ns::op<{i}, float>(at::Tensor const&, std::optional<bool>) {i + 1}\n")
    return path


browser = chromium()
if not browser:
    skip("chromium not installed (apt-get install chromium; scripts/setup-speedscope.sh)")
ensure_speedscope()

d = tmpdir()
wl = record_workload(os.path.join(d.name, "workload.gpuprof"))
wl_folded = os.path.join(d.name, "workload.folded")
gp("export", "--format", "folded", wl, "-o", wl_folded)
rows = check(browser, wl_folded, d.name, "fake workload (shim stacks)")
expect(all(f in rows for f in CHAIN), f"fake workload: speedscope shows the chain {CHAIN}")
trace = os.path.join(d.name, "stacks.gpuprof")
subprocess.run([GEN_STACKS, "--odd-names", trace], check=True, capture_output=True)
folded = os.path.join(d.name, "gen_stacks.folded")
gp("export", "--format", "folded", trace, "-o", folded)
rows = check(browser, folded, d.name, "gen_stacks trace")
expect("odd frame_42" in rows and "a_b_c (x_y_.py:7)" in rows, "gen_stacks trace: speedscope shows the odd names")
check(browser, write_long_table(os.path.join(d.name, "long_table.folded")), d.name,
      "604 frames, a >99% leaf, recursion")

for extra in filter(None, os.environ.get("SPEEDSCOPE_EXTRA", "").split(":")):
    check(browser, extra, d.name, extra)
finish()
