// A stand-in of the Kubernetes API server for the kubectl plugin's cluster commands, which real kubectl talks to:
// HTTPS with a self-signed certificate made at start (openssl), a kubeconfig in a temporary folder that names it
// and a bearer token, the discovery documents kubectl reads before a `get` (the legacy ones: /api, /apis and each
// group version), and the lists of the recorded objects it was given, with the field and label selectors kubectl
// passes. A resource can be refused as RBAC refuses it: 403 with the Status the API server writes (its message
// from k8s.io/apiserver pkg/endpoints/handlers/responsewriters/errors.go, forbiddenMessage). Every request is
// recorded, so a test can wait on a count instead of a time.

import { execFileSync } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One resource the stand-in serves: its group ('' for the core group), version, plural name and kind. */
interface Resource {
  readonly group: string;
  readonly version: string;
  readonly name: string;
  readonly singular: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly shortNames?: readonly string[];
}

const RESOURCES: readonly Resource[] = [
  { group: '', version: 'v1', name: 'nodes', singular: 'node', kind: 'Node', namespaced: false, shortNames: ['no'] },
  { group: '', version: 'v1', name: 'namespaces', singular: 'namespace', kind: 'Namespace', namespaced: false, shortNames: ['ns'] },
  { group: '', version: 'v1', name: 'configmaps', singular: 'configmap', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] },
  {
    group: 'apps',
    version: 'v1',
    name: 'deployments',
    singular: 'deployment',
    kind: 'Deployment',
    namespaced: true,
    shortNames: ['deploy'],
  },
  { group: 'batch', version: 'v1', name: 'jobs', singular: 'job', kind: 'Job', namespaced: true },
  { group: 'batch', version: 'v1', name: 'cronjobs', singular: 'cronjob', kind: 'CronJob', namespaced: true, shortNames: ['cj'] },
];

/** A Kubernetes object as JSON: only its metadata is read here. */
export interface KubeObject {
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly [field: string]: unknown;
  };
  readonly [field: string]: unknown;
}

export interface Recorded {
  /** The objects of each resource, by its plural name (nodes, namespaces, configmaps, deployments, jobs, cronjobs). */
  readonly objects: Readonly<Record<string, readonly KubeObject[]>>;
  /** The resources the user may not list: each list of one is answered 403. */
  readonly forbidden?: readonly string[];
  /** The resources whose lists are never answered (a server that hangs): the connection stays open until close(). */
  readonly hang?: readonly string[];
  /** The server's version (GET /version). */
  readonly gitVersion?: string;
}

export interface KubeApi {
  /** The folder of the certificate and the kubeconfig; removed by close(). */
  readonly dir: string;
  readonly kubeconfig: string;
  readonly server: string;
  /** The user the kubeconfig names, as the 403 messages say it. */
  readonly user: string;
  /** Every request, as METHOD PATH?QUERY, in order. */
  readonly requests: string[];
  /** Resolves once a request matching PATTERN has come (at once if one has). */
  requested(pattern: RegExp): Promise<void>;
  close(): Promise<void>;
}

const TOKEN = 'stand-in-token';
const USER = 'jane@example.com';

/** A certificate for 127.0.0.1 and its key, made by openssl in DIR. */
function selfSigned(dir: string): { cert: string; key: string; certFile: string } {
  const certFile = join(dir, 'server.crt');
  const keyFile = join(dir, 'server.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=kube-apiserver stand-in',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8'), certFile };
}

const groupVersion = (resource: Resource): string => (resource.group === '' ? resource.version : `${resource.group}/${resource.version}`);

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/** A Status of failure, as the API server answers one. */
const status = (code: number, reason: string, message: string, details?: object): object => ({
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message,
  reason,
  ...(details === undefined ? {} : { details }),
  code,
});

/** The discovery documents: /api, /apis, /api/v1 and /apis/GROUP/VERSION. */
function discovery(path: string): object | undefined {
  if (path === '/api') return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
  const groups = [...new Set(RESOURCES.filter((resource) => resource.group !== '').map((resource) => resource.group))];
  if (path === '/apis')
    return {
      kind: 'APIGroupList',
      apiVersion: 'v1',
      groups: groups.map((name) => ({
        name,
        versions: [{ groupVersion: `${name}/v1`, version: 'v1' }],
        preferredVersion: { groupVersion: `${name}/v1`, version: 'v1' },
      })),
    };
  const version = /^\/(?:api\/(v1)|apis\/([^/]+)\/(v1))$/.exec(path);
  if (version === null) return undefined;
  const group = version[2] ?? '';
  if (group !== '' && !groups.includes(group)) return undefined;
  const served = RESOURCES.filter((resource) => resource.group === group);
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: groupVersion(served[0] as Resource),
    resources: served.map((resource) => ({
      name: resource.name,
      singularName: resource.singular,
      namespaced: resource.namespaced,
      kind: resource.kind,
      verbs: ['get', 'list', 'watch'],
      ...(resource.shortNames === undefined ? {} : { shortNames: resource.shortNames }),
    })),
  };
}

