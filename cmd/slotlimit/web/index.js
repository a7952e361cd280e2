'use strict';
// The list of every primitive found, grouped by kind, with its state, its
// figures and plots of the last minutes, kept live by the server's events.

const keep = 10 * 60 * 1000; // the history plotted, as the server keeps it
let model = null;

function id(p) { return p.id; }

// start takes the state the stream begins with.
function start(s) {
  model = { kinds: s.kinds, writes: s.writes, prims: new Map() };
  take(s, s.history || {});
}

// take takes a round of readings; history, when given, holds each
// primitive's earlier readings, else the round's are added to the kept.
function take(r, history) {
  Object.assign(model, { seq: r.seq, t: r.t, found: r.found, cap: r.cap, findError: r.find_error || '' });
  const next = new Map();
  for (const p of r.prims) {
    const old = model.prims.get(id(p));
    let hist = history ? history[id(p)] : old && old.hist;
    hist = hist ? { t: hist.t.slice(), v: hist.v.slice() } : { t: [], v: [] };
    if (!history && hist.t[hist.t.length - 1] !== r.t) { // a round the full state already held is not added again
      hist.t.push(r.t);
      hist.v.push(p.vals);
      while (hist.t.length && hist.t[0] < r.t - keep) { hist.t.shift(); hist.v.shift(); }
    }
    next.set(id(p), Object.assign({}, p, { hist }));
  }
  model.prims = next;
}

function spec(kind) { return model.kinds.find(k => k.name === kind); }

function render() {
  const main = document.getElementById('kinds');
  const n = model.prims.size;
  let summary = `${n} ${n === 1 ? 'primitive' : 'primitives'} found`;
  if (model.found > n) summary = `sampling the first ${n} of ${model.found} found: at most ${model.cap} are sampled`;
  else summary += `; at most ${model.cap} are sampled`;
  if (model.findError) summary += ` (the last search failed: ${model.findError})`;
  document.getElementById('summary').textContent = summary;
  writeToken.ask(model.writes);

  const byKind = new Map();
  for (const p of model.prims.values()) {
    if (!byKind.has(p.kind)) byKind.set(p.kind, []);
    byKind.get(p.kind).push(p);
  }
  const sections = [];
  for (const k of model.kinds) {
    const prims = byKind.get(k.name);
    if (!prims) continue;
    let sec = main.querySelector(`section[data-kind="${k.name}"]`);
    if (!sec) {
      sec = el('section', { 'data-kind': k.name });
      sec.append(el('h2', {}, plural(k.name)), el('div', { class: 'prims' }));
    }
    const list = sec.querySelector('.prims');
    const articles = prims.map(p => renderPrim(list, k, p));
    list.replaceChildren(...articles);
    sections.push(sec);
  }
  main.replaceChildren(...sections);
  if (!n) main.replaceChildren(el('p', { class: 'note' }, 'Nothing found yet.'));
}

function label(k, name) {
  const f = k.figures.find(f => f[0] === name);
  return f ? f[1] : name;
}

function plural(name) { return name.endsWith('list') || !name.endsWith('s') ? name + 's' : name; }

function renderPrim(list, k, p) {
  let a = Array.from(list.children).find(e => e.dataset.id === p.id);
  if (!a) {
    a = el('article', { class: 'prim', 'data-id': p.id, 'data-kind': p.kind, 'data-key': p.key });
    const q = { kind: p.kind, key: p.key };
    if (p.prefix) Object.assign(q, { prefix: p.prefix, shard: String(p.shard || 0) });
    const link = el('a', { href: '/p?' + new URLSearchParams(q) }, p.key);
    a.append(link, el('span', { class: 'state' }), el('span', { class: 'error' }), el('div', { class: 'figures' }));
    (k.plots || []).forEach((pl, i) => {
      const legend = el('div', { class: 'legend' });
      pl.series.forEach((s, j) => {
        const item = el('span');
        item.append(el('span', { class: `swatch k${j}` }), label(k, s));
        legend.append(item);
      });
      const svg = document.createElementNS(SVG, 'svg');
      svg.setAttribute('class', 'plot');
      svg.setAttribute('viewBox', `0 0 ${plotWidth} ${plotHeight}`);
      svg.setAttribute('preserveAspectRatio', 'none');
      svg.setAttribute('data-plot', String(i));
      a.append(el('div', { class: 'plot-title' }, pl.title), legend, svg);
    });
  }
  a.querySelector('.state').textContent = p.state;
  a.querySelector('.error').textContent = p.error ? ' ' + p.error : '';
  const figs = a.querySelector('.figures');
  figs.replaceChildren(...k.figures.map(([name, lbl], i) => {
    const f = el('span', { 'data-figure': name });
    const v = p.vals ? p.vals[i] : null;
    f.append(lbl + ' ', el('b', {}, fmt(v)));
    return f;
  }));
  const t = p.hist.t;
  const span = Math.min(keep, Math.max(60 * 1000, t.length ? t[t.length - 1] - t[0] : 0));
  (k.plots || []).forEach((pl, i) => {
    const svg = a.querySelector(`svg[data-plot="${i}"]`);
    const top = drawPlot(svg, p.hist, pl.series.map(s => k.figures.findIndex(f => f[0] === s)), model.t, span);
    svg.previousElementSibling.previousElementSibling.textContent = `${pl.title}, 0 to ${fmt(top)}, over the last ${Math.round(span / 60000) || 1} min`;
  });
  return a;
}

function status(text, down) {
  const s = document.getElementById('status');
  s.textContent = text;
  s.classList.toggle('down', !!down);
}

const events = new EventSource('/events');
events.addEventListener('full', e => {
  start(JSON.parse(e.data));
  render();
  status('live');
  document.body.dataset.seq = String(model.seq);
});
events.addEventListener('round', e => {
  if (!model) return;
  take(JSON.parse(e.data));
  render();
  status(`live, sampled at ${new Date(model.t).toLocaleTimeString()}`);
  document.body.dataset.seq = String(model.seq);
});
events.addEventListener('error', () => status('disconnected: reconnecting…', true));
