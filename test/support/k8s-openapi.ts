// Validators for Kubernetes objects from an extract of one of Kubernetes' own OpenAPI v3 files (components.schemas,
// as scripts/k8s-schema-extract.ts writes it). The API server refuses unknown fields under strict field validation,
// which the OpenAPI file does not say: every object schema that lists its properties here refuses others.

import { readFileSync } from 'node:fs';
import { Ajv2019, type ValidateFunction } from 'ajv/dist/2019.js';
import formats from 'ajv-formats';

type Node = Record<string, unknown>;

/** A copy of VALUE in which each object schema with properties and no additionalProperties refuses unknown fields. */
function strict(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(strict);
  if (value === null || typeof value !== 'object') return value;
  const node: Node = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, strict(item)]));
  if (typeof node.properties === 'object' && !('additionalProperties' in node)) node.additionalProperties = false;
  return node;
}

export interface KindValidator {
  readonly apiVersion: string;
  readonly validate: ValidateFunction;
}

/** Validators by kind for the schemas of FILE that name their group, version and kind. */
export function openApiValidators(file: string): Map<string, KindValidator> {
  const extract = JSON.parse(readFileSync(file, 'utf8')) as { components: { schemas: Record<string, Node> } };
  const ajv = new Ajv2019({ allErrors: true, strict: false });
  formats.default(ajv);
  ajv.addSchema({ components: strict(extract.components) }, 'k8s');
  const validators = new Map<string, KindValidator>();
  for (const [name, schema] of Object.entries(extract.components.schemas)) {
    const gvk = (schema['x-kubernetes-group-version-kind'] as { group: string; version: string; kind: string }[] | undefined)?.[0];
    if (gvk === undefined) continue;
    validators.set(gvk.kind, {
      apiVersion: gvk.group === '' ? gvk.version : `${gvk.group}/${gvk.version}`,
      validate: ajv.compile({ $ref: `k8s#/components/schemas/${name}` }),
    });
  }
  return validators;
}
