// The Helm 4 post-renderer plugin that npm run release writes beside each bundle: a folder named after the plugin
// with its plugin.yaml (apiVersion v1, type postrenderer/v1, the subprocess runtime) and the portable bundle,
// which the plugin's command runs as `istio-job-run --inject -`, followed by Helm's --post-renderer-args.
// `helm install NAME CHART --post-renderer istio-job-run` finds it by its name (docs/MANIFESTS.md).

import { chmodSync, cpSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { PROGRAM } from '../src/bundle/self.ts';
import { type Arch, version } from './build.ts';

/** The plugin's name: what --post-renderer names, and the folder Helm installs it into. */
export const HELM_PLUGIN = PROGRAM;

/** Helm's names for the architectures (Go's GOARCH), which its platformCommand selects on. */
export const HELM_ARCH: Readonly<Record<Arch, string>> = { x64: 'amd64', arm64: 'arm64' };

/**
 * The tarball's name. `helm plugin install` takes the folder at its root from the name, up to the `-` before
 * the version, so the name starts with the plugin's.
 */
export const helmPluginName = (arch: Arch): string => `${HELM_PLUGIN}-${version}-helm-plugin-linux-${arch}.tgz`;

/** plugin.yaml: its command is the bundle's launcher inside the installed plugin's folder. */
export function helmPluginYaml(arch: Arch): string {
  const metadata = {
    apiVersion: 'v1',
    name: HELM_PLUGIN,
    type: 'postrenderer/v1',
    runtime: 'subprocess',
    version,
    runtimeConfig: {
      platformCommand: [{ os: 'linux', arch: HELM_ARCH[arch], command: `\${HELM_PLUGIN_DIR}/${PROGRAM}`, args: ['--inject', '-'] }],
    },
  };
  return `# ${PROGRAM} ${version} as a Helm 4 post-renderer: helm install NAME CHART --post-renderer ${HELM_PLUGIN}\n${stringify(metadata)}`;
}

/**
 * Lays the plugin out in OUT (OUT/istio-job-run/: plugin.yaml and the bundle of BUNDLE_DIR) and returns that
 * folder. Fixed modes, as the bundle's, so the umask of the build does not show in the tarball.
 */
export function layHelmPlugin(bundleDir: string, out: string, arch: Arch): string {
  const dir = join(out, HELM_PLUGIN);
  mkdirSync(out, { recursive: true });
  cpSync(bundleDir, dir, { recursive: true });
  writeFileSync(join(dir, 'plugin.yaml'), helmPluginYaml(arch));
  fixModes(out);
  return dir;
}

/** Folders and executables 0755, other files 0644. */
function fixModes(path: string): void {
  const stat = statSync(path);
  chmodSync(path, stat.isDirectory() || (stat.mode & 0o100) !== 0 ? 0o755 : 0o644);
  if (stat.isDirectory()) for (const name of readdirSync(path)) fixModes(join(path, name));
}
