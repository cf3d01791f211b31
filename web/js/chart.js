// Live SVG line charts for the dashboard. A chart plots samples over a sliding time window; a
// null value (metric missing, NaN, counter reset) breaks the line so gaps stay visible instead
// of being bridged by a made-up segment. Colours come from CSS classes (series-0, series-1, …)
// so no inline styles are needed (the page's Content-Security-Policy forbids them).

const SVG_NS = 'http://www.w3.org/2000/svg';
const WIDTH = 480;
const HEIGHT = 200;
const PAD = { left: 48, right: 12, top: 12, bottom: 24 };

function svg(tag, attrs = {}) {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

// A "nice" upper bound (1, 2, 2.5, 5 × 10^k) at or above `v`.
export function niceCeil(v) {
  if (!(v > 0) || !Number.isFinite(v)) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) {
    if (m * p >= v * (1 - 1e-9)) return m * p;
  }
  return 10 * p;
}

// The y axis of a chart whose values are counts (requests, sequences): whole-number ticks only,
// never "0.25 requests". Returns { top, step } with top a multiple of step, at most ~4 intervals.
export function integerAxis(max) {
  const top = Math.max(1, Math.ceil(Number.isFinite(max) ? max : 0));
  const step = Math.max(1, Math.ceil(niceCeil(top / 4)));
  return { top: Math.ceil(top / step) * step, step };
}

// The y axis of a continuous value: a nice top split into four intervals.
function realAxis(max, fixedTop) {
  const top = fixedTop !== undefined ? fixedTop : niceCeil(max);
  return { top, step: top / 4 };
}

export function formatValue(v, digits = 3) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const a = Math.abs(v);
  if (a >= 1e6) return (v / 1e6).toPrecision(digits) + 'M';
  if (a >= 1e4) return (v / 1e3).toPrecision(digits) + 'k';
  if (a >= 100 || Number.isInteger(v)) return String(Math.round(v));
  return String(Number(v.toPrecision(digits)));  // 0.75, not 0.750
}

// The SVG path ("M x y L x y … M …") of one series: `points` are [x, y|null] already in pixels.
export function linePath(points) {
  let d = '';
  let pen = false;
  for (const [x, y] of points) {
    if (y === null || y === undefined || !Number.isFinite(y)) {
      pen = false;
      continue;
    }
    d += `${pen ? 'L' : 'M'}${x.toFixed(1)} ${y.toFixed(1)} `;
    pen = true;
  }
  return d.trim();
}

export class LineChart {
  // options: { id, title, unit (shown in the title: every chart says what it counts),
  //            series: [{ key, label }], yMax (fixed top, optional), integer (whole-number
  //            ticks, for counts), windowSeconds }
  constructor(container, options) {
    this.options = { windowSeconds: 120, ...options };
    this.root = document.createElement('figure');
    this.root.className = 'chart';
    const caption = document.createElement('figcaption');
    const title = document.createElement('span');
    title.className = 'chart-title';
    title.textContent = options.title + (options.unit ? ` (${options.unit})` : '');
    this.legend = document.createElement('span');
    this.legend.className = 'chart-legend';
    caption.append(title, this.legend);
    this.svg = svg('svg', {
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      role: 'img',
      'aria-label': options.title,
      'data-testid': `chart-${options.id}`,
      'data-points': 0,
    });
    this.root.append(caption, this.svg);
    container.appendChild(this.root);
    this.legendItems = options.series.map((s, k) => {
      const item = document.createElement('span');
      item.className = `legend-item series-${k}`;
      this.legend.appendChild(item);
      return item;
    });
  }

  // samples: [{ t (ms), values: { key: number|null } }], oldest first; now: ms.
  update(samples, now) {
    const { series, windowSeconds } = this.options;
    const t0 = now - windowSeconds * 1000;
    const visible = samples.filter((s) => s.t >= t0 && s.t <= now);
    let max = 0;
    for (const s of visible) {
      for (const { key } of series) {
        const v = s.values[key];
        if (Number.isFinite(v) && v > max) max = v;
      }
    }
    const { top, step } = this.options.integer ? integerAxis(max) :
        realAxis(max, this.options.yMax);
    const plotW = WIDTH - PAD.left - PAD.right;
    const plotH = HEIGHT - PAD.top - PAD.bottom;
    const xOf = (t) => PAD.left + ((t - t0) / (windowSeconds * 1000)) * plotW;
    const yOf = (v) => PAD.top + plotH - (Math.min(Math.max(v, 0), top) / top) * plotH;

    this.svg.replaceChildren();
    const intervals = Math.round(top / step);
    for (let k = 0; k <= intervals; k++) {
      const v = step * k;
      const y = yOf(v);
      this.svg.appendChild(svg('line', {
        x1: PAD.left, x2: WIDTH - PAD.right, y1: y, y2: y, class: 'grid',
      }));
      const label = svg('text', {
        x: PAD.left - 6, y: y + 4, class: 'axis-label y-tick', 'text-anchor': 'end',
      });
      label.textContent = formatValue(v);
      this.svg.appendChild(label);
    }
    for (const [frac, text] of [[0, `-${windowSeconds}s`], [0.5, `-${windowSeconds / 2}s`],
                                [1, 'now']]) {
      const label = svg('text', {
        x: PAD.left + frac * plotW, y: HEIGHT - 6, class: 'axis-label',
        'text-anchor': frac === 0 ? 'start' : frac === 1 ? 'end' : 'middle',
      });
      label.textContent = text;
      this.svg.appendChild(label);
    }
    series.forEach(({ key }, k) => {
      const d = linePath(visible.map((s) => {
        const v = s.values[key];
        return [xOf(s.t), v === null || v === undefined ? null : yOf(v)];
      }));
      if (d) {
        this.svg.appendChild(svg('path', { d, class: `line series-${k}`, 'data-series': key }));
      }
    });
    series.forEach(({ key, label }, k) => {
      const last = visible.length ? visible[visible.length - 1].values[key] : null;
      const item = this.legendItems[k];
      item.textContent = `${label} ${formatValue(last)}`;
      // The raw number, for tests and for anyone reading the DOM: the text is rounded.
      item.dataset.series = key;
      item.dataset.value = Number.isFinite(last) ? String(last) : '';
    });
    this.svg.setAttribute('data-points', String(visible.length));
  }
}
