// The web view of Berth: nodes, pods and scheduling decisions.
//
// Live (served by `berth up` under /ui/): lists nodes and pods from the API server, then
// follows its watches (newline-delimited JSON events over fetch streams), and asks
// /ui/api/decision and /ui/api/explain about the selected pod. The bearer token comes in the
// URL fragment (#token=...), is kept in sessionStorage and removed from the address bar.
//
// Offline (a page written by `berth simulate --output html`): the same views over the data
// embedded in the page's <script id="berth-report" type="application/json">.
//
// Everything is built with DOM calls (no HTML strings), so names from the cluster are text.
'use strict';
(function () {
  const PAGE = 50;          // rows per page of the node and pod tables
  const MATRIX_PAGE = 25;   // rows per page of the score matrix and the rejections
  const RENDER_DELAY = 150; // ms: bursts of watch events render once
  // A selected pending pod is explained again when the cluster changes: once the changes have
  // paused this long, and at least this often while they go on.
  const CLUSTER_QUIET = 2000;
  const CLUSTER_MAX_WAIT = 10000;

  const state = {
    nodes: new Map(),  // name -> Node
    pods: new Map(),   // namespace/name -> Pod
    metric: 'cpu',
    nodeFilter: '', nodePage: 0,
    podFilter: '', podPhase: 'all', podPage: 0, podNode: null,
    selected: null,    // namespace/name
    decision: null, decisionError: null,
    explanation: null, explanationError: null, explaining: false, explainedAt: 0,
    matrixPage: 0, rejectPage: 0, explainPage: 0,
    live: {nodes: false, pods: false},
    layout: null,      // the picture's cells, for hit-testing
  };
  let source = null;

  // ---- small helpers ---------------------------------------------------------------------

  // timeline.js, loaded first on every page that loads this one, builds elements for both.
  const h = window.BerthTimeline.h;
  const $ = (id) => document.getElementById(id);
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  function replace(id, ...children) {
    const el = $(id);
    el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined));
  }

  const SUFFIX = {
    n: 1e-9, u: 1e-6, m: 1e-3, '': 1, k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
    Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
  };
  // A Kubernetes quantity ("250m", "1Gi", "1e3") as a number; 0 when unreadable.
  function qty(s) {
    if (s === undefined || s === null) return 0;
    if (typeof s === 'number') return s;
    const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(String(s).trim());
    if (!m || !(m[2] in SUFFIX)) return 0;
    return parseFloat(m[1]) * SUFFIX[m[2]];
  }
  function fmtCpu(v) { return v === 0 ? '0' : v >= 10 ? v.toFixed(0) : v >= 1 ? v.toFixed(1) : (v * 1000).toFixed(0) + 'm'; }
  function fmtMem(v) {
    const units = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi'];
    let i = 0;
    while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
    return (v >= 10 || i === 0 ? v.toFixed(0) : v.toFixed(1)) + units[i];
  }
  const fmtBy = {cpu: fmtCpu, memory: fmtMem, pods: (v) => String(Math.round(v))};

  const podKey = (p) => (p.metadata.namespace || 'default') + '/' + p.metadata.name;

  // What a pod asks for: containers summed, the largest init container, plus overhead.
  const requestCache = new WeakMap();
  function requests(p) {
    let r = requestCache.get(p);
    if (r) return r;
    const spec = p.spec || {};
    r = {cpu: 0, memory: 0};
    for (const c of spec.containers || []) {
      const q = (c.resources || {}).requests || {};
      r.cpu += qty(q.cpu); r.memory += qty(q.memory);
    }
    for (const c of spec.initContainers || []) {
      const q = (c.resources || {}).requests || {};
      r.cpu = Math.max(r.cpu, qty(q.cpu)); r.memory = Math.max(r.memory, qty(q.memory));
    }
    const o = spec.overhead || {};
    r.cpu += qty(o.cpu); r.memory += qty(o.memory);
    requestCache.set(p, r);
    return r;
  }

  function podStatus(p) {
    const phase = (p.status || {}).phase;
    if (p.metadata.deletionTimestamp) return 'Terminating';
    if (phase === 'Succeeded' || phase === 'Failed') return phase;
    if (p.spec && p.spec.nodeName) return phase === 'Running' ? 'Running' : 'Bound';
    if (p.spec && p.spec.schedulingGates && p.spec.schedulingGates.length) return 'SchedulingGated';
    for (const c of (p.status || {}).conditions || []) {
      if (c.type === 'PodScheduled' && c.status === 'False' && c.reason) return c.reason;
    }
    return 'Pending';
  }
  const isPending = (p) => !(p.spec && p.spec.nodeName) && !['Succeeded', 'Failed'].includes((p.status || {}).phase);

  function allocatable(n) {
    const a = (n.status || {}).allocatable || (n.status || {}).capacity || {};
    return {cpu: qty(a.cpu), memory: qty(a.memory), pods: qty(a.pods)};
  }
  // Without a Ready condition (manifests often have none) a node counts as ready: the
  // scheduler places pods there all the same.
  function nodeReady(n) {
    for (const c of (n.status || {}).conditions || []) if (c.type === 'Ready') return c.status === 'True';
    return true;
  }

  // Allocated per node: the requests of the pods bound there that have not ended.
  function usage() {
    const u = new Map();
    for (const p of state.pods.values()) {
      const n = p.spec && p.spec.nodeName;
      if (!n) continue;
      const phase = (p.status || {}).phase;
      if (phase === 'Succeeded' || phase === 'Failed') continue;
      let e = u.get(n);
      if (!e) u.set(n, (e = {cpu: 0, memory: 0, pods: 0}));
      const r = requests(p);
      e.cpu += r.cpu; e.memory += r.memory; e.pods += 1;
    }
    return u;
  }

  // ---- data sources ----------------------------------------------------------------------

  function liveSource(token) {
    const headers = () => ({Authorization: 'Bearer ' + token, Accept: 'application/json'});
    async function get(path) {
      const res = await fetch(path, {headers: headers(), cache: 'no-store'});
      if (res.status === 401) throw Object.assign(new Error('the token was refused'), {status: 401});
      const body = await res.json().catch(() => ({}));
      if (!res.ok) throw Object.assign(new Error(body.error || body.message || ('HTTP ' + res.status)), {status: res.status});
      return body;
    }
    // List, then watch from the list's revision; on a broken or expired watch, watch again or
    // list again.
    async function follow(kind, path, map, keyOf) {
      let rv = null;
      for (;;) {
        try {
          if (rv === null) {
            const list = await get(path);
            map.clear();
            for (const o of list.items || []) map.set(keyOf(o), o);
            rv = (list.metadata || {}).resourceVersion || '0';
            changed(kind);
          }
          const res = await fetch(path + '?watch=1&allowWatchBookmarks=true&resourceVersion=' +
                                  encodeURIComponent(rv), {headers: headers(), cache: 'no-store'});
          if (res.status === 401) { unauthorized(); return; }
          if (res.status === 410) { rv = null; continue; }
          if (!res.ok || !res.body) throw new Error('watch: HTTP ' + res.status);
          setLive(kind, true);
          const reader = res.body.getReader();
          const decoder = new TextDecoder();
          let buf = '';
          let gone = false;
          while (!gone) {
            const {value, done} = await reader.read();
            if (done) break;
            buf += decoder.decode(value, {stream: true});
            let nl;
            while ((nl = buf.indexOf('\n')) >= 0) {
              const line = buf.slice(0, nl);
              buf = buf.slice(nl + 1);
              if (!line.trim()) continue;
              const ev = JSON.parse(line);
              if (ev.type === 'ERROR') { gone = true; rv = null; break; }
              const o = ev.object;
              if (o && o.metadata && o.metadata.resourceVersion) rv = o.metadata.resourceVersion;
              if (ev.type === 'BOOKMARK') continue;
              if (ev.type === 'DELETED') map.delete(keyOf(o)); else map.set(keyOf(o), o);
              changed(kind, keyOf(o));
            }
          }
          if (gone) reader.cancel().catch(() => {});
        } catch (e) {
          if (e.status === 401) { unauthorized(); return; }
          setLive(kind, false);
          await sleep(1000);
        }
      }
    }
    const q = (key) => {
      const slash = key.indexOf('/');
      return 'namespace=' + encodeURIComponent(key.slice(0, slash)) + '&name=' + encodeURIComponent(key.slice(slash + 1));
    };
    return {
      live: true,
      get,
      start() {
        follow('nodes', '/api/v1/nodes', state.nodes, (n) => n.metadata.name);
        follow('pods', '/api/v1/pods', state.pods, podKey);
      },
      decision: (key) => get('/ui/api/decision?' + q(key)),
      explain: (key) => get('/ui/api/explain?' + q(key)),
    };
  }

  function staticSource(report) {
    return {
      live: false,
      start() {
        for (const n of report.nodes || []) state.nodes.set(n.metadata.name, n);
        for (const p of report.pods || []) state.pods.set(podKey(p), p);
        changed('nodes');
        changed('pods');
      },
      async decision(key) {
        const d = (report.decisions || {})[key];
        if (!d) throw Object.assign(new Error('no scheduling attempt recorded for ' + key), {status: 404});
        return d;
      },
      // The report explains the pods the simulation left pending (the first ones, if many).
      async explain(key) {
        const e = (report.explanations || {})[key];
        if (e) return e;
        if (report.explanationsOmitted > 0) {
          throw new Error(`Not explained in this report (it explains the first ${Object.keys(report.explanations || {}).length} pending pods); run berth explain for it.`);
        }
        return null;
      },
    };
  }

  function setLive(kind, up) {
    state.live[kind] = up;
    const el = $('connection');
    const all = state.live.nodes && state.live.pods;
    el.textContent = all ? 'live' : 'reconnecting…';
    el.className = 'connection ' + (all ? 'live' : 'down');
  }
  function unauthorized() {
    sessionStorage.removeItem('berth-token');
    notice('The API server refused the token. Open the address `berth up` printed (it ends in #token=…).');
    $('connection').textContent = 'not signed in';
    $('connection').className = 'connection down';
  }
  function notice(text) {
    const el = $('notice');
    el.textContent = text;
    el.hidden = false;
  }

  // ---- rendering -------------------------------------------------------------------------

  let renderTimer = null;
  let podsListed = false;
  const listed = {nodes: false, pods: false};
  function changed(kind, key) {
    if (kind === 'pods' && !podsListed) {
      // A pod named in the address is shown once the pods are known (pending or not).
      podsListed = true;
      if (state.selected) refreshDetail();
    }
    if (kind === 'pods' && key && key === state.selected) {
      refreshDetailSoon();
    } else if (kind === 'nodes' || kind === 'pods') {
      // Any other change to nodes or pods (a watch event, or a list after the first) can
      // change where a pending pod fits.
      if (key || listed[kind]) clusterChanged();
      listed[kind] = true;
    }
    if (renderTimer === null) renderTimer = setTimeout(() => { renderTimer = null; render(); }, RENDER_DELAY);
  }

  function render() {
    const u = usage();
    renderSummary(u);
    renderPicture(u);
    renderNodeTable(u);
    renderPodTable();
    renderDetail();
  }

  function sortedNodes() {
    const f = state.nodeFilter.toLowerCase();
    const out = [];
    for (const n of state.nodes.values()) if (!f || n.metadata.name.toLowerCase().includes(f)) out.push(n);
    out.sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
    return out;
  }

  function renderSummary(u) {
    const total = {cpu: 0, memory: 0}, used = {cpu: 0, memory: 0};
    for (const n of state.nodes.values()) {
      const a = allocatable(n);
      total.cpu += a.cpu; total.memory += a.memory;
      const x = u.get(n.metadata.name);
      if (x) { used.cpu += x.cpu; used.memory += x.memory; }
    }
    let pending = 0;
    for (const p of state.pods.values()) if (isPending(p)) pending++;
    $('summary').textContent =
        `${state.nodes.size} nodes · ${state.pods.size} pods (${pending} pending) · ` +
        `CPU ${fmtCpu(used.cpu)} of ${fmtCpu(total.cpu)} · memory ${fmtMem(used.memory)} of ${fmtMem(total.memory)}`;
  }

  // Share 0..1 to a colour: pale blue, blue, amber, red.
  function heat(share) {
    const stops = [[232, 240, 251], [127, 168, 232], [242, 193, 78], [224, 96, 63]];
    const s = Math.max(0, Math.min(1, share)) * (stops.length - 1);
    const i = Math.min(stops.length - 2, Math.floor(s));
    const t = s - i;
    const c = stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * t));
    return `rgb(${c[0]},${c[1]},${c[2]})`;
  }
  function shares(n, u) {
    const a = allocatable(n), x = u.get(n.metadata.name) || {cpu: 0, memory: 0, pods: 0};
    const s = (k) => (a[k] > 0 ? x[k] / a[k] : 0);
    return {cpu: s('cpu'), memory: s('memory'), pods: s('pods'), used: x, alloc: a};
  }

  // One cell per node. Large cells show three bars (CPU, memory, pods); small cells (thousands
  // of nodes) are one heat square in the chosen metric.
  function renderPicture(u) {
    const canvas = $('node-canvas');
    const nodes = sortedNodes();
    const width = Math.max(300, canvas.clientWidth || canvas.parentElement.clientWidth || 600);
    const n = Math.max(1, nodes.length);
    let cell = Math.floor(Math.sqrt((width * 260) / n));
    cell = Math.max(6, Math.min(56, cell));
    const gap = cell >= 16 ? 3 : 1;
    const cols = Math.max(1, Math.floor(width / (cell + gap)));
    const rows = Math.ceil(nodes.length / cols);
    const height = Math.max(cell, rows * (cell + gap));
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.round(width * dpr);
    canvas.height = Math.round(height * dpr);
    canvas.style.height = height + 'px';
    canvas.setAttribute('data-nodes', String(nodes.length));
    const g = canvas.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, width, height);
    const cells = [];
    nodes.forEach((node, i) => {
      const x = (i % cols) * (cell + gap), y = Math.floor(i / cols) * (cell + gap);
      const s = shares(node, u);
      cells.push({x, y, size: cell, node, s});
      g.fillStyle = '#eef1f5';
      g.fillRect(x, y, cell, cell);
      if (cell >= 24) {
        const bw = (cell - 8) / 3;
        ['cpu', 'memory', 'pods'].forEach((k, j) => {
          const bh = Math.round((cell - 6) * Math.min(1, s[k]));
          g.fillStyle = heat(s[k]);
          g.fillRect(x + 2 + j * (bw + 2), y + cell - 3 - bh, bw, bh);
        });
      } else {
        g.fillStyle = heat(s[state.metric]);
        g.fillRect(x, y, cell, cell);
      }
      if (!nodeReady(node) || (node.spec || {}).unschedulable) {
        g.strokeStyle = '#c23b31'; g.lineWidth = 1;
        g.strokeRect(x + 0.5, y + 0.5, cell - 1, cell - 1);
      }
      if (state.podNode === node.metadata.name) {
        g.strokeStyle = '#1d2430'; g.lineWidth = 2;
        g.strokeRect(x + 1, y + 1, cell - 2, cell - 2);
      }
    });
    state.layout = {cells, cols, cell, gap};
    replace('node-legend',
        h('span', {}, cell >= 24 ? 'Each node: CPU, memory, pods allocated' : `Each square: a node's ${state.metric} allocated`),
        h('span', {class: 'ramp'}), h('span', {}, '0% → 100%'),
        h('span', {}, 'red outline: not ready or cordoned; click a node to see its pods'));
  }

  function cellAt(ev) {
    const L = state.layout;
    if (!L) return null;
    const r = $('node-canvas').getBoundingClientRect();
    const x = ev.clientX - r.left, y = ev.clientY - r.top;
    const col = Math.floor(x / (L.cell + L.gap)), row = Math.floor(y / (L.cell + L.gap));
    if (col < 0 || col >= L.cols) return null;
    return L.cells[row * L.cols + col] || null;
  }

  function bar(used, total, fmt) {
    const share = total > 0 ? used / total : 0;
    const fill = h('span');
    fill.style.width = Math.min(100, share * 100).toFixed(1) + '%';
    fill.style.background = heat(share);
    return [h('span', {class: 'bar', title: `${fmt(used)} of ${fmt(total)}`}, fill),
            h('span', {class: 'bar-label'}, `${fmt(used)} / ${fmt(total)} (free ${fmt(Math.max(0, total - used))})`)];
  }

  function pager(total, page, size, onPage) {
    const pages = Math.max(1, Math.ceil(total / size));
    if (pages <= 1) return null;
    const from = page * size + 1, to = Math.min(total, (page + 1) * size);
    return h('div', {class: 'pager'},
        h('button', {type: 'button', disabled: page === 0, onclick: () => onPage(page - 1)}, '‹'),
        `${from}–${to} of ${total}`,
        h('button', {type: 'button', disabled: page >= pages - 1, onclick: () => onPage(page + 1)}, '›'));
  }

  function renderNodeTable(u) {
    const nodes = sortedNodes();
    state.nodePage = Math.min(state.nodePage, Math.max(0, Math.ceil(nodes.length / PAGE) - 1));
    const rows = nodes.slice(state.nodePage * PAGE, (state.nodePage + 1) * PAGE).map((n) => {
      const s = shares(n, u);
      const name = n.metadata.name;
      const cordoned = (n.spec || {}).unschedulable;
      return h('tr', {class: 'clickable' + (state.podNode === name ? ' selected' : ''), 'data-node': name,
                      onclick: () => selectNode(state.podNode === name ? null : name)},
          h('td', {}, name),
          h('td', {}, nodeReady(n) ? (cordoned ? 'Ready, cordoned' : 'Ready') : 'NotReady'),
          h('td', {}, bar(s.used.cpu, s.alloc.cpu, fmtCpu)),
          h('td', {}, bar(s.used.memory, s.alloc.memory, fmtMem)),
          h('td', {}, bar(s.used.pods, s.alloc.pods, fmtBy.pods)));
    });
    replace('node-table',
        h('div', {class: 'scroll'}, h('table', {id: 'nodes'},
            h('thead', {}, h('tr', {}, h('th', {}, 'Node'), h('th', {}, 'Status'), h('th', {}, 'CPU allocated'),
                                 h('th', {}, 'Memory allocated'), h('th', {}, 'Pods'))),
            h('tbody', {}, rows))),
        pager(nodes.length, state.nodePage, PAGE, (p) => { state.nodePage = p; render(); }));
  }

  function filteredPods() {
    const f = state.podFilter.toLowerCase();
    const out = [];
    for (const [key, p] of state.pods) {
      if (f && !key.toLowerCase().includes(f) && !((p.spec || {}).nodeName || '').toLowerCase().includes(f)) continue;
      if (state.podPhase === 'pending' && !isPending(p)) continue;
      if (state.podPhase === 'bound' && isPending(p)) continue;
      if (state.podNode && (p.spec || {}).nodeName !== state.podNode) continue;
      out.push([key, p]);
    }
    // Pending pods first: they are the ones to look at.
    out.sort((a, b) => (isPending(b[1]) - isPending(a[1])) || a[0].localeCompare(b[0]));
    return out;
  }

  function renderPodTable() {
    const pods = filteredPods();
    state.podPage = Math.min(state.podPage, Math.max(0, Math.ceil(pods.length / PAGE) - 1));
    const chip = $('pod-node-filter');
    chip.hidden = !state.podNode;
    chip.textContent = state.podNode ? `on ${state.podNode} ✕` : '';
    const rows = pods.slice(state.podPage * PAGE, (state.podPage + 1) * PAGE).map(([key, p]) => {
      const r = requests(p);
      const status = podStatus(p);
      return h('tr', {class: 'clickable' + (key === state.selected ? ' selected' : ''), 'data-pod': key,
                      onclick: () => select(key)},
          h('td', {}, key),
          h('td', {class: 'status-' + status}, status),
          h('td', {class: 'pod-node'}, (p.spec || {}).nodeName || '—'),
          h('td', {class: 'num'}, fmtCpu(r.cpu)),
          h('td', {class: 'num'}, fmtMem(r.memory)));
    });
    replace('pod-table',
        h('div', {class: 'scroll'}, h('table', {id: 'pods'},
            h('thead', {}, h('tr', {}, h('th', {}, 'Pod'), h('th', {}, 'Status'), h('th', {}, 'Node'),
                                 h('th', {class: 'num'}, 'CPU'), h('th', {class: 'num'}, 'Memory'))),
            h('tbody', {}, rows))),
        pods.length ? null : h('p', {class: 'muted'}, 'No pods.'),
        pager(pods.length, state.podPage, PAGE, (p) => { state.podPage = p; render(); }));
  }

  // ---- the selected pod ------------------------------------------------------------------

  function select(key) {
    if (state.selected !== key) {
      state.selected = key;
      state.decision = state.explanation = state.decisionError = state.explanationError = null;
      state.explainedAt = 0;
      state.matrixPage = state.rejectPage = state.explainPage = 0;
      setAddress('#pod=' + encodeURIComponent(key));
    }
    refreshDetail();
    render();
  }
  function setAddress(fragment) {
    try {
      history.replaceState(null, '', location.pathname + location.search + fragment);
    } catch (e) {
      // Some pages (a report opened from a file) may not rewrite their address; nothing to keep.
    }
  }
  function selectNode(name) {
    state.podNode = name;
    state.podPage = 0;
    render();
  }

  let detailTimer = null;
  function refreshDetailSoon() {
    clearTimeout(detailTimer);
    detailTimer = setTimeout(refreshDetail, 500);
  }

  // The cluster changed: a selected pending pod's decision and explanation may be out of date.
  // Debounced (bursts of events ask once), and never more than one request at a time.
  let clusterTimer = null, clusterFirst = 0;
  function clusterChanged() {
    const key = state.selected;
    if (!key || !source.live) return;
    const p = state.pods.get(key);
    if (p && !isPending(p)) return;
    const now = Date.now();
    if (clusterTimer === null) clusterFirst = now;
    clearTimeout(clusterTimer);
    const wait = Math.max(0, Math.min(CLUSTER_QUIET, clusterFirst + CLUSTER_MAX_WAIT - now));
    clusterTimer = setTimeout(() => { clusterTimer = null; refreshDetail(); }, wait);
  }

  let refreshing = false, refreshAgain = false;
  async function refreshDetail() {
    if (refreshing) {
      // One request at a time; the newest state is asked for once this one is answered.
      refreshAgain = true;
      return;
    }
    refreshing = true;
    try {
      await refreshDetailOnce();
    } finally {
      refreshing = false;
    }
    if (refreshAgain) {
      refreshAgain = false;
      refreshDetailSoon();
    }
  }
  async function refreshDetailOnce() {
    const key = state.selected;
    if (!key) return;
    const pod = state.pods.get(key);
    let decision = null, decisionError = null;
    try {
      decision = await source.decision(key);
    } catch (e) {
      decisionError = e.message;
    }
    if (state.selected !== key) return;
    state.decision = decision;
    state.decisionError = decisionError;
    // A pending pod: why, and what would place it.
    if (!pod || isPending(pod)) {
      state.explaining = true;
      renderDetail();
      try {
        const e = await source.explain(key);
        if (state.selected === key) {
          state.explanation = e;
          state.explanationError = null;
          state.explainedAt = Date.now();
        }
      } catch (e) {
        if (state.selected === key) {
          // Another explanation is running (one at a time): ask again while this pod is
          // shown, keeping the last answer on screen meanwhile.
          if (e.status === 503) {
            setTimeout(() => { if (state.selected === key) refreshDetail(); }, 3000);
          } else {
            state.explanation = null;
          }
          state.explanationError = e.message;
        }
      }
      state.explaining = false;
    } else {
      state.explanation = null;
      state.explanationError = null;
    }
    if (state.selected === key) renderDetail();
  }

  function renderDetail() {
    const key = state.selected;
    if (!key) return;
    document.getElementById('detail-section').hidden = false;
    const p = state.pods.get(key);
    const status = p ? podStatus(p) : 'not found';
    const parts = [
      h('h2', {}, 'Pod ', h('span', {id: 'detail-pod'}, key)),
      h('div', {class: 'facts'},
          h('div', {}, h('span', {}, 'Status'), h('b', {class: 'status-' + status}, status)),
          h('div', {}, h('span', {}, 'Node'), (p && p.spec.nodeName) || '—'),
          p ? h('div', {}, h('span', {}, 'Requests'),
                `CPU ${fmtCpu(requests(p).cpu)}, memory ${fmtMem(requests(p).memory)}`) : null,
          p && p.spec.schedulerName ? h('div', {}, h('span', {}, 'Scheduler'), p.spec.schedulerName) : null),
    ];
    parts.push(h('div', {id: 'decision'}, decisionView()));
    if ((!p || isPending(p)) && (source.live || state.explanation || state.explanationError)) {
      parts.push(h('div', {id: 'explanation'}, explanationView()));
    }
    replace('detail', parts);
  }

  function decisionView() {
    const d = state.decision;
    if (!d) {
      return [h('h3', {}, 'Last scheduling decision'),
              h('p', {class: 'muted'}, state.decisionError || 'Loading…')];
    }
    const out = [h('h3', {}, `Last scheduling decision (attempt ${d.attempt})`)];
    const when = d.decidedAt ? ` at ${new Date(d.decidedAt).toLocaleTimeString()}` : '';
    out.push(h('p', {class: 'outcome', 'data-outcome': d.outcome},
        d.outcome === 'Scheduled' ? `Scheduled on ${d.node}` : d.outcome,
        d.evaluatedNodes > 0 ? ` — ${d.evaluatedNodes} nodes evaluated, ${d.feasibleNodes} feasible` : '',
        `${when}.`,
        d.nominatedNode ? ` Nominated node ${d.nominatedNode} (preemption).` : ''));
    if (d.outcome !== 'Scheduled' && d.message) out.push(h('div', {class: 'message'}, d.message));
    if (d.preFilter) {
      for (const [plugin, reason] of Object.entries(d.preFilter)) {
        out.push(h('p', {}, 'Rejected before filtering by ', h('b', {}, plugin), ': ', h('span', {class: 'reason'}, reason)));
      }
    }
    out.push(scoreMatrix(d));
    out.push(rejections(d));
    if (d.truncatedNodes > 0) {
      out.push(h('p', {class: 'muted'}, `${d.truncatedNodes} more nodes were evaluated; only the chosen, the best scored and the first rejected are kept.`));
    }
    return out;
  }

  // Nodes × score plugins: the normalized score of each plugin, its weighted contribution in
  // the tooltip, and the total; the chosen node first and marked.
  function scoreMatrix(d) {
    const nodes = Object.keys(d.finalScore || {});
    if (!nodes.length) {
      if (d.outcome === 'Scheduled') {
        return [h('h3', {}, 'Scores'),
                h('p', {class: 'muted', id: 'score-matrix'}, `Only ${d.node} passed the filters, so no scoring was needed.`)];
      }
      return null;
    }
    const weight = {};
    (d.scorePlugins || []).forEach((p, i) => { weight[p] = (d.scoreWeights || [])[i]; });
    const columns = [];
    for (const n of nodes) for (const k of Object.keys(d.finalScore[n])) if (!columns.includes(k)) columns.push(k);
    const total = (n) => Object.values(d.finalScore[n]).reduce((s, v) => s + Number(v), 0);
    nodes.sort((a, b) => ((b === d.node) - (a === d.node)) || (total(b) - total(a)) || a.localeCompare(b));
    const max = Math.max(1, ...nodes.map(total));
    const page = nodes.slice(state.matrixPage * MATRIX_PAGE, (state.matrixPage + 1) * MATRIX_PAGE);
    const rows = page.map((n) => {
      const chosen = n === d.node && d.outcome === 'Scheduled';
      const t = total(n);
      const totalCell = h('td', {class: 'score-cell total'}, t);
      totalCell.style.background = `rgba(47,111,222,${(0.08 + 0.3 * t / max).toFixed(2)})`;
      return h('tr', {class: chosen ? 'chosen' : null, 'data-node': n},
          h('td', {}, n, chosen ? h('span', {class: 'badge'}, 'chosen') : null),
          columns.map((c) => {
            const raw = (d.score[n] || {})[c];
            const fin = d.finalScore[n][c];
            return h('td', {class: 'score-cell', title: raw !== undefined ? `${raw} × ${weight[c] ?? 1} = ${fin}` : `${fin}`},
                raw !== undefined ? raw : fin);
          }),
          totalCell);
    });
    return [
      h('h3', {}, 'Scores'),
      h('div', {class: 'scroll'}, h('table', {id: 'score-matrix', class: 'matrix'},
          h('thead', {}, h('tr', {}, h('th', {}, 'Node'),
              columns.map((c) => h('th', {class: 'num'}, c, weight[c] !== undefined ? h('span', {class: 'muted'}, ` ×${weight[c]}`) : null)),
              h('th', {class: 'num'}, 'Total'))),
          h('tbody', {}, rows))),
      pager(nodes.length, state.matrixPage, MATRIX_PAGE, (p) => { state.matrixPage = p; renderDetail(); }),
    ];
  }

  function rejections(d) {
    const rows = [];
    for (const [node, plugins] of Object.entries(d.filter || {})) {
      for (const [plugin, result] of Object.entries(plugins)) {
        if (result !== 'passed') rows.push([node, plugin, result]);
      }
    }
    if (!rows.length) return null;
    rows.sort((a, b) => a[0].localeCompare(b[0]));
    const page = rows.slice(state.rejectPage * MATRIX_PAGE, (state.rejectPage + 1) * MATRIX_PAGE);
    return [
      h('h3', {}, `Filtered out (${rows.length} nodes)`),
      h('table', {id: 'rejections'},
          h('thead', {}, h('tr', {}, h('th', {}, 'Node'), h('th', {}, 'Plugin'), h('th', {}, 'Reason'))),
          h('tbody', {}, page.map(([n, p, r]) => h('tr', {'data-node': n}, h('td', {}, n), h('td', {}, p), h('td', {class: 'reason'}, r))))),
      pager(rows.length, state.rejectPage, MATRIX_PAGE, (p) => { state.rejectPage = p; renderDetail(); }),
    ];
  }

  function explanationView() {
    const e = state.explanation;
    const title = h('h3', {}, 'Why it is pending, and what would place it');
    if (!e) {
      return [title, h('p', {class: 'muted'}, state.explaining ? 'Explaining…' : (state.explanationError || ''))];
    }
    const out = [title];
    if (source.live && state.explainedAt) {
      // Explained again when the cluster changes; say how fresh this answer is.
      out.push(h('p', {class: 'muted', id: 'explained-at'},
          `As of ${new Date(state.explainedAt).toLocaleTimeString()}`,
          state.explaining ? ' — updating for the latest changes…' : '',
          state.explanationError ? ` — ${state.explanationError}` : ''));
    }
    if (e.message) out.push(h('div', {class: 'message'}, e.message));
    if (e.result === 'Scheduled' && e.node) out.push(h('p', {}, `It fits now: the scheduler would place it on ${e.node}.`));
    const notes = e.notes || [];
    if (notes.length) out.push(h('ul', {id: 'explain-notes'}, notes.map((n) => h('li', {}, n))));
    const diagnoses = e.diagnoses || [];
    if (diagnoses.length) {
      out.push(h('ul', {id: 'explain-diagnoses'}, diagnoses.map((d) =>
        h('li', {}, `${d.node} (${d.plugin})`, h('ul', {}, d.lines.map((l) => h('li', {}, l)))))));
    }
    const sugg = e.suggestions || [];
    if (sugg.length) {
      out.push(h('p', {}, 'Smallest changes that would place it (each checked by scheduling again):'));
      out.push(h('ol', {id: 'suggestions'}, sugg.map((s) => h('li', {class: 'suggestion', 'data-kind': s.kind},
          h('b', {}, s.description), ` — fits ${s.opensNodes} node${s.opensNodes === 1 ? '' : 's'}`,
          s.podChange ? h('pre', {}, s.podChange) : null,
          s.newPod ? h('pre', {}, s.newPod) : null))));
    } else if (e.result === 'Unschedulable') {
      out.push(h('p', {id: 'suggestions'}, 'No single change the plugins that rejected nodes proposed places it (each was checked by scheduling again).'));
    }
    const nodes = Object.entries(e.nodes || {}).sort((a, b) => a[0].localeCompare(b[0]));
    if (nodes.length) {
      const page = nodes.slice(state.explainPage * MATRIX_PAGE, (state.explainPage + 1) * MATRIX_PAGE);
      out.push(h('table', {id: 'explain-nodes'},
          h('thead', {}, h('tr', {}, h('th', {}, 'Node'), h('th', {}, 'Result'))),
          h('tbody', {}, page.map(([n, r]) => h('tr', {'data-node': n}, h('td', {}, n),
              r.rejectedBy !== undefined
                  ? h('td', {class: 'reason'}, `rejected by ${r.rejectedBy}: ${r.reason}`)
                  : h('td', {}, `fits, score ${r.total}`))))));
      out.push(pager(nodes.length, state.explainPage, MATRIX_PAGE, (p) => { state.explainPage = p; renderDetail(); }));
    }
    return out;
  }

  // ---- start -----------------------------------------------------------------------------

  function wire() {
    $('metric').addEventListener('change', (e) => { state.metric = e.target.value; render(); });
    $('node-filter').addEventListener('input', (e) => { state.nodeFilter = e.target.value; state.nodePage = 0; render(); });
    $('pod-filter').addEventListener('input', (e) => { state.podFilter = e.target.value; state.podPage = 0; render(); });
    $('pod-phase').addEventListener('change', (e) => { state.podPhase = e.target.value; state.podPage = 0; render(); });
    $('pod-node-filter').addEventListener('click', () => selectNode(null));
    const canvas = $('node-canvas'), tip = $('node-tip');
    canvas.addEventListener('mousemove', (ev) => {
      const c = cellAt(ev);
      if (!c) { tip.hidden = true; return; }
      const s = c.s;
      tip.textContent = `${c.node.metadata.name}\nCPU ${fmtCpu(s.used.cpu)} / ${fmtCpu(s.alloc.cpu)}\n` +
          `memory ${fmtMem(s.used.memory)} / ${fmtMem(s.alloc.memory)}\npods ${s.used.pods} / ${s.alloc.pods}`;
      tip.style.left = (c.x + c.size + 6) + 'px';
      tip.style.top = c.y + 'px';
      tip.hidden = false;
    });
    canvas.addEventListener('mouseleave', () => { tip.hidden = true; });
    canvas.addEventListener('click', (ev) => {
      const c = cellAt(ev);
      if (c) selectNode(state.podNode === c.node.metadata.name ? null : c.node.metadata.name);
    });
    window.addEventListener('resize', () => changed('resize'));
  }

  function start() {
    // A timeline report (`berth scenario run -o html`): the Timeline tab alone (timeline.js).
    const timeline = document.getElementById('berth-timeline');
    if (timeline) {
      window.BerthTimeline.init({embedded: JSON.parse(timeline.textContent)});
      return;
    }
    wire();
    // The fragment: token=... (live, from `berth up`'s banner), pod=namespace/name, tab=timeline.
    const params = new URLSearchParams(location.hash.replace(/^#/, ''));
    const embedded = document.getElementById('berth-report');
    if (embedded) {
      source = staticSource(JSON.parse(embedded.textContent));
      $('connection').textContent = 'simulation report';
      document.title = 'Berth — simulation report';
    } else {
      let token = params.get('token');
      if (token) {
        sessionStorage.setItem('berth-token', token);
      } else {
        token = sessionStorage.getItem('berth-token');
      }
      const pod = params.get('pod');
      // Out of the address bar (and history) at once: the token is a credential.
      setAddress(pod ? '#pod=' + encodeURIComponent(pod) : '');
      if (!token) {
        unauthorized();
        return;
      }
      source = liveSource(token);
    }
    const pod = params.get('pod');
    if (pod) state.selected = pod;
    window.BerthTimeline.init({live: source.live ? source : null, tab: params.get('tab')});
    source.start();
  }

  start();
})();
