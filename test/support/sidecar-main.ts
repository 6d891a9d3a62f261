// The sidecar stand-in as a process of its own: the istio-proxy container of a simulated pod, or the proxy
// of the demo. It behaves as test/support/sidecar.ts does, scripted from flags:
//   --ports real|free          15020/15021 (in a pod's network namespace) or free ports
//   --ready-after N            ready once N readiness requests were answered 503 (default 0: at once)
//   --ready-after-ms N         ready N ms after start, as a proxy that gets its configuration then
//   --never-ready              never ready
//   --agent-late-ms N          pilot-agent (15020) starts listening N ms late; Envoy (15021) after it
//   --envoy-late-ms N          Envoy (15021) starts N ms late
//   --exit instant|drain       after a quit: exit at once (1.26+) or drain first (1.4-1.25)
//   --drain-ms N               that drain (default 5000)
//   --term-drain-ms N          on SIGTERM: drain N ms, then exit 0 (default 0)
//   --quit-script A,B,...      answers to the first quits: a status, hang or reset; then accepted
//   --control-port N           for the simulated job, without counting as readiness checks: GET / answers
//                              {"ready":...}; GET /crash makes the proxy die now, without a quit (listeners refuse)
// Prints one JSON event a line on stdout (listening, ready, request, exited), times on the system's
// monotonic clock (shared by every process), and exits 0 when the proxy has stopped, as istio-proxy does.

import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { mono, Sidecar, type QuitAnswer } from './sidecar.ts';

const { values } = parseArgs({
  options: {
    ports: { type: 'string', default: 'free' },
    'ready-after': { type: 'string', default: '0' },
    'ready-after-ms': { type: 'string' },
    'never-ready': { type: 'boolean', default: false },
    'agent-late-ms': { type: 'string', default: '0' },
    'envoy-late-ms': { type: 'string', default: '0' },
    exit: { type: 'string', default: 'instant' },
    'drain-ms': { type: 'string', default: '5000' },
    'term-drain-ms': { type: 'string', default: '0' },
    'quit-script': { type: 'string', default: '' },
    'control-port': { type: 'string' },
  },
});

const emit = (event: Record<string, unknown>): void => {
  process.stdout.write(`${JSON.stringify({ ...event, mono: mono() })}\n`);
};

const real = values.ports === 'real';
const agentLate = Number(values['agent-late-ms']);
const envoyLate = Math.max(agentLate, Number(values['envoy-late-ms']));
const timed = values['ready-after-ms'] !== undefined || values['never-ready'];
const quitScript = values['quit-script']
  .split(',')
  .filter(Boolean)
  .map((answer): QuitAnswer => (answer === 'hang' || answer === 'reset' ? answer : Number(answer)));

const sidecar = await Sidecar.start({
  agentPort: real ? 15020 : 0,
  envoyPort: real ? 15021 : 0,
  readyAfter: timed ? Number.POSITIVE_INFINITY : Number(values['ready-after']),
  exit: values.exit === 'drain' ? 'drain' : 'instant',
  drainMs: Number(values['drain-ms']),
  quitScript,
  startAgent: agentLate === 0,
  startEnvoy: envoyLate === 0,
});

let reported = 0;
let announcedReady = false;
sidecar.on('change', () => {
  for (; reported < sidecar.requests.length; reported++) emit({ event: 'request', ...sidecar.requests[reported] });
  if (!announcedReady && sidecar.isReady) {
    announcedReady = true;
    emit({ event: 'ready' });
  }
});
sidecar.on('exited', () => {
  emit({ event: 'exited', code: 0 });
  process.exit(0);
});
// As PID 1 of its container, the kernel only delivers what has a handler: kubelet's TERM drains, then exits.
process.on('SIGTERM', () => {
  emit({ event: 'terminated' });
  sidecar.terminate(Number(values['term-drain-ms']));
});

if (agentLate > 0) setTimeout(() => void sidecar.startAgent(), agentLate);
if (envoyLate > 0) setTimeout(() => void sidecar.startEnvoy(), envoyLate);
if (values['ready-after-ms'] !== undefined) {
  setTimeout(() => {
    sidecar.setReady();
    sidecar.emit('change');
  }, Number(values['ready-after-ms']));
}
if (values['control-port'] !== undefined) {
  createServer((req, res) => {
    res.end(JSON.stringify({ ready: sidecar.isReady }));
    // The job asks for the crash once it has checked readiness: the proxy dies while the job runs, whatever the load.
    if (req.url === '/crash') setImmediate(() => sidecar.crash());
  })
    .listen(Number(values['control-port']), '127.0.0.1')
    .unref();
}
emit({ event: 'listening', readyUrl: sidecar.readyUrl, quitUrl: sidecar.quitUrl });
