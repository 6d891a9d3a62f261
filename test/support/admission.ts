// A MutatingAdmissionPolicy run the way the Kubernetes API server runs one, without an API server: its match
// constraints, its variables (evaluated lazily: an error counts only where a variable is used), its match
// conditions and its JSON Patch mutations, in CEL evaluated by @bufbuild/cel, with the Kubernetes extensions the
// policy uses written here as Kubernetes' source defines them, and the patch applied with fast-json-patch (RFC 6902).
// @bufbuild/cel runs the cel-spec conformance suite in its own tests (bufbuild/cel-es packages/cel/src/
// conformance.test.ts), leaving out optionals, cel.bind, the math extension and type checking: the policy uses none
// of those, and mixedLiterals() below stands for the one check of Kubernetes' compiler it relies on. Its regular
// expressions are RE2's, as cel-go's are. Sources, in kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg:
// - cel/library/jsonpatch.go: jsonpatch.escapeKey replaces "~" with "~0" and "/" with "~1" (strings.NewReplacer).
// - cel/library/lists.go: <list>.indexOf(<T>) is the first index of an equal element, or -1.
// - admission/plugin/policy/mutating/patch/json_patch.go (jsonPatcher): the expression's list of JSONPatch values
//   becomes an RFC 6902 patch of op, path, from (when not empty) and value (converted to a structpb.Value, then
//   JSON); a failed `test` leaves the object as it was; any other failure is an error.
// - cel/mutation (the JSONPatch object type: op, path, from strings, value dyn): here a message type of the same
//   fields, value a google.protobuf.Value, which is what json_patch.go converts it to.
// - cel/environment/base.go: the base environment has ext.Strings (trim, lowerAscii...), Kubernetes' lists library,
//   and requires literals of one type (cel.HomogeneousAggregateLiterals), which homogeneousLiterals() checks.
// The request rules matched here are the policy's resourceRules against the object's group, version, resource and
// operation, and its namespaceSelector (a metav1.LabelSelector) against the namespace's labels.

import { type CelValue, CelScalar, celEnv, celFunc, celMethod, isCelError, isCelList, listType, parse, plan } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { create, createFileRegistry, toJson } from '@bufbuild/protobuf';
import { isReflectMessage, reflect } from '@bufbuild/protobuf/reflect';
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  file_google_protobuf_struct,
} from '@bufbuild/protobuf/wkt';
import fastJsonPatch, { type Operation } from 'fast-json-patch';

type Expr = NonNullable<ReturnType<typeof parse>['expr']>;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const STRING = FieldDescriptorProto_Type.STRING;
const OPTIONAL = FieldDescriptorProto_Label.OPTIONAL;
/** Kubernetes' JSONPatch object type, as a message whose value is the structpb.Value json_patch.go converts to. */
const registry = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: 'kubernetes/jsonpatch.proto',
    syntax: 'proto3',
    dependency: ['google/protobuf/struct.proto'],
    messageType: [
      {
        name: 'JSONPatch',
        field: [
          { name: 'op', jsonName: 'op', number: 1, type: STRING, label: OPTIONAL },
          { name: 'path', jsonName: 'path', number: 2, type: STRING, label: OPTIONAL },
          { name: 'from', jsonName: 'from', number: 3, type: STRING, label: OPTIONAL },
          {
            name: 'value',
            jsonName: 'value',
            number: 4,
            type: FieldDescriptorProto_Type.MESSAGE,
            typeName: '.google.protobuf.Value',
            label: OPTIONAL,
          },
        ],
      },
    ],
  }),
  (name) => (name === 'google/protobuf/struct.proto' ? file_google_protobuf_struct : undefined),
);

const JSON_PATCH = registry.getMessage('JSONPatch') as NonNullable<ReturnType<typeof registry.getMessage>>;

const escapeKey = celFunc('jsonpatch.escapeKey', [CelScalar.STRING], CelScalar.STRING, (key) =>
  key.replaceAll('~', '~0').replaceAll('/', '~1'),
);
const indexOf = celMethod('indexOf', listType(CelScalar.DYN), [CelScalar.DYN], CelScalar.INT, function (item) {
  let index = 0n;
  for (const element of this) {
    if (equal(element, item)) return index;
    index++;
  }
  return -1n;
});
const env = celEnv({ registry, funcs: [...strings, escapeKey, indexOf] });

