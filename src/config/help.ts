// --help, rendered from the option table and the sidecar kinds.

import { EXIT_CANNOT_EXECUTE, EXIT_NOT_FOUND, EXIT_WRAPPER_FAILED } from '../command/exit-code.ts';
import { SPECS, STATUS_VARIABLE } from './options.ts';
import { SCUTTLE_VARIABLES } from './scuttle.ts';

export function renderHelp(version: string): string {
  const lines = [
    `istio-job-run ${version}`,
    '',
    'Usage: istio-job-run [options] [--] COMMAND [ARG...]',
    '       istio-job-run --install DIR',
    '       istio-job-run --check FILE... | --inject FILE [--image IMAGE] [--native]',
    '                     (the manifest tools: istio-job-run --check --help)',
    '       istio-job-run --help | --version',
    '',
    'Runs COMMAND as a Kubernetes Job behind an Istio sidecar: waits until the proxy',
    'is ready, runs the command with stdio and signals passed straight through, tells',
    "a classic sidecar to quit, and exits with the command's code. Options stop at",
    '"--" or at the first argument that is not an option. A flag beats its variable.',
    '',
    'Options:',
  ];
  for (const [, spec] of SPECS) {
    lines.push(`  ${spec.usage}`);
    lines.push(`      ${spec.env}, default: ${spec.defaultText}`);
    lines.push(...wrap(spec.help, 72).map((line) => `      ${line}`));
  }
  lines.push(
    '  --install DIR',
    ...wrap(
      'Put a working copy of istio-job-run into DIR (an emptyDir shared with the job container) ' +
        'and exit: the init-container pattern. The copy needs no libc.',
      72,
    ).map((line) => `      ${line}`),
    '  -h, --help       Show this help.',
    '      --version    Show the version.',
    '',
    'DURATION: 500ms, 30s, 2m, 1h or 1m30s; a bare number is seconds.',
    'Sidecar status: map the pod annotation sidecar.istio.io/status into',
    `${STATUS_VARIABLE} (downward API), or mount the pod's annotations.`,
    ...wrap(`scuttle's variables are read too, below the ones above: ${SCUTTLE_VARIABLES.join(', ')} ` + '(docs/MIGRATING.md).', 78),
    '',
    'Exit codes:',
    "  the command's code   it exited",
    '  128+N                it died of signal N, or the wrapper got TERM, INT, HUP or',
    '                       QUIT before it started',
    `  ${EXIT_CANNOT_EXECUTE}                  the command exists but cannot be executed`,
    `  ${EXIT_NOT_FOUND}                  the command was not found`,
    `  ${EXIT_WRAPPER_FAILED}                  the wrapper failed before the command ran (usage error,`,
    '                       readiness timeout, internal error)',
    '',
  );
  return lines.join('\n');
}

export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === '' ? word : `${line} ${word}`;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}
