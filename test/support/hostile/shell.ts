// An interactive bash with job control on a real terminal (a tmux pane), for the job-control cases of the
// adversarial suite: keys typed at it, and what its screen shows.

import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { tree } from './tools.ts';

export interface Shell {
  /** The pid of the interactive shell. */
  readonly pid: number;
  /** Keys as tmux names them (`C-z`, `Enter`), or literal text with `literal`. */
  keys(keys: readonly string[], literal?: boolean): void;
  /** Types a line and Enter. */
  line(text: string): void;
  /** Whether the screen (its whole history, wrapped lines joined) shows a line matching `pattern` within timeoutMs. */
  shows(pattern: RegExp, timeoutMs?: number): Promise<boolean>;
  screen(): string;
}

/**
 * An interactive bash with job control on a real terminal (a tmux pane of a server of its own, in `dir`),
 * for the length of body; then everything started in it is killed and the server ends.
 */
export async function withShell<T>(dir: string, body: (shell: Shell) => Promise<T>): Promise<T> {
  const socket = join(dir, 'tmux.sock');
  const tmux = (...args: string[]): string =>
    execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8', timeout: 5_000, stdio: ['ignore', 'pipe', 'pipe'] });
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: dir, TERM: 'xterm', PS1: '$ ' };
  execFileSync(
    'tmux',
    ['-S', socket, '-f', '/dev/null', 'new-session', '-d', '-x', '250', '-y', '50', '--', 'bash', '--norc', '--noprofile', '-i'],
    { env, timeout: 5_000, stdio: 'ignore' },
  );
  const screen = (): string => tmux('capture-pane', '-p', '-J', '-S', '-');
  const shell: Shell = {
    pid: Number(tmux('display-message', '-p', '#{pane_pid}').trim()),
    keys: (keys, literal = false) => void tmux('send-keys', ...(literal ? ['-l'] : []), '--', ...keys),
    line: (text) => {
      tmux('send-keys', '-l', '--', text);
      tmux('send-keys', 'Enter');
    },
    async shows(pattern, timeoutMs = 5_000) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        if (
          screen()
            .split('\n')
            .some((line) => pattern.test(line))
        )
          return true;
        if (performance.now() > deadline) return false;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    screen,
  };
  try {
    // The shell is up once it has run a line (the typed `$((6*7))` echoes as typed, its output as 42).
    shell.line('set -b; echo shell-$((6*7))');
    if (!(await shell.shows(/^shell-42$/, 10_000))) throw new Error(`the shell did not start: ${screen()}`);
    return await body(shell);
  } finally {
    for (const pid of tree(shell.pid).reverse()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    try {
      tmux('kill-server');
    } catch {
      // the server ended with its last pane
    }
  }
}
