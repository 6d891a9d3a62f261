// Runs tries of the adversarial suite's cases (test/support/hostile/) inside the network namespace
// it is started in (`unshare --net`): brings loopback up, then runs each try in turn and prints one JSON
// line per try: {"case", "index", "sent", "ok", "got", "ms"}.
//   hostile-main.ts --size short|long [--case NAME]... [--tries N]

import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { HOSTILE_CASES, hostileCase, type Size } from './hostile/index.ts';

const { values } = parseArgs({
  options: { size: { type: 'string', default: 'short' }, case: { type: 'string', multiple: true }, tries: { type: 'string' } },
});
const size = values.size as Size;
execFileSync('ip', ['link', 'set', 'lo', 'up']);
const cases = values.case === undefined ? HOSTILE_CASES : values.case.map(hostileCase);
for (const hostile of cases) {
  const tries = values.tries === undefined ? hostile.tries[size] : Number(values.tries);
  for (let index = 0; index < tries; index++) {
    const started = performance.now();
    let line;
    try {
      const result = await hostile.run(index);
      line = { case: hostile.name, index, ...result, ms: Math.round(performance.now() - started) };
    } catch (error) {
      line = {
        case: hostile.name,
        index,
        sent: '?',
        ok: false,
        got: `the try failed: ${(error as Error).message.split('\n')[0]}`,
        ms: Math.round(performance.now() - started),
      };
    }
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
}
