// The report page's style sheet and script (report/report_page.hpp). The
// script reads the JSON in #report-data and draws every <svg class="plot">
// (one line per run over time_s; the field in data-field, the y axis from 0
// when data-zero="1"), the per-host bars into #hosts and the per-host busy
// share over time (svg.hostplot: one line per run and host). Strings from the
// data become text nodes only (textContent, setAttribute of numbers and the
// page's own colours), never markup.
#include "report/report_page.hpp"

namespace runtime {

const char* const report_page_style = R"CSS(
body { font: 14px/1.4 sans-serif; margin: 1.5em; color: #222; background: #fff; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; } h3 { font-size: 1em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left; font-weight: normal; }
tr > th:first-child { color: #555; }
table.summary td { text-align: right; font-variant-numeric: tabular-nums; }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 1.2em; }
.swatch { display: inline-block; width: 14px; height: 14px; margin-right: 6px; vertical-align: -2px; }
#charts { display: flex; flex-wrap: wrap; gap: 1em; }
figure.chart { margin: 0; } figcaption { font-weight: bold; margin-bottom: 2px; }
svg text { font: 11px sans-serif; fill: #444; }
svg .grid { stroke: #e4e4e4; } svg .axis { stroke: #888; }
details { margin: 0.4em 0; }
)CSS";

const char* const report_page_script = R"JS(
(function () {
  'use strict';
  var body = document.body;
  window.addEventListener('error', function (e) {
    body.setAttribute('data-script-error', String(e.message));
  });
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var drawn = 0, series = 0, points = 0;

  function el(parent, name, attrs, text) {
    var e = document.createElementNS(parent.namespaceURI, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    parent.appendChild(e);
    return e;
  }
  function fmt(v) {
    var a = Math.abs(v);
    if (a === 0) return '0';
    if (a >= 1e9) return +(v / 1e9).toPrecision(3) + 'G';
    if (a >= 1e6) return +(v / 1e6).toPrecision(3) + 'M';
    if (a >= 1e4) return +(v / 1e3).toPrecision(3) + 'k';
    if (a < 1e-3) return v.toExponential(1);
    return String(+v.toPrecision(4));
  }
  // About n round steps covering [lo, hi].
  function ticks(lo, hi, n) {
    var span = hi - lo, raw = span / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 5, 10].map(function (m) { return m * mag; })
      .filter(function (s) { return span / s <= n; })[0] || 10 * mag;
    var out = [];
    for (var t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) out.push(t);
    return out;
  }
  // At most about 2 x `buckets` points of a long series for the line: the
  // lowest and the highest of each slice of x, in order (a day at a row a
  // second stays a light page with its peaks).
  function thin(pts, buckets) {
    if (pts.length <= 2 * buckets) return pts;
    var out = [], x0 = pts[0][0], span = (pts[pts.length - 1][0] - x0) || 1, i = 0;
    for (var b = 0; b < buckets && i < pts.length; ++b) {
      var end = x0 + span * (b + 1) / buckets, lo = null, hi = null;
      for (; i < pts.length && (pts[i][0] <= end || b === buckets - 1); ++i) {
        if (lo === null || pts[i][1] < lo[1]) lo = pts[i];
        if (hi === null || pts[i][1] > hi[1]) hi = pts[i];
      }
      if (lo === null) continue;
      if (lo === hi) out.push(lo);
      else if (lo[0] <= hi[0]) out.push(lo, hi);
      else out.push(hi, lo);
    }
    return out;
  }
  function note(svg, text) {
    el(svg, 'text', {x: 20, y: 40}, text);
  }

  // The points of one timeline column: [time_s, value] where it has one.
  function columnPoints(tl, values) {
    var pts = [];
    for (var i = 0; i < tl.time_s.length; ++i)
      if (values[i] !== null) pts.push([tl.time_s[i], values[i]]);
    return pts;
  }
  function lineChart(svg) {
    var field = svg.getAttribute('data-field'), zero = svg.getAttribute('data-zero') === '1';
    var lines = data.runs.map(function (run) {
      return {name: run.name, color: run.color, dash: null,
              pts: columnPoints(run.timeline, run.timeline[field])};
    }).filter(function (l) { return l.pts.length > 0; });
    if (lines.length === 0) { note(svg, 'no data in the runs\u2019 timelines'); return; }
    drawLines(svg, lines, zero);
  }
  // One line per run and host (the timeline's host_busy_H), the run's colour,
  // dashed by role.
  function hostLines(svg) {
    var lines = [];
    data.runs.forEach(function (run) {
      run.host_busy.forEach(function (h) {
        var pts = columnPoints(run.timeline, h.busy);
        var dash = h.label.indexOf('embedding') >= 0 ? '6 3'
          : h.label.indexOf('dense') >= 0 ? '2 3' : null;
        if (pts.length) lines.push({name: run.name + ' \u00b7 ' + h.label, color: run.color,
                                    dash: dash, pts: pts});
      });
    });
    if (lines.length === 0) { note(svg, 'no virtual-clock timeline with host_busy columns'); return; }
    drawLines(svg, lines, true);
  }
  // lines: [{name, color, dash (null: solid), pts: [[x, y], ...]}].
  function drawLines(svg, lines, zero) {
    var W = 640, H = 260, L = 62, R = 14, T = 12, B = 40;
    // A loop, not Math.max.apply: a day-long timeline has more points than arguments allowed.
    var x0 = 0, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
    lines.forEach(function (l) {
      l.pts.forEach(function (p) {
        x1 = Math.max(x1, p[0]); y0 = Math.min(y0, p[1]); y1 = Math.max(y1, p[1]);
      });
    });
    if (zero) y0 = Math.min(0, y0);
    if (x1 <= x0) x1 = x0 + 1;
    if (y1 <= y0) { var pad = Math.abs(y1) * 0.05 || 1; y0 -= pad; y1 += pad; }
    else if (!zero) { var m = (y1 - y0) * 0.05; y0 -= m; y1 += m; }
    var sx = function (x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
    var sy = function (y) { return H - B - (y - y0) / (y1 - y0) * (H - T - B); };
    ticks(y0, y1, 5).forEach(function (t) {
      el(svg, 'line', {x1: L, x2: W - R, y1: sy(t), y2: sy(t), 'class': 'grid'});
      el(svg, 'text', {x: L - 6, y: sy(t) + 4, 'text-anchor': 'end'}, fmt(t));
    });
    ticks(x0, x1, 6).forEach(function (t) {
      el(svg, 'line', {x1: sx(t), x2: sx(t), y1: H - B, y2: H - B + 4, 'class': 'axis'});
      el(svg, 'text', {x: sx(t), y: H - B + 16, 'text-anchor': 'middle'}, fmt(t));
    });
    el(svg, 'line', {x1: L, x2: W - R, y1: H - B, y2: H - B, 'class': 'axis'});
    el(svg, 'line', {x1: L, x2: L, y1: T, y2: H - B, 'class': 'axis'});
    var virt = data.runs.filter(function (r) { return r.virtual; }).length;
    el(svg, 'text', {x: (L + W - R) / 2, y: H - 6, 'text-anchor': 'middle'},
       virt === data.runs.length ? 'virtual seconds since training start'
       : virt === 0 ? 'seconds since training start'
       : 'seconds since training start (virtual on the virtual clock)');
    var n = 0;
    lines.forEach(function (l) {
      var g = el(svg, 'g', {'class': 'series', 'data-points': l.pts.length});
      el(g, 'title', {}, l.name);
      var attrs = {fill: 'none', stroke: l.color, 'stroke-width': 2,
        points: thin(l.pts, 1000).map(function (p) { return sx(p[0]) + ',' + sy(p[1]); }).join(' ')};
      if (l.dash) attrs['stroke-dasharray'] = l.dash;
      el(g, 'polyline', attrs);
      if (l.pts.length <= 60)
        l.pts.forEach(function (p) {
          var c = el(g, 'circle', {cx: sx(p[0]), cy: sy(p[1]), r: 2.5, fill: l.color});
          el(c, 'title', {}, l.name + ': ' + fmt(p[1]) + ' at ' + fmt(p[0]) + ' s');
        });
      n += l.pts.length;
    });
    svg.setAttribute('data-series', lines.length);
    svg.setAttribute('data-points', n);
    drawn += 1; series += lines.length; points += n;
  }

  function hostBars(svg) {
    var rows = [];
    data.runs.forEach(function (run) {
      run.hosts.forEach(function (h) { rows.push({run: run, label: h.label, share: h.share}); });
    });
    if (rows.length === 0) { note(svg, 'no virtual-clock run: no per-host busy share'); return; }
    var W = 640, L = 250, R = 60, T = 8, row = 20, H = T + row * rows.length + 26;
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
    svg.setAttribute('height', H);
    var x1 = rows.reduce(function (m, r) { return Math.max(m, r.share); }, 1);
    var sx = function (x) { return L + x / x1 * (W - L - R); };
    ticks(0, x1, 5).forEach(function (t) {
      el(svg, 'line', {x1: sx(t), x2: sx(t), y1: T, y2: H - 22, 'class': 'grid'});
      el(svg, 'text', {x: sx(t), y: H - 8, 'text-anchor': 'middle'}, Math.round(t * 100) + '%');
    });
    var runsWithHosts = 0;
    data.runs.forEach(function (run) { if (run.hosts.length) runsWithHosts += 1; });
    rows.forEach(function (r, i) {
      var y = T + i * row;
      el(svg, 'text', {x: L - 6, y: y + 14, 'text-anchor': 'end'}, r.run.name + ' \u00b7 ' + r.label);
      var b = el(svg, 'rect', {x: L, y: y + 3, width: Math.max(0, sx(r.share) - L), height: row - 6,
        fill: r.run.color, 'class': 'bar'});
      el(b, 'title', {}, r.run.name + ', ' + r.label + ': ' + (r.share * 100).toFixed(1) + '%');
      el(svg, 'text', {x: sx(r.share) + 4, y: y + 14}, (r.share * 100).toFixed(1) + '%');
    });
    svg.setAttribute('data-series', runsWithHosts);
    svg.setAttribute('data-points', rows.length);
    drawn += 1; series += runsWithHosts; points += rows.length;
  }

  Array.prototype.forEach.call(document.querySelectorAll('svg.plot'), lineChart);
  Array.prototype.forEach.call(document.querySelectorAll('#hosts svg.bars'), hostBars);
  Array.prototype.forEach.call(document.querySelectorAll('#hosts svg.hostplot'), hostLines);
  body.setAttribute('data-charts-drawn', drawn);
  body.setAttribute('data-series', series);
  body.setAttribute('data-points', points);
})();
)JS";

} // namespace runtime