/** CEL equality of the scalars indexOf compares (container names). */
const equal = (a: CelValue, b: CelValue): boolean => a === b;

/** JSON as CEL reads a Kubernetes object: maps, lists, int64 for whole numbers. */
function toCel(value: Json): unknown {
  if (Array.isArray(value)) return value.map(toCel);
  if (value !== null && typeof value === 'object') return new Map(Object.entries(value).map(([key, inner]) => [key, toCel(inner)]));
  if (typeof value === 'number' && Number.isInteger(value)) return BigInt(value);
  return value;
}

interface Policy {
  readonly spec: {
    readonly matchConstraints: {
      readonly resourceRules: readonly { apiGroups: string[]; apiVersions: string[]; resources: string[]; operations: string[] }[];
      readonly namespaceSelector?: Selector;
    };
    readonly variables: readonly { name: string; expression: string }[];
    readonly matchConditions: readonly { name: string; expression: string }[];
    readonly mutations: readonly { patchType: string; jsonPatch: { expression: string } }[];
  };
}

interface Selector {
  readonly matchLabels?: Record<string, string>;
  readonly matchExpressions?: readonly { key: string; operator: string; values?: string[] }[];
}

/** A metav1.LabelSelector against LABELS (k8s.io/apimachinery pkg/apis/meta/v1 LabelSelectorAsSelector). */
export function selects(selector: Selector | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (selector === undefined) return true;
  const matched = Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value);
  return (
    matched &&
    (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
      if (operator === 'Exists') return key in labels;
      if (operator === 'DoesNotExist') return !(key in labels);
      if (operator === 'In') return key in labels && values.includes(labels[key] as string);
      return !(key in labels) || !values.includes(labels[key] as string);
    })
  );
}

export interface Request {
  readonly operation: 'CREATE' | 'UPDATE';
  readonly object: Json;
  readonly oldObject?: Json;
  /** The namespace object (metadata.name, labels, annotations). */
  readonly namespace: { metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> } };
}

export type Admitted =
  | { readonly kind: 'unmatched' }
  | { readonly kind: 'skipped'; readonly condition: string }
  | { readonly kind: 'error'; readonly message: string }
  | {
      readonly kind: 'patched';
      readonly object: Json;
      readonly patch: readonly Operation[];
      /** The policy's variables that evaluated. */
      readonly variables: ReadonlyMap<string, unknown>;
    };

const RESOURCES: Readonly<Record<string, readonly [string, string, string]>> = {
  Job: ['batch', 'v1', 'jobs'],
  CronJob: ['batch', 'v1', 'cronjobs'],
  Pod: ['', 'v1', 'pods'],
};

const programs = new Map<string, ReturnType<typeof plan>>();
function compile(expression: string): ReturnType<typeof plan> {
  let program = programs.get(expression);
  if (program === undefined) {
    program = plan(env, parse(expression));
    programs.set(expression, program);
  }
  return program;
}

