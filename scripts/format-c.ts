// clang-format (Debian's) over the launcher's C, src/launcher/, in the style of .clang-format: `--check` (npm run
// lint) fails naming each file it would change; without it (npm run format) it rewrites them.

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './root.ts';
import { runMain, runTool } from './tools.ts';

const dir = join(root, 'src', 'launcher');
const files = readdirSync(dir)
  .filter((file) => /\.[ch]$/.test(file))
  .sort()
  .map((file) => join(dir, file));
const check = process.argv.includes('--check');

await runMain('format-c', async () => {
  runTool('clang-format', [check ? '--dry-run' : '-i', ...(check ? ['--Werror'] : []), ...files], { stdio: 'inherit' });
});
