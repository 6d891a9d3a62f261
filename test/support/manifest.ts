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

/** A Job whose pod asks for an Istio sidecar and runs no wrapper: what --check reports and --inject rewrites. */
export const MIGRATE_JOB = `apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    metadata:
      labels:
        sidecar.istio.io/inject: "true"
    spec:
      restartPolicy: Never
      containers:
      - name: job
        image: registry.example/migrate:1.0
        command: ["/app/migrate"]
`;
