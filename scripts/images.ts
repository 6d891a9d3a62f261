// npm run images: the istio-job-run image (docker/Dockerfile) for linux/amd64 and linux/arm64, built with
// podman from dist/release/ (run `npm run release` first), written as one multi-arch OCI archive:
// dist/images/istio-job-run-<version>.oci.tar (an OCI image layout whose index lists both platforms).
// There is no registry here; `skopeo copy --all oci-archive:FILE docker://REGISTRY/istio-job-run:<version>`
// publishes it. The Dockerfile has no RUN step, so the arm64 image needs no emulator.
//   --out DIR   write the archive there instead of dist/images/

import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { dist, version, type Arch } from './build.ts';
import { buildImage, Podman } from './podman.ts';
import { need, runMain, StepError } from './tools.ts';

export const IMAGE_ARCHES: readonly Arch[] = ['x64', 'arm64'];
export const archiveName = `istio-job-run-${version}.oci.tar`;

/** Builds both images into a manifest list and writes the list, with every image, as an OCI archive. */
export async function writeImages(outDir: string): Promise<string> {
  for (const arch of IMAGE_ARCHES) {
    const tarball = join(dist, 'release', `istio-job-run-${version}-linux-${arch}.tar.gz`);
    if (!existsSync(tarball)) throw new StepError(`${tarball} is missing: run npm run release first`);
  }
  need('podman', 'runc', 'catatonit');
  mkdirSync(outDir, { recursive: true });
  const archive = join(outDir, archiveName);
  rmSync(archive, { force: true });
  const podman = Podman.create('istio-job-run-images-');
  try {
    const list = `localhost/istio-job-run:${version}`;
    await podman.ok(['manifest', 'create', list]);
    for (const arch of IMAGE_ARCHES) await buildImage(podman, { dockerfile: 'Dockerfile', tag: list, arch, manifest: list });
    await podman.ok(['manifest', 'push', '--all', '--format', 'oci', list, `oci-archive:${archive}:istio-job-run:${version}`], {
      timeoutS: 300,
    });
  } finally {
    await podman.remove();
  }
  return archive;
}

if (import.meta.main) {
  await runMain('images', async () => {
    const { values } = parseArgs({ options: { out: { type: 'string', default: join(dist, 'images') } } });
    const archive = await writeImages(resolve(values.out));
    process.stderr.write(`wrote ${archive} (linux/amd64, linux/arm64)\n`);
  });
}
