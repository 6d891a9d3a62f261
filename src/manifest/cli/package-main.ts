// The npm package's entry (scripts/npm-package.ts): the manifest tools on any Node, for macOS and Windows, where
// the Linux executable does not run. Its two commands are the executable's: `istio-job-run --check|--inject ...`
// and the kubectl plugin `kubectl-istio_job_run`, each a bin script that names itself (npm's shims on Windows
// hide the name a link would carry). The wrapper itself is not in it: it runs only in the Linux bundle.

import { runManifest } from './cli.ts';
import { manifestIo } from './io.ts';
import { isManifestInvocation, PLUGIN_NAME } from './select.ts';

declare const ISTIO_JOB_RUN_VERSION: string | undefined;

/** Runs the command NAME with the process's arguments; sets the exit code. */
export async function main(name: string): Promise<void> {
  const version = typeof ISTIO_JOB_RUN_VERSION === 'string' ? ISTIO_JOB_RUN_VERSION : 'dev';
  const argv = process.argv.slice(2);
  const io = manifestIo(name);
  if (name !== PLUGIN_NAME && argv.length === 1 && argv[0] === '--version') {
    io.stdout(`istio-job-run ${version}\n`);
    process.exitCode = 0;
  } else if (name === PLUGIN_NAME || isManifestInvocation(argv, name) || argv.includes('--help') || argv.includes('-h')) {
    process.exitCode = await runManifest(argv, name, version, io);
  } else {
    io.stderr(
      'this is the npm package, which has the manifest tools only (--check FILE, --inject FILE; see --help): ' +
        "the wrapper runs in a Linux pod, from the release's bundle or the istio-job-run image",
    );
    process.exitCode = 2;
  }
}
