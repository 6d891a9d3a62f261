// `npm run images` (scripts/images.ts): the multi-arch OCI archive, read here without podman, as a registry
// or `skopeo` would: index.json -> an image index with one manifest per platform -> each image's config
// (user, entrypoint, labels) and its one layer, which holds the release bundle of that architecture.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { version } from '../../scripts/build.ts';
import { archiveName } from '../../scripts/images.ts';
import { imageLabels, Podman } from '../../scripts/podman.ts';
import { NODE, root, start } from '../support/process.ts';

interface Descriptor {
  readonly mediaType: string;
  readonly digest: string;
  readonly platform?: { readonly architecture: string; readonly os: string };
  readonly annotations?: Record<string, string>;
}
interface ImageConfig {
  readonly architecture: string;
  readonly os: string;
  readonly config: { User: string; Entrypoint: string[]; Cmd: string[]; Labels: Record<string, string> };
}

const BUNDLE_DIR = 'opt/istio-job-run/';
/** ELF e_machine (offset 18) of each platform's executable. */
const PLATFORMS = { amd64: { arch: 'x64', machine: 0x3e }, arm64: { arch: 'arm64', machine: 0xb7 } } as const;

const scratch = mkdtempSync(join(tmpdir(), 'istio-job-run-oci-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const blob = (layout: string, digest: string): string => join(layout, 'blobs', ...digest.split(':'));
const json = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;
const entries = (listing: string, prefix: string): string[] =>
  listing
    .split('\n')
    .map((line) => line.replace(/^\.\//, ''))
    .filter((line) => line.startsWith(prefix))
    .map((line) => line.slice(prefix.length).replace(/\/$/, ''))
    .filter(Boolean)
    .sort();

describe('npm run images: the multi-arch OCI archive', () => {
  const layout = join(scratch, 'layout');

  test('it is written, and its index names the version', async () => {
    const unavailable = Podman.unavailable();
    assert.equal(unavailable, undefined, `the runtime suite ${unavailable}`);
    const out = join(scratch, 'out');
    const running = start(NODE, [join(root, 'scripts', 'images.ts'), '--out', out], { timeoutMs: 600_000 });
    running.process.stdin?.end();
    const finished = await running.finished;
    assert.equal(finished.code, 0, finished.stderr);
    mkdirSync(layout);
    execFileSync('tar', ['-xf', join(out, archiveName), '-C', layout]);
    const index = json<{ manifests: Descriptor[] }>(join(layout, 'index.json'));
    assert.equal(index.manifests.length, 1);
    assert.equal(index.manifests[0]?.mediaType, 'application/vnd.oci.image.index.v1+json');
    assert.equal(index.manifests[0]?.annotations?.['org.opencontainers.image.ref.name'], `istio-job-run:${version}`);
  });

  test('two platform manifests, each a non-root image with the labels, the entrypoint and its own bundle', () => {
    const top = json<{ manifests: Descriptor[] }>(join(layout, 'index.json')).manifests[0] as Descriptor;
    const list = json<{ manifests: Descriptor[] }>(blob(layout, top.digest)).manifests;
    assert.deepEqual(list.map((m) => `${m.platform?.os}/${m.platform?.architecture}`).sort(), ['linux/amd64', 'linux/arm64']);
    const labels = imageLabels();
    for (const descriptor of list) {
      const platform = PLATFORMS[descriptor.platform?.architecture as keyof typeof PLATFORMS];
      const manifest = json<{ config: Descriptor; layers: Descriptor[] }>(blob(layout, descriptor.digest));
      const image = json<ImageConfig>(blob(layout, manifest.config.digest));
      assert.equal(image.architecture, descriptor.platform?.architecture);
      assert.equal(image.config.User, '65532:65532', 'a numeric non-root user');
      assert.deepEqual(image.config.Entrypoint, [`/${BUNDLE_DIR}istio-job-run`, '--install']);
      assert.deepEqual(image.config.Cmd, ['/shared']);
      for (const [key, value] of Object.entries({
        version: labels.version,
        revision: labels.revision,
        licenses: 'Apache-2.0',
        source: labels.source,
      })) {
        assert.equal(image.config.Labels[`org.opencontainers.image.${key}`], value, key);
      }
      assert.equal(manifest.layers.length, 1, 'FROM scratch and one ADD: one layer');
      const layer = blob(layout, (manifest.layers[0] as Descriptor).digest);
      const release = join(root, 'dist', 'release', `istio-job-run-${version}-linux-${platform.arch}.tar.gz`);
      assert.deepEqual(
        entries(execFileSync('tar', ['-tzf', layer], { encoding: 'utf8' }), BUNDLE_DIR),
        entries(execFileSync('tar', ['-tzf', release], { encoding: 'utf8' }), ''),
        'the layer holds the release bundle, file for file',
      );
      const head = spawnSync('sh', [
        '-c',
        'tar -xzOf "$0" "$1" | head -c 20',
        layer,
        `${BUNDLE_DIR}istio-job-run.lib/istio-job-run`,
      ]).stdout;
      assert.equal(head.readUInt16LE(18), platform.machine, `the executable is built for ${descriptor.platform?.architecture}`);
    }
  });
});
