// The shapes in which a sidecar shows itself in a Job (a script's quit of its endpoint or process, its own
// settings on the pod template) and those in which it does not, with what --inject does with each: for the
// table test of test/unit/manifest/inject/shows.test.ts and the agreement of --check and --inject.

/** A Job (or a CronJob) whose pod template has META (under metadata) and one container running SCRIPT in sh -c. */
function job(script: string, options: { meta?: string; spec?: string; kind?: 'Job' | 'CronJob'; command?: boolean } = {}): string {
  const pod = [
    ...(options.meta === undefined ? [] : ['metadata:', ...options.meta.split('\n').map((line) => `  ${line}`)]),
    'spec:',
    '  restartPolicy: Never',
    ...(options.spec === undefined ? [] : [`  ${options.spec}`]),
    '  containers:',
    '  - name: job',
    '    image: registry.example/job:1.0',
    ...(options.command === false ? ['    args: ["--all"]'] : ['    command: ["/bin/sh", "-c"]', `    args: [${JSON.stringify(script)}]`]),
  ];
  const template = (indent: number): string[] => ['template:', ...pod.map((line) => `  ${line}`)].map((line) => ' '.repeat(indent) + line);
  return [
    'apiVersion: batch/v1',
    `kind: ${options.kind ?? 'Job'}`,
    'metadata:',
    '  name: task',
    'spec:',
    ...(options.kind === 'CronJob' ? ['  schedule: "0 3 * * *"', '  jobTemplate:', '    spec:', ...template(6)] : template(2)),
    '',
  ].join('\n');
}

const QUIT = 'curl -fsS -X POST http://127.0.0.1:15020/quitquitquit';

export interface Shape {
  readonly name: string;
  readonly yaml: string;
  /** The sidecar the pod has, as "kind form", or none. */
  readonly sidecar?: string;
  /** What --inject does: rewrites it, refuses it (its message holds this), or leaves it (--check finds no error). */
  readonly inject: 'rewritten' | { readonly refused: string } | 'unchanged';
}

/** A Job whose pod template has one ANNOTATION (`key: value`), and so the pod has SIDECAR. */
const annotated = (name: string, annotation: string, sidecar: string | undefined, inject: Shape['inject'] = 'rewritten'): Shape => ({
  name,
  yaml: job('./migrate', { meta: `annotations:\n  ${annotation}` }),
  ...(sidecar === undefined ? {} : { sidecar }),
  inject,
});

/** A Job that runs SCRIPT, and so the pod has SIDECAR. */
const scripted = (name: string, script: string, sidecar: string, inject: Shape['inject'], spec?: string): Shape => ({
  name,
  yaml: job(script, spec === undefined ? {} : { spec }),
  sidecar,
  inject,
});

