// --inject: the rewritten pod field by field, every byte it did not add as it was, idempotence, --check clean
// of `unwrapped` afterwards, --native, and what it refuses.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { inject, INSTALLER, MOUNT_PATH, VOLUME, WRAPPER_PATH } from '../../../../src/manifest/inject/inject.ts';
import type { InjectedNamespaces } from '../../../../src/manifest/pod/sidecars.ts';
import { check } from '../../../../src/manifest/check/rules.ts';
import { loadShellParser } from '../../../../src/manifest/script/shell.ts';
import { root } from '../../../support/process.ts';
import { insertedOnly, source } from '../../../support/manifest.ts';

const IMAGE = 'registry.example/istio-job-run:9.9.9';
/** As --injected-namespaces '*' says: every namespace injects Istio, so a plain Job gets a classic sidecar. */
const EVERYWHERE: InjectedNamespaces = new Map([['istio', new Set(['*'])]]);

await loadShellParser();
const PLAIN = `# The nightly report: comments, quoting and octal modes stay as written.
apiVersion: batch/v1
kind: Job
metadata:
  name: report   # named here
spec:
  backoffLimit: 2
  template:
    metadata:
      labels: {app: report}
    spec:
      restartPolicy: Never
      volumes:
      - name: config
        configMap: {name: report, defaultMode: 0644}
      containers:
      - name: job
        image: 'registry.example/report:1.0'
        command: ["/bin/sh", "-c"]
        args:
          - |
            echo "yes"; exit 3
        env:
        - name: FLAG
          value: "on"
        volumeMounts:
        - {name: config, mountPath: /etc/report}
---
# An untouched document: a Service.
apiVersion: v1
kind: Service
metadata: {name: report}
spec:
  ports: [{port: 0644}]
`;

function injected(text: string, native = false): string {
  const result = inject(source(text), { image: IMAGE, native, namespaces: EVERYWHERE });
  assert.equal(result.kind, 'done', result.kind === 'refused' ? result.problems.join('\n') : '');
  return (result as { text: string }).text;
}

describe('--inject of a plain Job', () => {
  const out = injected(PLAIN);
  const [jobDoc] = parseAllDocuments(out, { version: '1.1' });
  const job = jobDoc?.toJS() as {
    spec: {
      template: { spec: Record<string, unknown> & { containers: Record<string, unknown>[]; initContainers: Record<string, unknown>[] } };
    };
  };
  const pod = job.spec.template.spec;
  const container = pod.containers[0] as Record<string, unknown>;

  test("the job container's command is prefixed with the wrapper and --, its args untouched", () => {
    assert.deepEqual(container['command'], [WRAPPER_PATH, '--', '/bin/sh', '-c']);
    assert.deepEqual(container['args'], ['echo "yes"; exit 3\n']);
  });
  test('it gets the downward-API status variable, beside its own', () => {
    assert.deepEqual(container['env'], [
      { name: 'FLAG', value: 'on' },
      { name: 'ISTIO_JOB_RUN_SIDECAR_STATUS', valueFrom: { fieldRef: { fieldPath: "metadata.annotations['sidecar.istio.io/status']" } } },
    ]);
  });
  test('it mounts the emptyDir read-only, beside its own mounts', () => {
    assert.deepEqual(container['volumeMounts'], [
      { name: 'config', mountPath: '/etc/report' },
      { name: VOLUME, mountPath: MOUNT_PATH, readOnly: true },
    ]);
  });
  test('the pod gets the emptyDir beside its volumes', () => {
    assert.deepEqual(pod['volumes'], [
      { name: 'config', configMap: { name: 'report', defaultMode: 0o644 } },
      { name: VOLUME, emptyDir: {} },
    ]);
  });
  test("the init container --installs from the image into the emptyDir, restricted as docker/k8s's", () => {
    const cronjob = parse(readFileSync(join(root, 'docker', 'k8s', 'cronjob.yaml'), 'utf8')) as {
      spec: { jobTemplate: { spec: { template: { spec: { initContainers: Record<string, unknown>[] } } } } };
    };
    const reference = cronjob.spec.jobTemplate.spec.template.spec.initContainers[0] as Record<string, unknown>;
    const init = pod.initContainers[0] as Record<string, unknown>;
    assert.deepEqual(init, {
      name: INSTALLER,
      image: IMAGE,
      args: [MOUNT_PATH],
      volumeMounts: [{ name: VOLUME, mountPath: MOUNT_PATH }],
      securityContext: reference['securityContext'],
      resources: reference['resources'],
    });
    assert.equal(pod.initContainers.length, 1);
  });
  test('every byte it did not add is as it was, the untouched document included', () => {
    assert.ok(insertedOnly(PLAIN, out));
    const untouched = PLAIN.slice(PLAIN.indexOf('---'));
    assert.ok(out.endsWith(untouched), 'the Service document, byte for byte');
    assert.ok(out.includes('defaultMode: 0644'), '0644 as written');
    assert.ok(out.includes("image: 'registry.example/report:1.0'"), 'single quotes as written');
  });
  test('idempotent, and --check finds no unwrapped pod in it', () => {
    assert.equal(injected(out), out);
    assert.deepEqual(
      check(source(out), { namespaces: EVERYWHERE }).filter((finding) => finding.rule === 'unwrapped'),
      [],
    );
    assert.ok(
      check(source(PLAIN), { namespaces: EVERYWHERE }).some((finding) => finding.rule === 'unwrapped'),
      'the input was unwrapped',
    );
  });
});

