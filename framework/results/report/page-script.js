// The report page's own script (browser JavaScript, inlined after Chart.js). It draws one chart
// per plot spec found in #report-data onto the canvas the page already holds for it, then writes
// on <body> how many charts drew pixels: data-charts (expected) and data-rendered (drawn), which
// the browser test reads. Text from results only reaches the page as Chart.js canvas text or
// through textContent, never as HTML.
(() => {
  const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#bcbd22', '#7f7f7f'];
  const body = document.body;
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const plots = data.plots;
  const errors = [];
  body.setAttribute('data-charts', String(plots.length));

  const withAlpha = (hex, alpha) => {
    const n = Number.parseInt(hex.slice(1), 16);
    return `rgba(${n >> 16},${(n >> 8) & 255},${n & 255},${alpha})`;
  };

  const datasets = (plot) => {
    let colour = -1;
    return plot.series.map((s) => {
      if (!s.baseline) colour++;
      const c = PALETTE[colour % PALETTE.length];
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
  };

  // Animation off: the chart draws inside the constructor, so its pixels can be counted at once.
  const draw = (plot) =>
    new Chart(document.getElementById(plot.id), {
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
            title: { display: true, text: plot.yScale === 'logarithmic' ? `${plot.unit} (log scale)` : plot.unit },
            beginAtZero: plot.chart === 'bar',
          },
        },
      },
    });

  const hasPixels = (canvas) => {
    if (!canvas.width || !canvas.height) return false;
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    for (let k = 3; k < pixels.length; k += 4) if (pixels[k] !== 0) return true;
    return false;
  };

  let rendered = 0;
  if (typeof Chart === 'undefined') {
    errors.push('the charting library did not load');
  } else {
    for (const plot of plots) {
      try {
        draw(plot);
        if (hasPixels(document.getElementById(plot.id))) rendered++;
        else errors.push(`${plot.id}: the chart drew nothing`);
      } catch (e) {
        errors.push(`${plot.id}: ${e?.message ? e.message : String(e)}`);
      }
    }
  }
  body.setAttribute('data-rendered', String(rendered));
  if (errors.length) {
    const box = document.getElementById('chart-errors');
    box.hidden = false;
    box.textContent = `Some charts could not be drawn: ${errors.join('; ')}`;
  }
})();

// Filter, search and sort over the tests table: a row shows when its text holds every word typed
// and its verdict is the one chosen; the count says how many show. Sorting reorders the rows by
// name, by verdict (failed first) or by the headline's change against its baseline (worst first,
// unchecked rows last); "run order" puts them back. Writes data-filter="ready" on <body>.
(() => {
  const search = document.getElementById('test-filter');
  const verdict = document.getElementById('verdict-filter');
  const sort = document.getElementById('test-sort');
  const count = document.getElementById('filter-count');
  if (!search || !verdict) return;
  const tbody = document.querySelector('table.tests > tbody');
  const rows = Array.from(document.querySelectorAll('table.tests > tbody > tr'));
  const apply = () => {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const wanted = verdict.value;
    let shown = 0;
    for (const row of rows) {
      const text = row.textContent.toLowerCase();
      const ok = words.every((w) => text.includes(w)) && (!wanted || row.classList.contains(`row-${wanted}`));
      row.hidden = !ok;
      if (ok) shown++;
    }
    count.textContent = `${shown} of ${rows.length} tests`;
  };
  const key = (row, by) => {
    if (by === 'name') return row.getAttribute('data-test');
    // the order of framework/results/test-states.ts END_STATE_ORDER, written on each row
    if (by === 'verdict') return Number(row.getAttribute('data-verdict-rank'));
    const change = row.getAttribute('data-change');
    return change === null ? Number.POSITIVE_INFINITY : Number(change);
  };
  const reorder = () => {
    const by = sort ? sort.value : '';
    const order = rows.map((row, k) => ({ row, k }));
    if (by) {
      order.sort((a, b) => {
        const x = key(a.row, by);
        const y = key(b.row, by);
        // stable: equal keys keep the run order
        return x < y ? -1 : x > y ? 1 : a.k - b.k;
      });
    }
    for (const o of order) tbody.appendChild(o.row);
    document.body.setAttribute('data-sort', by || 'run');
  };
  search.addEventListener('input', apply);
  verdict.addEventListener('change', apply);
  if (sort) sort.addEventListener('change', reorder);
  // ?sort=verdict (or name, change) in the page's address opens it sorted
  const asked = /[?&]sort=(name|verdict|change)\b/.exec(window.location.search);
  if (sort && asked) sort.value = asked[1];
  reorder();
  apply();
  document.body.setAttribute('data-filter', 'ready');
})();
