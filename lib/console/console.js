'use strict';
// The console page. Everything a program or a tool produced (code, arguments, results, logs,
// errors, snippet names) reaches the page as text nodes and textContent only: the page never
// builds markup from a string. All URLs are relative to the page, so the console works under
// any mount path; a state-changing request is a POST with the page's CSRF token in a header.
(() => {
  const csrf = document.querySelector('meta[name="codemode-csrf"]').getAttribute('content');
  const REFRESH_MS = 1000;
  const CLIP = 400;
  const STATUSES = ['running', 'paused', 'completed', 'error', 'rejected', 'rolled_back'];

  const state = {
    filter: '',
    overview: undefined,
    overviewText: '',
    detail: undefined,
    detailText: '',
    snippets: undefined,
    snippetsText: '',
    expanded: new Set(),
    reports: new Map(), // executionId → the last rollback's report
    busy: false,
    loadError: undefined,
  };

  // ---- DOM helpers: text only ----------------------------------------------------------------

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === 'class') node.className = value;
      else if (key === 'text') node.textContent = String(value);
      else if (key === 'onclick') node.addEventListener('click', value);
      else node.setAttribute(key, value === true ? '' : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  const statusBadge = (status) => el('span', { class: `status status-${String(status).replace(/[^a-z_]/g, '')}`, 'data-status': status }, status);

  function when(ms) {
    if (typeof ms !== 'number') return '—';
    const d = new Date(ms);
    const pad = (n, w = 2) => String(n).padStart(w, '0');
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }

  function took(ms) {
    if (typeof ms !== 'number' || ms < 0) return '—';
    return ms < 1000 ? `${ms} ms` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`;
  }

  function duration(run) {
    const open = run.status === 'running' || run.status === 'paused';
    return open ? `${took(Date.now() - run.createdAt)} so far` : took(run.updatedAt - run.createdAt);
  }

  // A value's text, cut at `limit` characters with a button that shows all of it (the choice
  // survives the page's refreshes, keyed by `key`).
  function clipped(text, key, limit = CLIP) {
    if (text === undefined || text === null) return el('span', { class: 'muted' }, '—');
    const long = text.length > limit;
    const open = state.expanded.has(key);
    const pre = el('pre', { class: 'value', 'data-key': key }, long && !open ? `${text.slice(0, limit)}…` : text);
    if (!long) return pre;
    const button = el('button', {
      type: 'button',
      class: 'expand',
      'data-key': key,
      onclick: () => {
        if (open) state.expanded.delete(key);
        else state.expanded.add(key);
        render();
      },
    }, open ? 'Show less' : `Show all (${text.length} characters)`);
    return el('div', {}, pre, button);
  }

  function notice(text, bad) {
    const node = document.getElementById('notice');
    node.textContent = text;
    node.className = bad ? 'bad' : '';
    node.hidden = false;
  }

  // ---- Requests ------------------------------------------------------------------------------

  // An answer's JSON and text, or an Error carrying the server's message (a text answer, as a
  // refused request gets, is that message).
  async function answerOf(response) {
    const text = await response.text();
    let body;
    try {
      body = JSON.parse(text);
    } catch {
      body = { error: text || response.statusText };
    }
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    return { body, text };
  }

  async function getJson(url) {
    return answerOf(await fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store' }));
  }

  async function post(url, payload) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-codemode-csrf': csrf },
      body: JSON.stringify(payload || {}),
    });
    return (await answerOf(response)).body;
  }

  const runUrl = (id) => `api/executions/${encodeURIComponent(id)}`;

  // ---- Routing -------------------------------------------------------------------------------

  function route() {
    const hash = location.hash.slice(1);
    if (hash.startsWith('run/')) return { view: 'run', id: decodeURIComponent(hash.slice(4)) };
    if (hash === 'snippets') return { view: 'snippets' };
    return { view: 'runs' };
  }

  // ---- Actions -------------------------------------------------------------------------------

  async function act(description, work) {
    if (state.busy) return;
    state.busy = true;
    render();
    try {
      const text = await work();
      notice(text, false);
    } catch (error) {
      notice(`${description} failed: ${error.message}`, true);
    } finally {
      state.busy = false;
      await refresh(true);
    }
  }

  function approve(executionId, seq) {
    return act('Approval', async () => {
      const out = await post(`${runUrl(executionId)}/approve`, { seq });
      if (out.status === 'error') throw new Error(out.error);
      const parts = [`Approved step ${seq} of ${executionId}: ${out.status}.`];
      if (out.note) parts.push(out.note);
      if (out.status === 'paused' && out.pending) parts.push(`Now waiting: ${out.pending.map((p) => `${p.connector}.${p.method} (step ${p.seq})`).join(', ')}.`);
      return parts.join(' ');
    });
  }

  function reject(executionId, seq) {
    return act('Rejection', async () => {
      const out = await post(`${runUrl(executionId)}/reject`, { seq });
      if (!out.rejected) throw new Error(`step ${seq} of ${executionId} was no longer waiting`);
      return `Rejected step ${seq} of ${executionId}.`;
    });
  }

  function rollback(executionId) {
    return act('Rollback', async () => {
      const report = await post(`${runUrl(executionId)}/rollback`, {});
      state.reports.set(executionId, report);
      // Calls whose tool has no revert stay in force although the rollback succeeded.
      const stays = noRevert(report).length;
      return report.complete
        ? `Rolled back ${executionId}: ${report.reverted} action(s) reverted${stays > 0 ? `; ${stays} stay in force (no revert)` : ''}.`
        : `Rollback of ${executionId} incomplete: ${report.reverted} reverted, ${report.leftInForce.length} left in force${stays > 0 ? `, ${stays} more without a revert` : ''}.`;
    });
  }

  // The calls a rollback found in force whose tool has no revert (their effect stays).
  function noRevert(report) {
    return (report.calls || []).filter((c) => c.fate === 'no_revert' && !c.inDoubt);
  }

  // ---- Views ---------------------------------------------------------------------------------

  function pendingCard(p, showRun) {
    const what = p.kind === 'program' ? 'the program itself (before it runs)' : `${p.connector}.${p.method}`;
    return el('div', { class: 'card pending', 'data-execution': p.executionId, 'data-seq': p.seq },
      el('div', {},
        el('strong', {}, what), ` — step ${p.seq}`, p.inDoubt ? ' (in doubt: it may have taken effect)' : '',
        showRun ? [' of ', el('a', { href: `#run/${encodeURIComponent(p.executionId)}` }, p.executionId)] : ''),
      clipped(p.args, `pending:${p.executionId}:${p.seq}`),
      el('div', { class: 'actions' },
        el('button', { type: 'button', class: 'approve', 'data-seq': p.seq, disabled: state.busy, onclick: () => approve(p.executionId, p.seq) }, p.inDoubt ? `Retry step ${p.seq}` : `Approve step ${p.seq}`),
        el('button', { type: 'button', class: 'reject', 'data-seq': p.seq, disabled: state.busy, onclick: () => reject(p.executionId, p.seq) }, `Reject step ${p.seq}`)));
  }

  function runsView() {
    const o = state.overview;
    if (o === undefined) return el('p', { class: 'muted' }, state.loadError || 'Loading…');
    const total = Object.values(o.counts).reduce((a, b) => a + b, 0);
    const filterButton = (value, label) => el('button', {
      type: 'button',
      'data-filter': value,
      'aria-pressed': String(state.filter === value),
      onclick: () => {
        state.filter = value;
        refresh(true);
      },
    }, label);
    const rows = o.executions.map((run) => el('tr', { class: 'run', 'data-id': run.id, 'data-status': run.status },
      el('td', {}, statusBadge(run.status)),
      el('td', {}, el('a', { href: `#run/${encodeURIComponent(run.id)}` }, run.id)),
      el('td', {}, when(run.createdAt)),
      el('td', {}, duration(run)),
      el('td', {}, String(run.calls), run.waiting.length > 0 ? ` (step ${run.waiting.join(', ')} waiting)` : ''),
      el('td', { class: 'program' }, run.program, run.error ? el('div', { class: 'muted' }, run.error) : '')));
    return el('div', {},
      o.pending.length > 0 ? el('section', { id: 'pending' }, el('h2', {}, `Awaiting a decision (${o.pending.length})`), o.pending.map((p) => pendingCard(p, true))) : '',
      el('section', { id: 'runs' },
        el('h2', {}, 'Executions, newest first'),
        el('div', { class: 'filters' },
          filterButton('', `all (${total})`),
          STATUSES.map((s) => filterButton(s, `${s} (${o.counts[s] || 0})`))),
        rows.length === 0
          ? el('p', { class: 'muted', id: 'empty' }, state.filter ? `No ${state.filter} executions.` : 'No executions yet.')
          : el('table', {}, el('thead', {}, el('tr', {}, ['status', 'execution', 'started', 'took', 'calls', 'program'].map((h) => el('th', {}, h)))), el('tbody', {}, rows))));
  }

  function runView(id) {
    const run = state.detail;
    if (run === undefined || run.id !== id) return el('p', { class: 'muted' }, state.loadError || 'Loading…');
    const o = state.overview;
    const canRollback = o === undefined ? true : o.canRollback;
    const report = state.reports.get(run.id);
    const leftInForce = report ? report.leftInForce : run.leftInForce;
    const calls = run.calls.map((c) => el('tr', { class: 'call', 'data-seq': c.seq, 'data-state': c.state },
      el('td', {}, String(c.seq)),
      el('td', {}, `${c.connector}.${c.method}`, c.requiresApproval ? el('div', { class: 'muted' }, 'requires approval') : ''),
      el('td', {}, statusBadge(c.state), c.revertError ? el('div', { class: 'muted' }, `revert failed: ${c.revertError}`) : ''),
      el('td', { class: 'args' }, clipped(c.args, `args:${run.id}:${c.seq}`)),
      el('td', { class: 'result' }, clipped(c.result, `result:${run.id}:${c.seq}`))));
    return el('article', { id: 'run', 'data-id': run.id, 'data-status': run.status },
      el('p', {}, el('a', { href: '#', id: 'back' }, '← all executions')),
      el('h2', {}, 'Execution ', el('code', {}, run.id), ' ', statusBadge(run.status)),
      el('dl', { class: 'meta' },
        el('dt', {}, 'started'), el('dd', {}, when(run.createdAt)),
        el('dt', {}, 'last change'), el('dd', {}, when(run.updatedAt)),
        el('dt', {}, 'took'), el('dd', { id: 'took' }, duration(run)),
        el('dt', {}, 'connectors'), el('dd', {}, (run.connectors || []).join(', ') || '—'),
        run.idempotencyKey ? [el('dt', {}, 'idempotency key'), el('dd', {}, run.idempotencyKey)] : '',
        run.heldBy ? [el('dt', {}, 'held by'), el('dd', {}, run.heldBy)] : ''),
      run.status === 'running' && !run.heldBy
        ? el('p', { class: 'card', id: 'awaiting-runtime' }, 'No process runs it now (it was approved from a console without connectors, or the process running it stopped): the application\'s runtime takes it up when it next recovers runs (recover(), or recoverEveryMs).')
        : '',
      run.pending.length > 0 ? el('section', { id: 'pending' }, el('h2', {}, 'Awaiting a decision'), run.pending.map((p) => pendingCard(p, false))) : '',
      el('section', { id: 'program' }, el('h2', {}, 'Program'), clipped(run.program, `program:${run.id}`, 4000)),
      el('section', { id: 'outcome' }, el('h2', {}, 'Outcome'),
        run.result !== undefined && run.result !== null ? clipped(run.result, `outcome:${run.id}`)
          : run.error !== undefined && run.error !== null ? el('pre', { class: 'error' }, run.error)
            : el('p', { class: 'muted' }, run.status === 'running' || run.status === 'paused' ? `Not ended (${run.status}).` : '—')),
      el('section', { id: 'logs' }, el('h2', {}, `Logs (${run.logs.length})`),
        run.logs.length === 0 ? el('p', { class: 'muted' }, run.status === 'running' || run.status === 'paused' ? 'Recorded when the run ends.' : 'None.') : clipped(run.logs.join('\n'), `logs:${run.id}`, 4000)),
      el('section', { id: 'calls' }, el('h2', {}, `Calls (${run.calls.length})`),
        calls.length === 0 ? el('p', { class: 'muted' }, 'None.')
          : el('table', {}, el('thead', {}, el('tr', {}, ['step', 'call', 'state', 'arguments', 'result'].map((h) => el('th', {}, h)))), el('tbody', {}, calls))),
      el('section', { id: 'rollback' }, el('h2', {}, 'Rollback'),
        el('p', { class: 'muted' }, canRollback
          ? 'Reverts the calls whose effect is or may be in force, newest first, through their tools\' revert.'
          : o.rollbackRefusal || 'Rollback needs the application\'s connectors: roll back from the application, or from the console mounted in it.'),
        el('button', { type: 'button', class: 'rollback', disabled: state.busy || !canRollback || run.status === 'running', onclick: () => rollback(run.id) }, 'Roll back'),
        report ? el('div', { class: 'report', id: 'rollback-report' }, `${report.complete && noRevert(report).length === 0 ? 'Complete' : 'Incomplete'}: ${report.reverted} action(s) reverted.`, report.error ? el('pre', { class: 'error' }, report.error) : '') : '',
        report && noRevert(report).length > 0
          ? el('div', { class: 'report', id: 'no-revert' }, el('strong', {}, 'In force (their tool has no revert):'), el('ul', {}, noRevert(report).map((c) => el('li', {}, `${c.connector}.${c.method} (step ${c.seq})`))))
          : '',
        leftInForce && leftInForce.length > 0
          ? el('div', { class: 'report' }, el('strong', {}, 'Left in force:'), el('ul', {}, leftInForce.map((item) => el('li', {}, `${item.connector}.${item.method} (step ${item.seq})${item.inDoubt ? ', in doubt' : ''}: ${item.error}`))))
          : ''));
  }

  function snippetsView() {
    const list = state.snippets;
    if (list === undefined) return el('p', { class: 'muted' }, state.loadError || 'Loading…');
    return el('section', { id: 'snippets' }, el('h2', {}, `Snippets (${list.length})`),
      list.length === 0 ? el('p', { class: 'muted' }, 'No snippets saved.') : list.map((s) => el('div', { class: 'card snippet' },
        el('strong', { class: 'snippet-name' }, s.name), ' ', el('span', { class: 'muted' }, `saved ${when(s.savedAt)}`),
        s.description ? el('p', { class: 'description' }, s.description) : '',
        (s.connectors || []).length > 0 ? el('p', { class: 'muted' }, `connectors: ${s.connectors.join(', ')}`) : '',
        clipped(s.code, `snippet:${s.name}`, 2000),
        s.inputSchema ? el('details', {}, el('summary', {}, 'input schema'), el('pre', {}, s.inputSchema)) : '')));
  }

  function render() {
    const r = route();
    const o = state.overview;
    if (o !== undefined) {
      document.getElementById('runtime').textContent = `runtime "${o.runtime}"`;
      const note = document.getElementById('mode-note');
      note.hidden = o.mode !== 'store';
      note.textContent = 'Standalone console (no connectors): an approval is recorded here, and the application\'s runtime runs the approved call when it next recovers runs.';
    }
    const view = r.view === 'run' ? runView(r.id) : r.view === 'snippets' ? snippetsView() : runsView();
    document.getElementById('main').replaceChildren(view);
  }

  // ---- Live updates: polling -----------------------------------------------------------------

  let refreshing = false;
  let again = false;

  async function refresh(force) {
    if (refreshing) {
      again = again || force;
      return;
    }
    refreshing = true;
    let changed = force === true;
    const live = document.getElementById('live');
    try {
      const r = route();
      const overview = await getJson(`api/overview${state.filter ? `?status=${encodeURIComponent(state.filter)}` : ''}`);
      if (overview.text !== state.overviewText) {
        state.overview = overview.body;
        state.overviewText = overview.text;
        changed = true;
      }
      if (r.view === 'run') {
        const detail = await getJson(runUrl(r.id));
        if (detail.text !== state.detailText) {
          state.detail = detail.body;
          state.detailText = detail.text;
          changed = true;
        }
      } else if (r.view === 'snippets') {
        const snippets = await getJson('api/snippets');
        if (snippets.text !== state.snippetsText) {
          state.snippets = snippets.body;
          state.snippetsText = snippets.text;
          changed = true;
        }
      }
      state.loadError = undefined;
      live.textContent = 'live';
      live.className = 'muted';
    } catch (error) {
      state.loadError = `Could not load: ${error.message}`;
      live.textContent = 'disconnected';
      live.className = 'stale';
      changed = true;
    } finally {
      refreshing = false;
    }
    // A running run's "so far" moves on even when nothing else changed.
    if (changed || (state.detail && state.detail.status === 'running')) render();
    if (again) {
      again = false;
      await refresh(true);
    }
  }

  window.addEventListener('hashchange', () => {
    state.detail = undefined;
    state.detailText = '';
    render();
    refresh(true);
  });
  render();
  refresh(true);
  setInterval(() => refresh(false), REFRESH_MS);
})();
