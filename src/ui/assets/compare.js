// A comparison of scheduler configurations (the JSON document of `berth compare -o json`),
// drawn with the Timeline's builders, sizes and colours (timeline.js, window.BerthTimeline):
//   * the cluster-level outcomes, one column per configuration;
//   * for a replay, over the recorded time, one line per configuration in each of three plots:
//     pods pending, nodes in use, and preemption victims so far;
//   * pods per node and per zone, one bar (or, for many nodes, one line) per configuration;
//   * where the differing pods went: a dot per pod and configuration, at its node under the
//     first configuration and its node under that one;
//   * the differing pods, page by page: each configuration's node, how it scored the candidate
//     nodes (plugin by plugin) or why it rejected them, and the plugins that tipped it.
// The same view serves `berth compare -o html` (the report embedded in the page) and a report
// opened in the web view's Timeline tab. Names from the report are text, never markup.
'use strict';
(function () {
  const T = window.BerthTimeline;
  const {h, s, swatch, dur, ticks, stepPlot, PALETTE} = T;
  const {W, H, PAD} = T.size;
  const MAX_BARS = 60;      // nodes drawn as bars; more are drawn as one sorted line each
  const DIFF_PAGE = 50;     // rows per page of the differences table
  const MAX_DOTS = 5000;    // differing pods drawn in the "where" plot
  const colorOf = (k) => PALETTE[k % PALETTE.length];

  // A replay's series of each configuration that has it: [[ms, value], ...] → seconds. Lines
  // after the first are dashed, so that where configurations agree both colours show.
  function series(configs, key) {
    return configs.map((c, k) => ({c, k})).filter(({c}) => c[key]).map(({c, k}) => ({
      name: c.name, color: colorOf(k), dashed: k > 0, values: c[key].map(([ms, v]) => [ms / 1000, v])}));
  }

  function model(r) {
    const configs = r.configurations || [];
    const facts = [['Pods', r.pods], ['Placed differently', r.differing]];
    if (r.events !== undefined) facts.push(['Recorded events', r.events]);
    if (r.shape) facts.push(['Shape', `${r.shape.requests} (${r.shape.source})`]);
    return {
      kind: 'compare', title: `Comparison of ${configs.length} configurations`,
      facts, configs, shape: r.shape,
      pending: series(configs, 'pendingOverTime'),
      nodesInUse: series(configs, 'nodesInUseOverTime'),
      preemptions: series(configs, 'preemptionsOverTime'),
      differences: r.differences || [],
    };
  }

  function legend(configs) {
    return h('div', {class: 'legend'}, configs.map((c, k) => h('span', {class: 'key'}, swatch(colorOf(k)), c.name)));
  }

  function figure(caption, plot, key) {
    return h('figure', {class: 'figure'}, h('figcaption', {}, caption), plot, key);
  }

  function outcomes(m) {
    const time = (c) => `${(c.seconds || 0).toFixed(3)} s` + (c.cpuSeconds !== undefined ? ` (CPU ${c.cpuSeconds.toFixed(3)} s)` : '');
    const rows = [
      ['Scheduled', (c) => `${c.scheduled}/${c.pods}`], ['Pending', (c) => c.pending],
      ['Preemptions (victims)', (c) => `${c.preemptors} (${c.victims})`],
      ['Nodes used', (c) => `${c.nodesUsed}/${c.nodes}`],
      ['Pods per node max/min', (c) => c.nodeSpread ? `${c.nodeSpread.max}/${c.nodeSpread.min}` : '—'],
    ];
    if (m.configs.some((c) => c.zoneSpread)) rows.push(['Pods per zone max/min', (c) => c.zoneSpread ? `${c.zoneSpread.max}/${c.zoneSpread.min}` : '—']);
    if (m.shape) rows.push([`More ${m.shape.requests} fit`, (c) => c.shapeFit === undefined ? '—' : c.shapeFit + (c.shapeFitCapped ? '+' : '')]);
    if (m.pending.length) rows.push(['Mean / max pending', (c) => c.meanPendingSeconds === undefined ? '—' : `${dur(c.meanPendingSeconds)} / ${dur(c.maxPendingSeconds)}`]);
    rows.push(['Scheduling time', time]);
    return h('table', {id: 'compare-table'},
        h('thead', {}, h('tr', {}, h('th', {}, ''), m.configs.map((c, k) => h('th', {class: 'num'}, swatch(colorOf(k)), ' ', c.name)))),
        h('tbody', {}, rows.map(([label, f]) => h('tr', {}, h('td', {}, label), m.configs.map((c) => h('td', {class: 'num'}, f(c)))))));
  }

  // The y axis of a count plot: grid lines and labels from 0 to max; returns the scale.
  function countAxis(g, max) {
    const yt = ticks(max, 4, false);
    const top = Math.max(max, yt[yt.length - 1]);
    const y = (v) => H - PAD.b - (H - PAD.t - PAD.b) * (v / top);
    for (const v of yt) {
      g.append(s('line', {class: 'grid', x1: PAD.l, x2: W - PAD.r, y1: y(v), y2: y(v)}),
               s('text', {class: 'axis', x: PAD.l - 6, y: y(v) + 4, 'text-anchor': 'end'}, String(v)));
    }
    g.append(s('line', {class: 'axis-line', x1: PAD.l, x2: W - PAD.r, y1: y(0), y2: y(0)}));
    return y;
  }

  // One group of bars per label, one bar per configuration; labels under the groups when they fit.
  function groupedBars(id, caption, labels, configs, valueOf) {
    let max = 1;
    for (const c of configs) for (const l of labels) max = Math.max(max, valueOf(c, l));
    const g = s('svg', {id, class: 'plot', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': caption,
                        'data-groups': labels.length});
    const y = countAxis(g, max);
    const band = (W - PAD.l - PAD.r) / Math.max(1, labels.length), bw = Math.max(1, (band * 0.8) / configs.length);
    labels.forEach((l, i) => {
      configs.forEach((c, k) => {
        const v = valueOf(c, l);
        g.append(s('rect', {class: 'column', x: PAD.l + i * band + band * 0.1 + k * bw, y: y(v), width: bw,
                            height: y(0) - y(v), fill: colorOf(k)}, s('title', {}, `${l}: ${v} pods (${c.name})`)));
      });
      if (labels.length <= 20) {
        g.append(s('text', {class: 'axis', x: PAD.l + (i + 0.5) * band, y: H - PAD.b + 16, 'text-anchor': 'middle'}, l));
      }
    });
    return figure(caption, g, legend(configs));
  }

  // Many nodes: each configuration's pods per node, nodes sorted busiest first, as one line.
  function sortedLines(id, caption, configs) {
    const counts = configs.map((c) => Object.values(c.perNode || {}).sort((a, b) => b - a));
    const n = Math.max(1, ...counts.map((v) => v.length));
    const max = Math.max(1, ...counts.map((v) => v[0] || 0));
    const g = s('svg', {id, class: 'plot', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': caption,
                        'data-groups': n});
    const y = countAxis(g, max);
    const x = (i) => PAD.l + (W - PAD.l - PAD.r) * (n > 1 ? i / (n - 1) : 0);
    for (const i of [0, n - 1]) {
      g.append(s('text', {class: 'axis', x: x(i), y: H - PAD.b + 16, 'text-anchor': i ? 'end' : 'start'}, `node ${i + 1}`));
    }
    counts.forEach((v, k) => {
      const d = v.map((c, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(c).toFixed(1)}`).join('');
      g.append(s('path', {class: 'series', d, stroke: colorOf(k), 'data-name': configs[k].name}, s('title', {}, configs[k].name)));
    });
    return figure(caption, g, legend(configs));
  }

  function perNode(configs) {
    const nodes = [...new Set(configs.flatMap((c) => Object.keys(c.perNode || {})))].sort();
    if (!nodes.length) return null;
    if (nodes.length > MAX_BARS) {
      return sortedLines('compare-per-node', `Pods per node (${nodes.length} nodes, sorted by pods, busiest first)`, configs);
    }
    return groupedBars('compare-per-node', 'Pods per node', nodes, configs, (c, n) => (c.perNode || {})[n] || 0);
  }

  function perZone(configs) {
    const zones = [...new Set(configs.flatMap((c) => Object.keys(c.perZone || {})))].sort();
    if (!zones.length) return h('p', {class: 'muted'}, 'No node has a zone label (topology.kubernetes.io/zone).');
    const label = (z) => z || '(no zone)';
    return groupedBars('compare-per-zone', 'Pods per zone', zones.map(label), configs,
                       (c, l) => (c.perZone || {})[l === '(no zone)' ? '' : l] || 0);
  }

  // A dot per differing pod and other configuration: x is its node under the first
  // configuration, y its node under the other; "not placed" is the last column and row.
  function wherePlot(m) {
    const nodes = [...new Set(m.configs.flatMap((c) => Object.keys(c.perNode || {})))].sort();
    const index = new Map(nodes.map((n, i) => [n, i]));
    const cells = nodes.length + 1, side = 420, L = 90, B = 70;
    const cell = side / cells;
    const pos = (c) => (c && c.node && index.has(c.node) ? index.get(c.node) : nodes.length);
    const shown = m.differences.slice(0, MAX_DOTS);
    const g = s('svg', {id: 'compare-where', class: 'plot square', viewBox: `0 0 ${side + L + 10} ${side + B + 10}`, role: 'img',
                        'aria-label': 'Where the differing pods went', 'data-pods': shown.length});
    g.append(s('rect', {class: 'frame', x: L, y: 10, width: side, height: side}));
    const labelled = cells <= 30;
    const names = labelled ? nodes.concat(['not placed']) : [nodes[0], 'not placed'];
    names.forEach((n) => {
      const i = n === 'not placed' ? nodes.length : index.get(n);
      const cx = L + cell * (i + 0.5), cy = 10 + side - cell * (i + 0.5);
      g.append(s('text', {class: 'axis', x: cx, y: side + 16, 'text-anchor': 'end', transform: `rotate(-45 ${cx} ${side + 16})`}, n),
               s('text', {class: 'axis', x: L - 4, y: cy + 4, 'text-anchor': 'end'}, n));
    });
    g.append(s('text', {class: 'axis', x: L + side, y: side + B, 'text-anchor': 'end'}, `node under ${m.configs[0].name}`));
    for (const d of shown) {
      const per = d.configurations || [];
      const x = L + cell * (pos(per[0]) + 0.5);
      for (let k = 1; k < per.length; ++k) {
        // Several pods in one cell: a small offset per configuration keeps their colours apart.
        const y = 10 + side - cell * (pos(per[k]) + 0.5) + (k - 1) * 2;
        g.append(s('circle', {class: 'diff', cx: x.toFixed(1), cy: y.toFixed(1), r: 4, fill: colorOf(k)},
            s('title', {}, `${d.pod}: ${per[0].node || per[0].result} / ${per[k].node || per[k].result} (${m.configs[k].name})`)));
      }
    }
    const more = m.differences.length - shown.length;
    return figure(`Where the differing pods went (the first configuration across, each other one up)${more > 0 ? `: first ${shown.length}, ${more} more` : ''}`,
                  g, h('div', {class: 'legend'}, m.configs.slice(1).map((c, i) => h('span', {class: 'key'}, swatch(colorOf(i + 1)), c.name))));
  }

  // One configuration's decision for a differing pod: where, how it saw the candidates, what
  // tipped it.
  function decisionCell(d, c) {
    const out = [h('b', {class: 'outcome'}, c.node || c.result)];
    if (c.victims && c.victims.length) out.push(h('div', {class: 'muted'}, `evicted ${c.victims.join(', ')}`));
    if (!c.explained) {
      out.push(h('div', {class: 'muted'}, 'not explained (see --explain)'));
      return h('td', {class: 'decision'}, out);
    }
    const views = (d.candidates || []).filter((n) => (c.nodes || {})[n]).map((n) => {
      const v = c.nodes[n];
      const body = v.state === 'scored'
        ? [h('span', {class: 'num'}, String(v.total)), ' ', h('small', {}, Object.entries(v.plugins || {}).map(([p, pts]) => `${p}=${pts}`).join(' '))]
        : [v.reason || v.state];
      return h('li', {class: n === c.node ? 'chosen' : null, 'data-node': n}, h('span', {class: 'node'}, n), ': ', body);
    });
    out.push(h('ul', {class: 'views'}, views));
    if (c.tippedBy && c.tippedBy.length) {
      out.push(h('div', {class: 'tipped'}, 'tipped by ', c.tippedBy.map((t, i) => [i ? ', ' : '', h('b', {}, t.plugin), ` +${t.points}`])));
    }
    return h('td', {class: 'decision'}, out);
  }

  function differences(m) {
    const rows = m.differences;
    if (!rows.length) return h('p', {class: 'muted', id: 'compare-differences'}, 'Every configuration placed every pod on the same node.');
    const box = h('div', {});
    const pages = Math.ceil(rows.length / DIFF_PAGE);
    const draw = (page) => {
      box.replaceChildren(
          h('table', {id: 'compare-differences', 'data-rows': rows.length},
              h('thead', {}, h('tr', {}, h('th', {}, 'Pod'), m.configs.map((c, k) => h('th', {}, swatch(colorOf(k)), ' ', c.name)))),
              h('tbody', {}, rows.slice(page * DIFF_PAGE, (page + 1) * DIFF_PAGE).map((d) => h('tr', {'data-pod': d.pod},
                  h('td', {}, d.pod), (d.configurations || []).map((c) => decisionCell(d, c)))))),
          pages > 1 ? h('div', {class: 'pager'},
              h('button', {disabled: page === 0, onclick: () => draw(page - 1)}, '‹'),
              `${page + 1} / ${pages}`,
              h('button', {disabled: page >= pages - 1, onclick: () => draw(page + 1)}, '›')) : '');
    };
    draw(0);
    return [h('h3', {}, `Placed differently (${rows.length})`), box];
  }

  function view(m) {
    if (!m.configs.length) return h('p', {class: 'muted'}, 'The report has no configurations.');
    return [
      outcomes(m),
      m.pending.length ? stepPlot('compare-pending', 'Pods pending over time (replay, recorded clock)', m.pending, 0, []) : null,
      m.nodesInUse.length ? stepPlot('compare-nodes-in-use', 'Nodes in use over time (nodes running a pod other than a DaemonSet\'s or a static pod)', m.nodesInUse, 0, []) : null,
      m.preemptions.length ? stepPlot('compare-preemptions', 'Preemption victims so far (replay, recorded clock)', m.preemptions, 0, []) : null,
      perNode(m.configs),
      perZone(m.configs),
      m.differences.length && m.configs.length > 1 ? wherePlot(m) : null,
      differences(m),
    ];
  }

  window.BerthCompare = {model, view};
})();
