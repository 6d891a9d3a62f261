// The manifest tools' files, stdin and stdout, as the process has them: stdin and stdout may be pipes that
// another process opened non-blocking (a Helm post-renderer's), so reads and writes wait out EAGAIN. Every read
// stops past its limit (an endless stdin, /dev/zero): nothing is read whole first.

import { isUtf8 } from 'node:buffer';
import {
  closeSync,
  existsSync,
  fstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readFileSync,
  readSync,
  statSync,
  writeSync,
} from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { writeStderr } from '../../log.ts';
import type { ManifestIo } from './cli.ts';
import { addressSpace } from '../yaml/memory.ts';
import { ENDS_TOOL, toolName } from './select.ts';
import { type Kubectl, RUN_TIMEOUT_MS } from '../cluster/kubectl.ts';

/** The most of kubectl's output read: a list of every Job of a large cluster fits many times over. */
const KUBECTL_MAX_BYTES = 1 << 30;

/**
 * The user's kubectl from PATH, in a process group of its own, its stdin closed. It is bounded by its
 * --request-timeout, and killed past RUN_TIMEOUT_MS. A signal that ends the tools (ENDS_TOOL) ends the group first,
 * then this process by the same signal (128+N, as the other tools end): no kubectl is left behind.
 */
const kubectl: Kubectl = (args) =>
  new Promise((resolve) => {
    const child = spawn('kubectl', args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    let error: NodeJS.ErrnoException | undefined;
    const killGroup = (signal: NodeJS.Signals): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // the group is gone already
      }
    };
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size <= KUBECTL_MAX_BYTES) into.push(chunk);
      else if (error === undefined) {
        error = Object.assign(new Error(`more than ${KUBECTL_MAX_BYTES} bytes`), { code: 'E2BIG' });
        killGroup('SIGKILL');
      }
    };
    child.stdout.on('data', collect(out));
    child.stderr.on('data', collect(err));
    const timer = setTimeout(() => {
      error ??= Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' });
      killGroup('SIGKILL');
    }, RUN_TIMEOUT_MS);
    let ending: NodeJS.Signals | undefined;
    const onSignal = (signal: NodeJS.Signals): void => {
      ending ??= signal;
      killGroup('SIGTERM');
    };
    for (const signal of ENDS_TOOL) process.on(signal, onSignal);
    child.on('error', (cause: NodeJS.ErrnoException) => {
      error ??= cause;
    });
    child.on('close', (status) => {
      clearTimeout(timer);
      for (const signal of ENDS_TOOL) process.removeListener(signal, onSignal);
      if (ending !== undefined) process.kill(process.pid, ending);
      resolve({
        status,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        ...(error === undefined ? {} : { error }),
      });
    });
  });

/** The most of a config file read: a few lines of settings. */
const CONFIG_MAX_BYTES = 1 << 20;

/** The process's files; error lines start with the name it was started by (the kubectl plugin's, or ours). */
export function manifestIo(invokedAs: string): ManifestIo {
  const prefix = toolName(invokedAs);
  return {
    readFile: (path, maxBytes) => utf8(readLimited(path, maxBytes)),
    listDir: (path) => (path !== '-' && statSync(path).isDirectory() ? filesIn(path) : undefined),
    stdout: (text) => writeAll(1, text),
    stderr: (line) => writeStderr(`${prefix}: ${line}\n`),
    env: process.env,
    addressSpace: () => addressSpace(),
    configFiles: {
      cwd: process.cwd(),
      read: (path) => {
        try {
          return utf8(readLimited(path, CONFIG_MAX_BYTES));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
          throw error;
        }
      },
      exists: (path) => existsSync(path),
    },
    kubectl,
  };
}

/**
 * The names in DIR but its directories, whatever their names (a link to one too), as kubectl's -f DIR skips them: a
 * link is followed only to tell, and one that leads nowhere is kept (reading it says why it cannot be read).
 */
function filesIn(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter(
      (entry) =>
        !entry.isDirectory() && !(entry.isSymbolicLink() && statSync(join(dir, entry.name), { throwIfNoEntry: false })?.isDirectory()),
    )
    .map((entry) => entry.name);
}

/**
 * The text of a file that is UTF-8, as Kubernetes requires: other bytes would not come out of --inject as they
 * went in, so they are refused (as a file that cannot be read).
 */
function utf8(bytes: Buffer): string {
  if (!isUtf8(bytes)) throw Object.assign(new Error('not UTF-8'), { code: 'not UTF-8' });
  return bytes.toString('utf8');
}

/** A moment's pause for a descriptor that said EAGAIN: a pipe another process opened non-blocking. */
const pause = (): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 2);
};

/**
 * The bytes of PATH (`-`: stdin, a file, a terminal or a pipe, blocking or not); EFBIG past maxBytes, with the
 * size when it is a regular file's (then before a byte is read).
 */
function readLimited(path: string, maxBytes: number): Buffer {
  const fd = path === '-' ? 0 : openSync(path, 'r');
  try {
    const stat = fstatSync(fd);
    if (stat.isFile() && stat.size > maxBytes)
      throw Object.assign(new Error(`larger than ${maxBytes} bytes`), { code: 'EFBIG', size: stat.size });
    return readUpTo(fd, maxBytes);
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}

function readUpTo(fd: number, maxBytes: number): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    // One byte past the limit tells a file of exactly maxBytes from a larger one.
    const buffer = Buffer.allocUnsafe(Math.min(1 << 20, maxBytes + 1 - total));
    let n: number;
    try {
      n = readSync(fd, buffer);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') {
        pause();
        continue;
      }
      if (code === 'EOF') break;
      throw error;
    }
    if (n === 0) break;
    total += n;
    if (total > maxBytes) throw Object.assign(new Error(`larger than ${maxBytes} bytes`), { code: 'EFBIG' });
    chunks.push(n === buffer.length ? buffer : buffer.subarray(0, n));
  }
  return Buffer.concat(chunks, total);
}

/**
 * Whether stdout was closed when the process started (`>&-`): Node, like the bundle's launcher, gives a closed
 * fd 0-2 /dev/null opened for reading and writing, which no shell redirection does (`>/dev/null` is write-only).
 */
function stdoutWasClosed(): boolean {
  try {
    if (readlinkSync('/proc/self/fd/1') !== '/dev/null') return false;
    const flags = /^flags:\s*([0-7]+)$/m.exec(readFileSync('/proc/self/fdinfo/1', 'latin1'))?.[1];
    return flags !== undefined && (Number.parseInt(flags, 8) & 3) === 2; // O_ACCMODE, O_RDWR
  } catch {
    return false;
  }
}

let stdoutClosed: boolean | undefined;

/** Every byte, through partial writes and EAGAIN; a closed reader (EPIPE), a full disk or a closed stdout throw. */
function writeAll(fd: number, text: string): void {
  if (fd === 1 && (stdoutClosed ??= stdoutWasClosed())) throw Object.assign(new Error('stdout is closed'), { code: 'EBADF' });
  let bytes = Buffer.from(text);
  while (bytes.length > 0) {
    try {
      bytes = bytes.subarray(writeSync(fd, bytes));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      pause();
    }
  }
}
