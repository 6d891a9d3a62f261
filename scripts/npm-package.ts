// npm run npm-package: dist/npm/istio-job-run-<version>.tgz, the npm package of the manifest tools for machines
// where the Linux executable does not run (macOS, Windows): `npm install -g` of it gives the commands
// `istio-job-run` (--check, --inject) and `kubectl-istio_job_run` (the kubectl plugin) on the user's own Node.
// One CommonJS file (src/manifest/cli/package-main.ts with yaml, esbuild) and a bin script per command; no
// dependencies to fetch. Its NOTICES carry the licence texts of what the file holds.
//   --out DIR   write the tarball there instead of dist/npm/

import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as esbuild from 'esbuild';
import { PLUGIN_NAME } from '../src/manifest/cli/select.ts';
import { PROGRAM } from '../src/bundle/self.ts';
import { COMMONJS_IMPORT_META, dist, shellGrammarInline, version } from './build.ts';
import { NOTICES, renderNotices } from './notices.ts';
import { root } from './root.ts';
import { npmComponent, npmPackageDirs, OURS_REF, ours, uniqueComponents } from './provenance.ts';

/** The oldest Node the package is built for: the oldest LTS still maintained when it was made. */
const NODE_TARGET = 'node20';
const LIB = 'lib/manifest.cjs';

/** Writes the package and packs it; returns the tarball's path. */
export async function writeNpmPackage(outDir: string): Promise<string> {
  const work = join(outDir, 'package');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(join(work, 'bin'), { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: ['src/manifest/cli/package-main.ts'],
    outfile: join(work, LIB),
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: NODE_TARGET,
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    plugins: [shellGrammarInline],
    loader: { '.wasm': 'binary' },
    ...COMMONJS_IMPORT_META,
    define: { ISTIO_JOB_RUN_VERSION: JSON.stringify(version), ...COMMONJS_IMPORT_META.define },
  });
  const inputs = Object.keys(result.metafile.inputs);
  const npm = npmPackageDirs(inputs).map(npmComponent);
  const files = [
    {
      path: LIB,
      madeOf: [OURS_REF, ...npm.map((component) => component.ref)],
      sources: inputs.filter((input) => !input.includes('node_modules/')),
    },
  ];
  writeFileSync(
    join(work, NOTICES),
    renderNotices(files, uniqueComponents([ours(version), ...npm]), `istio-job-run ${version}, the npm package`),
  );
  for (const name of [PROGRAM, PLUGIN_NAME]) {
    const bin = join(work, 'bin', `${name}.cjs`);
    writeFileSync(bin, `#!/usr/bin/env node\n'use strict';\nrequire('../${LIB}').main(${JSON.stringify(name)});\n`);
    chmodSync(bin, 0o755);
  }
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { description: string; license: string };
  writeFileSync(
    join(work, 'package.json'),
    `${JSON.stringify(
      {
        name: PROGRAM,
        version,
        description: `${own.description} This package: the manifest tools (--check, --inject, the kubectl plugin) for any Node.`,
        license: own.license,
        bin: { [PROGRAM]: `bin/${PROGRAM}.cjs`, [PLUGIN_NAME]: `bin/${PLUGIN_NAME}.cjs` },
        files: ['bin/', 'lib/', NOTICES],
        engines: { node: `>=${NODE_TARGET.slice(4)}` },
      },
      null,
      2,
    )}\n`,
  );
  copyFileSync(join(root, 'LICENSE'), join(work, 'LICENSE'));
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', outDir], { cwd: work, encoding: 'utf8' })
    .trim()
    .split('\n')
    .at(-1);
  rmSync(work, { recursive: true, force: true });
  return join(outDir, packed ?? '');
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: join(dist, 'npm') } } });
  const outDir = resolve(values.out);
  mkdirSync(outDir, { recursive: true });
  process.stderr.write(`wrote ${await writeNpmPackage(outDir)}\n`);
}
