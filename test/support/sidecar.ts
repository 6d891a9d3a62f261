// A stand-in of istio-proxy, as Istio's source has it: pilot-agent's status server (15020), Envoy's
// health listener (15021) and Envoy's admin (15000), with the version differences that matter to a job.
// Tests script it by request counts and events, never by time.

import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** Milliseconds on CLOCK_MONOTONIC: comparable across the processes of one machine. */
export const mono = (): number => Number(process.hrtime.bigint()) / 1e6;

/**
 * How the stand-in answers one POST /quitquitquit; after the script runs out it accepts. slow-body: 200 and the
 * first bytes of a body whose rest never comes. held: accepted once releaseQuit() is called.
 */
export type QuitAnswer = 'accept' | 'hang' | 'held' | 'reset' | 'slow-body' | number;

export interface SidecarOptions {
  readonly host?: string;
  /** 0 picks a free port; the real ones are 15020, 15021, 15000. */
  readonly agentPort?: number;
  readonly envoyPort?: number;
  readonly adminPort?: number;
  /** Istio 1.26+: exits at once after a quit. 1.4-1.25: drains first (15021 answers 503, 15020 refuses). */
  readonly exit?: 'instant' | 'drain';
  readonly drainMs?: number;
  /** Answer ready after this many readiness requests (0: ready at once). Use setReady() for manual control. */
  readonly readyAfter?: number;
  readonly quitScript?: readonly QuitAnswer[];
  /** Start pilot-agent and Envoy now (default), or leave either to start later. */
  readonly startAgent?: boolean;
  readonly startEnvoy?: boolean;
}

export interface RequestRecord {
  readonly listener: 'agent' | 'envoy' | 'admin';
  readonly method: string;
  readonly path: string;
  readonly status: number | 'hang' | 'reset';
  readonly at: number;
}

export class Sidecar extends EventEmitter {
  readonly requests: RequestRecord[] = [];
  readonly host: string;
  /** When the proxy first answered ready, and when it exited (performance.now()). */
  readyAt: number | undefined;
  exitedAt: number | undefined;

  #options: SidecarOptions;
  #agent: Server | undefined;
  #envoy: Server | undefined;
  #admin: Server | undefined;
  #ports = { agent: 0, envoy: 0, admin: 0 };
  #ready = false;
  #shuttingDown = false;
  #quitScript: QuitAnswer[];
  #sockets = new Set<Socket>();
  #held: (() => void) | undefined;

  constructor(options: SidecarOptions = {}) {
    super();
    this.#options = options;
    this.host = options.host ?? '127.0.0.1';
    this.#ports = { agent: options.agentPort ?? 0, envoy: options.envoyPort ?? 0, admin: options.adminPort ?? 0 };
    this.#quitScript = [...(options.quitScript ?? [])];
    if ((options.readyAfter ?? 0) === 0) this.#ready = true;
  }

  static async start(options: SidecarOptions = {}): Promise<Sidecar> {
    const sidecar = new Sidecar(options);
    // Reserve the ports even for listeners that start late, so URLs are known up front.
    if (options.startAgent !== false) await sidecar.startAgent();
    else sidecar.#ports.agent = await freePort(sidecar.host, sidecar.#ports.agent);
    if (options.startEnvoy !== false) await sidecar.startEnvoy();
    else sidecar.#ports.envoy = await freePort(sidecar.host, sidecar.#ports.envoy);
    return sidecar;
  }

  get readyUrl(): string {
    return `http://${this.#hostInUrl()}:${this.#ports.envoy}/healthz/ready`;
  }
  get agentReadyUrl(): string {
    return `http://${this.#hostInUrl()}:${this.#ports.agent}/healthz/ready`;
  }
  get quitUrl(): string {
    return `http://${this.#hostInUrl()}:${this.#ports.agent}/quitquitquit`;
  }
  /** The wrapper's options for classic mode against this stand-in. */
  classicArgs(...extra: string[]): string[] {
    return ['--sidecar', 'classic', '--ready-url', this.readyUrl, '--quit-url', this.quitUrl, ...extra];
  }
  get adminUrl(): string {
    return `http://${this.#hostInUrl()}:${this.#ports.admin}`;
  }
  get quitRequests(): RequestRecord[] {
    return this.requests.filter((r) => r.path === '/quitquitquit' && r.listener === 'agent');
  }
  get readyRequests(): RequestRecord[] {
    return this.requests.filter((r) => r.path.startsWith('/healthz/ready'));
  }
  get exited(): boolean {
    return this.exitedAt !== undefined;
  }

  async startAgent(): Promise<void> {
    this.#agent = await this.#listen(this.#ports.agent, (req, res) => this.#onAgent(req, res));
    this.#ports.agent = (this.#agent.address() as AddressInfo).port;
  }

  async startEnvoy(): Promise<void> {
    this.#envoy = await this.#listen(this.#ports.envoy, (req, res) => this.#onEnvoy(req, res));
    this.#ports.envoy = (this.#envoy.address() as AddressInfo).port;
  }

  async startAdmin(): Promise<void> {
    this.#admin = await this.#listen(this.#ports.admin, (req, res) => this.#onAdmin(req, res));
    this.#ports.admin = (this.#admin.address() as AddressInfo).port;
  }

  /** Envoy got its configuration: readiness turns 200, and stays so (sticky). */
  setReady(): void {
    if (this.#ready) return;
    this.#ready = true;
  }

  /**
   * SIGTERM from kubelet: pilot-agent drains (terminationDrainDuration) with readiness answering 503, then
   * exits 0. The agent keeps listening meanwhile, so a quit still gets through.
   */
  terminate(drainMs: number): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    this.emit('change');
    setTimeout(() => {
      this.#closeAll();
      this.#markExited();
    }, drainMs).unref();
  }

