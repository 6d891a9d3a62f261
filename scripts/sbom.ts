// The release's SBOM: CycloneDX 1.6 JSON, one per tarball, from what scripts/build.ts found a bundle to be
// made of (scripts/provenance.ts): every file of the tarball with its sha256, the parts each is made of
// (the pinned Node package, the npm packages esbuild bundled, the Debian packages of the libraries and of
// the launcher's libc), and our source files with theirs. Checked against the schema that
// @cyclonedx/cyclonedx-library carries before it is written.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as CDX from '@cyclonedx/cyclonedx-library';
import { PackageURL } from 'packageurl-js';
import type { Bundle } from './build.ts';
import { root } from './root.ts';
import { OURS_REF, sha256, type Component } from './provenance.ts';

export const SBOM_SPEC = CDX.Spec.Version.v1dot6;

const fileRef = (path: string): string => `file:${path}`;
const sourceRef = (path: string): string => `source:${path}`;

function licences(component: Component): object[] | undefined {
  if (component.licence !== undefined) return [{ expression: component.licence }];
  // Debian says it in prose: the copyright file's text itself (NOTICES carries it too).
  const copyright = component.texts[0];
  return copyright === undefined
    ? undefined
    : [{ license: { name: `Debian copyright file of ${component.name}`, text: { contentType: 'text/plain', content: copyright.text } } }];
}

function part(component: Component): object {
  const debian = component.debian;
  return {
    type: component.kind === 'node' ? 'application' : 'library',
    'bom-ref': component.ref,
    name: component.name,
    version: component.version,
    ...(component.purl === undefined ? {} : { purl: component.purl }),
    ...(component.hashes === undefined ? {} : { hashes: component.hashes.map((hash) => ({ alg: hash.alg, content: hash.hex })) }),
    licenses: licences(component),
    description: `Published: ${component.source}`,
    ...(debian === undefined
      ? {}
      : {
          // Debian's source package, which the binary package was built from.
          pedigree: {
            ancestors: [
              {
                type: 'library',
                name: debian.sourcePackage,
                version: debian.sourceVersion,
                purl: new PackageURL('deb', 'debian', debian.sourcePackage, debian.sourceVersion, { arch: 'source' }, undefined).toString(),
              },
            ],
          },
        }),
  };
}

/** The SBOM of a tarball whose files are BUNDLE's, unpacked in DIR; its time is the commit's (SOURCE_DATE_EPOCH). */
export async function makeSbom(bundle: Bundle, dir: string, tarball: string, arch: string, epoch: number): Promise<string> {
  const ours = bundle.components.find((component) => component.ref === OURS_REF);
  if (ours === undefined) throw new Error('the bundle has no component of ours');
  const sources = [...new Set(bundle.files.flatMap((file) => file.sources))].sort();
  const parts = bundle.components.filter((component) => component.ref !== OURS_REF);
  const bom = {
    bomFormat: 'CycloneDX',
    specVersion: SBOM_SPEC,
    serialNumber: '',
    version: 1,
    metadata: {
      timestamp: new Date(epoch * 1000).toISOString().replace(/\.000Z$/, 'Z'),
      tools: { components: [{ type: 'application', name: 'istio-job-run scripts/release.ts', version: ours.version }] },
      component: {
        type: 'application',
        'bom-ref': OURS_REF,
        name: ours.name,
        version: ours.version,
        description: `${tarball}: the portable bundle for linux-${arch}`,
        licenses: licences(ours),
      },
    },
    components: [
      ...bundle.files.map((file) => ({
        type: 'file',
        'bom-ref': fileRef(file.path),
        name: file.path,
        hashes: [{ alg: 'SHA-256', content: sha256(readFileSync(join(dir, file.path))) }],
      })),
      ...sources.map((path) => ({
        type: 'file',
        'bom-ref': sourceRef(path),
        name: path,
        description: 'source of istio-job-run in its repository',
        hashes: [{ alg: 'SHA-256', content: sha256(readFileSync(join(root, path))) }],
      })),
      ...parts.map(part),
    ],
    dependencies: [
      { ref: OURS_REF, dependsOn: bundle.files.map((file) => fileRef(file.path)) },
      ...bundle.files.map((file) => ({
        ref: fileRef(file.path),
        dependsOn: [...file.madeOf.filter((ref) => ref !== OURS_REF), ...file.sources.map(sourceRef)],
      })),
    ],
  };
  // The serial number is made from the content, so the same bundle always gets the same one.
  bom.serialNumber = uuidOf(JSON.stringify(bom));
  const json = `${JSON.stringify(bom, null, 2)}\n`;
  const errors = await validateSbom(json);
  if (errors !== null) throw new Error(`the SBOM of ${tarball} does not match CycloneDX ${SBOM_SPEC}: ${JSON.stringify(errors)}`);
  return json;
}

/** null when JSON is a valid CycloneDX document of SBOM_SPEC (its published JSON schema, strict), else the errors. */
export async function validateSbom(json: string): Promise<unknown> {
  return new CDX.Validation.JsonStrictValidator(SBOM_SPEC).validate(json);
}

/** A name-based UUID (version 5 layout) from a sha256 of TEXT. */
function uuidOf(text: string): string {
  const hex = sha256(text).slice(0, 32).split('');
  hex[12] = '5';
  hex[16] = '89ab'[parseInt(hex[16] ?? '0', 16) & 3] ?? '8';
  const h = hex.join('');
  return `urn:uuid:${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