/** Whether an object matches a field selector (metadata.name, metadata.namespace) and a label selector of `k=v`s. */
function matches(object: KubeObject, query: URLSearchParams): boolean {
  const fields: Record<string, string | undefined> = {
    'metadata.name': object.metadata.name,
    'metadata.namespace': object.metadata.namespace,
  };
  for (const term of (query.get('fieldSelector') ?? '').split(',').filter((part) => part !== '')) {
    const [key = '', value] = term.split('=');
    if (fields[key] !== value) return false;
  }
  for (const term of (query.get('labelSelector') ?? '').split(',').filter((part) => part !== '')) {
    const [key = '', value] = term.split('=');
    if (object.metadata.labels?.[key] !== value) return false;
  }
  return true;
}

/** GET /api/v1/RESOURCE, /apis/G/V/RESOURCE, or either under /namespaces/NS/: the list, or what refuses it. */
function list(recorded: Recorded, path: string, query: URLSearchParams): { code: number; body: object } | undefined {
  const match = /^\/(?:api\/v1|apis\/([^/]+)\/v1)(?:\/namespaces\/([^/]+))?\/([^/]+)$/.exec(path);
  if (match === null) return undefined;
  const [, group = '', namespace, name] = match;
  const resource = RESOURCES.find((candidate) => candidate.group === group && candidate.name === name);
  if (resource === undefined || (namespace !== undefined && !resource.namespaced)) return undefined;
  if (recorded.forbidden?.includes(resource.name)) {
    const plural = resource.group === '' ? resource.name : `${resource.name}.${resource.group}`;
    const scope = namespace === undefined ? 'at the cluster scope' : `in the namespace "${namespace}"`;
    const message = `${plural} is forbidden: User "${USER}" cannot list resource "${resource.name}" in API group "${resource.group}" ${scope}`;
    return { code: 403, body: status(403, 'Forbidden', message, { group: resource.group, kind: resource.name }) };
  }
  const items = (recorded.objects[resource.name] ?? []).filter(
    (object) => (namespace === undefined || object.metadata.namespace === namespace) && matches(object, query),
  );
  return {
    code: 200,
    body: { kind: `${resource.kind}List`, apiVersion: groupVersion(resource), metadata: { resourceVersion: '4242' }, items },
  };
}

/** Starts the stand-in on 127.0.0.1 with a kubeconfig that names it. */
export async function startKubeApi(recorded: Recorded): Promise<KubeApi> {
  const dir = mkdtempSync(join(tmpdir(), 'kube-api-'));
  const requests: string[] = [];
  const arrivals = new EventEmitter();
  try {
    const { cert, key, certFile } = selfSigned(dir);
    const server = createServer({ cert, key }, (request: IncomingMessage, response: ServerResponse) => {
      const url = new URL(request.url ?? '/', 'https://stand-in');
      requests.push(`${request.method} ${url.pathname}${url.search}`);
      arrivals.emit('request');
      if (request.headers.authorization !== `Bearer ${TOKEN}`) return send(response, 401, status(401, 'Unauthorized', 'Unauthorized'));
      if (request.method !== 'GET') return send(response, 405, status(405, 'MethodNotAllowed', 'the server does not allow this method'));
      if (url.pathname === '/version') {
        const gitVersion = recorded.gitVersion ?? 'v1.33.4';
        const [, major = '1', minor = '33'] = /^v(\d+)\.(\d+)/.exec(gitVersion) ?? [];
        return send(response, 200, { major, minor, gitVersion, platform: 'linux/amd64' });
      }
      if (RESOURCES.some((resource) => recorded.hang?.includes(resource.name) && url.pathname.endsWith(`/${resource.name}`))) return;
      const found = discovery(url.pathname) ?? list(recorded, url.pathname, url.searchParams);
      if (found === undefined) return send(response, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
      if ('code' in found && 'body' in found) return send(response, found.code as number, found.body);
      return send(response, 200, found);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const address = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigText(address, certFile));
    return {
      dir,
      kubeconfig,
      server: address,
      user: USER,
      requests,
      requested: async (pattern) => {
        while (!requests.some((line) => pattern.test(line))) await once(arrivals, 'request');
      },
      close: async () => {
        server.closeAllConnections();
        server.close();
        await once(server, 'close');
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** A kubeconfig whose current context is the stand-in, its CA the self-signed certificate, its user a token. */
export function kubeconfigText(server: string, certFile: string): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: stand-in',
    `  cluster: {server: "${server}", certificate-authority: "${certFile}"}`,
    'users:',
    `- name: "${USER}"`,
    `  user: {token: ${TOKEN}}`,
    'contexts:',
    '- name: stand-in',
    `  context: {cluster: stand-in, user: "${USER}"}`,
    'current-context: stand-in',
    '',
  ].join('\n');
}
