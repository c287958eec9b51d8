// The report page's own script (plain browser JavaScript, inlined after Chart.js). It draws one
// chart per plot spec found in #report-data onto the canvas the page already holds for it, then
// writes on <body> how many charts drew pixels: data-charts (expected) and data-rendered (drawn),
// which the browser test reads. Text from results only reaches the page as Chart.js canvas text
// or through textContent, never as HTML.
(function () {
  'use strict';
  var PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#7f7f7f'];
  var body = document.body;
  var data = JSON.parse(document.getElementById('report-data').textContent);
  var plots = data.plots;
  var errors = [];
  body.setAttribute('data-charts', String(plots.length));

  function withAlpha(hex, alpha) {
    var n = parseInt(hex.slice(1), 16);
    return 'rgba(' + (n >> 16) + ',' + ((n >> 8) & 255) + ',' + (n & 255) + ',' + alpha + ')';
  }

  function datasets(plot) {
    var colour = -1;
    return plot.series.map(function (s) {
      if (!s.baseline) colour++;
      var c = PALETTE[colour % PALETTE.length];
      return {
        label: s.name,
        data: s.values,
        hidden: s.hidden,
        borderColor: s.baseline ? withAlpha(c, 0.6) : c,
        backgroundColor: s.baseline ? withAlpha(c, 0.25) : withAlpha(c, 0.75),
        borderDash: s.baseline ? [6, 4] : [],
        borderWidth: 2,
        pointRadius: s.emphasis ? 7 : 3,
        spanGaps: true,
      };
    });
  }

  function draw(plot) {
    var canvas = document.getElementById(plot.id);
    // Animation off: the chart draws inside the constructor, so its pixels can be counted at once.
    return new Chart(canvas, {
      type: plot.chart,
      data: { labels: plot.xLabels, datasets: datasets(plot) },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: { legend: { position: 'bottom', labels: { boxWidth: 14 } } },
        scales: {
          x: { title: { display: true, text: plot.axis } },
          y: {
            type: plot.yScale,
            title: { display: true, text: plot.yScale === 'logarithmic' ? plot.unit + ' (log scale)' : plot.unit },
            beginAtZero: plot.chart === 'bar',
          },
        },
      },
    });
  }

  function hasPixels(canvas) {
    if (!canvas.width || !canvas.height) return false;
    var pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    for (var k = 3; k < pixels.length; k += 4) if (pixels[k] !== 0) return true;
    return false;
  }

  var rendered = 0;
  if (typeof Chart === 'undefined') {
    errors.push('the charting library did not load');
  } else {
    plots.forEach(function (plot) {
      try {
        draw(plot);
        if (hasPixels(document.getElementById(plot.id))) rendered++;
        else errors.push(plot.id + ': the chart drew nothing');
      } catch (e) {
        errors.push(plot.id + ': ' + (e && e.message ? e.message : String(e)));
      }
    });
  }
  body.setAttribute('data-rendered', String(rendered));
  if (errors.length) {
    var box = document.getElementById('chart-errors');
    box.hidden = false;
    box.textContent = 'Some charts could not be drawn: ' + errors.join('; ');
  }
})();

// Filter, search and sort over the tests table: a row shows when its text holds every word typed
// and its verdict is the one chosen; the count says how many show. Sorting reorders the rows by
// name, by verdict (failed first) or by the headline's change against its baseline (worst first,
// unchecked rows last); "run order" puts them back. Writes data-filter="ready" on <body>.
(function () {
  'use strict';
  var search = document.getElementById('test-filter');
  var verdict = document.getElementById('verdict-filter');
  var sort = document.getElementById('test-sort');
  var count = document.getElementById('filter-count');
  if (!search || !verdict) return;
  var tbody = document.querySelector('table.tests > tbody');
  var rows = Array.prototype.slice.call(document.querySelectorAll('table.tests > tbody > tr'));
  function apply() {
    var words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var wanted = verdict.value;
    var shown = 0;
    rows.forEach(function (row) {
      var text = row.textContent.toLowerCase();
      var ok = words.every(function (w) { return text.indexOf(w) >= 0; }) && (!wanted || row.classList.contains('row-' + wanted));
      row.hidden = !ok;
      if (ok) shown++;
    });
    count.textContent = shown + ' of ' + rows.length + ' tests';
  }
  function key(row, by) {
    if (by === 'name') return row.getAttribute('data-test');
    // the order of framework/results/test-states.ts END_STATE_ORDER, written on each row
    if (by === 'verdict') return Number(row.getAttribute('data-verdict-rank'));
    var change = row.getAttribute('data-change');
    return change === null ? Infinity : Number(change);
  }
  function reorder() {
    var by = sort ? sort.value : '';
    var order = rows.map(function (row, k) { return { row: row, k: k }; });
    if (by) {
      order.sort(function (a, b) {
        var x = key(a.row, by);
        var y = key(b.row, by);
        // stable: equal keys keep the run order
        return x < y ? -1 : x > y ? 1 : a.k - b.k;
      });
    }
    order.forEach(function (o) { tbody.appendChild(o.row); });
    document.body.setAttribute('data-sort', by || 'run');
  }
  search.addEventListener('input', apply);
  verdict.addEventListener('change', apply);
  if (sort) sort.addEventListener('change', reorder);
  // ?sort=verdict (or name, change) in the page's address opens it sorted
  var asked = /[?&]sort=(name|verdict|change)\b/.exec(window.location.search);
  if (sort && asked) sort.value = asked[1];
  reorder();
  apply();
  document.body.setAttribute('data-filter', 'ready');
})();
