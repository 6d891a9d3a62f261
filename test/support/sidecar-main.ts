// The sidecar stand-in as a process of its own (a container in the pod test, the proxy in the demo).
// Usage: node sidecar-main.ts [--ports real|free] [--ready-after N] [--exit instant|drain] [--drain-ms N]
// Prints one JSON event a line on stdout: listening (with URLs), request, exited; exits 0 after a quit,
// as istio-proxy does.

import { parseArgs } from 'node:util';
import { Sidecar } from './sidecar.ts';

const { values } = parseArgs({
  options: {
    ports: { type: 'string', default: 'free' },
    'ready-after': { type: 'string', default: '0' },
    exit: { type: 'string', default: 'instant' },
    'drain-ms': { type: 'string', default: '5000' },
  },
});

const real = values.ports === 'real';
const sidecar = await Sidecar.start({
  agentPort: real ? 15020 : 0,
  envoyPort: real ? 15021 : 0,
  readyAfter: Number(values['ready-after']),
  exit: values.exit === 'drain' ? 'drain' : 'instant',
  drainMs: Number(values['drain-ms']),
});

const emit = (event: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify({ ...event, at: Math.round(performance.now()) })}\n`);
};

let reported = 0;
sidecar.on('change', () => {
  for (; reported < sidecar.requests.length; reported++) emit({ event: 'request', ...sidecar.requests[reported] });
});
sidecar.on('exited', () => {
  emit({ event: 'exited', code: 0 });
  process.exit(0);
});
process.on('SIGTERM', () => {
  emit({ event: 'terminated' });
  process.exit(0);
});
emit({ event: 'listening', readyUrl: sidecar.readyUrl, quitUrl: sidecar.quitUrl });
