// A YAML text as the manifest tools parse it, for their tests.

import { NO_PROFILE } from '../../src/config/profile.ts';
import { parseSource, type Source } from '../../src/manifest/yaml/source.ts';

/** A tool's stderr without the line a run that states no cluster profile says once: tests of other things leave it out. */
export const unprofiled = (stderr: string): string =>
  stderr
    .split('\n')
    .filter((line) => !line.endsWith(NO_PROFILE))
    .join('\n');

export function source(text: string, name = 'test.yaml'): Source {
  const parsed = parseSource(name, text);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
}

/** Whether AFTER is BEFORE with characters inserted only: every character of BEFORE, in order, nothing changed. */
export function insertedOnly(before: string, after: string): boolean {
  let at = 0;
  for (const char of after) if (at < before.length && char === before[at]) at++;
  return at === before.length && after.length > before.length;
}

/** A Job named migrate, down to its pod template's metadata. */
const MIGRATE_TOP = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    metadata:
`;

/** A Job whose pod asks for an Istio sidecar and runs no wrapper: what --check reports and --inject rewrites. */
export const MIGRATE_JOB = `${MIGRATE_TOP}      labels:
        sidecar.istio.io/inject: "true"
    spec:
      restartPolicy: Never
      containers:
      - name: job
        image: registry.example/migrate:1.0
        command: ["/app/migrate"]
`;

/** A Job whose pod asks for Istio by annotation, down to its one container's image: its command goes after. */
export const istioJobHead = (policy = 'Never'): string => `${MIGRATE_TOP}      annotations:
        sidecar.istio.io/inject: "true"
    spec:
      restartPolicy: ${policy}
      containers:
        - name: migrate
          image: example/migrate
`;

/** That Job, its container running SCRIPT (as written in YAML) with sh -c; EXTRA: more containers after it. */
export const istioScriptJob = (script: string, policy = 'Never', extra = ''): string => `${istioJobHead(policy)}          command:
            - sh
            - -c
            - ${script}
${extra}`;
