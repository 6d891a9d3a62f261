// Helm 4's side of a post-renderer plugin, for tests on machines without Helm: how it reads plugin.yaml, picks
// and expands the command, runs it and takes its output, and the stream of manifests it sends. Written from
// Helm's source at v4.2.4 (same contract since v4.0.0): internal/plugin/loader.go and metadata_v1.go (plugin.yaml
// is decoded strictly), subprocess_commands.go (the platform command, split on spaces, and $VAR expansion),
// runtime_subprocess.go (runPostrenderer: Helm's environment plus HELM_PLUGIN_NAME and HELM_PLUGIN_DIR, the
// manifests on a stdin pipe then closed, stdout and stderr into buffers, stderr never shown, a non-zero exit an
// error), pkg/postrenderer/postrenderer.go (the extra args after the plugin's; an output of only white space is
// an error) and pkg/action/action.go (annotateAndMerge and splitAndDeannotate: hooks included, each document
// annotated with the file it came from).

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { start } from './process.ts';

export const FILENAME_ANNOTATION = 'postrenderer.helm.sh/postrender-filename';

const METADATA_V1_KEYS = ['apiVersion', 'name', 'type', 'runtime', 'version', 'sourceURL', 'config', 'runtimeConfig'];
const SUBPROCESS_KEYS = ['platformCommand', 'platformHooks', 'protocolCommands'];
const PLATFORM_COMMAND_KEYS = ['os', 'arch', 'command', 'args'];
const SEMVER = /^v?\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

interface PlatformCommand {
  os?: string;
  arch?: string;
  command?: string;
  args?: string[];
}

function onlyKeys(object: object, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(object))
    assert.ok(allowed.includes(key), `${where}: field ${key} not found in type (Helm decodes strictly)`);
}

/** plugin.yaml as Helm 4 loads a postrenderer/v1 plugin with the subprocess runtime; its platform commands. */
export function loadPostRenderer(pluginDir: string): { name: string; commands: PlatformCommand[] } {
  const metadata = parseYaml(readFileSync(join(pluginDir, 'plugin.yaml'), 'utf8')) as Record<string, unknown>;
  onlyKeys(metadata, METADATA_V1_KEYS, 'plugin.yaml');
  assert.equal(metadata['apiVersion'], 'v1');
  assert.match(String(metadata['name']), /^[A-Za-z0-9_-]+$/);
  assert.match(String(metadata['version']), SEMVER);
  assert.equal(metadata['type'], 'postrenderer/v1');
  assert.equal(metadata['runtime'], 'subprocess');
  assert.ok(metadata['config'] === undefined || Object.keys(metadata['config'] as object).length === 0, 'postrenderer/v1 has no config');
  const runtimeConfig = metadata['runtimeConfig'] as Record<string, unknown>;
  onlyKeys(runtimeConfig, SUBPROCESS_KEYS, 'runtimeConfig');
  const commands = runtimeConfig['platformCommand'] as PlatformCommand[];
  for (const command of commands) onlyKeys(command, PLATFORM_COMMAND_KEYS, 'platformCommand');
  return { name: String(metadata['name']), commands };
}

/** Helm's choice among platform commands: OS and arch; then OS alone; then neither. None fits: undefined. */
export function platformCommand(commands: readonly PlatformCommand[], os: string, arch: string): PlatformCommand | undefined {
  const same = (a: string | undefined, b: string): boolean => (a ?? '').toLowerCase() === b.toLowerCase();
  let found: PlatformCommand | undefined;
  let foundOs = false;
  for (const c of commands) {
    if (same(c.os, os) && same(c.arch, arch)) return c;
    if ((c.os && !same(c.os, os)) || c.arch) continue;
    if (!foundOs && c.os) [found, foundOs] = [c, true];
    else if (found === undefined) found = c;
  }
  return found;
}

/** Go's os.Expand: $NAME and ${NAME}, an unset one empty. */
const expand = (text: string, env: Record<string, string | undefined>): string =>
  text.replace(
    /\$\{([^}]*)\}|\$([A-Za-z0-9_]+)/g,
    (_, braced: string | undefined, bare: string | undefined) => env[braced ?? bare ?? ''] ?? '',
  );

export interface Rendered {
  readonly ok: boolean;
  /** What Helm's error would say, or the manifests it goes on with. */
  readonly error?: string;
  readonly manifests: string;
  /** What the plugin wrote there: Helm keeps it in a buffer and never shows it. */
  readonly stderr: string;
  readonly argv: readonly string[];
}

/** Runs the plugin installed in PLUGIN_DIR on MANIFESTS as `helm install --post-renderer NAME` does on linux/ARCH. */
export async function postRender(
  pluginDir: string,
  manifests: string,
  options: { arch: string; extraArgs?: readonly string[]; env?: NodeJS.ProcessEnv },
): Promise<Rendered> {
  const { name, commands } = loadPostRenderer(pluginDir);
  const chosen = platformCommand(commands, 'linux', options.arch);
  if (chosen?.command === undefined || chosen.command === '') {
    return { ok: false, error: 'no plugin command is applicable', manifests: '', stderr: '', argv: [] };
  }
  const env = { ...(options.env ?? process.env), HELM_PLUGIN_NAME: name, HELM_PLUGIN_DIR: pluginDir };
  const [main = '', ...parts] = chosen.command.split(' ');
  const argv = [expand(main, env), ...[...parts, ...(chosen.args ?? [])].map((arg) => expand(arg, env)), ...(options.extraArgs ?? [])];
  const running = start(argv[0] ?? '', argv.slice(1), { env, timeoutMs: 60_000 });
  running.process.stdin?.end(manifests);
  const result = await running.finished;
  if (result.code !== 0) return { ok: false, error: `plugin "${name}" exited with error`, manifests: '', stderr: result.stderr, argv };
  if (result.stdout.trim() === '')
    return { ok: false, error: `post-renderer "${name}" produced empty output`, manifests: '', stderr: result.stderr, argv };
  return { ok: true, manifests: result.stdout, stderr: result.stderr, argv };
}

/** splitAndDeannotate's grouping: each output document under the file its annotation names (else a made-up name). */
export function filesOf(stream: string): Map<string, number> {
  const files = new Map<string, number>();
  parseAllDocuments(stream).forEach((doc, i) => {
    const annotations = (doc.toJS() as { metadata?: { annotations?: Record<string, string> } } | null)?.metadata?.annotations;
    const file = annotations?.[FILENAME_ANNOTATION] ?? `generated-by-postrender-${i}.yaml`;
    files.set(file, (files.get(file) ?? 0) + 1);
  });
  return files;
}
