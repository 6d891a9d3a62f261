// Extracts from one of Kubernetes' OpenAPI files the schemas reachable from MutatingAdmissionPolicy and
// MutatingAdmissionPolicyBinding, for the unit tests of --admission-policy: from a v3 file
// (api/openapi-spec/v3/apis__admissionregistration.k8s.io__VERSION_openapi.json in the Kubernetes source) its
// components.schemas entries unchanged; from the v2 file (api/openapi-spec/swagger.json) its definitions entries,
// written as components.schemas with each `$ref` pointed there and nothing else changed. Run by hand when a
// schema changes; the tests read only what it wrote (test/support/schemas/), never the source file.
//
//   node scripts/k8s-schema-extract.ts SOURCE-FILE VERSION 'REPO PATH at COMMIT' > test/support/schemas/FILE.json

import { readFileSync } from 'node:fs';

const ROOTS = ['MutatingAdmissionPolicy', 'MutatingAdmissionPolicyBinding'];
const REF = '#/components/schemas/';
/** Where a Swagger 2.0 file (Kubernetes' api/openapi-spec/swagger.json) keeps its schemas, and its refs point. */
const V2_REF = '#/definitions/';

type Schemas = Record<string, unknown>;

/** Every `$ref` under a value, as the name of the schema it points at. */
function refs(value: unknown, into: string[]): void {
  if (Array.isArray(value)) for (const item of value) refs(item, into);
  else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      if (key === '$ref' && typeof item === 'string' && item.startsWith(REF)) into.push(item.slice(REF.length));
      else refs(item, into);
    }
  }
}

/** The schemas reachable from the roots, in the source's order. */
export function reachable(schemas: Schemas, roots: readonly string[]): Schemas {
  const seen = new Set<string>();
  const queue = [...roots];
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    if (seen.has(name)) continue;
    if (!(name in schemas)) throw new Error(`${name} is not in the source's components.schemas`);
    seen.add(name);
    refs(schemas[name], queue);
  }
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => seen.has(name)));
}

/** VALUE with each `$ref` into a Swagger 2.0 file's definitions pointed at the same name in components.schemas. */
function toComponents(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toComponents);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      key === '$ref' && typeof item === 'string' && item.startsWith(V2_REF) ? REF + item.slice(V2_REF.length) : toComponents(item),
    ]),
  );
}

if (import.meta.main) {
  const [source, version, origin] = process.argv.slice(2);
  if (source === undefined || version === undefined || origin === undefined) {
    process.stderr.write("usage: node scripts/k8s-schema-extract.ts SOURCE-FILE VERSION 'REPO PATH at COMMIT'\n");
    process.exit(2);
  }
  const spec = JSON.parse(readFileSync(source, 'utf8')) as { components?: { schemas: Schemas }; definitions?: Schemas };
  const roots = ROOTS.map((kind) => `io.k8s.api.admissionregistration.${version}.${kind}`);
  const v2 = spec.components === undefined;
  const schemas = v2 ? (toComponents(spec.definitions ?? {}) as Schemas) : spec.components!.schemas;
  const how = v2 ? 'the Swagger 2.0 definitions, each $ref pointed at components.schemas and nothing else changed,' : 'unchanged,';
  const extract = {
    $comment: `components.schemas reachable from ${roots.join(' and ')}: ${how} from ${origin}`,
    components: { schemas: reachable(schemas, roots) },
  };
  process.stdout.write(`${JSON.stringify(extract, null, 2)}\n`);
}
