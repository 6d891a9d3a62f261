// A YAML text as the manifest tools parse it, for their tests.

import { parseSource, type Source } from '../../src/manifest/source.ts';

export function source(text: string, name = 'test.yaml'): Source {
  const parsed = parseSource(name, text);
  if ('error' in parsed) throw new Error(parsed.error);
  return parsed;
}
