'use strict';
// One primitive's own page: its state, its tables, and, with writes on,
// its writes. It reads the detail once a second.

const query = new URLSearchParams(location.search);
const kind = query.get('kind') || '', key = query.get('key') || '';
const where = { kind, key };
if (query.has('prefix')) Object.assign(where, { prefix: query.get('prefix'), shard: query.get('shard') || '0' });
document.getElementById('kind').textContent = kind;
document.getElementById('key').textContent = key;
document.title = `slotlimit ${kind} ${key}`;

function render(d) {
  writeToken.ask(d.writes);
  const dl = document.getElementById('summary');
  dl.replaceChildren();
  for (const [label, value] of d.summary || []) dl.append(el('dt', {}, label), el('dd', {}, value));
  document.getElementById('note').textContent = d.note || '';
  const tables = (d.tables || []).map(t => {
    const div = el('div', { class: 'table', 'data-title': t.title });
    div.append(el('h2', {}, `${t.title} (${t.rows.length})`));
    const table = el('table');
    const head = el('tr');
    for (const c of t.columns) head.append(el('th', {}, c));
    if (d.writes && t.actions) head.append(el('th', {}, ''));
    table.append(head);
    for (const row of t.rows) {
      const tr = el('tr');
      for (const c of row) tr.append(el('td', {}, c));
      if (d.writes && t.actions) {
        const td = el('td');
        for (const a of t.actions) td.append(button(a, row[a.arg_col || 0]));
        tr.append(td);
      }
      table.append(tr);
    }
    div.append(table);
    return div;
  });
  document.getElementById('tables').replaceChildren(...tables);
  const actions = document.getElementById('actions');
  actions.replaceChildren(...(d.writes ? (d.actions || []).map(a => button(a, a.arg)) : []));
}

function button(a, arg) {
  const b = el('button', { type: 'button', class: 'write', 'data-action': a.name }, a.label);
  b.addEventListener('click', () => write(a, arg));
  return b;
}

async function write(a, arg) {
  if (!confirm(a.confirm + (arg ? `\n\n${arg}` : ''))) return;
  const body = new URLSearchParams({ kind, key, action: a.name });
  if (arg) body.append('arg', arg);
  const result = document.getElementById('result');
  try {
    const r = await fetch('/api/write', { method: 'POST', headers: { 'X-Slotlimit-Token': writeToken.get() }, body });
    const j = await r.json();
    result.textContent = j.message;
    result.classList.toggle('failed', !j.done);
  } catch (e) {
    result.textContent = String(e);
    result.classList.add('failed');
  }
  result.hidden = false;
  load();
}

async function load() {
  const status = document.getElementById('status');
  try {
    const r = await fetch('/api/detail?' + new URLSearchParams(where));
    const d = await r.json();
    render(d);
    // A failure of Redis's (502) leaves the state unreadable; any other
    // error is an answer in the commands' words: no such primitive (404),
    // or a key that holds a value of another type (409).
    let said = `read at ${new Date().toLocaleTimeString()}`;
    if (d.error) said = r.status === 502 ? 'unreadable: ' + d.error : d.error;
    status.textContent = said;
    status.classList.toggle('down', !!d.error);
    document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + 1);
  } catch (e) {
    status.textContent = 'disconnected: ' + e;
    status.classList.add('down');
  }
}

load();
setInterval(load, 1000);
