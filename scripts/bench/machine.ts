// The machine and the build a run measured: results mean little without them.

import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { availableParallelism, loadavg, release } from 'node:os';
import { root } from '../pinned-node.ts';
import { DIST_WRAPPER, GIB, TIMEOUT_MS } from './settings.ts';
import { toolOutput } from './process.ts';

export interface Machine {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly memoryGiB: number;
  readonly kernel: string;
  readonly node: string;
  /** The Node the executable embeds: the pinned node-linux-ARCH of package.json. */
  readonly embeddedNode: string;
  readonly date: string;
  readonly loadAverageAtStart: readonly number[];
  /** Set when the run is over: a busy machine shows here. */
  readonly loadAverageAtEnd?: readonly number[];
  readonly build: { readonly builtAt: string; readonly commit: string; readonly uncommittedSources: boolean };
}

/** A field of /proc/cpuinfo or /proc/meminfo ("name : value" lines). */
function procField(file: string, name: string): string | undefined {
  const line = readFileSync(file, 'utf8')
    .split('\n')
    .find((candidate) => candidate.startsWith(name));
  return line?.split(':')[1]?.trim();
}

/** The git commit of the sources, and whether src/ or the build differs from it (others may be editing). */
function gitState(): { commit: string; uncommittedSources: boolean } {
  const commit = toolOutput('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], TIMEOUT_MS.tool) ?? 'unknown';
  const changes = toolOutput(
    'git',
    ['-C', root, 'status', '--porcelain', '--', 'src', 'scripts/build.ts', 'package.json'],
    TIMEOUT_MS.tool,
  );
  return { commit, uncommittedSources: changes !== undefined && changes !== '' };
}

/** The load average over 1, 5 and 15 minutes. */
export const loadAverage = (): number[] => loadavg().map((load) => Math.round(load * 100) / 100);

/** The version of node-linux-ARCH that package.json pins: the build puts that Node into the executable. */
function embeddedNode(): string {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { optionalDependencies?: Record<string, string> };
  const version = pkg.optionalDependencies?.[`node-linux-${process.arch}`];
  return version === undefined ? 'unknown' : `v${version}`;
}

/** Everything about this machine and this build that the report notes. */
export function describeMachine(): Machine {
  const memKiB = Number((procField('/proc/meminfo', 'MemTotal') ?? '0').replace(/\D/g, ''));
  return {
    cpus: availableParallelism(),
    cpuModel: procField('/proc/cpuinfo', 'model name') ?? 'unknown',
    memoryGiB: Math.round(((memKiB * 1024) / GIB) * 10) / 10,
    kernel: release(),
    node: process.version,
    embeddedNode: embeddedNode(),
    date: new Date().toISOString(),
    loadAverageAtStart: loadAverage(),
    build: { builtAt: statSync(DIST_WRAPPER).mtime.toISOString(), ...gitState() },
  };
}