describe('--inject keeps to the shape of what it edits', () => {
  test('OnFailure: --quit on-success before --', () => {
    const out = injected(PLAIN.replace('restartPolicy: Never', 'restartPolicy: OnFailure'));
    const container = (parse(out.slice(0, out.indexOf('---'))) as { spec: { template: { spec: { containers: { command: string[] }[] } } } })
      .spec.template.spec.containers[0];
    assert.deepEqual(container?.command, [WRAPPER_PATH, '--quit', 'on-success', '--', '/bin/sh', '-c']);
    assert.deepEqual(check(source(out), { namespaces: EVERYWHERE }), []);
  });
  test('a CronJob with indented block lists, no volumes and no env: keys added at its indentation', () => {
    const cron = [
      'kind: CronJob',
      'metadata: {name: c}',
      'spec:',
      '  schedule: "@daily"',
      '  jobTemplate:',
      '    spec:',
      '      template:',
      '        spec:',
      '          restartPolicy: Never',
      '          containers:',
      '            - name: job',
      '              image: x',
      '              command:',
      '                - /app/run',
      '              args: [a]',
    ].join('\n');
    const out = injected(cron);
    assert.ok(
      out.startsWith(
        `${cron.split('\n').slice(0, 13).join('\n')}\n                - ${WRAPPER_PATH}\n                - "--"\n                - /app/run\n`,
      ),
      out,
    );
    assert.match(out, /\n {10}volumes:\n {12}- name: istio-job-run\n {14}emptyDir: \{\}\n/);
    assert.match(out, /\n {14}env:\n {16}- name: ISTIO_JOB_RUN_SIDECAR_STATUS\n/);
    assert.ok(insertedOnly(cron, out));
    assert.equal(injected(out), out);
  });
  test('a Pod written in flow style gets flow (JSON) insertions', () => {
    const bare =
      'kind: Pod\nmetadata: {name: p, labels: {sidecar.istio.io/inject: "true"}}\nspec: {restartPolicy: Never, containers: [{name: job, image: x, command: [run]}]}\n';
    const out = injected(bare);
    const pod = parse(out) as {
      spec: { containers: { command: string[]; volumeMounts: unknown[] }[]; volumes: unknown[]; initContainers: unknown[] };
    };
    assert.deepEqual(pod.spec.containers[0]?.command, [WRAPPER_PATH, '--', 'run']);
    assert.equal(pod.spec.volumes.length, 1);
    assert.equal(pod.spec.initContainers.length, 1);
    assert.equal(out.split('\n').length, bare.split('\n').length, 'no line added');
  });
  test("two flags appended to an auth proxy's empty flow args ([]) are two items", () => {
    const json =
      '{"kind": "Job", "metadata": {"name": "j"}, "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [' +
      '{"name": "job", "image": "x", "command": ["run"]}, {"name": "proxy", "image": "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2", "args": []}]}}}}\n';
    const job = parse(injected(json)) as { spec: { template: { spec: { containers: { args?: string[] }[] } } } };
    assert.deepEqual(job.spec.template.spec.containers[1]?.args, ['--quitquitquit', '--health-check']);
  });
  test('a block command with a comment above its first item, and an anchored empty list', () => {
    const text = PLAIN.replace(
      '        command: ["/bin/sh", "-c"]\n',
      '        command:\n          # the shell\n          - /bin/sh\n          - -c\n',
    ).replace('        volumeMounts:\n        - {name: config, mountPath: /etc/report}\n', '        volumeMounts: &mounts []\n');
    const out = injected(text);
    assert.ok(
      out.includes(`        command:\n          # the shell\n          - ${WRAPPER_PATH}\n          - "--"\n          - /bin/sh\n`),
      out,
    );
    assert.ok(out.includes(`        volumeMounts: &mounts [{"name":"${VOLUME}","mountPath":"${MOUNT_PATH}","readOnly":true}]\n`), out);
    assert.ok(insertedOnly(text, out));
    assert.equal(injected(out), out);
  });
  test('a declared istio-proxy overlay is no job container: only the job is wrapped', () => {
    const text = PLAIN.replace(
      '      containers:\n',
      '      containers:\n      - name: istio-proxy\n        resources: {limits: {memory: 1Gi}}\n',
    );
    const out = injected(text);
    const containers = (
      parse(out.slice(0, out.indexOf('---'))) as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } }
    ).spec.template.spec.containers;
    assert.deepEqual(containers[0], { name: 'istio-proxy', resources: { limits: { memory: '1Gi' } } });
    assert.deepEqual(((containers[1]?.['command'] ?? []) as string[]).slice(0, 2), [WRAPPER_PATH, '--']);
  });
  test('CRLF line endings stay CRLF', () => {
    const out = injected(PLAIN.replaceAll('\n', '\r\n'));
    assert.ok(!/[^\r]\n/.test(out), 'every newline is CRLF');
  });
  test('each document keeps its own line ending: CRLF ones and LF ones in the same file', () => {
    const crlf = PLAIN.replaceAll('\n', '\r\n');
    const lf = PLAIN.replaceAll('report', 'other');
    for (const [first, second] of [
      [crlf, lf],
      [lf, crlf],
    ] as const) {
      // The separator between the two is written as the first file's, so it counts as the first's.
      const out = injected(`${first}---${first === crlf ? '\r\n' : '\n'}${second}`);
      const cut = out.indexOf(second.slice(0, second.indexOf('\n')));
      const [one, two] = [out.slice(0, cut), out.slice(cut)];
      assert.equal(one.split(WRAPPER_PATH).length, 2, 'the first Job rewritten');
      assert.equal(two.split(WRAPPER_PATH).length, 2, 'the second Job rewritten');
      const [crlfPart, lfPart] = first === crlf ? [one, two] : [two, one];
      assert.ok(!/[^\r]\n/.test(crlfPart), `every newline of the CRLF documents is CRLF:\n${crlfPart}`);
      assert.ok(!lfPart.includes('\r'), `the LF documents get no CR:\n${lfPart}`);
    }
  });
  test('documents without a classic sidecar are left byte for byte', () => {
    const native = PLAIN.replace('labels: {app: report}', 'annotations: {sidecar.istio.io/nativeSidecar: "true"}');
    assert.equal(injected(native), native);
    const off = PLAIN.replace('labels: {app: report}', 'labels: {sidecar.istio.io/inject: "false"}');
    assert.equal(injected(off), off);
  });
});

