// The pod's annotations as a downwardAPI volume writes them (fieldPath: metadata.annotations): one per line,
// `key="value"`, the value quoted as Go's strconv.Quote does. Pure: the file's text in, the annotations and
// what could not be read out.

export interface Annotations {
  readonly values: ReadonlyMap<string, string>;
  /** `line N: why`, for lines that are not `key="value"`. */
  readonly errors: readonly string[];
}

const SIMPLE: Readonly<Record<string, number>> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, '"': 34, "'": 39 };
const HEX_LENGTH: Readonly<Record<string, number>> = { x: 2, u: 4, U: 8 };

export function parseAnnotations(text: string): Annotations {
  const values = new Map<string, string>();
  const errors: string[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    const eq = line.indexOf('=');
    const key = eq < 0 ? '' : line.slice(0, eq);
    const value = eq < 0 ? undefined : unquote(line.slice(eq + 1));
    if (key === '' || value === undefined) errors.push(`line ${index + 1}: not key="value"`);
    else values.set(key, value);
  });
  return { values, errors };
}

/** Go's strconv.Unquote for a double-quoted string; undefined when it is not one. */
export function unquote(quoted: string): string | undefined {
  if (quoted.length < 2 || !quoted.startsWith('"') || !quoted.endsWith('"')) return undefined;
  const bytes: number[] = [];
  const body = quoted.slice(1, -1);
  for (let i = 0; i < body.length; ) {
    const char = body.charAt(i);
    if (char === '"') return undefined;
    if (char !== '\\') {
      const text = String.fromCodePoint(body.codePointAt(i) ?? 0);
      bytes.push(...Buffer.from(text));
      i += text.length;
      continue;
    }
    const escape = body[i + 1] ?? '';
    const simple = SIMPLE[escape];
    const hex = HEX_LENGTH[escape];
    if (simple !== undefined) {
      bytes.push(simple);
      i += 2;
    } else if (hex !== undefined) {
      const digits = body.slice(i + 2, i + 2 + hex);
      if (!/^[0-9a-fA-F]+$/.test(digits) || digits.length !== hex) return undefined;
      const n = Number.parseInt(digits, 16);
      if (escape === 'x') bytes.push(n);
      else if (n > 0x10ffff || (n >= 0xd800 && n < 0xe000)) return undefined;
      else bytes.push(...Buffer.from(String.fromCodePoint(n)));
      i += 2 + hex;
    } else if (/^[0-7]{3}$/.test(body.slice(i + 1, i + 4))) {
      const n = Number.parseInt(body.slice(i + 1, i + 4), 8);
      if (n > 255) return undefined;
      bytes.push(n);
      i += 4;
    } else {
      return undefined;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}
