// Job scripts of the shapes that a shell reads otherwise than their text suggests, each made with a job, a quit and
// a restartPolicy picked from a seed: a failing command in an else branch under set -e, a quit after an if whose
// every branch exits (in a pod whose namespace injects the sidecar), a file sourced before the job, exec with its
// redirections first, a quit whose words follow a redirection, a shell fed a here-document under an unquoted
// delimiter, GNU wget's --method where the image's wget is busybox's, and bash where the image has none.

import { ISTIO, istioPort } from '../../src/config/kinds.ts';
import { type GeneratedScript, JOBS, type Policy, Random, type Shell, writtenScript } from './script-grammar.ts';

/** The scripts of these shapes the proof makes unless told otherwise. */
export const DEFAULT_SHAPES = 60;

const QUIT_URL = `http://127.0.0.1:${istioPort('status')}${ISTIO.quit.path}`;
const ALPINE: readonly (readonly [string, 'ash'])[] = [
  ['alpine:3.20', 'ash'],
  ['python:3.12-alpine', 'ash'],
];

interface Shape {
  readonly script: string;
  readonly shell?: Shell;
  readonly image?: readonly [string, 'dash' | 'ash'];
  readonly unmarked?: boolean;
}

/** Each shape: its name and how a script of it is made from the job, the quit and the shell. */
const SHAPES: readonly (readonly [string, (r: Random, job: string, quit: string, shell: Shell) => Shape])[] = [
  [
    'else-branch-set-e',
    (r, job, quit) => ({ script: `${r.pick(['set -e', 'set -ex'])}\nif ${r.pick(JOBS)}; then echo ok; else ${job}; fi\n${quit}\n` }),
  ],
  [
    'if-every-branch-exits',
    (r, job, quit) => ({
      script: `set -e\nif [ -n "$MODE_A" ]; then\n  ${job}\n  exit 0\nelif [ -n "$MODE_B" ]; then\n  ${r.pick(JOBS)}\n  exit 0\nelse\n  ${r.pick(JOBS)}\n  exit 0\nfi\n${quit}\n`,
      unmarked: r.chance(0.7),
    }),
  ],
  [
    'sourced-before-job',
    (r, job, quit, shell) => ({
      script: `${shell === 'bash' ? r.pick(['. ./env.sh', 'source ./env.sh']) : '. ./env.sh'}\n${job}\n${r.chance(0.5) ? `rc=$?\n${quit}\nexit $rc` : quit}\n`,
    }),
  ],
  ['exec-redirect-first', (r, job, quit) => ({ script: `exec ${r.pick(['2>&1', '>/dev/null 2>&1', '2>/dev/null'])} ${job}\n${quit}\n` })],
  [
    'words-after-redirect',
    (r, job) => ({ script: `${job}\nrc=$?\ncurl -fsS ${r.pick(['2>/dev/null', '>/dev/null'])} -X POST ${QUIT_URL}\nexit $rc\n` }),
  ],
  [
    'heredoc-unquoted',
    (r, job, quit) => {
      const escaped = r.chance(0.7);
      const inner = r.pick(['sh', 'bash']);
      return { script: `${inner} -s <<EOF\n${job}\nrc=${escaped ? '\\$?' : '$?'}\n${quit}\nexit ${escaped ? '\\$rc' : '$rc'}\nEOF\n` };
    },
  ],
  [
    'wget-method-busybox',
    (r, job) => ({
      script: `${job}\nrc=$?\nwget -q -O- ${r.pick(['--method=POST', '--method POST', "--post-data=''"])} ${QUIT_URL}\nexit $rc\n`,
      shell: 'sh',
      image: r.pick(ALPINE),
    }),
  ],
  // The quit with the image's own wget: only the shell is missing.
  [
    'bash-without-bash',
    (r, job) => ({ script: `${job}\nrc=$?\nwget -q -O- --post-data='' ${QUIT_URL}\nexit $rc\n`, shell: 'bash', image: r.pick(ALPINE) }),
  ],
];

/** One script of these shapes. */
export function generateShape(seed: number, index: number): GeneratedScript {
  const r = new Random(seed ^ Math.imul(index + 104729, 0x27d4eb2f));
  const [name, make] = SHAPES[index % SHAPES.length] as (typeof SHAPES)[number];
  const policy: Policy = r.chance(0.75) ? 'Never' : 'OnFailure';
  const job = r.pick(JOBS);
  const quit = `curl -fsS -X POST ${QUIT_URL}${r.pick(['', ' || true'])}`;
  const shell: Shell = r.chance(0.6) ? 'sh' : 'bash';
  const shape = make(r, job, quit, shell);
  const script = writtenScript(`shape-${String(index).padStart(3, '0')}`, shape.shell ?? shell, policy, shape.script, {
    ...(shape.image === undefined ? {} : { image: shape.image }),
    ...(shape.unmarked === true ? { unmarked: true } : {}),
  });
  return { ...script, shapes: [name] };
}

/** COUNT scripts of these shapes from SEED. */
export function generateShapes(seed: number, count: number): GeneratedScript[] {
  return Array.from({ length: count }, (_, index) => generateShape(seed, index));
}