  /** Whether readiness has turned 200 (it stays so), for the simulator's own checks. */
  get isReady(): boolean {
    return this.#ready && !this.#shuttingDown;
  }

  /** Accepts the quit the script holds ('held'). */
  releaseQuit(): void {
    this.#held?.();
    this.#held = undefined;
  }

  /** The proxy dies without a quit: every listener refuses from now on. */
  crash(): void {
    this.#closeAll();
    this.#markExited();
  }

  /** Resolves once predicate() holds, checked after every request and state change. */
  async waitFor(predicate: () => boolean): Promise<void> {
    while (!predicate()) await once(this, 'change');
  }

  async close(): Promise<void> {
    this.#closeAll();
    for (const socket of this.#sockets) socket.destroy();
  }

  #hostInUrl(): string {
    return this.host.includes(':') ? `[${this.host}]` : this.host;
  }

  async #listen(port: number, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
    const server = createServer(handler);
    server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    server.listen(port, this.host);
    await once(server, 'listening');
    return server;
  }

  #record(listener: RequestRecord['listener'], req: IncomingMessage, status: RequestRecord['status']): void {
    this.requests.push({ listener, method: req.method ?? '', path: req.url ?? '', status, at: performance.now() });
    this.emit('change');
  }

  #reply(listener: RequestRecord['listener'], req: IncomingMessage, res: ServerResponse, status: number, body: string): void {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
    res.end(body);
    this.#record(listener, req, status);
  }

  /** pilot-agent: readiness is sticky once ready; counting requests drives `readyAfter`. */
  #readiness(): number {
    if (this.#shuttingDown) return 503;
    if (!this.#ready && this.readyRequests.length >= (this.#options.readyAfter ?? 0)) this.#ready = true;
    if (this.#ready && this.readyAt === undefined) this.readyAt = performance.now();
    return this.#ready ? 200 : 503;
  }

  #onAgent(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (path === '/healthz/ready') return this.#reply('agent', req, res, this.#readiness(), '');
    if (path !== '/quitquitquit') return this.#reply('agent', req, res, 404, '404 page not found\n');
    if (!isLoopback(req.socket.remoteAddress ?? '')) {
      return this.#reply('agent', req, res, 403, 'Only requests from localhost are allowed\n');
    }
    if (req.method !== 'POST') return this.#reply('agent', req, res, 405, 'Method Not Allowed\n');

    const answer = this.#quitScript.shift() ?? 'accept';
    if (answer === 'hang') return this.#record('agent', req, 'hang');
    if (answer === 'held') {
      this.#held = () => {
        this.#reply('agent', req, res, 200, 'OK');
        this.#shutdown();
      };
      return this.#record('agent', req, 'hang');
    }
    if (answer === 'slow-body') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': 1_000 });
      res.write('OK');
      return this.#record('agent', req, 200);
    }
    if (answer === 'reset') {
      this.#record('agent', req, 'reset');
      req.socket.resetAndDestroy();
      return;
    }
    if (typeof answer === 'number') return this.#reply('agent', req, res, answer, `scripted ${answer}\n`);
    this.#reply('agent', req, res, 200, 'OK');
    this.#shutdown();
  }

  /** Envoy's health listener: only the /healthz/ready prefix, routed to the agent; agent down -> 503. */
  #onEnvoy(req: IncomingMessage, res: ServerResponse): void {
    if (!(req.url ?? '').startsWith('/healthz/ready')) return this.#reply('envoy', req, res, 404, '');
    const agentUp = this.#agent?.listening === true;
    this.#reply('envoy', req, res, agentUp ? this.#readiness() : 503, '');
  }

  /** Envoy's admin: GET /ready -> 200 LIVE or 503; POST /quitquitquit stops Envoy. */
  #onAdmin(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '').split('?')[0] ?? '';
    if (path === '/ready') {
      const ready = this.#readiness() === 200;
      return this.#reply('admin', req, res, ready ? 200 : 503, ready ? 'LIVE\n' : 'PRE_INITIALIZING\n');
    }
    if (path === '/quitquitquit') {
      if (req.method !== 'POST') return this.#reply('admin', req, res, 405, 'This endpoint requires POST\n');
      this.#reply('admin', req, res, 200, 'OK\n');
      this.#shutdown();
      return;
    }
    this.#reply('admin', req, res, 404, '');
  }

  /** After an accepted quit the agent stops listening at once; then exit now (1.26+) or after a drain. */
  #shutdown(): void {
    if (this.#shuttingDown && this.#agent?.listening !== true) return;
    this.#shuttingDown = true;
    this.#agent?.close();
    this.#agent?.closeIdleConnections();
    this.emit('change');
    if (this.#options.exit === 'drain') {
      setTimeout(() => {
        this.#closeAll();
        this.#markExited();
      }, this.#options.drainMs ?? 5_000).unref();
    } else {
      setImmediate(() => {
        this.#closeAll();
        this.#markExited();
      });
    }
  }

  #closeAll(): void {
    for (const server of [this.#agent, this.#envoy, this.#admin]) {
      server?.close();
      server?.closeAllConnections();
    }
  }

  #markExited(): void {
    if (this.exitedAt !== undefined) return;
    this.exitedAt = performance.now();
    this.emit('exited');
    this.emit('change');
  }
}

function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

async function freePort(host: string, wanted: number): Promise<number> {
  if (wanted !== 0) return wanted;
  const server = createServer();
  server.listen(0, host);
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/** A stand-in for the length of a test, closed afterwards whatever happens. */
export async function withSidecar(options: SidecarOptions, body: (sidecar: Sidecar) => Promise<void>): Promise<void> {
  const sidecar = await Sidecar.start(options);
  try {
    await body(sidecar);
  } finally {
    await sidecar.close();
  }
}