/** The policy run on one request, as the API server runs it. */
export function admit(policy: Policy, request: Request): Admitted {
  const object = request.object as { kind: string };
  const resource = RESOURCES[object.kind];
  const { matchConstraints } = policy.spec;
  const rule = matchConstraints.resourceRules.find(
    (candidate) =>
      resource !== undefined &&
      candidate.apiGroups.includes(resource[0]) &&
      candidate.apiVersions.includes(resource[1]) &&
      candidate.resources.includes(resource[2]) &&
      candidate.operations.includes(request.operation),
  );
  if (rule === undefined || !selects(matchConstraints.namespaceSelector, request.namespace.metadata.labels ?? {})) {
    return { kind: 'unmatched' };
  }
  const variables = new Map<string, unknown>();
  const bindings = {
    object: toCel(request.object),
    oldObject: request.oldObject === undefined ? null : toCel(request.oldObject),
    namespaceObject: toCel(request.namespace as unknown as Json),
    request: new Map<string, unknown>([
      ['operation', request.operation],
      ['namespace', request.namespace.metadata.name],
    ]),
    params: null,
    variables,
  };
  const run = (expression: string): unknown => compile(expression)(bindings as never);
  // Lazily, as Kubernetes does: a variable whose evaluation fails is absent, so only an expression using it fails.
  for (const { name, expression } of policy.spec.variables) {
    const value = run(expression);
    if (!isCelError(value)) variables.set(name, value);
  }
  const errors: string[] = [];
  for (const { name, expression } of policy.spec.matchConditions) {
    // The API server's validation refuses a match condition that reads the policy's variables (reported against a
    // live cluster in deckhouse/deckhouse pull 22388): so does this.
    if (/\bvariables\b/.test(expression)) return { kind: 'error', message: `${name}: a match condition reads variables` };
    const value = run(expression);
    if (isCelError(value)) errors.push(`${name}: ${value.message}`);
    else if (value === false) return { kind: 'skipped', condition: name };
    else if (value !== true) errors.push(`${name}: not a bool`);
  }
  if (errors.length > 0) return { kind: 'error', message: errors.join('; ') };
  let patched = request.object;
  const patch: Operation[] = [];
  for (const mutation of policy.spec.mutations) {
    const value = run(mutation.jsonPatch.expression);
    if (isCelError(value)) return { kind: 'error', message: `mutation: ${value.message}` };
    if (!isCelList(value)) return { kind: 'error', message: 'mutation: not a list' };
    const operations = [...value].map((element) => {
      const { desc, message } = isReflectMessage(element) ? element : reflect(JSON_PATCH, element as never);
      return toJson(desc, message, { registry }) as unknown as Operation;
    });
    try {
      patched = fastJsonPatch.applyPatch(structuredClone(patched), operations, true).newDocument as Json;
    } catch (error) {
      if ((error as { name?: string }).name === 'TEST_OPERATION_FAILED') continue;
      return { kind: 'error', message: `JSONPath: ${(error as Error).message}` };
    }
    patch.push(...operations);
  }
  return { kind: 'patched', object: patched, patch, variables };
}

/**
 * The list and map literals of EXPRESSION whose items may differ in type, which Kubernetes' CEL rejects
 * (cel.HomogeneousAggregateLiterals): a literal of two or more items passes when they are all constants of one
 * kind, all dyn(...), or all selections of a variable (dyn in the policy's environment).
 */
export function mixedLiterals(expression: string): string[] {
  const found: string[] = [];
  const kindOf = (expr: Expr): string => {
    const node = expr.exprKind;
    if (node.case === 'constExpr') return `const:${node.value.constantKind.case}`;
    if (node.case === 'callExpr' && node.value.function === 'dyn') return 'dyn';
    if (node.case === 'selectExpr' || node.case === 'identExpr') return 'dyn';
    return node.case ?? 'none';
  };
  const walk = (expr: Expr | undefined): void => {
    if (expr === undefined) return;
    const node = expr.exprKind;
    const check = (items: readonly Expr[], what: string): void => {
      const kinds = new Set(items.map(kindOf));
      if (items.length > 1 && (kinds.size > 1 || [...kinds].some((kind) => kind === 'listExpr' || kind === 'structExpr')))
        found.push(`${what} of ${[...kinds].join(', ')}`);
    };
    switch (node.case) {
      case 'listExpr':
        check(node.value.elements, 'list');
        node.value.elements.forEach(walk);
        break;
      case 'structExpr':
        if (node.value.messageName === '') {
          check(
            node.value.entries.map((entry) => (entry.keyKind.case === 'mapKey' ? entry.keyKind.value : expr)),
            'map keys',
          );
          check(
            node.value.entries.flatMap((entry) => (entry.value === undefined ? [] : [entry.value])),
            'map values',
          );
        }
        for (const entry of node.value.entries) {
          if (entry.keyKind.case === 'mapKey') walk(entry.keyKind.value);
          walk(entry.value);
        }
        break;
      case 'callExpr':
        walk(node.value.target);
        node.value.args.forEach(walk);
        break;
      case 'selectExpr':
        walk(node.value.operand);
        break;
      case 'comprehensionExpr':
        for (const part of ['iterRange', 'accuInit', 'loopCondition', 'loopStep', 'result'] as const) walk(node.value[part]);
        break;
      default:
        break;
    }
  };
  walk(parse(expression).expr);
  return found;
}
