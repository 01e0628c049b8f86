// colocd status page. Holds no data itself: everything comes from the
// authenticated API with the bearer token kept in sessionStorage.
'use strict';

(function () {
  const KEY = 'colocd.token';
  const REFRESH_MS = 5000;
  const $ = (id) => document.getElementById(id);

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

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  // Ages are measured against the daemon's clock (serverNow), not the
  // browser's: on the simulator backend the daemon runs in virtual time.
  let serverNow = null;
  function ago(iso) {
    if (!iso) return '';
    const ref = serverNow === null ? Date.now() : serverNow;
    const s = Math.max(0, (ref - Date.parse(iso)) / 1000);
    if (s < 90) return Math.round(s) + ' s';
    if (s < 5400) return Math.round(s / 60) + ' min';
    return (s / 3600).toFixed(1) + ' h';
  }

  function fillTable(id, rows, cols) {
    const tbody = $(id).tBodies[0];
    tbody.replaceChildren();
    if (rows.length === 0) {
      const tr = el('tr');
      const td = el('td', 'none', 'empty');
      td.colSpan = $(id).tHead.rows[0].cells.length;
      tr.append(td);
      tbody.append(tr);
      return;
    }
    for (const r of rows) {
      const tr = el('tr');
      tr.dataset.job = r.id;
      for (const [get, cls] of cols) tr.append(el('td', get(r), cls));
      tbody.append(tr);
    }
  }

  async function loadJobs() {
    const data = await api('/v1/jobs?state=pending,admitted,running,parked&limit=500');
    serverNow = data.now ? Date.parse(data.now) : null;
    const pending = data.jobs.filter((j) => j.state === 'pending');
    const active = data.jobs.filter((j) => j.state !== 'pending');
    fillTable('queue', pending, [
      [(j) => j.position, ''], [(j) => j.id, 'id'], [(j) => j.kind, ''], [(j) => j.user, ''],
      [(j) => j.queue, ''], [(j) => j.resources.containers, ''], [(j) => j.skips, ''], [(j) => ago(j.created_at), ''],
    ]);
    fillTable('running', active, [
      [(j) => j.id, 'id'], [(j) => j.kind, ''], [(j) => j.user, ''], [(j) => j.state, ''],
      [(j) => j.app_id || '', 'id'], [(j) => ago(j.running_at || j.admitted_at), ''],
    ]);
    const counts = $('counts');
    counts.replaceChildren();
    const order = ['pending', 'admitted', 'running', 'parked', 'succeeded', 'failed', 'killed', 'cancelled'];
    const entries = Object.entries(data.counts || {}).sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
    for (const [state, n] of entries) {
      const li = el('li', state);
      li.dataset.state = state;
      li.append(el('b', n));
      counts.append(li);
    }
  }

  function share(r) {
    if (!r) return '—';
    return (100 * r.vcores).toFixed(1) + '/' + (100 * r.memory).toFixed(1);
  }

  async function loadQueues() {
    const data = await api('/v1/queues');
    $('queues-mode').textContent = data.enabled
      ? '(mode ' + data.mode + ', groups by ' + data.group_by + '; as of the last decision)'
      : '(fairness is off)';
    fillTable('queues', data.queues.map((q) => Object.assign({ id: q.name }, q)), [
      [(q) => q.name, 'id'], [(q) => q.class, ''], [(q) => q.level || '—', ''],
      [(q) => q.guarantee, 'guarantee'], [(q) => share(q.entitled), ''], [(q) => share(q.owed), 'owed'],
      [(q) => share(q.held), ''], [(q) => share(q.received), ''], [(q) => Number(q.deficit).toFixed(3), ''],
      [(q) => q.pending, ''],
    ]);
    for (const [i, q] of data.queues.entries()) {
      if (q.reason) $('queues').tBodies[0].rows[i].title = q.reason;
    }
  }

  async function loadHeatmap() {
    const [svgText, prefs] = await Promise.all([
      api('/v1/preferences/heatmap.svg', 'image/svg+xml'),
      api('/v1/preferences?limit=0'), // the header only: a 1,000-kind matrix is not fetched
    ]);
    const doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
    if (doc.getElementsByTagName('parsererror').length > 0) throw new Error('heatmap: the server sent an SVG that does not parse');
    $('heatmap-container').replaceChildren(document.importNode(doc.documentElement, true));
    $('prefs-summary').textContent = prefs.kinds_known + ' kinds, ' + prefs.observations +
      ' observations, baseline Ḡ = ' + Number(prefs.baseline).toFixed(2) + '.';
  }

  async function loadDecisions() {
    const data = await api('/v1/decisions?limit=10');
    const ol = $('decisions');
    ol.replaceChildren();
    if (data.decisions.length === 0) { ol.append(el('li', 'no decisions yet', 'muted')); return; }
    for (const d of data.decisions) {
      const li = el('li');
      li.append(el('span', new Date(d.at).toLocaleTimeString() + ' '));
      li.append(el('span', d.chosen ? d.chosen_kind + ' (' + d.chosen + ')' : 'nothing fits', 'chosen'));
      if (d.forced) li.append(el('span', 'forced: ' + d.forced, 'tag'));
      if (d.shadow) li.append(el('span', 'shadow; FIFO admitted ' + (d.fifo_choice || '—'), 'tag'));
      if (d.context && d.context.length) {
        li.append(el('div', 'running: ' + d.context.map((c) => c.kind + '×' + Number(c.weight).toFixed(2)).join(', '), 'cands'));
      }
      const cands = (d.candidates || []).slice().sort((a, b) => b.prob - a.prob).slice(0, 5);
      if (cands.length) {
        li.append(el('div', 'top: ' + cands.map((c) => c.kind + ' ' + (100 * c.prob).toFixed(1) + '%').join(', '), 'cands'));
      }
      ol.append(li);
    }
  }

  let timer = null;
  async function refresh() {
    clearTimeout(timer);
    if (!token()) { showError('Enter a token to load data (or open this page with ?token=...).'); return; }
    try {
      await Promise.all([loadJobs(), loadQueues(), loadHeatmap(), loadDecisions()]);
      showError('');
      $('updated').textContent = 'updated ' + new Date().toLocaleTimeString() +
        (serverNow === null ? '' : ' · cluster time ' + new Date(serverNow).toLocaleTimeString());
    } catch (err) {
      showError(err.status === 401 ? 'The token was refused (401). Enter another one.' : String(err.message || err));
      if (err.status === 401) return; // no point polling with a bad token
    }
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
