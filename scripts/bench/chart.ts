// The chart: strip plots of latency distributions on one shared logarithmic ms axis, hand-written SVG.
// Every dot is one run; a box spans p25-p75, a thick tick marks the median, a thin line min to max;
// dashed red lines are the targets.

import { CHART } from './settings.ts';
import { ms, xml } from './format.ts';
import { summarize } from './stats.ts';

interface ChartRow {
  readonly label: string;
  readonly color: string;
  readonly values: readonly number[];
}

export interface ChartPanel {
  readonly title: string;
  readonly rows: readonly ChartRow[];
  readonly targets: readonly { readonly value: number; readonly label: string }[];
}

const TARGET_COLOR = '#c0392b';
const GRID_COLOR = '#e3e3e3';
const TEXT_COLOR = '#222';
const MUTED_COLOR = '#666';
/** Dots spread over this share of a row's height. */
const JITTER_SHARE = 0.5;
const GOLDEN = 0.6180339887;
const TICK_STEPS = [1, 2, 5] as const;

/** The x scale: log10 of ms over [lo, hi], a whole number of decades around every value. */
function scale(values: readonly number[]): { lo: number; hi: number; x: (value: number) => number } {
  const positive = values.filter((v) => v > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...positive)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...positive)));
  const left = CHART.labelWidth;
  const width = CHART.width - CHART.labelWidth - CHART.rightMargin;
  const x = (value: number): number =>
    left + (width * (Math.log10(Math.max(value, lo)) - Math.log10(lo))) / (Math.log10(hi) - Math.log10(lo));
  return { lo, hi, x };
}

/** 1, 2, 5, 10, 20, 50 ... within [lo, hi]. */
function ticks(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let decade = lo; decade < hi; decade *= 10) for (const step of TICK_STEPS) out.push(decade * step);
  out.push(hi);
  return out;
}

/** A tick's label: no trailing zeros, no float noise. */
const tickLabel = (value: number): string => String(Number(value.toPrecision(3)));

/** A deterministic vertical spread in [-0.5, 0.5): the same data draws the same chart. */
const jitter = (i: number): number => ((i * GOLDEN) % 1) - 0.5;

/** One row: label and summary on the left, then box, whisker, median and dots. */
function row(r: ChartRow, top: number, x: (value: number) => number): string {
  const s = summarize(r.values);
  const mid = top + CHART.rowHeight / 2;
  const half = CHART.rowHeight * 0.28;
  const dots = r.values.map(
    (v, i) =>
      `<circle cx="${x(v).toFixed(1)}" cy="${(mid + jitter(i) * CHART.rowHeight * JITTER_SHARE).toFixed(1)}" r="${CHART.dotRadius}"/>`,
  );
  return [
    `<text x="12" y="${mid - 3}" font-size="13" fill="${TEXT_COLOR}">${xml(r.label)}</text>`,
    `<text x="12" y="${mid + 13}" font-size="11" fill="${MUTED_COLOR}">${xml(`median ${ms(s.median)} · worst ${ms(s.max)} · n=${s.n}`)}</text>`,
    `<line x1="${x(s.min).toFixed(1)}" x2="${x(s.max).toFixed(1)}" y1="${mid}" y2="${mid}" stroke="${r.color}" stroke-width="1"/>`,
    `<rect x="${x(s.p25).toFixed(1)}" y="${mid - half}" width="${Math.max(1, x(s.p75) - x(s.p25)).toFixed(1)}" height="${2 * half}" ` +
      `fill="${r.color}" fill-opacity="0.15" stroke="${r.color}"/>`,
    `<g fill="${r.color}" fill-opacity="0.6">${dots.join('')}</g>`,
    `<line x1="${x(s.median).toFixed(1)}" x2="${x(s.median).toFixed(1)}" y1="${mid - half - 3}" y2="${mid + half + 3}" stroke="${r.color}" stroke-width="3"/>`,
  ].join('\n');
}

/** A panel's dashed target lines; neighbouring labels sit on opposite sides of their lines. */
function targetLines(panel: ChartPanel, top: number, bottom: number, x: (value: number) => number): string {
  return [...panel.targets]
    .sort((a, b) => a.value - b.value)
    .map((t, i, all) => {
      const px = x(t.value);
      const before = all.length > 1 && i % 2 === 0;
      return (
        `<line x1="${px.toFixed(1)}" x2="${px.toFixed(1)}" y1="${top}" y2="${bottom}" stroke="${TARGET_COLOR}" stroke-dasharray="5 4"/>` +
        `<text x="${(px + (before ? -4 : 4)).toFixed(1)}" y="${top - 5}" font-size="11" fill="${TARGET_COLOR}" text-anchor="${before ? 'end' : 'start'}">${xml(t.label)}</text>`
      );
    })
    .join('\n');
}

/** The whole SVG document. */
export function renderChart(title: string, subtitle: string, panels: readonly ChartPanel[]): string {
  const all = panels.flatMap((p) => [...p.rows.flatMap((r) => r.values), ...p.targets.map((t) => t.value)]);
  const { lo, hi, x } = scale(all);
  const parts: string[] = [];
  let y = CHART.top;
  for (const panel of panels) {
    parts.push(`<text x="12" y="${y + 16}" font-size="14" font-weight="bold" fill="${TEXT_COLOR}">${xml(panel.title)}</text>`);
    const rowsTop = y + CHART.panelTitle;
    panel.rows.forEach((r, i) => parts.push(row(r, rowsTop + i * CHART.rowHeight, x)));
    const bottom = rowsTop + panel.rows.length * CHART.rowHeight;
    parts.push(targetLines(panel, rowsTop, bottom, x));
    y = bottom + CHART.panelGap;
  }
  const axisY = y - CHART.panelGap + 8;
  const height = axisY + CHART.axisHeight;
  const grid = ticks(lo, hi).map((t) => {
    const px = x(t).toFixed(1);
    return (
      `<line x1="${px}" x2="${px}" y1="${CHART.top}" y2="${axisY}" stroke="${GRID_COLOR}"/>` +
      `<text x="${px}" y="${axisY + 15}" font-size="11" fill="${MUTED_COLOR}" text-anchor="middle">${tickLabel(t)}</text>`
    );
  });
  const plotMid = (CHART.labelWidth + CHART.width - CHART.rightMargin) / 2;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${CHART.width}" height="${height}" viewBox="0 0 ${CHART.width} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="12" y="22" font-size="16" font-weight="bold" fill="${TEXT_COLOR}">${xml(title)}</text>`,
    `<text x="12" y="40" font-size="11" fill="${MUTED_COLOR}">${xml(subtitle)}</text>`,
    ...grid,
    `<line x1="${CHART.labelWidth}" x2="${CHART.width - CHART.rightMargin}" y1="${axisY}" y2="${axisY}" stroke="${MUTED_COLOR}"/>`,
    `<text x="${plotMid}" y="${axisY + 32}" font-size="12" fill="${MUTED_COLOR}" text-anchor="middle">milliseconds (log scale)</text>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}
