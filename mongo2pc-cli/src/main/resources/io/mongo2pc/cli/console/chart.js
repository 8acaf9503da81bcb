// Line charts of the console, drawn as plain SVG: no library, nothing fetched. Values are put in
// the drawing as SVG attributes and text, never parsed as markup.
var mongo2pcChart = (function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  function svgEl(tag, attrs, text) {
    var e = document.createElementNS(SVG, tag);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  function niceMax(v) {
    if (!(v > 0)) { return 1; }
    var p = Math.pow(10, Math.floor(Math.log10(v)));
    var steps = [1, 2, 2.5, 5, 10];
    for (var i = 0; i < steps.length; i++) { if (steps[i] * p >= v) { return steps[i] * p; } }
    return 10 * p;
  }

  // Draws lines of points[key] against time, the last windowSeconds up to the newest point.
  function drawChart(svg, points, lines, windowSeconds) {
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    var W = 600, H = 180, L = 46, R = 10, T = 10, B = 22;
    var end = points.length ? Date.parse(points[points.length - 1].at) : Date.now();
    var start = end - windowSeconds * 1000;
    var max = 0;
    points.forEach(function (p) { lines.forEach(function (l) { if (p[l.key] !== null && Number(p[l.key]) > max) { max = Number(p[l.key]); } }); });
    var top = niceMax(max);
    function x(t) { return L + (W - L - R) * (t - start) / (end - start || 1); }
    function y(v) { return T + (H - T - B) * (1 - v / top); }
    for (var i = 0; i <= 4; i++) {
      var v = top * i / 4;
      svg.appendChild(svgEl('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), 'class': 'grid' }));
      svg.appendChild(svgEl('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', 'class': 'axis' },
        v >= 100 ? String(Math.round(v)) : String(Math.round(v * 100) / 100)));
    }
    // a tick every minute over 5 minutes, every 10 minutes over an hour, every 4 hours over a day
    var tick = windowSeconds <= 600 ? 60 : windowSeconds <= 3600 ? 600 : 14400;
    for (var m = 0; m * tick < windowSeconds; m++) {
      var t = end - m * tick * 1000;
      var label = m === 0 ? 'now' : tick < 3600 ? '−' + (m * tick / 60) + ' min' : '−' + (m * tick / 3600) + ' h';
      svg.appendChild(svgEl('text', { x: x(t), y: H - 6, 'text-anchor': m === 0 ? 'end' : 'middle', 'class': 'axis' }, label));
    }
    var any = points.some(function (p) { return lines.some(function (l) { return p[l.key] !== null; }); });
    if (!any) {
      svg.appendChild(svgEl('text', { x: W / 2, y: H / 2, 'text-anchor': 'middle', 'class': 'empty' },
        points.length ? 'nothing finished in this window' : 'reading…'));
      return;
    }
    lines.forEach(function (l) {
      var runs = [[]];
      points.forEach(function (p) {
        var t = Date.parse(p.at);
        if (t < start) { return; }
        if (p[l.key] === null) { if (runs[runs.length - 1].length) { runs.push([]); } return; }
        runs[runs.length - 1].push([x(t).toFixed(1), y(Number(p[l.key])).toFixed(1)]);
      });
      runs.forEach(function (run) {
        if (run.length === 1) { // a value between two gaps: a dot, since a line of one point shows nothing
          svg.appendChild(svgEl('circle', { cx: run[0][0], cy: run[0][1], r: 2.5, 'class': 'dot ' + l.cls }));
        } else if (run.length) {
          svg.appendChild(svgEl('polyline', { points: run.map(function (xy) { return xy.join(','); }).join(' '),
            'class': 'line ' + l.cls }));
        }
      });
    });
  }

  return { draw: drawChart };
}());
