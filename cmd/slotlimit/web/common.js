'use strict';
// Shared by the page's two views: elements, the write token, and plots.

const SVG = 'http://www.w3.org/2000/svg';

// el makes an element with the given attributes and text.
function el(tag, attrs, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

// fmt formats a figure: whole numbers as they are, others to a tenth.
function fmt(v) {
  if (v === null || v === undefined) return 'unknown';
  return Number.isInteger(v) ? String(v) : v.toFixed(1);
}

// The write token: given in the address's fragment (#token=...), which
// no request carries, it is kept for this tab and taken off the address.
const writeToken = {
  key: 'slotlimit-write-token',
  init() {
    const m = /(?:^#|&)token=([0-9a-f]+)/.exec(location.hash);
    if (m) {
      sessionStorage.setItem(this.key, m[1]);
      history.replaceState(null, '', location.pathname + location.search);
    }
  },
  get() { return sessionStorage.getItem(this.key) || ''; },
  // ask shows a field to paste the token into, when writes are on and
  // this tab has none.
  ask(writes) {
    const p = document.getElementById('token');
    if (!p || !writes || this.get()) { if (p) p.hidden = true; return; }
    if (!p.hidden) return;
    p.replaceChildren();
    const input = el('input', { type: 'password', placeholder: 'write token, as slotlimit web printed it', autocomplete: 'off' });
    const b = el('button', { type: 'button' }, 'use token');
    b.addEventListener('click', () => { sessionStorage.setItem(this.key, input.value.trim()); p.hidden = true; });
    p.append('Writes need the token that slotlimit web printed at start: ', input, b);
    p.hidden = false;
  },
};
writeToken.init();

// plotWidth and plotHeight are a plot's own units; the plot stretches to
// its box.
const plotWidth = 300, plotHeight = 80;

// drawPlot draws the series (indexes into each point's figures) of hist,
// {t: [ms...], v: [[figures]...]}, over the last span milliseconds up to
// end, as one path per series, broken where a figure is unknown. It
// returns the highest figure drawn.
function drawPlot(svg, hist, series, end, span) {
  let top = 1;
  for (const vals of hist.v) for (const i of series) if (vals && vals[i] != null) top = Math.max(top, vals[i]);
  top *= 1.1;
  const x = t => (plotWidth * (t - (end - span)) / span).toFixed(1);
  const y = v => (plotHeight - plotHeight * v / top).toFixed(1);
  let grid = svg.querySelector('path.grid');
  if (!grid) {
    grid = document.createElementNS(SVG, 'path');
    grid.setAttribute('class', 'grid');
    svg.append(grid);
  }
  grid.setAttribute('d', `M0 ${y(0)} H${plotWidth} M0 ${y(top / 1.1)} H${plotWidth}`);
  series.forEach((i, j) => {
    let path = svg.querySelector(`path.s${j}`);
    if (!path) {
      path = document.createElementNS(SVG, 'path');
      path.setAttribute('class', `s${j}`);
      svg.append(path);
    }
    let d = '', pen = 'M';
    hist.t.forEach((t, n) => {
      const v = hist.v[n] ? hist.v[n][i] : null;
      if (v == null || t < end - span) { pen = 'M'; return; }
      d += `${pen}${x(t)} ${y(v)} `;
      pen = 'L';
    });
    path.setAttribute('d', d.trim());
  });
  return top / 1.1;
}
