/* report_page.js — draws the `gpuprof report` page from its data
 * (<script id="gpuprof-data">, tools/export/report_data.h) with uPlot, when
 * the build embedded it, else tables only.  Embedded at build time by
 * scripts/embed-report-assets.sh; must not contain a closing script tag.
 * No network, no storage, no eval: the page is one file that works offline. */
(function () {
  'use strict';
  var DATA = JSON.parse(document.getElementById('gpuprof-data').textContent);
  var HAVE_UPLOT = typeof uPlot !== 'undefined' && DATA.charts;
  var BUCKETS = ['compute', 'comm', 'memory', 'host_wait', 'sync', 'launch', 'other'];
  var BUCKET_COLOURS = {
    compute: '#2e7d32', comm: '#6a1b9a', memory: '#0277bd', host_wait: '#e65100',
    sync: '#c62828', launch: '#f9a825', other: '#757575'
  };
  var PALETTE = ['#1565c0', '#ef6c00', '#2e7d32', '#6a1b9a', '#c62828', '#00838f', '#5d4037', '#ad1457'];
  var app = document.getElementById('app');
  var nchart = 0;

  /* ---------------------------------------------------------------- DOM */
  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (k === 'text') e.textContent = attrs[k];
      else if (k === 'cls') e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    (kids || []).forEach(function (c) { if (c) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c); });
    return e;
  }
  function commas(v) {
    var s = String(v), neg = s[0] === '-';
    if (neg) s = s.slice(1);
    var p = s.split('.');
    p[0] = p[0].replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    return (neg ? '-' : '') + p.join('.');
  }
  function dur(ns) {
    if (ns === null || ns === undefined) return '-';
    var a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' us';
    return ns + ' ns';
  }
  function bytes(b) {
    if (b === null || b === undefined) return '-';
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'], i = 0;
    while (Math.abs(b) >= 1024 && i < u.length - 1) { b /= 1024; i++; }
    return (i ? b.toFixed(1) : String(b)) + ' ' + u[i];
  }
  /* a fraction shown to a reader: 3 significant digits at most (the
   * page's data and the cell's tooltip keep the exact value) */
  function roundShown(v) {
    var a = Math.abs(v);
    return a >= 100 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : String(Number(v.toPrecision(3)));
  }
  function cell(v) {
    if (v === null || v === undefined) return '-';
    if (typeof v === 'number') return commas(Number.isInteger(v) ? v : roundShown(v));
    return String(v);
  }
  /* the scale of a step chart: the counted steps (and any step within 3x
   * their largest), so one slow warm-up step does not flatten the rest;
   * a step above it is drawn at the top, its value in the legend */
  function stepScale(ss, total) {
    var hi = 0, all = 0;
    for (var i = 0; i < ss.index.length; i++) {
      var v = total(i);
      if (ss.flag[i] === 0 || ss.flag[i] === 2) hi = Math.max(hi, v);
      all = Math.max(all, v);
    }
    if (!hi || all <= 3 * hi) hi = all;
    return hi * 1.08 || 1;
  }

  /* A table of rows (objects) with columns [key, heading]; total: the
   * number of rows the full table has (more than shown: says so). */
  function table(rows, cols, total, caption) {
    var t = el('table', { cls: 'data' });
    if (caption) t.appendChild(el('caption', { text: caption }));
    var tr = el('tr');
    cols.forEach(function (c) { tr.appendChild(el('th', { text: c[1] })); });
    t.appendChild(el('thead', null, [tr]));
    var tb = el('tbody');
    (rows || []).forEach(function (r) {
      var row = el('tr');
      cols.forEach(function (c) {
        var v = r[c[0]];
        var text = c[2] ? c[2](v, r) : cell(v);
        var td = el('td', { text: text.length > 160 ? text.slice(0, 150) + '\u2026' : text });
        if (text.length > 160) td.title = text;
        if (typeof v === 'number') td.className = 'num';
        if (typeof v === 'number' && /_ns$/.test(c[0])) td.title = dur(v);
        else if (typeof v === 'number' && !Number.isInteger(v)) td.title = String(v);
        row.appendChild(td);
      });
      tb.appendChild(row);
    });
    t.appendChild(tb);
    var box = el('div', { cls: 'tablebox' }, [t]);
    if (!rows || !rows.length) box.appendChild(el('p', { cls: 'note', text: '(no data)' }));
    else if (total && total > rows.length)
      box.appendChild(el('p', { cls: 'note', text: 'first ' + rows.length + ' of ' + commas(total) +
        ' rows (gpuprof stats has them all)' }));
    return box;
  }
  /* columns of a table: every key of its first row, in order */
  function autoCols(rows) {
    if (!rows || !rows.length) return [];
    return Object.keys(rows[0]).map(function (k) { return [k, k]; });
  }
  function section(parent, title, cls) {
    var s = el('section', { cls: cls || 'block' }, [el('h3', { text: title })]);
    parent.appendChild(s);
    return s;
  }

  /* ------------------------------------------------------------- charts */
  function chartBox(parent, id, title, note) {
    var box = el('div', { cls: 'chart', 'data-chart': id }, [el('div', { cls: 'ctitle', text: title })]);
    parent.appendChild(box);
    if (note) box.appendChild(el('div', { cls: 'note', text: note }));
    if (!HAVE_UPLOT) {
      box.appendChild(el('p', { cls: 'nocharts', text: 'Chart not drawn: this gpuprof was built without ' +
        'its charting library (uPlot; run make deps, then make). The tables below have the figures.' }));
      return null;
    }
    return box;
  }
  function width(box) {
    var w = box.clientWidth || 640;
    return Math.max(320, Math.min(w - 4, 800));
  }
  /* charts are drawn once every box is in place, so each is sized by the
   * layout of all of them */
  var pending = [];
  function plot(box, opts, data) {
    pending.push(function () {
      opts.width = width(box);
      opts.height = opts.height || 220;
      opts.legend = opts.legend || { live: true };
      nchart++;
      new uPlot(opts, data, box);
    });
  }
  function noLine() { return null; }
  function points(colour, size) {
    return { show: true, size: size || 6, stroke: colour, fill: colour };
  }

  /* step time over the run: counted steps as a line, outliers red, warm-up
   * grey, steps not counted hollow; the median of the counted steps.  When
   * the host runs ahead, the GPU work launched per step (the steps table's
   * times then) */
  function stepTimeChart(parent, id, ss, med) {
    var v = ss.runs_ahead ? ss.gpu_ns : ss.time_ns;
    var top = stepScale(ss, function (i) { return v[i] / 1e6; }), above = 0;
    v.forEach(function (y) { if (y / 1e6 > top) above++; });
    var notes = [];
    if (ss.runs_ahead) notes.push('the host runs ahead of the GPU: the GPU work launched in each step, as the ' +
      'steps table gives (the host\'s own steps are the next chart\'s bars)');
    if (ss.shown < ss.total) notes.push('every ' + ss.stride + 'th of ' + commas(ss.total) +
      ' steps, and every warm-up, outlier and uncounted one');
    if (above) notes.push(above + ' step' + (above > 1 ? 's' : '') + ' above the scale drawn at its top ' +
      '(the legend has the time)');
    var box = chartBox(parent, id, ss.runs_ahead ? 'GPU work per step over the run (ms)' :
      'Step time over the run (ms)', notes.join('; ') || null);
    if (!box) return;
    var x = ss.index, t = [], out = [], warm = [], unc = [], medv = [];
    function real(u, y, si, idx) {
      return idx === null || idx === undefined || y === null ? '-' : (v[idx] / 1e6).toFixed(3);
    }
    for (var i = 0; i < x.length; i++) {
      var ms = Math.min(v[i] / 1e6, top), f = ss.flag[i];
      t.push(f === 0 || f === 2 ? ms : null);
      out.push(f === 2 ? ms : null);
      warm.push(f === 1 ? ms : null);
      unc.push(f === 3 ? ms : null);
      medv.push(med === null ? null : med / 1e6);
    }
    plot(box, {
      scales: { x: { time: false }, y: { range: [0, top] } },
      axes: [{ label: 'step (index)' }, { label: 'ms' }],
      series: [
        { label: 'step' },
        { label: ss.runs_ahead ? 'GPU work' : 'step time', stroke: '#1565c0', width: 1, spanGaps: true,
          points: points('#1565c0', 3), value: real },
        { label: 'median', stroke: '#9e9e9e', dash: [4, 4], width: 1, points: { show: false } },
        { label: 'outlier', stroke: '#c62828', paths: noLine, points: points('#c62828', 8), value: real },
        { label: 'warm-up', stroke: '#757575', paths: noLine, points: points('#757575', 7), value: real },
        { label: 'not counted', stroke: '#ff8f00', paths: noLine, points: points('#ff8f00', 7), value: real }
      ]
    }, [x, t, medv, out, warm, unc]);
  }

  /* per-step stacked bars of the buckets (they add up to the step time) */
  function bucketChart(parent, id, ss) {
    var box = chartBox(parent, id, 'Where each step\'s time goes (ms, stacked; adds up to the step time)');
    if (!box) return;
    var n = ss.index.length, cum = [], acc = [];
    var top = stepScale(ss, function (i) { return ss.time_ns[i] / 1e6; });
    for (var i = 0; i < n; i++) acc.push(0);
    BUCKETS.forEach(function (b) {
      var col = [];
      for (var i = 0; i < n; i++) { acc[i] += ss.buckets[b][i] / 1e6; col.push(Math.min(acc[i], top)); }
      cum.push(col);
    });
    /* drawn tallest first, so each bucket shows above the ones below it */
    var series = [{ label: 'step' }], data = [ss.index];
    for (var k = BUCKETS.length - 1; k >= 0; k--) {
      (function (b) {
        series.push({
          label: b, stroke: BUCKET_COLOURS[b], fill: BUCKET_COLOURS[b], width: 0,
          paths: uPlot.paths.bars({ size: [0.9, 40], align: 0 }), points: { show: false },
          value: function (u, v, si, idx) {
            return idx === null || idx === undefined ? '-' : (ss.buckets[b][idx] / 1e6).toFixed(3);
          }
        });
      })(BUCKETS[k]);
      data.push(cum[k]);
    }
    plot(box, { scales: { x: { time: false }, y: { range: [0, top] } },
      axes: [{ label: 'step (index)' }, { label: 'ms' }], series: series }, data);
  }

  /* GPU busy % per bin beside the process's percentage counters */
  function busyChart(parent, id, dev) {
    var box = chartBox(parent, id, 'GPU ' + dev.device + (dev.name ? ' (' + dev.name + ')' : '') +
      ': busy % over time beside sampled utilisation', 'bins of ' + dur(dev.bin_ns) +
      '; busy % = share of the bin in which a kernel ran (the stats util rule)');
    if (!box) return;
    var series = [{ label: 's' }], data = [dev.t_s], i = 0;
    Object.keys(dev.series).forEach(function (name) {
      var busy = name === 'GPU busy %' || name === 'copy busy %', v = dev.series[name];
      var c = name === 'GPU busy %' ? '#2e7d32' : name === 'copy busy %' ? '#0277bd' : PALETTE[(i++) % PALETTE.length];
      /* busy % is null where no GPU activity was recorded (outside the
       * windows): gaps stay gaps, and a bin on its own shows as a point */
      series.push({ label: name, stroke: c, width: name === 'GPU busy %' ? 2 : 1, spanGaps: !busy,
        points: busy && v.indexOf(null) >= 0 ? points(c, 5) : { show: false } });
      data.push(v);
    });
    plot(box, { scales: { x: { time: false }, y: { range: [0, 100] } },
      axes: [{ label: 's after the trace start' }, { label: '%' }], series: series }, data);
  }

  /* each series' peak marked: a red point on its bin, the legend naming
   * the peak and its time */
  function memoryChart(parent, id, mem) {
    var box = chartBox(parent, id, 'Memory held (allocated through CUDA, not yet freed)',
      'the most held in each bin, by device and kind; a caching allocator keeps what it got; ' +
      'the red point is the peak');
    if (!box) return;
    var series = [{ label: 's' }], data = [mem[0].t_s];
    mem.forEach(function (m, i) {
      series.push({ label: 'dev ' + m.device + ' ' + m.kind, stroke: PALETTE[i % PALETTE.length], width: 1.5,
        points: { show: false }, value: function (u, v) { return v === null ? '-' : bytes(v); } });
      data.push(m.bytes);
    });
    mem.forEach(function (m) {
      if (m.peak_bin < 0) return;
      var mark = m.t_s.map(function (t, k) { return k === m.peak_bin ? m.peak_bytes : null; });
      series.push({ label: 'peak dev ' + m.device + ' ' + m.kind + ': ' + bytes(m.peak_bytes) + ' at ' +
        m.peak_s.toFixed(3) + ' s', stroke: '#c62828', paths: noLine, points: points('#c62828', 9),
        value: function (u, v) { return v === null ? '-' : bytes(v); } });
      data.push(mark);
    });
    plot(box, { scales: { x: { time: false } }, series: series,
      axes: [{ label: 's after the trace start' }, { size: 80,
        values: function (u, vals) { return vals.map(bytes); } }] }, data);
  }

  function counterChart(parent, id, c) {
    var box = chartBox(parent, id, c.name + ' (device ' + c.device + ')', c.samples + ' samples, binned means');
    if (!box) return;
    /* large values (NVML's memory in bytes: 10^11) in units that fit the axis */
    var isBytes = /bytes$/.test(c.name);
    var fmt = function (v) {
      if (isBytes) return bytes(v);
      var a = Math.abs(v), u = ['', 'k', 'M', 'G', 'T'], i = 0;
      while (a >= 1000 && i < u.length - 1) { a /= 1000; v /= 1000; i++; }
      return (i ? Number(v.toPrecision(3)) : v) + (i ? ' ' + u[i] : '');
    };
    plot(box, { scales: { x: { time: false } }, axes: [{ label: 's after the trace start' },
      { size: 70, values: function (u, vals) { return vals.map(fmt); } }],
      series: [{ label: 's' }, { label: c.name, stroke: PALETTE[0], spanGaps: true, points: { show: false },
        value: function (u, v) { return v === null || v === undefined ? '-' : fmt(v); } }] },
      [c.t_s, c.v]);
  }

  /* ------------------------------------------------------------- header */
  function integrity(info) {
    var g = info.integrity || {};
    if (g.status === 'complete') return 'complete' + (g.has_footer ? '' : ' (no footer)');
    if (g.status === 'truncated') return 'truncated (the job was killed?); the intact records are shown';
    return g.status + ': ' + g.frames_corrupt + ' corrupt frames skipped';
  }
  function header(parent, run) {
    var info = run.info, rows = [];
    function add(k, v) { if (v !== undefined && v !== null && v !== '') rows.push([k, String(v)]); }
    (info.processes || []).forEach(function (p) {
      add('command (pid ' + p.pid + (p.rank >= 0 ? ', rank ' + p.rank : '') + ')', p.name);
      add('settings (pid ' + p.pid + ')', p.settings);
    });
    add('host', info.host);
    var gpus = {};
    (info.devices || []).forEach(function (d) {
      var k = d.name + ', ' + d.sm_count + ' SMs, cc ' + d.cc + ', ' + bytes(d.global_mem);
      gpus[k] = (gpus[k] || 0) + 1;
    });
    add('GPU', Object.keys(gpus).map(function (k) { return (gpus[k] > 1 ? gpus[k] + ' x ' : '') + k; }).join('; '));
    add('start', info.start);
    add('span', info.span_ns !== undefined ? dur(info.span_ns) : '-');
    if (info.windows) add('GPU-activity windows', info.windows + ', ' + dur(info.window_ns) + ' recorded');
    add('records', Object.keys(info.counts || {}).map(function (k) { return k + ' ' + commas(info.counts[k]); }).join(', '));
    add('dropped', info.dropped ? commas(info.dropped) + ' ' + JSON.stringify(info.dropped_by) : '0');
    add('integrity', integrity(info));
    add('producer', info.producer + ', format ' + info.format);
    var t = el('table', { cls: 'kv' });
    rows.forEach(function (r) { t.appendChild(el('tr', null, [el('th', { text: r[0] }), el('td', { text: r[1] })])); });
    parent.appendChild(t);
  }

  /* ------------------------------------------------------------ findings */
  /* Each run's "advise": what `gpuprof advise --format json` says of the
   * trace ({"file", "processes", "findings"}, docs/ADVISE.md "Output"), or
   * {"error"} when it could not judge it (docs/REPORT.md, "Findings").  One
   * card per finding in advise's order (severity, then saving); the info
   * ones folded away at the end. */
  function pctText(v) { return v === null || v === undefined ? '-' : v.toFixed(1) + ' %'; } /* as advise prints it */
  function rankText(r) { return r === null || r === undefined ? '' : ', rank ' + r; }
  function procLine(p) {
    if (!p.counted)
      return 'pid ' + p.pid + rankText(p.rank) + ': no counted steps (' + p.steps_are +
        '): advise judges training steps (docs/STEPS.md)';
    return 'pid ' + p.pid + rankText(p.rank) + ': ' + commas(p.steps) + ' steps (' + p.steps_are + '), ' +
      p.warmup + ' warm-up, ' + commas(p.counted) + ' counted; step mean ' + dur(p.step_mean_ns) + ', median ' +
      dur(p.step_median_ns) + '; GPU busy ' + pctText(p.gpu_busy_pct) + ', waiting for the host ' +
      pctText(p.gpu_waited_for_host_pct) + (p.host_runs_ahead ? '; the host runs ahead of the GPU (GPU work ' +
      dur(p.gpu_work_ns_per_step) + ' per step): the shares are of that GPU work' : '');
  }
  function findingCard(f, manyProcs) {
    var rows = [];
    function add(k, v) { if (v) rows.push(el('tr', null, [el('th', { text: k }), el('td', { text: v })])); }
    add('what', f.what);
    add('where', f.where);
    add('cost', dur(f.cost_ns_per_step) + ' per step (' + pctText(f.cost_pct) + ' of the step time)' +
      (f.count_per_step !== null && f.count_per_step !== undefined ? '; ' + cell(f.count_per_step) +
        ' per step' : ''));
    add('saving', f.saving_ns_per_step === null ? 'not estimated' :
      dur(f.saving_ns_per_step) + ' per step (' + pctText(f.saving_pct) + ')');
    add('change', f.change);
    var more = [el('p', { text: f.saving_how })];
    var site = (f.sites || []).filter(function (x) { return x.frames && x.frames.length; })[0];
    if (site) {
      more.push(el('p', { cls: 'note', text: 'stack of ' + (site.after_site ? 'the launch before, ' : '') +
        site.label + ' (innermost last):' }));
      more.push(el('pre', { cls: 'frames', text: site.frames.join('\n') }));
    }
    if (f.records)
      more.push(el('p', { cls: 'note', text: 'records: ' + (f.records.step !== null ? 'step ' + f.records.step +
        ': ' : '') + f.records.stats + '; Perfetto ' + f.records.perfetto_ms[0].toFixed(3) + '..' +
        f.records.perfetto_ms[1].toFixed(3) + ' ms' }));
    var head = el('div', { cls: 'fhead' }, [
      el('span', { cls: 'rank', text: '#' + f.rank }), el('span', { cls: 'sev', text: f.severity }),
      el('span', { cls: 'rule', text: f.rule }), el('strong', { text: f.title }),
      manyProcs ? el('span', { cls: 'note', text: ' pid ' + f.pid + rankText(f.process_rank) }) : null]);
    return el('div', { cls: 'finding sev-' + f.severity, 'data-rule': f.rule }, [
      head, el('table', { cls: 'kv' }, rows),
      el('details', null, [el('summary', { text: 'how the saving was estimated, stack, records' })].concat(more))]);
  }
  function findings(parent) {
    var s = el('section', { id: 'findings', cls: 'block findings' },
      [el('h2', { text: 'Findings (gpuprof advise)' })]);
    parent.appendChild(s);
    DATA.runs.forEach(function (run) {
      var a = run.advise, box = el('div', { cls: 'advise' });
      s.appendChild(box);
      if (DATA.runs.length > 1) box.appendChild(el('h3', { text: run.file }));
      if (!a) {
        box.appendChild(el('p', { cls: 'note', text: 'No findings: this report was made without gpuprof advise.' }));
        return;
      }
      if (a.error) {
        box.appendChild(el('p', { cls: 'note advise-error', text: 'gpuprof advise could not judge this trace: ' +
          a.error }));
        return;
      }
      var procs = a.processes || [], list = a.findings || [];
      procs.forEach(function (p) { box.appendChild(el('p', { cls: 'note', text: procLine(p) })); });
      if (!procs.length)
        box.appendChild(el('p', { cls: 'note', text: 'No process with GPU work or NVTX ranges: no steps to judge.' }));
      if (!list.length) {
        if (procs.some(function (p) { return p.counted; }))
          box.appendChild(el('p', { text: 'gpuprof advise found nothing to point out.' }));
        return;
      }
      var main = list.filter(function (f) { return f.severity !== 'info'; });
      var info = list.filter(function (f) { return f.severity === 'info'; });
      main.forEach(function (f) { box.appendChild(findingCard(f, procs.length > 1)); });
      if (!main.length) box.appendChild(el('p', { text: 'No finding above info.' }));
      if (info.length) {
        var d = el('details', { cls: 'info-findings' }, [el('summary', { text: info.length + ' info finding' +
          (info.length > 1 ? 's' : '') + ' (saving below 1 % of the step time, or not estimated)' })]);
        info.forEach(function (f) { d.appendChild(findingCard(f, procs.length > 1)); });
        box.appendChild(d);
      }
    });
  }

  /* ---------------------------------------------------------------- run */
  function rowsOf(run, key, name) { return run[key] ? run[key][name] : null; }
  function stepsMedian(run, pid) {
    var r = (rowsOf(run, 'steps', 'steps') || []).filter(function (x) { return x.pid === pid; })[0];
    return r && r.counted ? r.median_ns : null;
  }

  function drawRun(run, ri) {
    var sec = el('section', { cls: 'run' }, [el('h2', { text: run.file })]);
    app.appendChild(sec);
    header(sec, run);

    var st = section(sec, 'Steps (docs/STEPS.md)');
    if (run.steps) {
      st.appendChild(table(run.steps.steps, [['pid', 'PID'], ['method', 'Method'], ['steps', 'Steps'],
        ['warmup', 'Warm-up'], ['counted', 'Counted'], ['median_ns', 'Med (ns)'], ['p90_ns', 'P90 (ns)'],
        ['max_ns', 'Max (ns)'], ['min_ns', 'Min (ns)'], ['spread_pct', 'Spread (%)'],
        ['gpu_busy_pct', 'GPU Busy (%)'], ['outliers', 'Outliers'], ['defined_by', 'Steps Are']],
        run.steps_rows.steps));
      st.appendChild(table(run.steps.step_buckets, [['pid', 'PID'], ['bucket', 'Bucket'],
        ['total_ns', 'Total (ns)'], ['step_time_pct', 'Step Time (%)'], ['median_ns', 'Med (ns)'],
        ['p90_ns', 'P90 (ns)'], ['max_ns', 'Max (ns)'], ['meaning', 'Meaning']], run.steps_rows.step_buckets,
        'Where the counted steps\' time went'));
    } else {
      st.appendChild(el('p', { cls: 'note', text: 'No steps: ' + (run.steps_error || 'none found') }));
    }

    run.procs.forEach(function (p) {
      var rs = el('section', { cls: 'rank' }, [el('h3', {
        text: (p.rank >= 0 ? 'rank ' + p.rank + ' \u00b7 ' : '') + 'pid ' + p.pid + (p.name ? ': ' + p.name : '')
      })]);
      var grid = el('div', { cls: 'grid' });
      rs.appendChild(grid);
      sec.appendChild(rs);
      var id = ri + '-' + p.pid;
      if (p.step_series) {
        stepTimeChart(grid, 'steptime-' + id, p.step_series, stepsMedian(run, p.pid));
        bucketChart(grid, 'buckets-' + id, p.step_series);
      }
      p.devices.forEach(function (d) { busyChart(grid, 'busy-' + id + '-' + d.device, d); });
      if (p.memory.length) memoryChart(grid, 'memory-' + id, p.memory);
      /* one sample draws no line (the tracer's own gpuprof.clock_tsc_updates, say): its table row says it */
      p.counters.forEach(function (c, k) { if (c.samples > 1) counterChart(grid, 'counter-' + id + '-' + k, c); });
      if (!grid.childNodes.length) grid.appendChild(el('p', { cls: 'note', text: 'no steps, GPU activity, counters or memory records' }));
    });

    if (run.steps && run.steps.step_outliers && run.steps.step_outliers.length)
      section(sec, 'Outlier steps').appendChild(table(run.steps.step_outliers, autoCols(run.steps.step_outliers),
        run.steps_rows.step_outliers));
    if (run.steps && run.steps.step_phases && run.steps.step_phases.length)
      section(sec, 'GPU work per phase (NVTX ranges inside the steps)').appendChild(
        table(run.steps.step_phases, autoCols(run.steps.step_phases), run.steps_rows.step_phases));
    if (run.steps && run.steps.step_launch && run.steps.step_launch.length)
      section(sec, 'Kernel launch statistics (HTA definitions)').appendChild(
        table(run.steps.step_launch, autoCols(run.steps.step_launch), run.steps_rows.step_launch));

    var S = run.stats || {}, N = run.stats_rows || {};
    var titles = {
      kernels: 'Top kernels (by GPU time)', api: 'Top CUDA API calls (by time)', util: 'GPU utilisation',
      memops: 'Memory operations (time)', memsize: 'Memory operations (size)', nvtx: 'NVTX ranges',
      counters: 'Sampled counters', windows: 'GPU-activity windows', launch_sites: 'Launch sites (call stacks)',
      occupancy: 'Kernels by launch shape (occupancy)', comm: 'Communication per rank',
      comm_steps: 'Communication per step and rank'
    };
    var order = ['kernels', 'api', 'util', 'counters', 'memops', 'memsize', 'nvtx', 'launch_sites', 'comm',
      'comm_steps', 'windows', 'occupancy'];
    Object.keys(S).forEach(function (k) { if (order.indexOf(k) < 0) order.push(k); });
    order.forEach(function (k) {
      if (!(k in S)) return;
      var rows = S[k], cols = autoCols(rows);
      /* the name last in stats' tables: first here, it is what one reads */
      var nameKey = ['name', 'operation', 'range', 'site'].filter(function (c) {
        return rows.length && c in rows[0];
      })[0];
      if (nameKey) cols = [[nameKey, nameKey]].concat(cols.filter(function (c) { return c[0] !== nameKey; }));
      section(sec, (titles[k] || k) + ' (stats --report ' + k + ')').appendChild(table(rows, cols, N[k]));
    });
  }

  /* ---------------------------------------------------------------- page */
  var top = el('header', { cls: 'top' }, [
    el('h1', { text: 'gpuprof report' }),
    el('p', { cls: 'note', text: DATA.generator + (DATA.uplot_version ? ', uPlot ' + DATA.uplot_version :
      ', built without uPlot: tables only') + ' \u00b7 ' + DATA.command })
  ]);
  app.appendChild(top);
  findings(app);
  DATA.runs.forEach(drawRun);
  pending.forEach(function (draw) { draw(); });
  document.body.setAttribute('data-charts', String(nchart));
})();
