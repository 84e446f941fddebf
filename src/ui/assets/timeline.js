// The web view's Timeline tab: a cluster's pods and nodes over time, as SVG plots.
//
// Three sources, one set of components (a step plot with markers, tables):
//   * the cluster of `berth up` since it started (/ui/api/timeline, polled while the tab is
//     shown; the token comes from app.js);
//   * a report opened with the file picker and read in the browser (nothing is uploaded): the
//     JSON of `berth scenario run -o json`, of `berth compare -o json`, or a saved
//     /ui/api/timeline answer;
//   * a report embedded in the page (`berth scenario run -o html` and `berth compare -o html`:
//     <script id="berth-timeline">).
// A comparison is drawn by compare.js with this file's builders (window.BerthTimeline).
//
// Everything is built with DOM calls (no HTML strings): names from reports are text.
'use strict';
(function () {
  const POLL_MS = 5000;    // the live timeline's refresh while the tab is shown
  const EVENT_PAGE = 50;   // rows per page of the events table
  const SVGNS = 'http://www.w3.org/2000/svg';
  const W = 900, H = 240, PAD = {l: 48, r: 16, t: 14, b: 30};
  const COLORS = {pending: '#b7791f', scheduled: '#2f6fde', running: '#2c9a48', terminating: '#8e44ad', finished: '#8a93a3',
                  ready: '#2c9a48', notReady: '#c23b31'};
  const PALETTE = ['#2f6fde', '#e0603f', '#2c9a48', '#8e44ad', '#b7791f', '#16a2b8'];

  const view = {
    live: null,        // {get(path)} when served by berth up
    model: null,       // what is shown
    fromFile: false,   // a report opened from a file (the live one is not polled then)
    eventPage: 0,
    timer: null,
    polling: false,
    shown: false,
  };

  // ---- DOM helpers ----------------------------------------------------------------------

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    return fill(el, attrs, children);
  }
  function s(tag, attrs, ...children) {
    const el = document.createElementNS(SVGNS, tag);
    return fill(el, attrs, children);
  }
  function fill(el, attrs, children) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.setAttribute('class', v);
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat(Infinity)) {
      if (c === undefined || c === null || c === false) continue;
      el.append(c instanceof window.Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }
  const $ = (id) => document.getElementById(id);
  // A legend's colour key (a style property, not a style attribute: the page's CSP allows no
  // inline styles).
  function swatch(color) {
    const el = h('i', {});
    el.style.background = color;
    return el;
  }

  // Seconds as "1h02m", "4m30s", "12s", "1.5s".
  function dur(t) {
    if (!(t >= 0)) return '0s';
    if (t < 10 && t !== Math.floor(t)) return t.toFixed(1) + 's';
    t = Math.round(t);
    const hh = Math.floor(t / 3600), mm = Math.floor((t % 3600) / 60), ss = t % 60;
    if (hh) return `${hh}h${String(mm).padStart(2, '0')}m`;
    if (mm) return ss ? `${mm}m${String(ss).padStart(2, '0')}s` : `${mm}m`;
    return `${ss}s`;
  }
  // About `n` round tick values from 0 to max.
  function ticks(max, n, time) {
    if (!(max > 0)) return [0];
    const steps = time ? [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 21600, 43200, 86400]
                       : [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 50000, 100000];
    let step = steps.find((x) => max / x <= n) || Math.pow(10, Math.ceil(Math.log10(max / n)));
    const out = [];
    for (let v = 0; v <= max + 1e-9; v += step) out.push(v);
    return out;
  }

  // ---- the plot -------------------------------------------------------------------------

  // A step plot: each series holds its value until its next point. Markers are vertical lines
  // (steps, checkpoints) or ticks at the bottom (evictions, preemptions).
  function stepPlot(id, title, series, tEnd, markers) {
    let tMax = tEnd || 0, vMax = 1;
    for (const sr of series) for (const [t, v] of sr.values) { tMax = Math.max(tMax, t); vMax = Math.max(vMax, v); }
    if (!(tMax > 0)) tMax = 1;
    const yt = ticks(vMax, 5, false);
    vMax = Math.max(vMax, yt[yt.length - 1]);
    const x = (t) => PAD.l + (W - PAD.l - PAD.r) * (t / tMax);
    const y = (v) => H - PAD.b - (H - PAD.t - PAD.b) * (v / vMax);
    const g = s('svg', {id, class: 'plot', viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': title,
                        'data-series': series.length,
                        'data-points': series.length ? series[0].values.length : 0});
    for (const v of yt) {
      g.append(s('line', {class: 'grid', x1: PAD.l, x2: W - PAD.r, y1: y(v), y2: y(v)}),
               s('text', {class: 'axis', x: PAD.l - 6, y: y(v) + 4, 'text-anchor': 'end'}, String(v)));
    }
    for (const t of ticks(tMax, 8, true)) {
      const edge = x(t) > W - PAD.r - 20;  // the last label ends at the plot's edge
      g.append(s('text', {class: 'axis', x: x(t), y: H - PAD.b + 16, 'text-anchor': edge ? 'end' : 'middle'}, dur(t)));
    }
    g.append(s('line', {class: 'axis-line', x1: PAD.l, x2: W - PAD.r, y1: y(0), y2: y(0)}));
    for (const m of markers || []) {
      if (m.kind === 'checkpoint' || m.kind === 'step' || m.kind === 'timeout') {
        const line = s('line', {class: 'marker ' + m.kind, x1: x(m.t), x2: x(m.t), y1: PAD.t, y2: y(0)},
            s('title', {}, `${dur(m.t)} ${m.label}${m.detail ? ': ' + m.detail : ''}`));
        g.append(line);
        if (m.kind === 'checkpoint') {
          // Labels near the right edge end at their line instead of running off the plot.
          const right = x(m.t) > W - PAD.r - 90;
          g.append(s('text', {class: 'marker-label checkpoint-label', x: x(m.t) + (right ? -3 : 3), y: PAD.t + 10,
                              'text-anchor': right ? 'end' : 'start'}, m.label));
        }
      } else {
        g.append(s('line', {class: 'marker ' + m.kind, x1: x(m.t), x2: x(m.t), y1: y(0), y2: y(0) - 8},
            s('title', {}, `${dur(m.t)} ${m.label}`)));
      }
    }
    for (const sr of series) {
      if (!sr.values.length) continue;
      let d = '';
      sr.values.forEach(([t, v], i) => {
        d += i === 0 ? `M${x(t).toFixed(1)},${y(v).toFixed(1)}` : `H${x(t).toFixed(1)}V${y(v).toFixed(1)}`;
      });
      d += `H${x(tMax).toFixed(1)}`;
      g.append(s('path', {class: 'series' + (sr.under ? ' under' : '') + (sr.dashed ? ' dashed' : ''), d, stroke: sr.color, 'data-name': sr.name},
          s('title', {}, sr.name)));
    }
    const last = (sr) => (sr.values.length ? sr.values[sr.values.length - 1][1] : 0);
    return h('figure', {class: 'figure'},
        h('figcaption', {}, title),
        g,
        h('div', {class: 'legend'}, series.map((sr) => h('span', {class: 'key'},
            swatch(sr.color), `${sr.name} (now ${last(sr)})`))));
  }

  // ---- reports into one model ------------------------------------------------------------

  function fromSeries(series) {
    const pts = (series && series.points) || [];
    const col = (k) => pts.map((p) => [p.t, p[k] || 0]);
    return {
      pods: [{name: 'Pending', color: COLORS.pending, values: col('pending')},
             {name: 'Scheduled (bound)', color: COLORS.scheduled, under: true, values: pts.map((p) => [p.t, (p.scheduled || 0) + (p.running || 0)])},
             {name: 'Running', color: COLORS.running, values: col('running')},
             {name: 'Terminating', color: COLORS.terminating, values: col('terminating')},
             {name: 'Finished', color: COLORS.finished, values: col('finished')}],
      nodes: [{name: 'Ready', color: COLORS.ready, values: col('nodesReady')},
              {name: 'Not ready', color: COLORS.notReady, values: col('nodesNotReady')}],
      tEnd: series && series.now,
    };
  }

  function eventMarker(e) {
    const kind = {PodEvicted: 'eviction', Preempted: 'preemption', NodeNotReady: 'node-down', NodeReady: 'node-up'}[e.kind];
    return kind ? {t: e.t, kind, label: `${e.kind} ${e.object}`} : null;
  }

  function fromLive(j, title) {
    const m = fromSeries(j);
    const events = (j.events || []).map((e) => ({t: e.t, kind: e.kind, object: e.object, detail: e.detail}));
    return Object.assign(m, {
      kind: 'live', title,
      facts: [['Since', j.startedAt ? new Date(j.startedAt).toLocaleString() : '—'],
              ['Resolution', dur(j.bucketSeconds) + ` (${j.maxBuckets} points at most)`],
              ['Evictions', (j.totals || {}).evictions || 0], ['Preemptions', (j.totals || {}).preemptions || 0],
              ['Nodes turned not ready', (j.totals || {}).nodeNotReady || 0]],
      markers: events.map(eventMarker).filter(Boolean),
      events, eventsDropped: j.eventsDropped || 0,
    });
  }

  function fromScenario(r) {
    const m = fromSeries(r.series);
    const entries = (r.timeline || []).map((e) => ({t: e.seconds, kind: e.kind, object: e.object, detail: e.detail}));
    const markers = [];
    for (const e of entries) {
      if (e.kind === 'Checkpoint') markers.push({t: e.t, kind: 'checkpoint', label: e.detail.replace(/^checkpoint /, ''), detail: e.object});
      else if (e.kind === 'Step' || e.kind === 'Wait') markers.push({t: e.t, kind: 'step', label: e.object, detail: e.detail});
      else if (e.kind === 'WaitTimedOut') markers.push({t: e.t, kind: 'timeout', label: e.object, detail: e.detail});
      else { const em = eventMarker(e); if (em) markers.push(em); }
    }
    const end = r.end || {};
    if (!(m.tEnd > 0)) m.tEnd = end.seconds;
    return Object.assign(m, {
      kind: 'scenario', title: `Scenario ${r.scenario} (seed ${r.seed})`,
      facts: [['Simulated', r.simulated], ['Steps', entries.filter((e) => ['Step', 'Wait', 'Checkpoint'].includes(e.kind)).length],
              ['Evictions', end.evictions || 0], ['Preemptions', end.preemptions || 0]],
      error: r.error, noSeries: !r.series,
      markers, events: entries, eventsDropped: 0,
      checkpoints: (r.checkpoints || []).concat(r.end ? [r.end] : []),
    });
  }

  // Which report a parsed JSON document is; throws when none.
  function modelOf(doc, name) {
    if (doc && Array.isArray(doc.configurations)) return window.BerthCompare.model(doc);
    if (doc && Array.isArray(doc.timeline) && doc.scenario !== undefined) return fromScenario(doc);
    if (doc && Array.isArray(doc.points)) return fromLive(doc, 'Timeline ' + name);
    throw new Error('not a report of berth scenario run -o json, berth compare -o json or /ui/api/timeline');
  }

  // ---- rendering -------------------------------------------------------------------------

  function facts(list) {
    return h('div', {class: 'facts'}, list.map(([k, v]) => h('div', {}, h('span', {}, k), h('b', {}, String(v)))));
  }

  function eventsTable(m) {
    const rows = m.events;
    if (!rows.length) return h('p', {class: 'muted', id: 'timeline-events'}, 'No events yet.');
    const page = rows.slice(view.eventPage * EVENT_PAGE, (view.eventPage + 1) * EVENT_PAGE);
    const pages = Math.ceil(rows.length / EVENT_PAGE);
    const go = (p) => { view.eventPage = p; render(); };
    return [
      h('table', {id: 'timeline-events', 'data-rows': rows.length},
          h('thead', {}, h('tr', {}, h('th', {class: 'num'}, 'At'), h('th', {}, 'Kind'), h('th', {}, 'Object'), h('th', {}, 'Detail'))),
          h('tbody', {}, page.map((e) => h('tr', {class: 'event-' + e.kind},
              h('td', {class: 'num'}, dur(e.t)), h('td', {}, e.kind), h('td', {}, e.object), h('td', {class: 'detail'}, e.detail))))),
      pages > 1 ? h('div', {class: 'pager'},
          h('button', {disabled: view.eventPage === 0, onclick: () => go(view.eventPage - 1)}, '‹'),
          `${view.eventPage + 1} / ${pages}`,
          h('button', {disabled: view.eventPage >= pages - 1, onclick: () => go(view.eventPage + 1)}, '›')) : null,
      m.eventsDropped ? h('p', {class: 'muted'}, `${m.eventsDropped} older events are no longer kept.`) : null,
    ];
  }

  function checkpointsTable(list) {
    if (!list || !list.length) return null;
    const phase = (c, p) => ((c.pods || {}).byPhase || {})[p] || 0;
    return [h('h3', {}, 'Checkpoints'),
      h('table', {id: 'timeline-checkpoints'},
          h('thead', {}, h('tr', {}, ['Checkpoint', 'At', 'Pods', 'Running', 'Unbound', 'Nodes ready', 'Not ready', 'Preemptions', 'Evictions']
              .map((t, i) => h('th', {class: i ? 'num' : null}, t)))),
          h('tbody', {}, list.map((c) => h('tr', {'data-checkpoint': c.name},
              h('td', {}, c.name), h('td', {class: 'num'}, c.at),
              h('td', {class: 'num'}, (c.pods || {}).total), h('td', {class: 'num'}, phase(c, 'Running')),
              h('td', {class: 'num'}, (c.pendingPods || []).length),
              h('td', {class: 'num'}, (c.nodes || {}).ready), h('td', {class: 'num'}, (c.nodes || {}).notReady),
              h('td', {class: 'num'}, c.preemptions), h('td', {class: 'num'}, c.evictions)))))];
  }

  function render() {
    const m = view.model;
    const out = [];
    if (!m) {
      out.push(h('p', {class: 'muted'}, view.live ? 'Loading the timeline…' : 'Open a report to see its timeline.'));
    } else {
      out.push(h('h2', {id: 'timeline-title'}, m.title), facts(m.facts));
      if (m.error) out.push(h('div', {class: 'message'}, 'The run stopped: ' + m.error));
      if (m.kind === 'compare') {
        out.push(window.BerthCompare.view(m));
      } else {
        if (m.noSeries) out.push(h('p', {class: 'muted'}, 'This report has no series of pods and nodes (written by an older berth): steps and events only.'));
        out.push(stepPlot('timeline-pods', 'Pods', m.pods, m.tEnd, m.markers));
        out.push(stepPlot('timeline-nodes', 'Nodes', m.nodes, m.tEnd, m.markers.filter((k) => k.kind !== 'step')));
        out.push(checkpointsTable(m.checkpoints));
        out.push(h('h3', {}, m.kind === 'scenario' ? 'Timeline' : 'Events'), eventsTable(m));
      }
    }
    $('timeline-content').replaceChildren(...out.flat(Infinity).filter(Boolean));
    const back = $('timeline-live');
    if (back) back.hidden = !(view.live && view.fromFile);
  }

  // ---- sources ---------------------------------------------------------------------------

  async function poll() {
    clearTimeout(view.timer);
    view.timer = null;
    // One request at a time: a tab switched back and forth must not start a second chain.
    if (!view.live || view.fromFile || !view.shown || view.polling) return;
    view.polling = true;
    try {
      const j = await view.live.get('/ui/api/timeline');
      if (!view.fromFile) {
        view.model = fromLive(j, 'This cluster since it started');
        render();
      }
    } catch (e) {
      if (!view.fromFile) {
        view.model = null;
        $('timeline-content').replaceChildren(h('p', {class: 'message'}, 'Timeline: ' + e.message));
      }
    }
    view.polling = false;
    if (view.shown && !view.fromFile) view.timer = setTimeout(poll, POLL_MS);
  }

  function openFile(file) {
    const reader = new FileReader();
    reader.onload = () => {
      try {
        view.model = modelOf(JSON.parse(reader.result), file.name);
        view.fromFile = true;
        view.eventPage = 0;
        render();
      } catch (e) {
        $('timeline-content').replaceChildren(h('p', {class: 'message', id: 'timeline-error'}, `${file.name}: ${e.message}`));
      }
    };
    reader.readAsText(file);
  }

  function showTab(tab) {
    const timeline = tab === 'timeline';
    view.shown = timeline;
    $('cluster-view').hidden = timeline;
    $('timeline-view').hidden = !timeline;
    for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b.dataset.tab === tab);
    if (timeline) {
      render();
      poll();
    }
  }

  // opts: {live: {get(path)} or null, embedded: a report or null, tab: 'cluster' | 'timeline'}.
  function init(opts) {
    view.live = opts.live || null;
    for (const b of document.querySelectorAll('#tabs button')) b.addEventListener('click', () => showTab(b.dataset.tab));
    $('timeline-file').addEventListener('change', (e) => { if (e.target.files[0]) openFile(e.target.files[0]); e.target.value = ''; });
    $('timeline-live').addEventListener('click', () => { view.fromFile = false; view.model = null; view.eventPage = 0; render(); poll(); });
    if (opts.embedded) {
      // A report page: the timeline is all there is.
      view.model = modelOf(opts.embedded, '');
      view.fromFile = true;
      $('tabs').hidden = true;
      $('connection').textContent = view.model.kind + ' report';
      document.title = 'Berth — ' + view.model.title;
      showTab('timeline');
      return;
    }
    showTab(opts.tab === 'timeline' ? 'timeline' : 'cluster');
  }

  // compare.js draws a comparison with the same builders, sizes and colours.
  window.BerthTimeline = {init, modelOf, h, s, swatch, dur, ticks, stepPlot,
                          size: {W, H, PAD}, PALETTE};
})();