describe('--inject --native', () => {
  test('adds only the annotation, to an existing metadata map, idempotently', () => {
    const out = injected(PLAIN, true);
    assert.ok(insertedOnly(PLAIN, out));
    const added = out.split('\n').filter((line) => !PLAIN.split('\n').includes(line));
    assert.deepEqual(added, ['      annotations:', '        sidecar.istio.io/nativeSidecar: "true"']);
    assert.equal(injected(out, true), out);
    assert.deepEqual(check(source(out), { namespaces: EVERYWHERE }), []);
  });
  test('a template without metadata gets it before its spec', () => {
    const text = PLAIN.replace('    metadata:\n      labels: {app: report}\n', '');
    const out = injected(text, true);
    assert.ok(
      out.includes('  template:\n    metadata:\n      annotations:\n        sidecar.istio.io/nativeSidecar: "true"\n    spec:\n'),
      out,
    );
  });
  test('an explicit nativeSidecar: "false" is refused', () => {
    const text = PLAIN.replace('labels: {app: report}', 'annotations: {sidecar.istio.io/nativeSidecar: "false"}');
    const result = inject(source(text), { image: IMAGE, native: true, namespaces: EVERYWHERE });
    assert.equal(result.kind, 'refused');
  });
});

describe('--inject refuses what it cannot rewrite safely, naming the file, line and way out', () => {
  const refusals: [string, string, RegExp][] = [
    [
      'a container without command (its ENTRYPOINT unseen)',
      PLAIN.replace('        command: ["/bin/sh", "-c"]\n', ''),
      /container job has no command.*ENTRYPOINT/,
    ],
    [
      'two job containers',
      PLAIN.replace('      containers:\n', '      containers:\n      - {name: second, image: y, command: [z]}\n'),
      /2 job containers \(second, job\).*first to end would stop the sidecar/,
    ],
    [
      'a volume already named like the emptyDir',
      PLAIN.replace('- name: config\n        configMap', `- name: ${VOLUME}\n        configMap`),
      /volume named istio-job-run/,
    ],
    ['a command that is one string', PLAIN.replace('command: ["/bin/sh", "-c"]', 'command: /bin/sh'), /command is not a list/],
    [
      'env that is not a list',
      PLAIN.replace('        env:\n        - name: FLAG\n          value: "on"\n', '        env: {}\n'),
      /env of container job is not a list/,
    ],
  ];
  for (const [name, text, message] of refusals) {
    test(name, () => {
      const result = inject(source(text), { image: IMAGE, native: false, namespaces: EVERYWHERE });
      assert.equal(result.kind, 'refused');
      const problems = result.kind === 'refused' ? result.problems : [];
      assert.equal(problems.length, 1);
      assert.match(problems[0] ?? '', /^test\.yaml:2: Job report: /);
      assert.match(problems[0] ?? '', message);
    });
  }
  test('--native needs no command', () => {
    const text = PLAIN.replace('        command: ["/bin/sh", "-c"]\n', '');
    assert.equal(inject(source(text), { image: IMAGE, native: true, namespaces: EVERYWHERE }).kind, 'done');
  });
});

