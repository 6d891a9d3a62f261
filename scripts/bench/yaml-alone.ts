// The floor of --check: a manifest file read and parsed as --check parses it (yaml/source.ts's options), and
// nothing else. The bench runs it with the embedded Node's version, beside --check of the same file.
// Usage: node scripts/bench/yaml-alone.ts FILE

import { readFileSync } from 'node:fs';
import { parseSource } from '../../src/manifest/yaml/source.ts';

const file = process.argv[2];
if (file === undefined) throw new Error('usage: yaml-alone.ts FILE');
const parsed = parseSource(file, readFileSync(file, 'utf8'));
if ('error' in parsed) throw new Error(parsed.error);
