// A node --test reporter for scripts/test-times.ts: one line per test file, `FILE<TAB>MILLISECONDS<TAB>passed|failed`,
// the file's whole run (its process, start-up included) as the runner measured it.

interface Event {
  readonly type: string;
  readonly data: { readonly file?: string; readonly duration_ms?: number; readonly success?: boolean };
}

export default async function* fileTimes(source: AsyncIterable<Event>): AsyncGenerator<string> {
  for await (const { type, data } of source) {
    if (type !== 'test:summary' || data.file === undefined) continue;
    yield `${data.file}\t${data.duration_ms ?? 0}\t${data.success === true ? 'passed' : 'failed'}\n`;
  }
}