describe('--inject per sidecar kind', () => {
  const job = (podMeta: string, containers: string, restartPolicy = 'Never'): string =>
    [
      'kind: Job',
      'metadata: {name: j}',
      'spec:',
      '  template:',
      `    metadata: ${podMeta}`,
      '    spec:',
      `      restartPolicy: ${restartPolicy}`,
      '      containers:',
      containers,
      '',
    ].join('\n');
  const podOf = (text: string): Record<string, unknown> & { containers: Record<string, unknown>[]; volumes: Record<string, unknown>[] } =>
    (parse(text) as { spec: { template: { spec: never } } }).spec.template.spec;

  test('Linkerd: the pod annotations as a file for the wrapper, and the shutdown switched on', () => {
    const out = injected(job('{annotations: {linkerd.io/inject: enabled}}', '      - {name: job, image: x, command: [./task]}'));
    const template = (parse(out) as { spec: { template: { metadata: { annotations: Record<string, string> } } } }).spec.template;
    assert.equal(template.metadata.annotations['config.linkerd.io/proxy-admin-shutdown'], 'enabled');
    const pod = podOf(out);
    assert.deepEqual(pod.containers[0]?.['command'], [WRAPPER_PATH, '--', './task']);
    assert.ok(
      pod.volumes.some((volume) => JSON.stringify(volume).includes('"fieldPath":"metadata.annotations"')),
      'a downwardAPI volume of metadata.annotations',
    );
    assert.ok(JSON.stringify(pod.containers[0]?.['volumeMounts']).includes('"mountPath":"/etc/podinfo"'));
    assert.equal(injected(out), out);
    assert.deepEqual(check(source(out)), []);
  });
  test('a declared Cloud SQL proxy: --also with its moved admin port, and the flags it needs', () => {
    const out = injected(
      job(
        '{}',
        [
          '      - {name: job, image: x, command: [./task]}',
          '      - name: proxy',
          '        image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1',
          '        args: ["--admin-port=9191", "p:r:i"]',
        ].join('\n'),
      ),
    );
    const pod = podOf(out);
    assert.deepEqual(pod.containers[0]?.['command'], [WRAPPER_PATH, '--also', 'cloud-sql-proxy:9090:9191', '--', './task']);
    assert.deepEqual(pod.containers[1]?.['args'], ['--admin-port=9191', 'p:r:i', '--quitquitquit', '--health-check']);
    assert.deepEqual(check(source(out)), []);
  });
  test('a container under linkerd-await is left as it is, and said so', () => {
    const text = job('{annotations: {linkerd.io/inject: enabled}}', '      - {name: job, image: x, command: [/linkerd-await, --, ./task]}');
    const result = inject(source(text), { image: IMAGE, native: false });
    assert.equal(result.kind, 'done');
    assert.equal((result as { text: string }).text, text);
    assert.match(
      (result as { notes: readonly string[] }).notes.join('\n'),
      /left as it is: container job already runs under linkerd-await/,
    );
  });
  test('a Job with no marker of any sidecar comes out byte for byte', () => {
    const text = job('{}', '      - {name: job, image: x, command: [./task]}');
    assert.equal(inject(source(text), { image: IMAGE, native: false }).kind, 'done');
    assert.equal((inject(source(text), { image: IMAGE, native: false }) as { text: string }).text, text);
  });
  // A quit switch the template sets is never written again: kept when on, refused when not (off, or a value its injector does not read as on).
  const consul = (value: string): string =>
    `{annotations: {consul.hashicorp.com/connect-inject: "true", consul.hashicorp.com/enable-sidecar-proxy-lifecycle: "${value}"}}`;
  const vault = (value: string): string =>
    `{annotations: {vault.hashicorp.com/agent-inject: "true", vault.hashicorp.com/agent-enable-quit: "${value}"}}`;
  const switches: [podMeta: string, refused?: string][] = [
    ...['1', 't', 'T', 'TRUE', 'True', ''].map((value): [string] => [consul(value)]),
    ...['1', 'T', 'true'].map((value): [string] => [vault(value)]),
    ...['0', 'f', 'F', 'FALSE', 'yes'].map((value): [string, string] => [
      consul(value),
      `consul.hashicorp.com/enable-sidecar-proxy-lifecycle: "${value}"`,
    ]),
    ...['0', 'false', 'yes'].map((value): [string, string] => [vault(value), `vault.hashicorp.com/agent-enable-quit: "${value}"`]),
    [
      '{annotations: {linkerd.io/inject: enabled, config.linkerd.io/proxy-admin-shutdown: disabled}}',
      'config.linkerd.io/proxy-admin-shutdown: "disabled"',
    ],
  ];
  for (const [podMeta, set] of switches) {
    test(`${podMeta}: ${set === undefined ? 'rewritten, the switch kept as written' : 'refused in one line'}`, () => {
      const text = job(podMeta, '      - {name: job, image: x, command: [./task]}');
      const result = inject(source(text), { image: IMAGE, native: false });
      if (set !== undefined) {
        assert.equal(result.kind, 'refused');
        const problems = result.kind === 'refused' ? result.problems : [];
        assert.equal(problems.length, 1, problems.join('\n'));
        assert.ok(problems[0]?.includes(`sets ${set}, which does not switch the`), problems.join('\n'));
        assert.match(
          problems[0] ?? '',
          /quit endpoint on \(on is "true", .*\): set it to "true" and run --inject again$|\(on is "enabled"\): set it to "enabled"/,
        );
        return;
      }
      assert.equal(result.kind, 'done');
      const out = (result as { text: string }).text;
      assert.ok(insertedOnly(text, out), out);
      assert.deepEqual(check(source(out)), []);
    });
  }
  test('a declared proxy with a boolean flag set: kept when on, never written twice; refused in one line when off', () => {
    const withArgs = (args: string): string =>
      job(
        '{}',
        `      - {name: job, image: x, command: [./task]}\n      - {name: proxy, image: gcr.io/x/cloud-sql-proxy:2, args: [${args}]}`,
      );
    const kept = inject(source(withArgs('--quitquitquit=1, --health-check=T, p')), { image: IMAGE, native: false });
    assert.equal(kept.kind, 'done');
    assert.deepEqual(podOf((kept as { text: string }).text).containers[1]?.['args'], ['--quitquitquit=1', '--health-check=T', 'p']);
    const refused = inject(source(withArgs('--quitquitquit, --quitquitquit=f, p')), { image: IMAGE, native: false });
    assert.deepEqual(refused.kind === 'refused' ? refused.problems.map((problem) => problem.replace(/^.*?: Job j: /, '')) : refused, [
      'container proxy runs with --quitquitquit=f, which leaves --quitquitquit off: write --quitquitquit instead and run --inject again',
    ]);
  });
  test("only a pod with Istio gets Istio's status variable; the others get the annotations file", () => {
    const variables = (out: string): unknown => JSON.stringify(podOf(out).containers[0]?.['env'] ?? []);
    const mountsPodinfo = (out: string): boolean => JSON.stringify(podOf(out).containers[0]?.['volumeMounts']).includes('"/etc/podinfo"');
    const injected = (text: string): string => (inject(source(text), { image: IMAGE, native: false }) as { text: string }).text;
    const command = '      - {name: job, image: x, command: [./task]}';
    const proxy = '      - {name: proxy, image: gcr.io/x/cloud-sql-proxy:2, args: [p]}';
    for (const out of [
      injected(job('{annotations: {vault.hashicorp.com/agent-inject: "true"}}', command)),
      injected(job('{annotations: {dapr.io/enabled: "yes"}}', command)),
      injected(job('{}', `${command}\n${proxy}`)),
    ]) {
      assert.doesNotMatch(String(variables(out)), /ISTIO_JOB_RUN_SIDECAR_STATUS/, out);
      assert.ok(mountsPodinfo(out), out);
    }
    const istio = injected(job('{labels: {sidecar.istio.io/inject: "true"}}', command));
    assert.match(String(variables(istio)), /ISTIO_JOB_RUN_SIDECAR_STATUS/);
    assert.ok(!mountsPodinfo(istio), istio);
  });
  test('a container with args only: refused, naming the option that gives its command; with it, rewritten', () => {
    const text = job('{labels: {sidecar.istio.io/inject: "true"}}', '      - {name: job, image: x, args: [--now]}');
    const refused = inject(source(text), { image: IMAGE, native: false });
    assert.equal(refused.kind, 'refused');
    assert.match(refused.kind === 'refused' ? (refused.problems[0] ?? '') : '', /--entrypoint job=ENTRYPOINT/);
    const out = inject(source(text), { image: IMAGE, native: false, entrypoints: new Map([['job', ['/app/run']]]) });
    assert.equal(out.kind, 'done');
    assert.deepEqual(podOf((out as { text: string }).text).containers[0]?.['command'], [WRAPPER_PATH, '--', '/app/run']);
  });
});
