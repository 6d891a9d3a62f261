// The adversarial suite, as one table: each case says what it sends, how many times it is tried in each
// size (short: inside `npm test`; long: `npm run reliability`), and judges one try from what came back.
// The cases live by concern in this folder (signals, stdio, environment, processes, install, network,
// terminal, limits, launcher); common.ts holds their types and the scaffold of a try; tools.ts the spawner,
// cgroups and load they run with, shell.ts the interactive shell of the job-control cases.
// Tries run inside test/support/hostile-main.ts, in a network namespace of their own (the pod's loopback:
// the sidecar stand-in on the real ports 15020/15021, and Node's inspector port 9229 visible to nobody else).
// A try's `got` is a short, stable description, so the long run can count identical outcomes.

import type { HostileCase } from './common.ts';
import { argumentBytes, brokenPreload, environmentBytes, nodeVariables } from './environment.ts';
import { failedReinstall, installWithoutDir } from './install.ts';
import { broadcastAsPid1, forgedExit, launcherJson, nodeKilledDuringQuit, nodeKilledWhileRunning, oomTakesNode } from './launcher.ts';
import { LIMITS, softLimits } from './limits.ts';
import { blackHoledDns, urlCredentials } from './network.ts';
import { deletedCwd, groupSignals, ignoredSigchld, orphansReaped } from './processes.ts';
import {
  floodAcrossExit,
  realTimeDeath,
  realTimeQueue,
  signalsDuringQuit,
  stopDuringStartUp,
  termStreamNotPid1,
  userSignalsDuringStartUp,
} from './signals.ts';
import { closedStdio, closedStdout, stalledStderr } from './stdio.ts';
import { backgroundRead, ctrlZ, terminal, tostop } from './terminal.ts';

export type { HostileCase, Size, Try } from './common.ts';

/** The suite, in the order it runs and is reported. */
export const HOSTILE_CASES: readonly HostileCase[] = [
  stopDuringStartUp,
  userSignalsDuringStartUp,
  floodAcrossExit,
  termStreamNotPid1,
  realTimeDeath,
  signalsDuringQuit,
  stalledStderr,
  closedStdout,
  brokenPreload,
  nodeVariables,
  environmentBytes,
  argumentBytes,
  orphansReaped,
  deletedCwd,
  failedReinstall,
  installWithoutDir,
  blackHoledDns,
  urlCredentials,
  terminal,
  ...LIMITS,
  ignoredSigchld,
  ctrlZ,
  backgroundRead,
  tostop,
  broadcastAsPid1,
  nodeKilledWhileRunning,
  oomTakesNode,
  nodeKilledDuringQuit,
  closedStdio,
  softLimits,
  forgedExit,
  groupSignals,
  realTimeQueue,
  launcherJson,
];

export function hostileCase(name: string): HostileCase {
  const found = HOSTILE_CASES.find((c) => c.name === name);
  if (found === undefined) throw new Error(`no hostile case named ${JSON.stringify(name)}`);
  return found;
}
