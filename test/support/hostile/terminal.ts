// The terminal and job control: stdin a terminal the wrapper leads, and an interactive bash on a pty that
// stops, resumes and backgrounds the wrapper as it would the command alone.

import { execFileSync } from 'node:child_process';
import { closeSync, constants, openSync, readFileSync, readlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { NODE, REPORTER, WRAPPER } from '../process.ts';
import { defineCase, describeStatus, type HostileCase, pid1Argv, reportedCount, target, wait, where } from './common.ts';
import { type Shell, withShell } from './shell.ts';
import { processState, spawnHow, tree } from './tools.ts';

export const terminal = defineCase({
  name: 'stdin a terminal',
  about:
    'stdin a pty (the wrapper leads its session): INT, QUIT and WINCH sent with kill(2) to the wrapper, then a ^C typed at the pty: ' +
    'the command gets each exactly once (USR2 as a barrier after each)',
  tries: { short: 2, long: 20 },
  variant: (i) => i % 2 === 1,
  sent: (pid1) => `kill INT, QUIT, WINCH; typed ^C; ${where(pid1)}`,
  async judge(pid1) {
    const spawned = spawnHow(pid1Argv(pid1, [WRAPPER, '--sidecar', 'none', '--', NODE, REPORTER]), { terminal: true, timeoutMs: 15_000 });
    const pid = await target(spawned, pid1);
    const steps: [string, () => void, string][] = [
      ['kill INT', () => process.kill(pid, 'SIGINT'), 'SIGINT'],
      ['kill QUIT', () => process.kill(pid, 'SIGQUIT'), 'SIGQUIT'],
      ['kill WINCH', () => process.kill(pid, 'SIGWINCH'), 'SIGWINCH'],
      ['typed ^C', () => spawned.type('\x03'), 'SIGINT'],
    ];
    const problems: string[] = [];
    try {
      await spawned.line(/^ready \d+ \d+$/);
      let barriers = 0;
      const expected = new Map<string, number>();
      for (const [what, act, signal] of steps) {
        expected.set(signal, (expected.get(signal) ?? 0) + 1);
        act();
        process.kill(pid, 'SIGUSR2');
        barriers += 1;
        const until = performance.now() + 5_000;
        while (reportedCount(spawned.stdout(), 'SIGUSR2') < barriers && performance.now() < until) await wait(5);
        const count = reportedCount(spawned.stdout(), signal);
        if (count !== expected.get(signal)) {
          problems.push(`${what}: ${signal} ${count - (expected.get(signal) ?? 0) + 1} time(s)`);
          expected.set(signal, count);
        }
      }
    } catch (error) {
      problems.push((error as Error).message);
    }
    spawned.type('exit 0\n');
    const status = await spawned.status;
    return {
      ok: problems.length === 0 && status.code === 0,
      got: [describeStatus(status), problems.length === 0 ? 'each exactly once' : problems.join('; ')],
    };
  },
});

// ---------------------------------------------------------------------------------------------------------
// Job control

/** An interactive shell's view of one wrapper run, for the job-control cases. */
interface Control {
  readonly sent: string;
  run(shell: Shell, scratch: string): Promise<string[]>;
}

function jobControlCase(name: string, about: string, controls: readonly Control[]): HostileCase {
  return defineCase({
    name,
    about,
    tries: { short: controls.length, long: controls.length * 10 },
    variant: (i) => controls[i % controls.length] ?? controls[0]!,
    sent: (control) => control.sent,
    scratch: true,
    judge: (control, { scratch }) =>
      withShell(scratch, async (shell) => {
        let problems: string[];
        try {
          problems = await control.run(shell, scratch);
        } catch (error) {
          problems = [(error as Error).message];
        }
        return { ok: problems.length === 0, got: [problems.length === 0 ? 'as the command alone' : problems.join('; ')] };
      }),
  });
}

/** What runs under the shell and in which state, with the terminal's last line: what a failed Ctrl-Z left. */
function jobSnapshot(shell: Shell): string {
  const states = tree(shell.pid)
    .slice(1)
    .map((pid) => {
      try {
        return `${readFileSync(`/proc/${pid}/comm`, 'utf8').trim()} ${processState(pid) ?? '?'}`;
      } catch {
        return undefined;
      }
    })
    .filter((state) => state !== undefined);
  const last = shell.screen().trimEnd().split('\n').at(-1) ?? '';
  return `(under the shell: ${states.join(', ') || 'nothing'}; last line ${JSON.stringify(last.slice(0, 60))})`;
}

/** `sh -c SCRIPT` through the wrapper, as typed at the shell (the wrapper as a shell word). */
const typedJob = (script: string): string => `${WRAPPER} --sidecar none -- /bin/sh -c '${script}'`;

/** The state letter of the command under the shell: the process whose last argument (cmdline ends in a NUL) holds `marker`. */
function commandState(shell: Shell, marker: string): string | undefined {
  for (const pid of tree(shell.pid)) {
    try {
      if (
        readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').at(-2)?.includes(marker) &&
        !readlinkSync(`/proc/${pid}/exe`).includes('istio-job-run')
      )
        return processState(pid);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/** Writes TEXT to the FIFO at PATH once a reader has it open, within MS; false if none did. */
async function tellFifo(path: string, text: string, ms: number): Promise<boolean> {
  const until = performance.now() + ms;
  for (;;) {
    let fd: number;
    try {
      fd = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO' || performance.now() > until) return false;
      await wait(5);
      continue;
    }
    try {
      writeSync(fd, text);
      return true;
    } finally {
      closeSync(fd);
    }
  }
}

/** A line of output at the shell: at the start of a line, or after a prompt (a background job's). */
const output = (text: string): RegExp => new RegExp(`(^|\\$ )${text}$`);

/** Whether the shell has its prompt: it runs a typed line (its output differs from the typed text). */
async function prompt(shell: Shell, n: number): Promise<boolean> {
  shell.line(`echo prompt-$((${n}*1000+1))`);
  return shell.shows(new RegExp(`^prompt-${n * 1000 + 1}$`), 5_000);
}

export const ctrlZ: HostileCase = jobControlCase(
  'job control: Ctrl-Z, fg and bg',
  'an interactive bash on a pty runs the wrapper (--sidecar none) in the foreground; Ctrl-Z is typed: the shell reports the job ' +
    'Stopped and has its prompt back (a typed line runs), the command is stopped; then `fg` (a typed line reaches the command) or ' +
    '`bg` (it finishes in the background): the shell sees exit 5',
  [
    {
      sent: 'Ctrl-Z, then fg',
      async run(shell) {
        shell.line(typedJob('echo job-$((1+1)); read x; echo got-$x; exit 5'));
        if (!(await shell.shows(output('job-2')))) return ['the job never started'];
        shell.keys(['C-z']);
        const problems: string[] = [];
        if (!(await shell.shows(/Stopped/))) problems.push(`Ctrl-Z: no "Stopped" from the shell ${jobSnapshot(shell)}`);
        if (!(await prompt(shell, 1))) return [...problems, 'Ctrl-Z: the shell never got its prompt back'];
        const state = commandState(shell, 'echo job-');
        if (state !== 'T') problems.push(`Ctrl-Z: the command is ${state ?? 'gone'}, not stopped`);
        shell.line('fg');
        shell.line('hello');
        if (!(await shell.shows(output('got-hello')))) return [...problems, 'fg: the typed line never reached the command'];
        shell.line('echo code-$((0+$?))');
        if (!(await shell.shows(output('code-5'))))
          problems.push(`fg: not exit 5 (${shell.screen().match(/^code-\d+$/m)?.[0] ?? 'no code'})`);
        return problems;
      },
    },
    {
      sent: 'Ctrl-Z, then bg',
      async run(shell, scratch) {
        // The command waits in the open of a FIFO, in the shell itself. A loop of `sleep` would have dash vfork
        // all the time, and a Ctrl-Z that stops the child before its exec leaves the shell waiting for it, never
        // stopped: with the command alone, too.
        const go = join(scratch, 'go');
        execFileSync('mkfifo', [go]);
        shell.line(typedJob(`echo job-$((1+1)); read x < ${go}; echo bg-$x; exit 5`));
        if (!(await shell.shows(output('job-2')))) return ['the job never started'];
        shell.keys(['C-z']);
        const problems: string[] = [];
        if (!(await shell.shows(/Stopped/))) problems.push(`Ctrl-Z: no "Stopped" from the shell ${jobSnapshot(shell)}`);
        if (!(await prompt(shell, 1))) return [...problems, 'Ctrl-Z: the shell never got its prompt back'];
        shell.line('bg');
        if (!(await tellFifo(go, 'done\n', 5_000))) return [...problems, 'bg: the command never opened its FIFO'];
        if (!(await shell.shows(output('bg-done')))) return [...problems, 'bg: the command never went on'];
        if (!(await shell.shows(/Exit 5/))) problems.push('bg: the shell never saw "Exit 5"');
        return problems;
      },
    },
  ],
);

export const backgroundRead: HostileCase = jobControlCase(
  'job control: a background job reads the terminal',
  'an interactive bash on a pty starts the wrapper (--sidecar none) with `&`; its command reads the terminal: the shell reports it ' +
    'Stopped (tty input); `fg` gives it the terminal, a typed line reaches it, and the shell sees exit 5',
  [
    {
      sent: 'job & (the command reads), then fg',
      async run(shell) {
        shell.line(`${typedJob('echo job-$((1+1)); read x; echo got-$x; exit 5')} &`);
        if (!(await shell.shows(output('job-2')))) return ['the job never started'];
        const problems: string[] = [];
        if (!(await shell.shows(/Stopped/))) problems.push('no "Stopped" from the shell');
        if (!(await prompt(shell, 1))) return [...problems, 'the shell never got its prompt back'];
        shell.line('fg');
        shell.line('hello');
        if (!(await shell.shows(output('got-hello')))) return [...problems, 'fg: the typed line never reached the command'];
        shell.line('echo code-$((0+$?))');
        if (!(await shell.shows(output('code-5'))))
          problems.push(`fg: not exit 5 (${shell.screen().match(/^code-\d+$/m)?.[0] ?? 'no code'})`);
        return problems;
      },
    },
  ],
);

export const tostop: HostileCase = jobControlCase(
  'job control: stty tostop',
  'an interactive bash on a pty with `stty tostop` runs `istio-job-run --version` or `--help` in the foreground: it prints and ' +
    'exits 0, never stopped',
  ['--version', '--help'].map(
    (flag): Control => ({
      sent: `stty tostop; ${flag}`,
      async run(shell) {
        shell.line(`stty tostop; ${WRAPPER} ${flag}; echo code-$((0+$?))`);
        if (await shell.shows(output('code-0'))) return [];
        return [shell.screen().includes('Stopped') ? 'the wrapper stopped (tty output)' : 'no exit within 5 s'];
      },
    }),
  ),
);
