// Stand-ins for the other classic sidecars, written from each project's source (the README's Sidecars section): their
// listeners on the real default ports, readiness and shutdown paths, methods and answers, what "not enabled"
// looks like, and that each stops listening (exits) after a stop. Scripted by request counts, never by time.

import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { parse } from 'yaml';

export type StandInKind = 'linkerd' | 'cloud-sql-proxy' | 'alloydb-auth-proxy' | 'vault-agent' | 'dapr' | 'consul-dataplane';

export interface StandInOptions {
  readonly kind: StandInKind;
  /** Ports in the kind's listener order; the real defaults when not given. */
  readonly ports?: readonly number[];
  /** Ready after this many readiness requests were answered "not ready" (default 0). */
  readonly readyAfter?: number;
  /** The quit endpoint switched off (Linkerd without proxy-admin-shutdown, Vault without enable-quit, Cloud SQL without --quitquitquit). */
  readonly quitDisabled?: boolean;
  /** Cloud SQL / AlloyDB without --health-check: no health listener at all. */
  readonly noHealthCheck?: boolean;
}

export interface StandInRequest {
  readonly kind: StandInKind;
  readonly method: string;
  readonly path: string;
  readonly status: number;
}

const DEFAULT_PORTS: Readonly<Record<StandInKind, readonly number[]>> = {
  linkerd: [4191],
  'cloud-sql-proxy': [9090, 9091],
  'alloydb-auth-proxy': [9090, 9091],
  'vault-agent': [8200],
  dapr: [3500],
  'consul-dataplane': [20600],
};

const loopbackPeer = (req: IncomingMessage): boolean => {
  const address = req.socket.remoteAddress ?? '';
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
};

export class KindStandIn extends EventEmitter {
  readonly kind: StandInKind;
  readonly requests: StandInRequest[] = [];
  exited = false;
  /** TCP connections accepted, with or without a request on them. */
  connections = 0;
  readonly #options: StandInOptions;
  readonly #servers: Server[] = [];
  readonly #sockets = new Set<Socket>();
  #readyChecks = 0;

  constructor(options: StandInOptions) {
    super();
    this.kind = options.kind;
    this.#options = options;
  }

  static async start(options: StandInOptions): Promise<KindStandIn> {
    const standIn = new KindStandIn(options);
    const ports = options.ports ?? DEFAULT_PORTS[options.kind];
    const proxyTwoPorts = options.kind === 'cloud-sql-proxy' || options.kind === 'alloydb-auth-proxy';
    for (const [index, port] of ports.entries()) {
      // The Cloud SQL and AlloyDB proxies open the health port only with --health-check, the admin port only with --quitquitquit.
      if (proxyTwoPorts && index === 0 && options.noHealthCheck === true) continue;
      if (proxyTwoPorts && index === 1 && options.quitDisabled === true) continue;
      await standIn.#listen(port);
    }
    return standIn;
  }

  get quits(): StandInRequest[] {
    return this.requests.filter((request) => /quit|shutdown/.test(request.path));
  }

