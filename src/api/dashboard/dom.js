// @ts-check
// Small DOM helpers the dashboard's modules share. Text only ever goes in as textContent: names, reasons and log
// lines come from the network.

export const SVG = 'http://www.w3.org/2000/svg';
const SVG_TAGS = new Set(['svg', 'g', 'circle', 'path', 'text', 'line', 'title', 'polyline', 'rect']);

/**
 * An element of index.html; a missing one is a page bug, so it throws instead of returning null.
 * @param {string} id
 * @returns {HTMLElement}
 */
export const $ = (id) => {
  const found = document.getElementById(id);
  if (!found) throw new Error(`dashboard: no #${id} in the page`);
  return found;
};

/**
 * @param {string} tag an SVG tag for the drawings, otherwise HTML
 * @param {Record<string, string | number | undefined | null>} [attrs]
 * @param {string | number} [text]
 * @returns {Element}
 */
export function el(tag, attrs = {}, text) {
  const node = SVG_TAGS.has(tag) ? document.createElementNS(SVG, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

/** @param {number | undefined} bps */
export function bandwidthText(bps) {
  if (typeof bps !== 'number') return '—';
  if (bps >= 1e9) return `${(bps / 1e9).toFixed(bps >= 1e10 ? 0 : 1)} Gbit/s`;
  if (bps >= 1e6) return `${(bps / 1e6).toFixed(0)} Mbit/s`;
  return `${(bps / 1e3).toFixed(0)} kbit/s`;
}

/** @param {number} bytes */
export function bytesText(bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let v = bytes,
    i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[i]}`;
}
