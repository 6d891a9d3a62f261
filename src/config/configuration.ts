// The configuration, read in one pass: the command line and the environment with scuttle's variables
// (parse.ts), the pod's annotations file, the Istio sidecar's mode (resolved once, mode.ts) and the
// sidecars found (detect.ts). main gets everything it needs before it starts to wait, and the lines to say.

import { parseAnnotations } from './annotations.ts';
import { describeSidecars, detect, type Note, type Sidecar } from './detect.ts';
import { errorCode, errorMessage } from '../errors.ts';
import { modeInputs, type ResolvedMode, resolveMode, STATUS_ANNOTATION } from './mode.ts';
import { parseInvocation } from './parse.ts';
import { DEFAULT_ANNOTATIONS_FILE, type Options } from './options.ts';
import { fitsLine, MAX_LINE_BYTES, MAX_QUIT_TARGETS, quitTargetLine } from '../launcher/protocol.ts';
import { shownUrl } from '../quote.ts';
import { SIDECAR_KINDS } from './kinds.ts';

export interface ConfigurationInputs {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Reads a text file; throws as readFileSync does. */
  readonly readFile: (path: string) => string;
}

/** A run, or a usage error (`errors` not empty): what did parse is kept, so the sidecars are still told to quit. */
export interface Job {
  readonly kind: 'job';
  readonly options: Options;
  readonly command: readonly string[];
  readonly mode: ResolvedMode;
  readonly sidecars: readonly Sidecar[];
  /** What to say once the log is configured, in order: scuttle's variables, the mode, notes, the sidecars found. */
  readonly lines: readonly Note[];
  /** Usage and configuration errors: exit 125 without running the command. */
  readonly errors: readonly string[];
  /** A loopback URL to try once: if it answers, a sidecar seems to be there although the status says none. */
  readonly probe?: URL;
}

export type Configuration =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'install'; readonly dir: string }
  | Job;

export function configure(inputs: ConfigurationInputs): Configuration {
  const invocation = parseInvocation(inputs.argv, inputs.env);
  if (invocation.kind === 'help' || invocation.kind === 'version' || invocation.kind === 'install') return invocation;
  const { options, envoyAdmin } = invocation;
  const errors = invocation.kind === 'usage-error' ? [...invocation.errors] : [];
  const lines: Note[] = invocation.scuttle === undefined ? [] : [{ level: 'info', message: invocation.scuttle }];

  const file = readAnnotations(inputs.readFile, options.podAnnotations);
  let annotations: { readonly path: string; readonly values: ReadonlyMap<string, string> } | undefined;
  let malformed = false;
  if (file !== undefined) {
    const where = `pod annotations ${JSON.stringify(file.path)}`;
    if ('error' in file) errors.push(`${where}: ${file.error}`);
    else {
      const parsed = parseAnnotations(file.text);
      for (const error of parsed.errors) errors.push(`${where}: ${error}`);
      annotations = { path: file.path, values: parsed.values };
      // A line that is not key="value" may have been the status: its absence then says nothing, and the
      // Istio sidecar is resolved as for an unreadable file (assumed in a pod, and told to quit).
      malformed = parsed.errors.length > 0 && !parsed.values.has(STATUS_ANNOTATION);
    }
  }

  const mode = resolveMode(options.sidecar, modeInputs(inputs.env, envoyAdmin, malformed ? undefined : annotations));
  const detection = detect({ options, env: inputs.env, mode, envoyAdmin, ...(annotations === undefined ? {} : { annotations }) });
  lines.push({ level: mode.level, message: mode.reason }, ...detection.notes);
  if (detection.sidecars.length > 0) lines.push({ level: 'info', message: describeSidecars(detection.sidecars) });
  return {
    kind: 'job',
    options,
    command: invocation.kind === 'run' ? invocation.command : [],
    mode,
    sidecars: detection.sidecars,
    lines,
    errors: [...errors, ...detection.errors, ...planErrors(detection.sidecars)],
    ...(detection.probe === undefined ? {} : { probe: detection.probe }),
  };
}

/** The pod's annotations file: the one named, or the default one when it exists. */
function readAnnotations(
  read: (path: string) => string,
  path: string,
): { readonly path: string; readonly text: string } | { readonly path: string; readonly error: string } | undefined {
  try {
    return { path, text: read(path) };
  } catch (error) {
    const code = errorCode(error);
    if (path === DEFAULT_ANNOTATIONS_FILE && code === 'ENOENT') return undefined;
    return { path, error: `cannot be read (${code ?? errorMessage(error)})` };
  }
}

/**
 * The quit plan the launcher is handed must hold every quit URL: no more than MAX_QUIT_TARGETS, each on a line
 * that fits. --quit-url is checked as it is parsed; this names the others (a path from the annotations file).
 */
function planErrors(sidecars: readonly Sidecar[]): string[] {
  const errors: string[] = [];
  const targets = sidecars.flatMap((sidecar) => sidecar.quit.map((target) => ({ ...target, from: sidecar.from })));
  if (targets.length > MAX_QUIT_TARGETS) {
    const variables = SIDECAR_KINDS.flatMap((kind): string[] =>
      'quitUrlsVariable' in kind.template ? [kind.template.quitUrlsVariable] : [],
    );
    errors.push(
      `${targets.length} quit URLs: the launcher takes at most ${MAX_QUIT_TARGETS} (--quit-url, --also, the annotations file, ${variables.join(', ')})`,
    );
  }
  for (const { url, kind, from } of targets) {
    const line = quitTargetLine(kind.label, url);
    if (line !== undefined && !fitsLine(line)) {
      errors.push(
        `${from}: the ${kind.label}'s quit URL ${shownUrl(url)} is too long for the launcher's line (at most ${MAX_LINE_BYTES} bytes)`,
      );
    }
  }
  return errors;
}
