// The cost per pod of each way the wrapper gets into a pod, in a real container runtime (podman with runc,
// state private to the run): copied into the job's image, copied by an init container into an emptyDir, and
// mounted from the istio-job-run image as an image volume. Per pod: the bytes it adds to the node's container
// storage, and the time from the start of its first container to the job's first instruction.

import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildBaseStandIn } from '../../test/support/runtime.ts';
import { imageVolumeWrapper } from '../../src/manifest/inject/image-volume.ts';
import { Podman } from '../podman.ts';
import { type Build, launch, shuffled } from './run.ts';

export const FORMS = {
  image: 'copied into the job image (COPY --from)',
  emptyDir: 'init container --install into an emptyDir',
  imageVolume: 'image volume of the istio-job-run image',
} as const;
type Form = keyof typeof FORMS;

const BASE = 'localhost/bench-base:1';
const TOOL = 'localhost/bench-istio-job-run:1';
const JOB = 'localhost/bench-job:1';
const MOUNT = '/istio-job-run';
/** The job: the wrapper without a sidecar, then the clock (the host's, shared by every container) as its first instruction. */
const JOB_ARGS = ['--sidecar', 'none', '--', 'cat', '/proc/uptime'];

/** Seconds since boot, as the job reads them (10 ms resolution). */
const uptime = (): number => Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);

export interface FormCosts {
  readonly ms: Record<Form, number[]>;
  readonly bytes: Record<Form, number[]>;
}

/** Each form once per round, in a random order; the reason instead when podman cannot run here. */
export async function forms(build: Build, rounds: number): Promise<FormCosts | { error: string }> {
  const unavailable = Podman.unavailable();
  if (unavailable !== undefined) return { error: `podman ${unavailable}` };
  const podman = Podman.create('istio-job-run-bench-forms-');
  try {
    await images(podman, build);
    const costs: FormCosts = { ms: { image: [], emptyDir: [], imageVolume: [] }, bytes: { image: [], emptyDir: [], imageVolume: [] } };
    let serial = 0;
    for (let round = -1; round < rounds; round++) {
      for (const form of shuffled(Object.keys(FORMS) as Form[])) {
        const { ms, bytes } = await pod(podman, form, `bench-${serial++}`);
        // Round -1 warms the page cache and podman's own start-up.
        if (round < 0) continue;
        costs.ms[form].push(ms);
        costs.bytes[form].push(bytes);
      }
    }
    return costs;
  } finally {
    await podman.remove();
  }
}

/** The three images from the bench's copy of the bundle: the base, the istio-job-run image, a job image with the bundle in it. */
async function images(podman: Podman, build: Build): Promise<void> {
  const context = join(podman.dir, 'context');
  mkdirSync(context);
  cpSync(build.bundle, join(context, 'bundle'), { recursive: true });
  await buildBaseStandIn(podman, BASE);
  const file = (name: string, lines: string[]): string => {
    writeFileSync(join(context, name), `${lines.join('\n')}\n`);
    return join(context, name);
  };
  const tool = file('tool', [
    'FROM scratch',
    'COPY bundle/ /opt/istio-job-run/',
    'USER 65532:65532',
    'ENTRYPOINT ["/opt/istio-job-run/istio-job-run", "--install"]',
  ]);
  const job = file('job', [`FROM ${BASE}`, 'COPY bundle/ /usr/local/bin/', 'USER 1000:1000']);
  for (const [containerfile, tag] of [
    [tool, TOOL],
    [job, JOB],
  ] as const) {
    await podman.ok(['build', '--pull=never', '-q', '-f', containerfile, '-t', tag, context], { timeoutS: 300 });
  }
}

/** Bytes under podman's storage (its volumes included), not crossing into the mounted container filesystems. */
async function stored(podman: Podman): Promise<number> {
  const du = launch('du', ['-sbx', join(podman.dir, 'storage')], 60_000);
  return Number((await du.ended).stdout.split('\t')[0]);
}

/** One pod of a form: created, then timed from the start of its first container to the job's clock. */
async function pod(podman: Podman, form: Form, name: string): Promise<{ ms: number; bytes: number }> {
  const user = ['--user', '1000:1000'];
  const containers: string[][] = [];
  if (form === 'image') containers.push([...user, JOB, '/usr/local/bin/istio-job-run', ...JOB_ARGS]);
  if (form === 'emptyDir') {
    await podman.ok(['volume', 'create', name]);
    containers.push(['-v', `${name}:/shared:U`, TOOL, '/shared']);
    containers.push([...user, '-v', `${name}:/opt/tools:ro`, BASE, '/opt/tools/istio-job-run', ...JOB_ARGS]);
  }
  if (form === 'imageVolume') {
    containers.push([...user, '--mount', `type=image,source=${TOOL},destination=${MOUNT}`, BASE, imageVolumeWrapper(MOUNT), ...JOB_ARGS]);
  }
  const ids = containers.map((_, i) => `${name}-${i}`);
  for (const [i, args] of containers.entries()) await podman.ok(['create', '--name', ids[i] as string, ...args]);
  const before = await stored(podman);
  const started = uptime();
  let output = '';
  for (const id of ids) {
    const ran = await podman.run(['start', '--attach', id], { timeoutS: 120 });
    if (ran.code !== 0) throw new Error(`${FORMS[form]}: podman start ${id}: exit ${ran.code}\n${ran.stderr}`);
    output = ran.stdout;
  }
  const first = Number(output.split(' ')[0]);
  const bytes = (await stored(podman)) - before;
  await podman.ok(['rm', '-f', ...ids]);
  if (form === 'emptyDir') await podman.ok(['volume', 'rm', name]);
  if (!Number.isFinite(first)) throw new Error(`${FORMS[form]}: the job printed ${JSON.stringify(output)}, not its clock`);
  return { ms: (first - started) * 1000, bytes };
}