export const SHAPES: readonly Shape[] = [
  // A script's own quit gone wrong: taken out, the rest proven, the command wrapped.
  scripted("a POST to pilot-agent's quit after && (no marker)", `./migrate && ${QUIT}`, 'istio classic', 'rewritten'),
  scripted(
    "wget's POST to pilot-agent's quit after the job, its status lost",
    "./migrate; wget -q --post-data='' http://localhost:15020/quitquitquit",
    'istio classic',
    'rewritten',
  ),
  scripted(
    'pilot-agent request POST quitquitquit after &&',
    './migrate && pilot-agent request POST quitquitquit',
    'istio classic',
    'rewritten',
  ),
  scripted(
    "a POST to Dapr's shutdown after && (no marker)",
    './publish && curl -X POST http://localhost:3500/v1.0/shutdown',
    'dapr classic',
    'rewritten',
  ),
  scripted(
    "a quit, then exit 0: both go, and the job's status is the script's",
    `./migrate; ${QUIT}; exit 0`,
    'istio classic',
    'rewritten',
  ),
  // What stays without the quit still loses the job's status: refused, saying where.
  // The script loses the job's status by itself: the wrapper is no worse there, and waits and quits on every way out.
  scripted(
    'a status saved after echo, then the quit',
    `./migrate; echo done; x=$(echo $?); ${QUIT}; exit $x`,
    'istio classic',
    'rewritten',
  ),
  scripted('the status saved, the quit, then exit 0', `./migrate; rc=$?; ${QUIT}; exit 0`, 'istio classic', 'rewritten'),
  scripted(
    'pkill pilot-agent without a shared process namespace: it reaches nothing, so nothing stops the proxy',
    './migrate; rc=$?; pkill pilot-agent; exit $rc',
    'istio classic',
    'rewritten',
  ),
  scripted(
    'pkill pilot-agent across a shared process namespace, the status kept: it works',
    './migrate; rc=$?; pkill pilot-agent; exit $rc',
    'istio classic',
    'rewritten',
    'shareProcessNamespace: true',
  ),
  scripted(
    "a quit of pilot-agent that keeps the job's status: it works",
    `./migrate; rc=$?; ${QUIT}; exit $rc`,
    'istio classic',
    'rewritten',
  ),
  annotated('proxy.istio.io/config on the pod template', 'proxy.istio.io/config: "holdApplicationUntilProxyStarts: true"', 'istio classic'),
  {
    name: 'a CronJob with exitOnJobCompletion in proxy.istio.io/config',
    yaml: job('./rotate', { kind: 'CronJob', meta: 'annotations:\n  proxy.istio.io/config: "{ exitOnJobCompletion: true }"' }),
    sidecar: 'istio classic',
    inject: 'rewritten',
  },
  annotated('sidecar.istio.io/proxyCPU', 'sidecar.istio.io/proxyCPU: 100m', 'istio classic'),
  annotated('traffic.sidecar.istio.io/excludeOutboundPorts', 'traffic.sidecar.istio.io/excludeOutboundPorts: "5432"', 'istio classic'),
  annotated(
    'sidecar.istio.io/nativeSidecar: "true": a native sidecar, which kubelet stops',
    'sidecar.istio.io/nativeSidecar: "true"',
    'istio native',
    'unchanged',
  ),
  {
    name: 'Istio settings, and inject: "false"',
    yaml: job('./migrate', { meta: 'annotations:\n  proxy.istio.io/config: "{}"\n  sidecar.istio.io/inject: "false"' }),
    inject: 'unchanged',
  },
  {
    name: 'Istio settings in ambient mode: no sidecar at all',
    yaml: job('./migrate', { meta: 'labels:\n  istio.io/dataplane-mode: ambient\nannotations:\n  proxy.istio.io/config: "{}"' }),
    inject: 'unchanged',
  },
  {
    name: 'a quit of pilot-agent under inject: "false" shows no sidecar',
    yaml: job(`./migrate; rc=$?; ${QUIT}; exit $rc`, { meta: 'annotations:\n  sidecar.istio.io/inject: "false"' }),
    inject: 'unchanged',
  },
  annotated("Linkerd's own setting config.linkerd.io/proxy-cpu-limit", 'config.linkerd.io/proxy-cpu-limit: "1"', 'linkerd classic'),
  annotated(
    "Consul's own setting consul.hashicorp.com/connect-service-upstreams",
    'consul.hashicorp.com/connect-service-upstreams: "db:5432"',
    'consul-dataplane classic',
  ),
  annotated(
    "Vault's role alone: its injector adds nothing without agent-inject",
    'vault.hashicorp.com/role: "migrate"',
    undefined,
    'unchanged',
  ),
  {
    name: 'Istio settings on a container without a command: refused, naming --entrypoint',
    yaml: job('', { meta: 'annotations:\n  proxy.istio.io/config: "{}"', command: false }),
    sidecar: 'istio classic',
    inject: { refused: '--entrypoint job=ENTRYPOINT' },
  },
];
