// The cases of the pod theme for test/unit/manifest/check/pod.test.ts: manifests that trip each rule and manifests
// that must not. A rule's cases live in one theme's file.

import { type Case, container, indent, INJECTED, job, pod, TRAP, WRAPPED } from './cases.ts';

export const CASES: readonly Case[] = [
  // prestop-quit
  {
    name: 'a preStop exec that curls quitquitquit',
    rule: 'prestop-quit',
    yaml: job(pod(`${WRAPPED}\nlifecycle:\n  preStop:\n    exec:\n      command: ["curl", "-X", "POST", "localhost:15020/quitquitquit"]`)),
    expect: { at: 'preStop:', level: 'error' },
  },
  {
    name: 'a preStop httpGet on /quitquitquit',
    rule: 'prestop-quit',
    yaml: job(pod(`${WRAPPED}\nlifecycle:\n  preStop:\n    httpGet: {path: /quitquitquit, port: 15020}`)),
    expect: { at: 'preStop:', level: 'error' },
  },
  {
    name: 'a preStop quit in a pod without a wrapper (--inject adds one: a setting)',
    rule: 'prestop-quit',
    yaml: job(pod('command: ["./task"]\nlifecycle:\n  preStop:\n    exec: {command: [curl, -X, POST, "localhost:15020/quitquitquit"]}'), {
      podMeta: INJECTED,
    }),
    expect: { at: 'preStop:', level: 'error' },
  },
  {
    name: 'a preStop that sleeps',
    rule: 'prestop-quit',
    yaml: job(pod(`${WRAPPED}\nlifecycle:\n  preStop:\n    exec: {command: [sleep, "5"]}`)),
  },
  // annotation-as-label
  {
    name: 'linkerd.io/inject: disabled as a pod label',
    rule: 'annotation-as-label',
    yaml: job(pod(WRAPPED), { podMeta: 'labels:\n  linkerd.io/inject: disabled' }),
    expect: { at: 'linkerd.io/inject: disabled', level: 'warning' },
  },
  {
    name: 'sidecar.istio.io/inject as a label',
    rule: 'annotation-as-label',
    yaml: job(pod(WRAPPED), { podMeta: 'labels:\n  sidecar.istio.io/inject: "true"' }),
  },
  // misplaced-annotation
  {
    name: "the inject annotation on the Job's own metadata",
    rule: 'misplaced-annotation',
    yaml: job(pod(WRAPPED), { jobMeta: INJECTED }),
    expect: { at: 'sidecar.istio.io/inject', level: 'error' },
  },
  {
    name: "proxy.istio.io/config on a CronJob's Job template",
    rule: 'misplaced-annotation',
    yaml: [
      'kind: CronJob',
      'metadata: {name: c}',
      'spec:',
      '  jobTemplate:',
      '    metadata:',
      '      annotations:',
      '        proxy.istio.io/config: "{}"',
      '    spec:',
      '      template:',
      '        spec:',
      indent(pod(WRAPPED), 10),
      '',
    ].join('\n'),
    expect: { at: 'proxy.istio.io/config', level: 'error' },
  },
  { name: 'the inject annotation on the pod template', rule: 'misplaced-annotation', yaml: job(pod(WRAPPED), { podMeta: INJECTED }) },
  {
    name: 'an unrelated annotation on the Job',
    rule: 'misplaced-annotation',
    yaml: job(pod(WRAPPED), { jobMeta: 'annotations:\n  team: data' }),
  },
  // exit-on-job-completion
  {
    name: 'exitOnJobCompletion in proxy.istio.io/config',
    rule: 'exit-on-job-completion',
    yaml: job(pod(WRAPPED), { podMeta: 'annotations:\n  proxy.istio.io/config: "exitOnJobCompletion: true"' }),
    expect: { at: 'proxy.istio.io/config', level: 'error' },
  },
  {
    name: 'exitOnJobCompletion as an annotation',
    rule: 'exit-on-job-completion',
    yaml: job(pod(WRAPPED), { podMeta: 'annotations:\n  proxy.istio.io/exitOnJobCompletion: "true"' }),
    expect: { at: 'exitOnJobCompletion', level: 'error' },
  },
  {
    name: 'exitOnJobCompletion spelled with an escape in a double-quoted string',
    rule: 'exit-on-job-completion',
    yaml: job(pod(WRAPPED), { podMeta: 'annotations:\n  proxy.istio.io/config: "\\x65xitOnJobCompletion: true"' }),
    expect: { at: 'proxy.istio.io/config', level: 'error' },
  },
  {
    name: 'exitOnJobCompletion in a pod without a wrapper (--inject adds one: a setting)',
    rule: 'exit-on-job-completion',
    yaml: job(pod('command: ["./task"]'), { podMeta: `${INJECTED}\n  proxy.istio.io/exitOnJobCompletion: "true"` }),
    expect: { at: 'exitOnJobCompletion', level: 'error' },
  },
  {
    name: 'exitOnJobCompletion in a comment only',
    rule: 'exit-on-job-completion',
    yaml: job(pod(WRAPPED), { podMeta: '# not exitOnJobCompletion: it does not exist\nannotations: {}' }),
  },
  // quit-admin-port
  {
    name: "a quit URL on Envoy's admin port",
    rule: 'quit-admin-port',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit-url", "http://127.0.0.1:15000/quitquitquit", "--", "./task.sh"]')),
    expect: { at: 'command:', level: 'warning' },
  },
  {
    name: "a script quitting Envoy's admin port",
    rule: 'quit-admin-port',
    yaml: job(
      pod('command: ["/bin/sh", "-c"]\nargs: ["./task.sh; code=$?; curl -sf -XPOST http://localhost:15000/quitquitquit; exit $code"]'),
    ),
    expect: { at: 'args:', level: 'warning' },
  },
  {
    name: "a preStop httpGet on Envoy's admin port",
    rule: 'quit-admin-port',
    yaml: job(pod(`${WRAPPED}\nlifecycle:\n  preStop:\n    httpGet:\n      path: /quitquitquit\n      port: 15000`)),
    expect: { at: 'port: 15000', level: 'warning' },
  },
  {
    name: 'a quit on 15020',
    rule: 'quit-admin-port',
    yaml: job(pod('command: ["/bin/sh", "-c", "./t; c=$?; curl -XPOST localhost:15020/quitquitquit; exit $c"]')),
  },
  {
    name: 'a port 15000 that is no quit',
    rule: 'quit-admin-port',
    yaml: job(pod(`${WRAPPED}\nenv: [{name: ADMIN, value: "localhost:15000/ready"}]`)),
  },
  // onfailure-quit-always
  {
    name: 'OnFailure with the default quit policy',
    rule: 'onfailure-quit-always',
    yaml: job(pod(WRAPPED, 'OnFailure')),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'OnFailure with --quit always written out',
    rule: 'onfailure-quit-always',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit=always", "--", "./task.sh"]', 'OnFailure')),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'OnFailure with a script that quits after a failure too',
    rule: 'onfailure-quit-always',
    yaml: job(
      pod(
        'command: ["/bin/sh", "-c"]\nargs: ["./task; x=$(echo $?); curl -sf -XPOST http://127.0.0.1:15020/quitquitquit && exit $x"]',
        'OnFailure',
      ),
    ),
    expect: { at: 'args:', level: 'error' },
  },
  {
    name: 'OnFailure with a quit in a trap on EXIT',
    rule: 'onfailure-quit-always',
    yaml: job(
      pod('command: ["bash", "-c"]\nargs:\n- |\n  trap "curl -XPOST localhost:15020/quitquitquit" EXIT\n  ./task.sh\n', 'OnFailure'),
    ),
    expect: { at: 'trap', level: 'error' },
  },
  {
    name: "OnFailure with curl as the job, an app's API on loopback, then the quit on the last line",
    rule: 'onfailure-quit-always',
    yaml: job(
      pod(
        'command: ["/bin/sh", "-c"]\nargs:\n- |\n  curl -fsS -X POST http://localhost:8080/api/cleanup\n  curl -fsS -X POST http://localhost:15020/quitquitquit\n',
        'OnFailure',
      ),
    ),
    expect: { at: 'localhost:15020', level: 'error' },
  },
  {
    name: 'OnFailure with --quit on-success',
    rule: 'onfailure-quit-always',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit", "on-success", "--"]', 'OnFailure')),
  },
  {
    name: 'OnFailure with ISTIO_JOB_RUN_QUIT=on-success',
    rule: 'onfailure-quit-always',
    yaml: job(pod(`${WRAPPED}\nenv: [{name: ISTIO_JOB_RUN_QUIT, value: on-success}]`, 'OnFailure')),
  },
  {
    name: 'OnFailure with the quit after &&',
    rule: 'onfailure-quit-always',
    yaml: job(pod('command: ["sh", "-c", "./task && curl -XPOST localhost:15020/quitquitquit"]', 'OnFailure')),
  },
  { name: 'Never with the default quit policy', rule: 'onfailure-quit-always', yaml: job(pod(WRAPPED)) },
  // quit-not-enabled
  {
    name: 'a Linkerd shutdown without proxy-admin-shutdown',
    rule: 'quit-not-enabled',
    yaml: job(pod(`command: ["sh", "-c", "${TRAP('http://127.0.0.1:4191/shutdown')} ./task"]`), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled',
    }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'linkerd-await --shutdown without proxy-admin-shutdown',
    rule: 'quit-not-enabled',
    yaml: job(pod('command: ["/linkerd-await", "--shutdown", "--", "./task"]'), { podMeta: 'annotations:\n  linkerd.io/inject: enabled' }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a Vault Agent quit without agent-enable-quit',
    rule: 'quit-not-enabled',
    yaml: job(pod(`command: ["sh", "-c", "${TRAP('http://127.0.0.1:8200/agent/v1/quit')} ./task"]`), {
      podMeta: 'annotations:\n  vault.hashicorp.com/agent-inject: "true"',
    }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'a Cloud SQL proxy quit without --quitquitquit',
    rule: 'quit-not-enabled',
    yaml: job(
      `restartPolicy: Never\ncontainers:\n${container(`command: ["sh", "-c", "${TRAP('http://localhost:9091/quitquitquit')} ./task"]`)}\n${container('args: ["--port=5432", "p:r:i"]', 'proxy').replace('image: example', 'image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1')}`,
    ),
    expect: { at: `"sh", "-c", "trap`, level: 'error' },
  },
  {
    name: 'a Linkerd shutdown with proxy-admin-shutdown: enabled',
    rule: 'quit-not-enabled',
    yaml: job(pod('command: ["/linkerd-await", "--shutdown", "--", "./task"]'), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled\n  config.linkerd.io/proxy-admin-shutdown: enabled',
    }),
  },
  // Go's flag packages read a boolean flag's value with strconv.ParseBool; the last one decides.
  ...[
    ['--quitquitquit', true],
    ...['1', 't', 'T', 'TRUE', 'true', 'True'].map((value) => [`--quitquitquit=${value}`, true] as const),
    ...['0', 'f', 'false', 'False'].map((value) => [`--quitquitquit=${value}`, false] as const),
    ['--quitquitquit", "--quitquitquit=false', false],
  ].map(
    ([flag, on]): Case => ({
      name: `a Cloud SQL proxy quit with ${flag}`,
      rule: 'quit-not-enabled',
      yaml: job(
        `restartPolicy: Never\ncontainers:\n${container(`command: ["sh", "-c", "${TRAP('http://localhost:9091/quitquitquit')} ./task"]`)}\n${container(`args: ["${flag}", "p:r:i"]`, 'proxy').replace('image: example', 'image: gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1')}`,
      ),
      ...(on ? {} : { expect: { at: `"sh", "-c", "trap`, level: 'error' } }),
    }),
  ),
  // quit-wrong-method
  {
    name: "busybox wget's GET to Istio's quitquitquit",
    rule: 'quit-wrong-method',
    yaml: job(pod(`command: ["sh", "-c", "trap 'rc=$?; wget -q -O- http://127.0.0.1:15020/quitquitquit; exit $rc' EXIT; ./task"]`)),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: "curl without -X POST to Linkerd's shutdown",
    rule: 'quit-wrong-method',
    yaml: job(pod(`command: ["sh", "-c", "${TRAP('http://127.0.0.1:4191/shutdown').replace('-XPOST ', '')} ./task"]`), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled\n  config.linkerd.io/proxy-admin-shutdown: enabled',
    }),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: "a GET to the Cloud SQL proxy's quitquitquit, which takes GET",
    rule: 'quit-wrong-method',
    yaml: job(pod(`command: ["sh", "-c", "trap 'rc=$?; curl localhost:9091/quitquitquit; exit $rc' EXIT; ./task"]`)),
  },
  {
    name: "wget --post-data to Istio's quitquitquit",
    rule: 'quit-wrong-method',
    yaml: job(
      pod(`command: ["sh", "-c", "trap 'rc=$?; wget -q -O- --post-data= http://127.0.0.1:15020/quitquitquit; exit $rc' EXIT; ./task"]`),
    ),
  },
  // busybox's wget (an Alpine image's) has none of GNU wget's --method: it exits 1 and sends nothing.
  {
    name: 'wget --method=POST in an Alpine image',
    rule: 'quit-wrong-method',
    yaml: job(
      pod(`command: ["sh", "-c", "./task; rc=$?; wget -q -O- --method=POST http://127.0.0.1:15020/quitquitquit; exit $rc"]`),
    ).replace('image: example', 'image: alpine:3.20'),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'wget --method=POST in an Alpine image that installs GNU wget first',
    rule: 'quit-wrong-method',
    yaml: job(
      pod(
        `command: ["sh", "-c", "apk add --no-cache wget; ./task; rc=$?; wget -q -O- --method=POST http://127.0.0.1:15020/quitquitquit; exit $rc"]`,
      ),
    ).replace('image: example', 'image: alpine:3.20'),
  },
  // shell-missing: bash as the command in an image whose only shell is busybox's: the container never starts.
  {
    name: 'bash -c in an Alpine image',
    rule: 'shell-missing',
    yaml: job(pod(`command: ["/bin/bash", "-c"]\nargs: ["./task; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]`), {
      podMeta: INJECTED,
    }).replace('image: example', 'image: python:3.12-alpine'),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'sh -c in an Alpine image',
    rule: 'shell-missing',
    yaml: job(pod(`command: ["/bin/sh", "-c"]\nargs: ["./task; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]`), {
      podMeta: INJECTED,
    }).replace('image: example', 'image: alpine:3.20'),
  },
  // quit-program-missing: curl or wget where the image is known to lack it (and the script does not install it).
  ...(
    [
      ['python:3.12-slim', 'curl -fsS -XPOST', true],
      ['docker.io/library/node:22-bookworm-slim', 'wget -q -O- --post-data=', true],
      ['alpine:3.20', 'curl -fsS -XPOST', true],
      ['python:3.12-alpine', 'curl -fsS -XPOST', true],
      ['gcr.io/distroless/python3-debian12', 'wget -q -O- --post-data=', true],
      ['debian:12@sha256:0123', 'curl -fsS -XPOST', true],
      ['python:3.12', 'curl -fsS -XPOST', false],
      ['alpine:3.20', 'wget -q -O- --post-data=', false],
      ['gcr.io/distroless/base:debug', 'wget -q -O- --post-data=', false],
      ['curlimages/curl:8.10.1', 'curl -fsS -XPOST', false],
      ['registry.example/job:1', 'curl -fsS -XPOST', false],
    ] as const
  ).map(
    ([image, quit, missing]): Case => ({
      name: `${quit.split(' ')[0]} in ${image}`,
      rule: 'quit-program-missing',
      yaml: job(
        pod(`command: ["sh", "-c", "trap 'rc=$?; ${quit} http://127.0.0.1:15020/quitquitquit; exit $rc' EXIT; ./task"]`).replace(
          'image: example',
          `image: ${image}`,
        ),
        { podMeta: INJECTED },
      ),
      ...(missing ? { expect: { at: 'command:', level: 'error' } } : {}),
    }),
  ),
  {
    name: 'curl in a slim image, installed by the script first',
    rule: 'quit-program-missing',
    yaml: job(
      pod(
        `command: ["sh", "-c", "apt-get update && apt-get install -y --no-install-recommends curl; ${TRAP('http://127.0.0.1:15020/quitquitquit')} ./task"]`,
      ).replace('image: example', 'image: python:3.12-slim'),
      { podMeta: INJECTED },
    ),
  },
  // Methods are case-sensitive (curl sends -X as written); -G makes a GET of the data.
  ...['-X post', '--request post', '-G -d now=1', '-G --data now=1', '--get -d now=1'].map(
    (flags): Case => ({
      name: `curl ${flags} to Istio's quitquitquit`,
      rule: 'quit-wrong-method',
      yaml: job(pod(`command: ["sh", "-c", "trap 'rc=$?; curl -s ${flags} http://127.0.0.1:15020/quitquitquit; exit $rc' EXIT; ./task"]`)),
      expect: { at: 'command:', level: 'error' },
    }),
  ),
  {
    name: "curl -G -X POST to Istio's quitquitquit: -X names the method",
    rule: 'quit-wrong-method',
    yaml: job(pod(`command: ["sh", "-c", "trap 'rc=$?; curl -s -G -X POST http://127.0.0.1:15020/quitquitquit; exit $rc' EXIT; ./task"]`)),
  },
  // quit-unheard: pilot-agent serves /quitquitquit exactly, over plain HTTP, from loopback only.
  ...[
    'http://127.0.0.1:15020/quit',
    'http://127.0.0.1:15020/quitquit',
    'http://127.0.0.1:15020/QUITQUITQUIT',
    'http://127.0.0.1:15020/shutdown',
    'http://127.0.0.1:15020/quitquitquit/',
    'https://127.0.0.1:15020/quitquitquit',
    'http://$(hostname):15020/quitquitquit',
    'http://${HOSTNAME}:15020/quitquitquit',
    'http://localhost:15021/quitquitquit',
  ].map(
    (url): Case => ({
      name: `a POST to ${url}`,
      rule: 'quit-unheard',
      yaml: job(pod(`command: ["sh", "-c", "./task; rc=$?; curl -s -X POST ${url}; exit $rc"]`), { podMeta: INJECTED }),
      expect: { at: 'command:', level: 'error' },
    }),
  ),
  {
    name: 'an https quit under istio-job-run, which quits the sidecar itself (as --inject leaves it)',
    rule: 'quit-unheard',
    yaml: job(
      pod(
        'command: ["/opt/tools/istio-job-run", "--", "sh", "-c", "./task; rc=$?; curl -sk -X POST https://127.0.0.1:15020/quitquitquit; exit $rc"]',
      ),
      {
        podMeta: INJECTED,
      },
    ),
  },
  {
    name: 'a POST to http://localhost:15020/quitquitquit?now=1',
    rule: 'quit-unheard',
    yaml: job(pod('command: ["sh", "-c", "./task; rc=$?; curl -s -X POST \'http://localhost:15020/quitquitquit?now=1\'; exit $rc"]'), {
      podMeta: INJECTED,
    }),
  },
  // wrapped-wrong-command
  {
    name: 'linkerd-await --shutdown wrapping echo after the job',
    rule: 'wrapped-wrong-command',
    yaml: job(pod('command: ["sh", "-c"]\nargs:\n- >\n  ./report && /linkerd-await --shutdown echo "shutdown linkerd-proxy"\n'), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled\n  config.linkerd.io/proxy-admin-shutdown: enabled',
    }),
    expect: { at: './report', level: 'error' },
  },
  {
    name: 'istio-job-run wrapping true at the end of a script',
    rule: 'wrapped-wrong-command',
    yaml: job(pod('command: ["sh", "-c", "./task; /opt/tools/istio-job-run -- true"]')),
    expect: { at: 'command:', level: 'error' },
  },
  {
    name: 'linkerd-await --shutdown wrapping the job',
    rule: 'wrapped-wrong-command',
    yaml: job(pod('command: ["sh", "-c", "/linkerd-await --shutdown -- ./task"]'), {
      podMeta: 'annotations:\n  linkerd.io/inject: enabled\n  config.linkerd.io/proxy-admin-shutdown: enabled',
    }),
  },
  // native-quit
  {
    name: 'a quit of a native Istio sidecar',
    rule: 'native-quit',
    yaml: job(pod('command: ["sh", "-c", "./task; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), {
      podMeta: 'annotations:\n  sidecar.istio.io/nativeSidecar: "true"',
    }),
    expect: { at: 'command:', level: 'warning' },
  },
  {
    name: 'a quit of a classic Istio sidecar',
    rule: 'native-quit',
    yaml: job(pod('command: ["sh", "-c", "./task; rc=$?; curl -XPOST localhost:15020/quitquitquit; exit $rc"]'), { podMeta: INJECTED }),
  },
  // proxy-command-override
  {
    name: 'an istio-proxy container with a command',
    rule: 'proxy-command-override',
    yaml: job(
      `restartPolicy: Never\ncontainers:\n${container(WRAPPED)}\n${container('command: ["/bin/sh", "-c", "sleep 5; pilot-agent proxy"]', 'istio-proxy')}`,
    ),
    expect: { at: 'sleep 5', level: 'error' },
  },
  {
    name: 'an istio-proxy overlay with resources only',
    rule: 'proxy-command-override',
    yaml: job(
      `restartPolicy: Never\ncontainers:\n${container(WRAPPED)}\n${container('resources: {limits: {memory: 1Gi}}', 'istio-proxy')}`,
    ),
  },
  // pod-failure-policy-container
  {
    name: 'an onExitCodes rule without containerName',
    rule: 'pod-failure-policy-container',
    yaml: job(pod(WRAPPED), {
      podMeta: INJECTED,
      jobSpec: 'podFailurePolicy:\n  rules:\n  - action: FailJob\n    onExitCodes: {operator: In, values: [42]}',
    }),
    expect: { at: 'onExitCodes', level: 'warning' },
  },
  {
    name: 'podFailurePolicy under OnFailure',
    rule: 'pod-failure-policy-container',
    yaml: job(pod('command: ["/opt/tools/istio-job-run", "--quit", "on-success", "--"]', 'OnFailure'), {
      podMeta: INJECTED,
      jobSpec: 'podFailurePolicy:\n  rules:\n  - action: FailJob\n    onExitCodes: {containerName: job, operator: In, values: [42]}',
    }),
    expect: { at: 'podFailurePolicy:', level: 'warning' },
  },
  {
    name: 'an onExitCodes rule with containerName',
    rule: 'pod-failure-policy-container',
    yaml: job(pod(WRAPPED), {
      jobSpec: 'podFailurePolicy:\n  rules:\n  - action: FailJob\n    onExitCodes: {containerName: job, operator: In, values: [42]}',
    }),
  },
  {
    name: 'an onExitCodes rule without containerName where injection is off',
    rule: 'pod-failure-policy-container',
    yaml: job(pod('command: ["./task.sh"]'), {
      podMeta: 'labels:\n  sidecar.istio.io/inject: "false"',
      jobSpec: 'podFailurePolicy:\n  rules:\n  - action: FailJob\n    onExitCodes: {operator: In, values: [42]}',
    }),
  },
  // exit-on-zero-connections
  {
    name: 'EXIT_ON_ZERO_ACTIVE_CONNECTIONS in proxyMetadata',
    rule: 'exit-on-zero-connections',
    yaml: job(pod(WRAPPED), {
      podMeta: 'annotations:\n  proxy.istio.io/config: |\n    proxyMetadata:\n      EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"',
    }),
    expect: { at: 'proxy.istio.io/config', level: 'warning' },
  },
  {
    name: 'EXIT_ON_ZERO_ACTIVE_CONNECTIONS on the job container',
    rule: 'exit-on-zero-connections',
    yaml: job(pod(`${WRAPPED}\nenv:\n- name: EXIT_ON_ZERO_ACTIVE_CONNECTIONS\n  value: "true"`)),
    expect: { at: 'name: EXIT_ON_ZERO', level: 'warning' },
  },
  {
    name: 'EXIT_ON_ZERO_ACTIVE_CONNECTIONS in a pod without a wrapper (--inject adds one: a setting)',
    rule: 'exit-on-zero-connections',
    yaml: job(pod('command: ["./task"]\nenv:\n- name: EXIT_ON_ZERO_ACTIVE_CONNECTIONS\n  value: "true"'), { podMeta: INJECTED }),
    expect: { at: 'name: EXIT_ON_ZERO', level: 'warning' },
  },
  {
    name: 'another proxyMetadata setting',
    rule: 'exit-on-zero-connections',
    yaml: job(pod(WRAPPED), { podMeta: 'annotations:\n  proxy.istio.io/config: "holdApplicationUntilProxyStarts: true"' }),
  },
];
