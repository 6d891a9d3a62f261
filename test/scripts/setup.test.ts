import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { target } from '../../scripts/build.ts';
import { howToGet, need, StepError } from '../../scripts/tools.ts';
import { NODE, root, start } from '../support/process.ts';

const SETUP = join(root, 'scripts', 'setup.mjs');
const engines = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string; npm: string } }).engines;

/** scripts/setup.mjs as npm runs it, with npm's user agent naming the Node and npm that run npm. */
const setup = (args: string[], agent: string) =>
  start(NODE, [SETUP, ...args], { env: { PATH: process.env['PATH'] ?? '', npm_config_user_agent: agent }, timeoutMs: 15_000 }).finished;

/** One line on stderr, no stack trace, exit 1. */
function oneLine(result: { code: number | null; stderr: string; stdout: string }, says: RegExp): void {
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, says);
}

describe('npm run setup: the version check comes first', () => {
  test('package.json declares the floors setup reads', () => {
    assert.match(engines.node, /^>=\d+\.\d+\.\d+$/);
    assert.match(engines.npm, /^>=\d+\.\d+\.\d+$/);
  });

  test("Debian's Node 18 is told it is too old, and what to get", async () => {
    oneLine(
      await setup(['--check'], 'npm/9.2.0 node/v18.19.0 linux x64 workspaces/false'),
      new RegExp(
        `^setup: Node 18\\.19\\.0 is too old: this project needs Node ${engines.node} \\(package\\.json engines\\); get one: https://nodejs\\.org`,
      ),
    );
  });

  test('an old npm on a new Node is told the same', async () => {
    oneLine(
      await setup(['--check'], 'npm/9.2.0 node/v26.0.0 linux x64 workspaces/false'),
      /^setup: npm 9\.2\.0 is too old: .*npm install -g npm@latest/,
    );
  });

  test('a Node one minor below the floor is refused, the floor itself passes the version check', async () => {
    const [major = 0] = engines.node.slice(2).split('.').map(Number);
    oneLine(await setup(['--check'], `npm/11.0.0 node/v${major - 1}.99.99 linux x64`), /is too old/);
    const atFloor = await setup(['--check'], `npm/11.0.0 node/v${engines.node.slice(2)} linux x64`);
    assert.doesNotMatch(atFloor.stderr, /too old/);
  });

  test('an unknown argument is named, with what is allowed', async () => {
    oneLine(
      await setup(['--test'], 'npm/11.0.0 node/v26.0.0 linux x64'),
      /^setup: unknown argument "--test" \(allowed: --tests, --check\)\n$/,
    );
  });
});

describe('the build names a missing tool and the package that has it', () => {
  test('every program the build calls for either architecture is in scripts/debian-packages.txt', () => {
    for (const arch of ['x64', 'arm64'] as const) {
      const t = target(arch);
      const programs = [t.muslGcc, t.native ? 'strip' : `${t.triplet}-strip`, 'readelf', ...(t.native ? [] : [`${t.triplet}-gcc`])];
      for (const program of programs) assert.match(howToGet(program), /: it comes with Debian's \S+ \(`npm run setup/, program);
    }
  });

  test("the build's programs are installed by plain npm run setup, the cross ones by --tests", () => {
    assert.match(howToGet('strip'), /Debian's binutils \(`npm run setup` installs it, as root\)$/);
    assert.match(howToGet('x86_64-linux-musl-gcc'), /Debian's musl-tools \(`npm run setup`/);
    assert.match(howToGet('libatomic.so.1'), /Debian's libatomic1 \(`npm run setup`/);
    assert.match(howToGet('aarch64-linux-musl-gcc'), /Debian's musl-dev:arm64 \(`npm run setup -- --tests`/);
  });

  test('need() throws one error naming every missing program', () => {
    assert.throws(
      () => need('sh', 'no-such-program-a', 'no-such-program-b'),
      (error: unknown) => error instanceof StepError && error.message === 'no-such-program-a is missing; no-such-program-b is missing',
    );
  });

  test('a script run under runMain says it in one line, without a stack trace', async () => {
    const script = `import { need, runMain } from ${JSON.stringify(join(root, 'scripts', 'tools.ts'))}; await runMain('build', async () => need('strip'));`;
    const result = await start(NODE, ['--input-type=module', '-e', script], { env: { PATH: '/nonexistent' }, timeoutMs: 15_000 }).finished;
    oneLine(result, /^build: strip is missing: it comes with Debian's binutils \(`npm run setup` installs it, as root\)\n$/);
  });
});
