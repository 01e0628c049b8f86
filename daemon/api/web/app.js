// colocd operator's console. Holds no data itself: everything comes from
// the authenticated API with the bearer token kept in sessionStorage.
// Every time shown is wall-clock in the browser's zone, mapped from the
// daemon's clock (GET /v1/clock); ages and durations are measured on the
// daemon's clock, never the browser's.
'use strict';

(function () {
  const KEY = 'colocd.token';
  const REFRESH_MS = 5000;
  const QUEUE_ROWS = 20; // queued jobs listed; the rest are counted
  const NODE_TILES = 400; // node tiles drawn; the histogram counts every node
  // A node's goodness record older than this, on the daemon's clock, is stale:
  // its tile goes grey (ten learning ticks at the default "@every 60s"; a
  // drained node gets no new record, and its last one would still read busy).
  const STALE_RECORD_SECONDS = 600;
  const HEATMAP_KINDS = 15;
  const SVGNS = 'http://www.w3.org/2000/svg';
  const $ = (id) => document.getElementById(id);

  // Uncaught errors and rejected promises are recorded in #js-errors (the
  // tests read it) as well as reported to the console.
  function recordJSError(msg) {
    const pre = $('js-errors');
    if (!pre) return;
    pre.textContent += msg + '\n';
    pre.dataset.count = String(Number(pre.dataset.count || 0) + 1);
  }
  window.addEventListener('error', (ev) => recordJSError('error: ' + ev.message + ' (' + ev.filename + ':' + ev.lineno + ')'));
  window.addEventListener('unhandledrejection', (ev) => {
    const r = ev.reason;
    recordJSError('unhandled rejection: ' + (r && r.message ? r.message : String(r)));
  });

  // ---- token and API ----

  // A token in the URL (?token=...) is moved to sessionStorage and removed
  // from the address bar and history.
  function takeTokenFromURL() {
    const url = new URL(window.location.href);
    const t = url.searchParams.get('token');
    if (t) {
      sessionStorage.setItem(KEY, t);
      url.searchParams.delete('token');
      history.replaceState(null, '', url.pathname + url.search + url.hash);
    }
  }

  function token() { return sessionStorage.getItem(KEY) || ''; }

  function showError(msg) {
    const e = $('error');
    if (msg) { e.textContent = msg; e.hidden = false; } else { e.textContent = ''; e.hidden = true; }
  }

  async function api(path, accept) {
    const res = await fetch(path, {
      headers: { 'Authorization': 'Bearer ' + token(), 'Accept': accept || 'application/json' },
      cache: 'no-store',
    });
    if (!res.ok) {
      let msg = res.status + ' ' + res.statusText;
      try { const body = await res.json(); if (body && body.error) msg = body.error; } catch (_) { /* not JSON */ }
      const err = new Error(path + ': ' + msg);
      err.status = res.status;
      throw err;
    }
    return accept && accept !== 'application/json' ? res.text() : res.json();
  }

  // ---- DOM helpers (no markup parsing: every text goes through textContent) ----

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = String(text);
    return e;
  }

  function emptyRow(table, text) {
    const tr = el('tr');
    const td = el('td', text || 'none', 'empty');
    td.colSpan = table.tHead.rows[0].cells.length;
    tr.append(td);
    return tr;
  }

  // fillTable fills table id's body: one row per item, one cell per column
  // function, which returns a string or a DOM node.
  function fillTable(id, rows, cols, empty) {
    const table = $(id);
    const tbody = table.tBodies[0];
    tbody.replaceChildren();
    if (rows.length === 0) { tbody.append(emptyRow(table, empty)); return; }
    for (const r of rows) {
      const tr = el('tr');
      if (r.id) tr.dataset.job = r.id;
      for (const [get, cls] of cols) {
        const v = get(r);
        const td = el('td', null, cls);
        if (v instanceof Node) td.append(v); else td.textContent = v === undefined || v === null ? '' : String(v);
        tr.append(td);
      }
      tbody.append(tr);
    }
  }

  // ---- time ----

  const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const pad = (n) => String(n).padStart(2, '0');

  let clock = null; // GET /v1/clock, read each refresh

  // toWall places t (ms on the daemon's clock) on the wall clock, as
  // apiclient.Clock.Wall does: t itself unless simulated; else by the last
  // run that started at or before t. null before the first recorded run.
  function toWall(t) {
    if (!clock || !clock.simulated) return t;
    let runs = clock.runs;
    if (!runs || runs.length === 0) runs = [{ from: clock.started, wall_from: clock.wall_started, speed: clock.speed }];
    for (let i = runs.length - 1; i >= 0; i--) {
      const r = runs[i];
      const from = Date.parse(r.from);
      if (t < from || !(r.speed > 0)) continue;
      return Date.parse(r.wall_from) + (t - from) / r.speed;
    }
    return null;
  }

  // zone names the browser's offset from UTC at d: "UTC", "UTC+1", "UTC-3:30".
  function zone(d) {
    const off = -d.getTimezoneOffset();
    if (off === 0) return 'UTC';
    const a = Math.abs(off);
    return 'UTC' + (off > 0 ? '+' : '-') + Math.floor(a / 60) + (a % 60 ? ':' + pad(a % 60) : '');
  }

  // fmtWall: a wall time (ms) with weekday, date, time and zone.
  function fmtWall(ms) {
    if (ms === null || ms === undefined || isNaN(ms)) return '—';
    const d = new Date(ms);
    return WEEKDAYS[d.getDay()] + ' ' + d.getDate() + ' ' + MONTHS[d.getMonth()] + ' ' + d.getFullYear() + ' ' +
      pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds()) + ' ' + zone(d);
  }

  // fmtSim: a time on the simulated clock, in UTC.
  function fmtSim(ms) {
    return new Date(ms).toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
  }

  // wallOf formats an API timestamp (daemon clock) as wall time; with the
  // simulated time beside it when the daemon runs in simulated time.
  function wallOf(iso, withSim) {
    if (!iso) return '—';
    const t = Date.parse(iso);
    const w = toWall(t);
    const s = w === null ? 'before the first recorded run' : fmtWall(w);
    return withSim && clock && clock.simulated ? s + ' (sim ' + fmtSim(t) + ')' : s;
  }

  const simulated = () => Boolean(clock && clock.simulated);
  const daemonNow = () => (clock ? Date.parse(clock.now) : null);

  function fmtDur(sec) {
    if (sec === null || sec === undefined || isNaN(sec)) return '—';
    const s = Math.max(0, sec);
    if (s < 90) return Math.round(s) + ' s';
    if (s < 5400) return Math.round(s / 60) + ' min';
    if (s < 172800) return (s / 3600).toFixed(1) + ' h';
    return (s / 86400).toFixed(1) + ' d';
  }

  // dur is a duration on the daemon's clock, labelled when simulated.
  function dur(sec) {
    const s = fmtDur(sec);
    return simulated() && s !== '—' ? s + ' simulated' : s;
  }

  // age is how long ago iso was, on the daemon's clock (seconds).
  function age(iso) {
    const now = daemonNow();
    return iso && now !== null ? (now - Date.parse(iso)) / 1000 : null;
  }

  function showClocks() {
    const sim = $('sim-clock');
    $('updated').textContent = 'updated ' + fmtWall(Date.parse(clock.wall_now));
    if (clock.simulated) {
      sim.textContent = 'simulated cluster clock: ' + fmtSim(Date.parse(clock.now)) + ', ' +
        Number(clock.speed).toLocaleString('en') + '× real time';
      sim.title = 'The daemon runs the cluster simulator in virtual time; durations marked "simulated" are on that clock.';
      sim.hidden = false;
    } else {
      sim.hidden = true;
    }
    for (const th of document.querySelectorAll('th.dur')) {
      const base = th.dataset.base || th.textContent;
      th.dataset.base = base;
      th.textContent = clock.simulated ? base + ' (simulated)' : base;
    }
  }

  // ---- number formats ----

  const pct = (x) => (100 * x).toFixed(x < 0.1 ? 1 : 0) + ' %';
  const gib = (mb) => (mb / 1024).toFixed(mb >= 10240 ? 0 : 1);
  const mbps = (bps) => (bps === null || bps === undefined ? '—' : (bps / 1e6).toFixed(bps >= 1e7 ? 0 : 1));
  const g2 = (x) => (x === null || x === undefined ? '—' : Number(x).toFixed(1));

  // ---- goodness colours: viridis over ln G in [ln e, ln e⁴] ----

  const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  let gScale = { min: Math.E, max: Math.exp(4) };

  function viridis(t) {
    if (!isFinite(t)) t = 0;
    t = Math.min(1, Math.max(0, t));
    const pos = t * (VIRIDIS.length - 1);
    const k = Math.min(Math.floor(pos), VIRIDIS.length - 2);
    const f = pos - k;
    return VIRIDIS[k].map((c, i) => Math.round(c + (VIRIDIS[k + 1][i] - c) * f));
  }
  const gT = (g) => (Math.log(g) - Math.log(gScale.min)) / (Math.log(gScale.max) - Math.log(gScale.min));
  const rgb = (c) => 'rgb(' + c.join(',') + ')';
  function ink(c) {
    const lin = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]) > 0.35 ? '#000' : '#fff';
  }

  // ---- sections ----

  // DEPENDENCIES names what each degraded dependency is, for the banner.
  const DEPENDENCIES = {
    cluster: 'the cluster (ResourceManager): no admission until it answers',
    metrics: 'the metrics store: no learning, node goodness is not updated',
    kdc: 'the Kerberos KDC: calls that need a ticket fail',
    disk: 'data_dir\'s disk, below its reserve: submissions are refused',
  };

  // renderDegraded shows the banner of what colocd cannot reach or use.
  function renderDegraded(list) {
    const p = $('degraded');
    if (!list || !list.length) { p.hidden = true; p.replaceChildren(); return; }
    p.replaceChildren(el('strong', 'Degraded: '));
    list.forEach((d, i) => {
      const span = el('span', (i ? '; ' : '') + (DEPENDENCIES[d.dependency] || d.dependency) + ', since ' + fmtWall(Date.parse(d.since)) +
        ' (the last ' + d.op + ' call failed)');
      span.dataset.dependency = d.dependency;
      if (d.error) span.title = d.error;
      p.append(span);
    });
    p.hidden = false;
  }

  function renderSummary(s) {
    renderDegraded(s.degraded);
    const dl = $('summary');
    dl.replaceChildren();
    const runFor = (Date.parse(s.now) - Date.parse(s.since)) / 1000;
    $('summary-since').textContent = '(since this daemon started: ' + wallOf(s.since, true) + ', ' + dur(runFor) + ' ago)';
    const run = s.run;
    const st = run.states || {};
    const item = (term, value, title) => {
      const dt = el('dt', term);
      const dd = el('dd', value);
      if (title) dd.title = title;
      dd.dataset.term = term;
      dl.append(dt, dd);
    };
    item('submitted', run.scanned + (run.complete ? '' : '+'),
      run.complete ? 'jobs submitted since the start' : 'the newest ' + run.scanned + ' jobs submitted since the start were read');
    item('finished', (st.succeeded || 0) + ' succeeded · ' + (st.failed || 0) + ' failed · ' + (st.killed || 0) + ' killed · ' + (st.cancelled || 0) + ' cancelled');
    item('in flight', (st.pending || 0) + ' pending · ' + ((st.admitted || 0) + (st.running || 0)) + ' admitted or running' + (st.parked ? ' · ' + st.parked + ' parked' : ''));
    item('mean wait', dur(run.mean_wait_seconds), 'submission to admission, over the ' + run.admitted + ' jobs of this run admitted');
    item('mean runtime', dur(run.mean_runtime_seconds), 'running to finished, over this run\'s succeeded jobs');
    if (s.fifo) {
      const f = s.fifo, pct1 = (x) => (x >= 0 ? '−' : '+') + Math.abs(x).toFixed(1) + ' %';
      item('against FIFO', 'mean completion ' + dur(f.mean_jct_seconds) + ' vs ' + dur(f.fifo_mean_jct_seconds) + ' (' + pct1(f.jct_gain_percent) + ')' +
        ' · makespan ' + dur(f.makespan_seconds) + ' vs ' + dur(f.fifo_makespan_seconds) + ' (' + pct1(f.makespan_gain_percent) + ')',
        'the ' + f.jobs + ' jobs that succeeded since the start, against the same jobs simulated again from the same arrivals under first-in-first-out admission, when the queue last drained');
    }
    const a = s.admissions;
    const forced = Object.entries(a.forced || {}).map(([k, v]) => v + ' ' + k.replace('_', ' ')).join(', ');
    item('admissions', a.chosen + ' chosen by the policy' + (forced ? ' · forced: ' + forced : ' · none forced') + (a.shadow ? ' · ' + a.shadow + ' in shadow mode' : ''),
      a.scanned + ' decisions kept by the journal since the start' + (a.oldest ? ', the oldest ' + wallOf(a.oldest) : ''));
    const g = s.goodness;
    gScale = g.scale || gScale;
    item('mean goodness', g.count ? g2(g.mean_g) + ' (' + g2(g.min_g) + '–' + g2(g.max_g) + ', ' + g.count + ' observations)' : 'no observation yet',
      'G ranges over [e, e⁴] = [' + g2(gScale.min) + ', ' + g2(gScale.max) + ']: e is an idle node');
    const counts = $('counts');
    counts.replaceChildren();
    const order = ['pending', 'admitted', 'running', 'parked', 'succeeded', 'failed', 'killed', 'cancelled'];
    for (const state of order) {
      const n = (s.counts || {})[state];
      if (!n) continue;
      const span = el('span', state + ' ', 'count');
      span.dataset.state = state;
      span.append(el('b', n));
      counts.append(span);
    }
    counts.append(el('span', s.submitted_ever + ' ever submitted', 'count'));
  }

  // reasonsOf maps job ids to why the decision did not admit them.
  function reasonsOf(dec) {
    const why = new Map();
    if (!dec) return why;
    const add = (id, text) => { why.set(id, why.has(id) ? why.get(id) + '; ' + text : text); };
    if (dec.reserved && dec.reserved !== dec.chosen) add(dec.reserved, 'holds the reservation: it goes first once room frees');
    for (const id of dec.blocked || []) add(id, 'oldest job that does not fit (younger jobs went ahead)');
    for (const stage of dec.stages || []) {
      for (const d of stage.dropped || []) add(d.job_id, stage.name + ': ' + d.reason);
    }
    for (const c of dec.candidates || []) {
      if (c.job_id !== dec.chosen && !why.has(c.job_id)) add(c.job_id, 'candidate, not drawn (' + (100 * c.prob).toFixed(1) + ' %)');
    }
    for (const id of dec.passed || []) {
      if (!why.has(id)) add(id, 'passed over: ' + (dec.chosen_kind || dec.chosen) + ' was chosen');
    }
    return why;
  }

  function whyNot(j, dec, why, windowSize) {
    if (!dec) return 'no decision yet';
    if (Date.parse(j.created_at) > Date.parse(dec.at)) return 'submitted after the last decision';
    if (why.has(j.id)) return why.get(j.id);
    if (windowSize !== null && j.position >= windowSize) return 'outside the window: the last decision considered the first ' + windowSize;
    // A kind's candidate is its oldest job that survived the stages.
    const c = (dec.candidates || []).find((x) => x.kind === j.kind);
    if (c) return 'behind an older ' + j.kind + ' job';
    return 'in the window, not chosen';
  }

  function whyCell(text, dec) {
    const span = el('span', text);
    span.title = (dec ? 'As of the decision at ' + wallOf(dec.at, true) + '. ' : '') +
      'A candidate is the oldest job of its kind that passed every stage; one candidate is drawn by the learned probabilities.';
    return span;
  }

  function renderQueue(list, dec) {
    const pending = list.jobs;
    const total = (list.counts || {}).pending || 0;
    $('queue-total').textContent = '(' + total + ' pending)';
    const why = reasonsOf(dec);
    const win = dec && (dec.stages || []).find((s) => s.name === 'window');
    const windowSize = win && win.in > win.out ? win.out : null;
    fillTable('queue', pending, [
      [(j) => j.position, 'num'], [(j) => j.id, 'id'], [(j) => j.kind, ''], [(j) => j.user + (j.queue ? ' / ' + j.queue : ''), ''],
      [(j) => j.resources.containers + '×' + j.resources.vcores + ' vc·' + gib(j.resources.memory_mb) + ' GiB', 'num'],
      [(j) => j.skips, 'num'], [(j) => fmtDur(age(j.created_at)), 'num'],
      [(j) => waitCell(j.estimated_wait), 'num wait'], [(j) => whyCell(whyNot(j, dec, why, windowSize), dec), 'why'],
    ], 'the queue is empty');
    const more = $('queue-more');
    more.hidden = total <= pending.length;
    more.textContent = 'and ' + (total - pending.length) + ' more pending jobs (not listed; colocd jobs lists them all)';
    const eta = $('queue-eta');
    const q = list.queue_wait;
    if (!q) { eta.textContent = 'Nothing is waiting.'; return; }
    if (q.seconds === null || q.seconds === undefined) {
      eta.textContent = 'No job kind has finished yet: no wait estimate.';
      return;
    }
    const now = daemonNow();
    const wallEta = now === null ? null : toWall(now + 1000 * q.seconds);
    eta.textContent = 'Whole queue: about ' + dur(q.seconds) + ' to admit all ' + q.jobs_ahead + ' jobs' +
      (simulated() ? ' (≈ ' + fmtDur(q.seconds / clock.speed) + ' real)' : '') + ', until ' + fmtWall(wallEta) +
      ' — an estimate with ' + q.concurrency + ' running at a time.';
    eta.title = q.method;
  }

  function waitCell(w) {
    if (!w) return '—';
    const s = w.seconds === null || w.seconds === undefined ? 'no history' : '~' + fmtDur(w.seconds);
    const span = el('span', s);
    if (w.seconds !== null && w.seconds !== undefined) span.dataset.seconds = String(Math.round(w.seconds));
    span.title = w.method + ' (' + w.jobs_ahead + ' ahead, ' + w.jobs_ahead_with_history + ' with a history, ' + w.concurrency + ' running)';
    return span;
  }

  // appsByJob indexes GET /v1/cluster's applications by job id.
  function appsByJob(cl) {
    const m = new Map();
    for (const a of (cl && cl.apps) || []) if (a.job_id) m.set(a.job_id, a);
    return m;
  }

  function progressCell(j, runtimes) {
    if (j.state === 'parked') return el('span', 'parked: ' + (j.diagnostics || 'cluster forgot it'), 'muted');
    if (j.state === 'admitted' || !j.running_at) return el('span', 'admitted, waiting for containers', 'muted');
    const expected = runtimes[j.kind];
    const elapsed = age(j.running_at);
    if (!expected || elapsed === null) return el('span', 'no runtime history for ' + j.kind, 'muted');
    const p = Math.min(99, Math.floor((100 * elapsed) / expected));
    const wrap = el('span', null, 'progress');
    const bar = el('progress');
    bar.max = 100;
    bar.value = p;
    bar.title = p + ' % of the expected ' + dur(expected) + ' (EWMA of ' + j.kind + ')';
    wrap.append(bar, el('span', ' ~' + p + ' %' + (elapsed > expected ? ', over' : '')));
    wrap.title = 'running ' + dur(elapsed) + ' of the ' + dur(expected) + ' expected (EWMA of ' + j.kind + ')' +
      (elapsed > expected ? ': over the expected runtime' : '');
    return wrap;
  }

  function nodesCell(a) {
    if (!a) return el('span', '—', 'muted');
    const shown = a.nodes.slice(0, 4).map((n) => n.node + '×' + n.containers).join(', ');
    const rest = a.nodes_total - Math.min(4, a.nodes.length);
    const span = el('span', shown + (rest > 0 ? ' +' + rest + ' more' : ''), 'nodes-list');
    span.title = a.nodes.map((n) => n.node + ': ' + n.containers + ' containers').join('\n') +
      (a.nodes_total > a.nodes.length ? '\n… ' + (a.nodes_total - a.nodes.length) + ' more nodes' : '');
    return span;
  }

  function idAndApp(j) {
    const span = el('span', j.id);
    if (j.app_id) span.append(el('br'), el('span', j.app_id, 'muted'));
    return span;
  }

  function renderRunning(list, cl) {
    const apps = appsByJob(cl);
    const runtimes = list.kind_runtimes || {};
    const c = list.counts || {};
    $('running-total').textContent = '(' + ((c.admitted || 0) + (c.running || 0)) + ' admitted or running' + (c.parked ? ', ' + c.parked + ' parked' : '') + ')';
    fillTable('running', list.jobs, [
      [(j) => idAndApp(j), 'id'], [(j) => j.kind + ' / ' + j.user, ''], [(j) => j.state, 'state'],
      [(j) => wallOf(j.running_at || j.admitted_at), 'time'],
      [(j) => fmtDur(age(j.running_at || j.admitted_at)), 'num'],
      [(j) => progressCell(j, runtimes), ''], [(j) => nodesCell(apps.get(j.id)), ''],
    ], 'nothing admitted or running');
  }

  function share(r) {
    if (!r) return '—';
    return (100 * r.vcores).toFixed(1) + '/' + (100 * r.memory).toFixed(1);
  }

  function renderQueues(data) {
    $('queues-mode').textContent = data.enabled
      ? '(mode ' + data.mode + ', groups by ' + data.group_by + '; as of the last decision)'
      : '(fairness is off)';
    fillTable('queues', data.queues.map((q) => Object.assign({ id: q.name }, q)), [
      [(q) => q.name, 'id'], [(q) => q.class, ''], [(q) => q.level || '—', ''],
      [(q) => q.guarantee, 'guarantee'], [(q) => share(q.entitled), ''], [(q) => share(q.owed), 'owed'],
      [(q) => share(q.held), ''], [(q) => share(q.received), ''], [(q) => Number(q.deficit).toFixed(3), ''],
      [(q) => q.pending, ''],
    ], 'no queue');
    for (const [i, q] of data.queues.entries()) {
      if (q.reason) $('queues').tBodies[0].rows[i].title = q.reason;
    }
  }

  // goodnessLegend draws the colour key of the node tiles: ln G from e to
  // e⁴, and the grey of a node without a record.
  function goodnessLegend(from) {
    const box = $('nodes-legend');
    box.replaceChildren();
    const s = svg('svg', { width: 340, height: 34, viewBox: '0 0 340 34', role: 'img', class: 'g-legend' });
    s.append(svg('title', {}, 'node colour: its latest goodness G, log scale from e (idle) to e⁴'));
    const steps = 40;
    for (let i = 0; i < steps; i++) {
      s.append(svg('rect', { x: 24 + i * 5, y: 2, width: 5, height: 12, fill: rgb(viridis(i / (steps - 1))) }));
    }
    const ticks = [[1, 'e'], [2, 'e²'], [3, 'e³'], [4, 'e⁴']];
    for (const [p, name] of ticks) {
      const x = 24 + ((p - 1) / 3) * 200;
      s.append(svg('line', { x1: x, y1: 14, x2: x, y2: 18, stroke: '#444' }));
      s.append(svg('text', { x: x, y: 30, 'text-anchor': 'middle', 'font-size': 10 }, name + '=' + Math.exp(p).toFixed(1)));
    }
    s.append(svg('rect', { x: 262, y: 2, width: 12, height: 12, fill: '#d4d4d4', stroke: '#888' }));
    s.append(svg('text', { x: 278, y: 12, 'font-size': 10 }, 'no record'));
    box.append(el('span', 'Colour: latest goodness G (log scale) ', 'small'), s);
    box.title = 'grey: no goodness record since ' + wallOf(from);
  }

  function histogramBar(h, total) {
    const box = $('nodes-histogram');
    box.replaceChildren();
    if (!total) return;
    const s = svg('svg', { width: '100%', height: 14, viewBox: '0 0 1000 14', preserveAspectRatio: 'none', role: 'img' });
    s.append(svg('title', {}, 'every node by its latest goodness: ' + h.counts.map((n, i) => g2(h.edges[i]) + '–' + g2(h.edges[i + 1]) + ': ' + n).join(', ') + ', no record: ' + h.no_record));
    let x = 0;
    const seg = (n, fill, title) => {
      if (!n) return;
      const w = (1000 * n) / total;
      const r = svg('rect', { x: x, y: 0, width: w, height: 14, fill: fill });
      r.append(svg('title', {}, title + ': ' + n + ' nodes'));
      s.append(r);
      x += w;
    };
    h.counts.forEach((n, i) => seg(n, rgb(viridis((i + 0.5) / h.counts.length)), 'G ' + g2(h.edges[i]) + '–' + g2(h.edges[i + 1])));
    seg(h.no_record, '#d4d4d4', 'no record');
    box.append(s);
  }

  function nodeTile(n) {
    const tile = el('div', null, 'node');
    tile.setAttribute('role', 'listitem');
    tile.dataset.node = n.name;
    const g = n.goodness;
    const recAge = g ? age(g.at) : null;
    const stale = recAge !== null && recAge > STALE_RECORD_SECONDS;
    if (g && n.g !== null && n.g !== undefined) {
      const c = viridis(gT(n.g));
      tile.style.backgroundColor = rgb(c);
      tile.style.color = ink(c);
      if (stale) tile.classList.add('stale');
    } else {
      tile.classList.add('no-record');
    }
    const usedV = n.capacity.vcores - n.free.vcores;
    const usedM = n.capacity.memory_mb - n.free.memory_mb;
    tile.append(el('span', n.name, 'node-name'));
    const meter = el('meter');
    meter.min = 0;
    meter.max = n.capacity.vcores || 1;
    meter.value = Math.max(0, usedV);
    tile.append(meter);
    const ageText = recAge !== null ? ' · ' + fmtDur(Math.max(0, recAge)) + ' old' : '';
    tile.append(el('span', (n.g !== null && n.g !== undefined ? 'G ' + g2(n.g) : (g ? 'no G' : 'no record')) + (g ? ' · cpu ' + pct(g.usage.cpu) + ageText : ''), 'node-g'));
    const lines = [n.name,
      'vcores ' + usedV + ' of ' + n.capacity.vcores + ' allocated, memory ' + gib(usedM) + ' of ' + gib(n.capacity.memory_mb) + ' GiB',
      n.containers + ' containers: ' + (n.apps.map((a) => (a.kind || a.app_id) + (a.job_id ? ' (' + a.job_id + ')' : '') + ' ×' + a.containers).join(', ') || 'none') +
        (n.apps_total > n.apps.length ? ', … ' + (n.apps_total - n.apps.length) + ' more' : '')];
    if (g) {
      const u = g.usage;
      lines.push('G ' + g2(n.g) + ' at ' + wallOf(g.at) + ', ' + dur(recAge) + ' ago' + (stale ? ' (stale: grey)' : '') +
        ' (' + g.chosen + ' beside ' + g.given + '; reward credited ' + g2(g.g) + ')',
        'CPU ' + pct(u.cpu) + ', I/O wait ' + pct(u.iowait) + ', disk ' + mbps(u.disk_read) + '/' + mbps(u.disk_write) +
        ' MB/s r/w, net ' + mbps(u.net_recv) + '/' + mbps(u.net_sent) + ' MB/s in/out');
    } else {
      lines.push('no goodness record in the window');
    }
    tile.title = lines.join('\n');
    return tile;
  }

  function renderNodes(data) {
    gScale = data.scale || gScale;
    const grid = $('nodes');
    grid.replaceChildren();
    goodnessLegend(data.goodness_from);
    if (!data.available) {
      $('nodes-total').textContent = '';
      $('nodes-summary').textContent = 'No view of the cluster yet (the engine has not read it).';
      $('nodes-histogram').replaceChildren();
      $('nodes-more').hidden = true;
      return;
    }
    const c = data.capacity, f = data.free;
    $('nodes-total').textContent = '(' + data.total + ')';
    $('nodes-summary').textContent = 'Allocated: ' + (c.vcores - f.vcores) + ' of ' + c.vcores + ' vcores, ' +
      gib(c.memory_mb - f.memory_mb) + ' of ' + gib(c.memory_mb) + ' GiB · mean G ' + g2(data.histogram.mean_g) +
      ' · read ' + wallOf(data.read_at) + ' (' + dur(age(data.read_at)) + ' ago)';
    histogramBar(data.histogram, data.total);
    for (const n of data.nodes) grid.append(nodeTile(n));
    const more = $('nodes-more');
    more.hidden = data.total <= data.nodes.length;
    more.textContent = 'Showing ' + data.nodes.length + ' of ' + data.total + ' nodes (by name); the bar above counts every node.';
  }

  // priorText describes a row before any observation: uniform but for the
  // kind's own cell, lowered by learning.self_prior — a prior, not learned.
  function priorText(prefs) {
    const k = prefs.kinds_known, sp = (prefs.config && prefs.config.self_prior) || 0;
    if (!sp || k < 2) return 'uniform over the kinds';
    const self = Math.exp(-sp), z = self + k - 1;
    return 'uniform over the other kinds, each kind\'s own cell lowered by learning.self_prior = ' + sp +
      ' (π(a | a) = ' + (self / z).toFixed(2) + ' against ' + (1 / z).toFixed(2) + ' with ' + k + ' kinds): a prior, not learned';
  }

  function renderHeatmap(svgText, prefs) {
    const doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
    if (doc.getElementsByTagName('parsererror').length > 0) throw new Error('heatmap: the server sent an SVG that does not parse');
    $('heatmap-container').replaceChildren(document.importNode(doc.documentElement, true));
    let s = prefs.kinds_known + ' kinds. ';
    if (!prefs.observations) {
      s += 'No observation yet: every row is still the prior (grey), ' + priorText(prefs) + '.';
    } else {
      s += prefs.observations + ' observations; baseline Ḡ = ' + Number(prefs.baseline).toFixed(2) + ' (' + prefs.config.baseline +
        ' mode: the mean reward so far, which each new reward is compared with).';
    }
    if (prefs.kinds_known > HEATMAP_KINDS) s += ' The matrix shows the ' + HEATMAP_KINDS + ' most observed kinds.';
    $('prefs-summary').textContent = s;
  }

  // renderTrend draws mean G per bucket as a line over its min–max band.
  function renderTrend(tr) {
    const box = $('trend');
    box.replaceChildren();
    const bucket = fmtDur(tr.bucket_seconds) + (simulated() ? ' simulated' : '');
    $('trend-caption').textContent = tr.total
      ? 'Mean goodness G per ' + bucket + ' bucket over ' + tr.total + ' observations (band: min–max), ' +
        wallOf(tr.from) + ' to ' + wallOf(tr.to) + '. G ranges over [e, e⁴] = [' + g2(tr.scale.min) + ', ' + g2(tr.scale.max) + '].'
      : 'No goodness observation in the window yet.';
    if (!tr.total) return;
    const W = 640, H = 180, L = 44, R = 10, T = 10, B = 34;
    const vals = tr.buckets.filter((b) => b.count > 0);
    const hi = Math.min(tr.scale.max, Math.max(...vals.map((b) => b.max_g)) * 1.1);
    const lo = tr.scale.min;
    const x = (i) => L + ((W - L - R) * (i + 0.5)) / tr.buckets.length;
    const y = (g) => T + (H - T - B) * (1 - (g - lo) / (hi - lo || 1));
    const s = svg('svg', { id: 'trend-svg', width: '100%', viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'font-size': 10 });
    s.append(svg('title', {}, 'mean goodness per bucket'));
    s.append(svg('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#888' }), svg('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#888' }));
    for (let k = 0; k <= 4; k++) {
      const g = lo + ((hi - lo) * k) / 4;
      s.append(svg('text', { x: L - 4, y: y(g) + 3, 'text-anchor': 'end' }, g2(g)));
      s.append(svg('line', { x1: L, y1: y(g), x2: W - R, y2: y(g), stroke: '#eee' }));
    }
    s.append(svg('text', { x: 10, y: (H - B) / 2, transform: 'rotate(-90 10 ' + (H - B) / 2 + ')', 'text-anchor': 'middle' }, 'G'));
    const ix = [0, Math.floor(tr.buckets.length / 2), tr.buckets.length - 1];
    const hms = (d) => pad(d.getHours()) + ':' + pad(d.getMinutes()) + ':' + pad(d.getSeconds());
    for (const i of ix) {
      const t = Date.parse(tr.buckets[i].from);
      const w = toWall(t);
      let label = w === null ? '—' : hms(new Date(w));
      if (simulated()) label += ' (sim ' + new Date(t).toISOString().slice(11, 16) + ')';
      s.append(svg('text', { x: x(i), y: H - B + 14, 'text-anchor': i === 0 ? 'start' : i === ix[2] ? 'end' : 'middle' }, label));
    }
    s.append(svg('text', { x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle', fill: '#555' },
      'wall time (' + zone(new Date()) + ')' + (simulated() ? '; simulated clock in UTC' : '')));
    let band = '', line = '';
    tr.buckets.forEach((b, i) => {
      if (!b.count) { line += ' '; return; }
      band += 'M' + x(i).toFixed(1) + ',' + y(b.min_g).toFixed(1) + 'L' + x(i).toFixed(1) + ',' + y(b.max_g).toFixed(1);
      line += (line.endsWith(' ') || line === '' ? 'M' : 'L') + x(i).toFixed(1) + ',' + y(b.mean_g).toFixed(1);
    });
    s.append(svg('path', { d: band, stroke: '#9ed6d3', 'stroke-width': 4, fill: 'none', class: 'band' }));
    s.append(svg('path', { d: line.replace(/ /g, ''), stroke: '#21918c', 'stroke-width': 2, fill: 'none', class: 'mean' }));
    for (const [i, b] of tr.buckets.entries()) {
      if (!b.count) continue;
      const c = svg('circle', { cx: x(i), cy: y(b.mean_g), r: 2.5, fill: '#21918c' });
      c.append(svg('title', {}, wallOf(b.from) + ': mean G ' + g2(b.mean_g) + ' (' + b.count + ' observations, ' + g2(b.min_g) + '–' + g2(b.max_g) + ')'));
      s.append(c);
    }
    box.append(s);
  }

  function renderProfiles(p) {
    const note = $('profiles-note');
    if (p === null) {
      note.textContent = '(the daemon runs without a profile model)';
      fillTable('profiles', [], [], 'no profile model');
      return;
    }
    note.textContent = '(' + p.observations + ' node observations' + (p.total > p.kinds.length ? '; ' + p.kinds.length + ' of ' + p.total + ' kinds' : '') + ')';
    fillTable('profiles', p.kinds, [
      [(k) => k.kind, ''], [(k) => (k.known ? k.ticks + ' ticks' : 'prior: never observed'), 'num'],
      [(k) => k.dominant, ''], [(k) => pct(k.demand.cpu), 'num'], [(k) => pct(k.demand.iowait), 'num'],
      [(k) => mbps(k.demand.disk_read_bps), 'num'], [(k) => mbps(k.demand.disk_write_bps), 'num'],
      [(k) => mbps(k.demand.net_in_bps), 'num'], [(k) => mbps(k.demand.net_out_bps), 'num'],
    ], 'no kind profiled yet: no learning tick has observed a node');
  }

  function stageList(d) {
    const table = el('table', null, 'stages');
    const head = el('tr');
    for (const h of ['stage', 'in → out', 'dropped (job: reason)', 'note']) { const th = el('th', h); th.scope = 'col'; head.append(th); }
    table.append(el('thead'), el('tbody'));
    table.tHead.append(head);
    for (const s of d.stages || []) {
      const tr = el('tr');
      tr.append(el('td', s.name), el('td', s.in + ' → ' + s.out, 'num'));
      const drops = el('td');
      for (const x of s.dropped || []) drops.append(el('div', x.job_id + ': ' + x.reason, 'drop'));
      if (s.omitted) drops.append(el('div', '… ' + s.omitted + ' more', 'muted'));
      tr.append(drops, el('td', s.note || ''));
      table.tBodies[0].append(tr);
    }
    return table;
  }

  function decisionItem(d, open) {
    const li = el('li');
    li.dataset.decision = d.chosen || '';
    const det = el('details');
    det.open = open; // the newest: it explains the queue's reasons
    const sum = el('summary');
    sum.append(el('time', wallOf(d.at, true) + ' ', 'when'));
    sum.append(el('span', d.chosen ? 'admitted ' + d.chosen_kind + ' (' + d.chosen + ')' : 'nothing fits', 'chosen'));
    if (d.forced) sum.append(el('span', 'forced: ' + d.forced, 'tag'));
    if (d.reserved && d.reserved === d.chosen) sum.append(el('span', 'held the reservation', 'tag'));
    if (d.shadow) sum.append(el('span', 'shadow; FIFO admitted ' + (d.fifo_choice || '—'), 'tag'));
    if (d.app_id) sum.append(el('span', d.app_id, 'app'));
    det.append(sum);
    const body = el('div', null, 'decision-body');
    const ctx = (d.context || []).map((c) => c.kind + ' (weight ' + Number(c.weight).toFixed(2) + ')').join(', ');
    body.append(el('div', 'Running: ' + (ctx || 'nothing'), 'cands'));
    const cands = (d.candidates || []).slice().sort((a, b) => b.prob - a.prob).slice(0, 5);
    if (cands.length) body.append(el('div', 'Candidates: ' + cands.map((c) => c.kind + ' ' + (100 * c.prob).toFixed(1) + ' %').join(', '), 'cands'));
    if (d.note) body.append(el('div', 'Note: ' + d.note, 'cands'));
    body.append(stageList(d));
    body.append(el('div', 'Passed over (fit, ahead in the queue, not chosen): ' + ((d.passed || []).join(', ') || 'none'), 'passed'));
    if ((d.blocked || []).length) body.append(el('div', 'Blocked (oldest that did not fit): ' + d.blocked.join(', '), 'passed'));
    if (d.reserved && d.reserved !== d.chosen) body.append(el('div', 'Reserved for: ' + d.reserved, 'passed'));
    det.append(body);
    li.append(det);
    return li;
  }

  function renderDecisions(data) {
    const ol = $('decisions');
    ol.replaceChildren();
    if (data.decisions.length === 0) { ol.append(el('li', 'no decisions yet', 'muted')); return; }
    data.decisions.forEach((d, i) => ol.append(decisionItem(d, i === 0)));
  }

  // markLayout exports where the columns and sections landed, for the
  // tests and for a person checking the layout: "columns" when the two
  // columns sit side by side.
  function markLayout() {
    const a = $('col-jobs').getBoundingClientRect(), b = $('col-cluster').getBoundingClientRect();
    const main = $('main');
    main.dataset.layout = b.left >= a.right - 1 && Math.abs(a.top - b.top) < 2 ? 'columns' : 'stacked';
    for (const id of ['nodes-section', 'heatmap-container', 'queue-section']) {
      main.dataset[id.replace(/-(.)/g, (_, c) => c.toUpperCase()) + 'Top'] = String(Math.round($(id).getBoundingClientRect().top + window.scrollY));
    }
  }

  // ---- refresh ----

  function requests() {
    return {
      clock: api('/v1/clock'),
      summary: api('/v1/summary'),
      queue: api('/v1/jobs?state=pending&limit=' + QUEUE_ROWS + '&estimate=1'),
      active: api('/v1/jobs?state=admitted,running,parked&limit=200&estimate=1'),
      decisions: api('/v1/decisions?limit=10'),
      cluster: api('/v1/cluster?limit=1000'),
      nodes: api('/v1/nodes?limit=' + NODE_TILES),
      heatmap: api('/v1/preferences/heatmap.svg?top=' + HEATMAP_KINDS, 'image/svg+xml'),
      prefs: api('/v1/preferences?limit=0'), // the header only: a 1,000-kind matrix is not fetched
      trend: api('/v1/goodness/trend?buckets=60'),
      profiles: api('/v1/profiles?limit=50').catch((err) => { if (err.status === 404) return null; throw err; }),
      queues: api('/v1/queues'),
      // Replicated colocd only: 404 when colocd runs alone.
      ha: api('/v1/ha').catch((err) => { if (err.status === 404) return null; throw err; }),
    };
  }

  // renderReplica shows, replicated, which replica answered and how the
  // replicas stand (role, epoch, applied index, lag behind the leader).
  function renderReplica(h) {
    const span = $('replica');
    if (!h) { span.hidden = true; return; }
    const members = (h.members || []).map((m) => m.id + ' ' + m.role + ' @' + m.applied_index).join(', ');
    span.textContent = 'replica ' + h.id + ' (' + h.role + '), leader ' + (h.leader_id || 'none') +
      ', epoch ' + h.epoch + ', lag ' + h.lag + (members ? ' · ' + members : '');
    span.hidden = false;
  }

  // render draws each section whose data arrived; one that failed (or
  // throws) leaves its message in errs, and the others still draw.
  function render(d, errs) {
    const sec = (names, fn) => {
      if (names.some((n) => d[n] === undefined)) return;
      try { fn(); } catch (err) { errs.push(names.join('+') + ': ' + (err.message || err)); }
    };
    sec(['clock'], () => showClocks());
    sec(['summary'], () => renderSummary(d.summary));
    sec(['queue'], () => renderQueue(d.queue, d.decisions ? d.decisions.decisions[0] : null));
    sec(['active'], () => renderRunning(d.active, d.cluster));
    sec(['nodes'], () => renderNodes(d.nodes));
    sec(['heatmap', 'prefs'], () => renderHeatmap(d.heatmap, d.prefs));
    sec(['trend'], () => renderTrend(d.trend));
    sec(['profiles'], () => renderProfiles(d.profiles));
    sec(['decisions'], () => renderDecisions(d.decisions));
    sec(['queues'], () => renderQueues(d.queues));
    sec(['ha'], () => renderReplica(d.ha));
  }

  let timer = null;
  async function refresh() {
    clearTimeout(timer);
    if (!token()) { showError('Enter a token to load data (or open this page with ?token=...).'); return; }
    const reqs = requests();
    const names = Object.keys(reqs);
    const results = await Promise.allSettled(names.map((n) => reqs[n]));
    const d = {}, errs = [];
    let unauthorized = false;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') { d[names[i]] = r.value; return; }
      if (r.reason && r.reason.status === 401) unauthorized = true;
      errs.push(String((r.reason && r.reason.message) || r.reason));
    });
    if (unauthorized) { showError('The token was refused (401). Enter another one.'); return; } // no point polling
    if (d.clock) clock = d.clock;
    render(d, errs);
    markLayout();
    showError(errs.join(' · '));
    timer = setTimeout(refresh, REFRESH_MS);
  }

  function init() {
    takeTokenFromURL();
    $('token-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const v = $('token-input').value.trim();
      if (v) sessionStorage.setItem(KEY, v);
      $('token-input').value = '';
      refresh();
    });
    $('token-clear').addEventListener('click', () => { sessionStorage.removeItem(KEY); refresh(); });
    refresh();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
