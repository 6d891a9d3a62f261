// A node --test reporter for scripts/test-times.ts: one line per test file, `FILE<TAB>MILLISECONDS<TAB>passed|failed`.
// Where each file runs in a process of its own, its whole run (start-up included) as the runner measured it; where
// the files share one process (--test-isolation=none, as npm run test:unit runs them), the sum of its top-level tests.

interface Event {
  readonly type: string;
  readonly data: {
    readonly file?: string;
    readonly nesting?: number;
    readonly duration_ms?: number;
    readonly success?: boolean;
    readonly details?: { readonly duration_ms?: number };
  };
}

export default async function* fileTimes(source: AsyncIterable<Event>): AsyncGenerator<string> {
  // Files run in one process: their top-level tests, by file, printed when the run ends.
  const shared = new Map<string, { ms: number; passed: boolean }>();
  const own = new Set<string>();
  for await (const { type, data } of source) {
    if (type === 'test:summary' && data.file !== undefined) {
      own.add(data.file);
      yield `${data.file}\t${data.duration_ms ?? 0}\t${data.success === true ? 'passed' : 'failed'}\n`;
    } else if ((type === 'test:pass' || type === 'test:fail') && data.nesting === 0 && data.file !== undefined) {
      const file = shared.get(data.file) ?? { ms: 0, passed: true };
      shared.set(data.file, { ms: file.ms + (data.details?.duration_ms ?? 0), passed: file.passed && type === 'test:pass' });
    }
  }
  for (const [file, { ms, passed }] of shared) if (!own.has(file)) yield `${file}\t${ms}\t${passed ? 'passed' : 'failed'}\n`;
}
