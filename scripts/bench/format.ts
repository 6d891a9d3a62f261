// How figures read in the report: units always shown, precision no finer than the noise.

/** Milliseconds: one decimal below 100 ms, whole above. */
export const ms = (value: number): string => `${value < 100 ? value.toFixed(1) : value.toFixed(0)} ms`;

/** MiB with one decimal. */
export const mib = (value: number): string => `${value.toFixed(1)} MiB`;

/** A ratio, two decimals: 1.07x. */
export const times = (value: number): string => `${value.toFixed(2)}x`;

/** Throughput from MiB/s, shown in GiB/s. */
export const throughput = (mibPerSecond: number): string => `${(mibPerSecond / 1024).toFixed(2)} GiB/s`;

/** A signed relative difference: +12%. */
export const percent = (fraction: number): string => `${fraction >= 0 ? '+' : ''}${Math.round(fraction * 100)}%`;

/** Escapes text for a markdown table cell. */
export const cell = (text: string): string => text.replace(/\|/g, '\\|');

/** Escapes text for XML (the chart). */
export const xml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