  async #listen(port: number): Promise<void> {
    const server = createServer((req, res) => this.#handle(req, res));
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      this.connections += 1;
      this.emit('change');
      socket.on('close', () => this.#sockets.delete(socket));
    });
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    this.#servers.push(server);
  }

  #reply(req: IncomingMessage, res: ServerResponse, status: number, body: string): void {
    res.writeHead(status, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    this.requests.push({ kind: this.kind, method: req.method ?? '', path: req.url ?? '', status });
    this.emit('change');
  }

  #ready(): boolean {
    this.#readyChecks += 1;
    return this.#readyChecks > (this.#options.readyAfter ?? 0);
  }

  #handle(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?')[0] ?? '';
    const method = req.method ?? '';
    const disabled = this.#options.quitDisabled === true;
    switch (this.kind) {
      case 'linkerd':
        if (path === '/ready') return this.#ready() ? this.#reply(req, res, 200, 'ready\n') : this.#reply(req, res, 503, 'not ready\n');
        if (path !== '/shutdown') return this.#reply(req, res, 404, '');
        if (method !== 'POST') return this.#reply(req, res, 405, '');
        if (!loopbackPeer(req)) return this.#reply(req, res, 403, 'shutdown is only allowed from localhost\n');
        if (disabled) return this.#reply(req, res, 404, 'shutdown endpoint is not enabled\n');
        return this.#stop(req, res, 200, 'shutdown\n');
      case 'cloud-sql-proxy':
      case 'alloydb-auth-proxy':
        if (path === '/startup' || path === '/readiness') {
          return this.#ready() ? this.#reply(req, res, 200, 'ok') : this.#reply(req, res, 503, 'error');
        }
        if (path === '/liveness') return this.#reply(req, res, 200, 'ok');
        if (path !== '/quitquitquit') return this.#reply(req, res, 404, '404 page not found\n');
        if (method !== 'GET' && method !== 'POST') return this.#reply(req, res, 400, '');
        return this.#stop(req, res, 200, '');
      case 'vault-agent':
        if (path !== '/agent/v1/quit' || disabled) return this.#reply(req, res, 404, '');
        if (method !== 'POST') return this.#reply(req, res, 405, '');
        return this.#stop(req, res, 200, '');
      case 'dapr':
        if (path === '/v1.0/healthz/outbound') return this.#ready() ? this.#reply(req, res, 204, '') : this.#reply(req, res, 500, '');
        if (path !== '/v1.0/shutdown') return this.#reply(req, res, 404, '');
        if (method !== 'POST') return this.#reply(req, res, 405, '');
        return this.#stop(req, res, 204, '');
      case 'consul-dataplane':
        if (path === '/graceful_startup') return this.#ready() ? this.#reply(req, res, 200, '') : this.#reply(req, res, 503, '');
        if (path !== '/graceful_shutdown') return this.#reply(req, res, 404, '');
        return this.#stop(req, res, 200, '');
    }
  }

  /** Answers the stop, then stops listening and exits, as each of these does. */
  #stop(req: IncomingMessage, res: ServerResponse, status: number, body: string): void {
    this.#reply(req, res, status, body);
    setImmediate(() => {
      void this.close();
      this.exited = true;
      this.emit('exited');
      this.emit('change');
    });
  }

  /** Dies without a stop: every listener refuses from now on. */
  async crash(): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    for (const server of this.#servers) {
      server.close();
      server.closeAllConnections();
    }
    for (const socket of this.#sockets) socket.destroy();
  }
}

/** The pod's annotations in the file a downwardAPI volume of metadata.annotations holds: key="value", sorted. */
export const annotationsFile = (annotations: Readonly<Record<string, string>>): string =>
  Object.keys(annotations)
    .sort()
    .map((key) => `${key}=${JSON.stringify(annotations[key])}\n`)
    .join('');

/** How kubelet starts the job container of a rewritten Job: its command line, environment and annotations file. */
export interface ContainerAsWritten {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** By absolute path: the annotations file where a downwardAPI volume mounts it. */
  readonly files: Readonly<Record<string, string>>;
}

type Fields = Record<string, unknown>;
const list = (value: unknown): Fields[] => (Array.isArray(value) ? (value as Fields[]) : []);
const ANNOTATION_REF = /^metadata\.annotations\['(.+)'\]$/;

/**
 * The container of a one-Job MANIFEST whose command starts with PROGRAM, as kubelet would start it in a pod whose
 * annotations are the template's with the injector's ADDED: variables of downward-API annotation references
 * filled (empty when the annotation is missing), the annotations file at its mount. Anything else it cannot
 * fill is an error: the test would not run the Job as written.
 */
export function containerAsWritten(manifest: string, program: string, added: Readonly<Record<string, string>>): ContainerAsWritten {
  const template = ((parse(manifest) as Fields)['spec'] as Fields)['template'] as Fields;
  const annotations = { ...(((template['metadata'] as Fields | undefined)?.['annotations'] ?? {}) as Record<string, string>), ...added };
  const podSpec = template['spec'] as Fields;
  const container = list(podSpec['containers']).find((found) => list(found['command'])[0]?.toString().endsWith(`/${program}`));
  if (container === undefined) throw new Error(`no container runs ${program}:\n${manifest}`);
  const argv = [...list(container['command']), ...list(container['args'])].map(String);
  const env: Record<string, string> = {};
  for (const entry of list(container['env'])) {
    const name = String(entry['name']);
    const ref = String(((entry['valueFrom'] as Fields | undefined)?.['fieldRef'] as Fields | undefined)?.['fieldPath'] ?? '');
    const key = ANNOTATION_REF.exec(ref)?.[1];
    if ('value' in entry) env[name] = String(entry['value']);
    else if (key !== undefined) env[name] = annotations[key] ?? '';
    else throw new Error(`variable ${name}: no value this test can fill`);
  }
  const files: Record<string, string> = {};
  for (const mount of list(container['volumeMounts'])) {
    const volume = list(podSpec['volumes']).find((found) => found['name'] === mount['name']);
    for (const item of list((volume?.['downwardAPI'] as Fields | undefined)?.['items'])) {
      if ((item['fieldRef'] as Fields | undefined)?.['fieldPath'] === 'metadata.annotations')
        files[join(String(mount['mountPath']), String(item['path']))] = annotationsFile(annotations);
    }
  }
  return { argv, env, files };
}
