// The bundle's istio-job-run.lib/NOTICES: which file of the bundle is made of what, and the licence and
// copyright texts of every part (scripts/provenance.ts finds them). One plain-text file, so --install's flat
// copy of istio-job-run.lib/ and every image that unpacks a release tarball carry it too.

import type { BundleFile, Component } from './provenance.ts';

export const NOTICES = 'NOTICES';

const RULE = '='.repeat(78);

/** Every part of every file needs a licence text: a part without one is a bundle nobody may pass on. */
export function missingNotices(files: readonly BundleFile[], components: readonly Component[]): string[] {
  const byRef = new Map(components.map((component) => [component.ref, component]));
  const missing: string[] = [];
  for (const file of files) {
    for (const ref of file.madeOf) {
      const component = byRef.get(ref);
      if (component === undefined) missing.push(`${file.path}: ${ref} is not a known component`);
      else if (!component.texts.some((text) => text.text.trim() !== '')) missing.push(`${file.path}: ${ref} has no licence text`);
    }
  }
  return missing;
}

export function renderNotices(files: readonly BundleFile[], components: readonly Component[], title: string): string {
  const missing = missingNotices(files, components);
  if (missing.length > 0) throw new Error(`the bundle would carry parts without a notice:\n  ${missing.join('\n  ')}`);
  const used = new Set(files.flatMap((file) => file.madeOf));
  const parts = components.filter((component) => used.has(component.ref));
  const lines = [
    `${title}: licence and copyright notices`,
    '',
    'The files of this bundle and what each one is made of (a section for each part follows):',
    '',
  ];
  for (const file of files) {
    lines.push(`  ${file.path}`);
    for (const ref of file.madeOf) lines.push(`      ${ref}`);
  }
  const printed = new Map<string, string>();
  for (const component of parts) {
    lines.push('', RULE, `${component.ref}`, RULE, `Name:      ${component.name}`, `Version:   ${component.version}`);
    if (component.debian !== undefined) {
      lines.push(
        `Package:   ${component.debian.package}:${component.debian.architecture} (Debian)`,
        `Source:    ${component.debian.sourcePackage} ${component.debian.sourceVersion}`,
      );
    }
    if (component.licence !== undefined) lines.push(`Licence:   ${component.licence}`);
    lines.push(`Published: ${component.source}`);
    for (const text of component.texts) {
      // Debian's libraries of one source package share one copyright file: its text once, then a pointer.
      const earlier = printed.get(text.text);
      if (earlier === undefined) {
        printed.set(text.text, component.ref);
        lines.push('', `----- ${text.from} -----`, '', text.text.trimEnd());
      } else {
        lines.push('', `----- ${text.from}: the same text as in the section of ${earlier} -----`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
