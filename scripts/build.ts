// npm run build: bundle src/ with esbuild, then build dist/istio-job-run, a single executable of the
// pinned Node (stripped first: stripping after the blob is injected would corrupt it).

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { pinnedNode, root } from './pinned-node.ts';

const dist = join(root, 'dist');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

export async function bundle(outfile: string): Promise<void> {
  await esbuild.build({
    entryPoints: [join(root, 'src/index.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node24',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    // A CommonJS bundle has no import.meta: a silent empty one kills the executable at start.
    logOverride: { 'empty-import-meta': 'error' },
    define: {
      ISTIO_JOB_RUN_VERSION: JSON.stringify(version),
      'import.meta.url': '__istioJobRunUrl',
    },
    // yargs-parser's ESM build calls createRequire(import.meta.url); in the executable that is its own path.
    banner: { js: 'var __istioJobRunUrl = require("node:url").pathToFileURL(__filename).href;' },
  });
}

async function build(): Promise<void> {
  mkdirSync(dist, { recursive: true });
  const work = join(dist, '.build');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work);
  try {
    const main = join(work, 'istio-job-run.cjs');
    await bundle(main);

    const node = join(work, 'node');
    copyFileSync(pinnedNode(), node);
    execFileSync('strip', ['--strip-all', node]);

    const config = join(work, 'sea-config.json');
    writeFileSync(config, JSON.stringify({
      main,
      output: join(dist, 'istio-job-run'),
      executable: node,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      useSnapshot: false,
      // No --disable-sigusr1: in Node 26 it blocks SIGUSR1 outright, so a USR1 meant for the job would never
      // arrive. The wrapper's own USR1 listener, installed first thing, replaces the inspector's.
      execArgv: [],
      // NODE_OPTIONS belongs to the job: it must not run code inside the wrapper.
      execArgvExtension: 'none',
    }));
    execFileSync(pinnedNode(), ['--build-sea', config], { stdio: ['ignore', 'ignore', 'inherit'] });
    copyFileSync(main, join(dist, 'istio-job-run.cjs'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  process.stderr.write(`built ${join(dist, 'istio-job-run')} (istio-job-run ${version})\n`);
}

if (import.meta.main) await build();
