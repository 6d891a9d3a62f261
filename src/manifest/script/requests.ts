// The commands of a script that speak to a sidecar: curl and wget (GNU or busybox) asking something of the
// pod's loopback, a sidecar's own program (`pilot-agent request POST quitquitquit`, `cloud-sql-proxy
// shutdown`), a signal to a sidecar's process (`pkill pilot-agent`), and a one-line Python or Node POST. Each
// is read from the command's words as the program itself reads them; which sidecar it reaches is decided
// later, from the pod's sidecars and the kinds table.

import { ISTIO, kindNamed, QUIT_WORDS, SIDECAR_KINDS, type SidecarKind } from '../../config/kinds.ts';
import { basename } from './commands.ts';
import { sidecarCommand } from './programs.ts';

/** A place in a script: its row and column, from 0. */
export interface Place {
  readonly row: number;
  readonly column: number;
}

/** A command of the script that speaks to a sidecar over HTTP, or a program that does so for it. */
export interface Request {
  /** curl, wget, a sidecar's own command, python, node, or the variable of URLs it loops over. */
  readonly via: string;
  readonly host?: string;
  readonly port?: number;
  readonly path?: string;
  readonly method: string;
  /** An environment variable that holds the URLs (the Cloud SQL Proxy operator's CSQL_PROXY_QUIT_URLS). */
  readonly variable?: string;
  /** A sidecar's own program that sends it (`cloud-sql-proxy shutdown`, `pilot-agent request`), or the process signalled. */
  readonly program?: string;
  /** An option the program rejects, so that it sends nothing (curl takes no `--option=value`). */
  readonly rejected?: string;
  /** An option of GNU wget's that busybox's wget lacks (`--method`, `--body-data`): there it exits 1 and sends nothing. */
  readonly gnuOnly?: string;
  /** The URL's scheme when it names one (https: the sidecars serve plain HTTP, and answer nothing). */
  readonly scheme?: string;
  /** Sent to the pod's own name (`$(hostname)`, `$HOSTNAME`), which reaches the sidecar from the pod's address, not loopback. */
  readonly podAddress?: boolean;
  readonly place: Place;
}

/** A loopback path that says it stops what serves it. */
export const LOOPBACK_QUIT = new RegExp(`(${QUIT_WORDS.join('|')})`, 'i');
/**
 * A loopback path that asks whether what serves it is up (a readiness or health probe), or reads a proxy's own state
 * (Envoy's admin: server_info, clusters, stats, config_dump, listeners, certs).
 */
const LOOPBACK_PROBE = /(health|ready|startup|live|status|ping|server_info|clusters|stats|config_dump|listeners|certs)/i;

/**
 * Whether a request is the job's own call through loopback (an app's API on another port, a sidecar's API such
 * as Dapr's publish) rather than a quit or a wait: it is then the job's work, and fails when the job does. A
 * signal, a sidecar's own program, a quit URL's variable, a HEAD and a path that names a quit or a probe are not.
 */
export function ownCall(request: Request): boolean {
  if (request.method === 'SIGNAL' || request.method === 'HEAD' || request.program !== undefined || request.variable !== undefined)
    return false;
  const path = request.path ?? '/';
  return path !== '/' && !LOOPBACK_QUIT.test(path) && !LOOPBACK_PROBE.test(path);
}

/** The variables of quit URLs that scripts loop over (the Cloud SQL Proxy operator's), from the kinds table. */
export const QUIT_URLS_VARIABLES: ReadonlySet<string> = new Set(
  (SIDECAR_KINDS as readonly SidecarKind[]).flatMap((kind) => kind.template.quitUrlsVariable ?? []),
);

/**
 * A URL on this pod's own loopback, or on its own name (the pod's address), as curl and wget take it (with or
 * without the scheme); the name as the script writes it, the shell's expansion of it not known.
 */
const LOOPBACK_URL =
  /^(?:([a-z]+):\/\/)?(localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1\]|\$\(hostname(?: -[fis])?\)|`hostname`|\$\{?HOSTNAME\}?)(?::(\d{1,5}))?(\/[^\s?#'"]*)?/i;
/** The same inside a program's text (a Python or Node one-liner). */
const LOOPBACK_URL_IN_TEXT = /https?:\/\/(?:localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1\])(?::\d{1,5})?(?:\/[^\s?#'"]*)?/i;

/** curl's short options that take a value (the rest of a bundle, or the next word). */
const CURL_SHORT_VALUED = new Set('AbcCdDeEFhHKmoPQrtTuUwxXyYz'.split(''));
/** curl's long options that take a value, besides the --data* and --request families read apart. */
const CURL_LONG_VALUED =
  /^--(header|output|user|write-out|max-time|connect-timeout|retry|retry-delay|retry-max-time|user-agent|cacert|cert|key|proxy|resolve|connect-to|interface|unix-socket|abstract-unix-socket|config|cookie|cookie-jar|referer|range|limit-rate|max-filesize|expect100-timeout|keepalive-time|url|trace|trace-ascii|dump-header|stderr|form|form-string|json|upload-file|oauth2-bearer|aws-sigv4|variable|ciphers|pinnedpubkey|capath|noproxy|proxy-user|happy-eyeballs-timeout-ms|local-port|dns-servers|netrc-file)$/;
/** GNU wget's options that busybox's wget does not have (busybox networking/wget.c's long options). */
const WGET_GNU_ONLY = /^--(method|body-data|body-file)(=|$)/;
/** wget's options that take a separate value. */
const WGET_VALUED =
  /^(-[OoaeTtwUQiPdcBbLlDHYy]|--(output-document|output-file|header|user-agent|timeout|tries|wait|user|password|proxy-user|proxy-password|directory-prefix|load-cookies|save-cookies|ca-certificate|certificate|private-key|referer|limit-rate|quota|append-output|execute|input-file))$/;

interface Url {
  readonly host: string;
  readonly port: number;
  readonly path: string;
  readonly scheme?: string;
  readonly podAddress?: boolean;
}

function loopback(word: string): Url | undefined {
  const match = LOOPBACK_URL.exec(word.replace(/^"/, ''));
  if (match === null) return undefined;
  const [, scheme, host = '', port, path] = match;
  const podAddress = host.includes('hostname') || host.includes('HOSTNAME');
  return {
    host: podAddress ? host : host.toLowerCase(),
    port: port === undefined ? (scheme?.toLowerCase() === 'https' ? 443 : 80) : Number(port),
    path: path ?? '/',
    ...(scheme === undefined ? {} : { scheme: scheme.toLowerCase() }),
    ...(podAddress ? { podAddress } : {}),
  };
}

/** What a command of these says, read from its words (the program's name first, prefixes taken off). */
export function requestOf(
  words: readonly string[],
  place: Place,
  loopVariables: ReadonlyMap<string, string>,
  pidVariables: ReadonlyMap<string, string> = new Map(),
): Request | undefined {
  const program = basename(words[0] ?? '');
  const args = words.slice(1);
  if (program === 'curl') return curl(args, place, loopVariables);
  if (program === 'wget') return wget(args, place, loopVariables);
  // `cloud-sql-proxy shutdown`, `alloydb-auth-proxy shutdown`, `pilot-agent request POST quitquitquit`.
  const command = sidecarCommand(program, args);
  if (command?.sends === 'quit') return { via: program, program, method: 'POST', path: kindNamed(command.kind).quit.path, place };
  if (command?.sends === 'request') {
    const [method = 'GET', path = ''] = args.slice(command.at + 1).filter((arg) => !arg.startsWith('-'));
    return { via: program, program, method: method.toUpperCase(), path: `/${path.replace(/^\//, '')}`, place };
  }
  if (command?.sends === 'ready') return { via: program, program, method: 'GET', ...(ISTIO.ready && { path: ISTIO.ready.path }), place };
  // `pkill envoy`, `killall -INT cloud_sql_proxy`, `kill $(pidof daprd)`: a signal to a sidecar's process, which
  // only a pod that shares its process namespace lets a container see.
  if (program === 'pkill' || program === 'killall') {
    const name = args.filter((arg) => !arg.startsWith('-')).at(-1);
    if (name !== undefined) return { via: program, program: basename(name.split(/\s/)[0] ?? name), method: 'SIGNAL', place };
  }
  if (program === 'kill') {
    // `kill $(pgrep -f pilot-agent)`, `kill -INT $pid` after `pid=$(pidof cloud_sql_proxy)`.
    for (const arg of args) {
      const name = pidLookup(arg) ?? pidVariables.get(/^"?\$\{?(\w+)\}?"?$/.exec(arg)?.[1] ?? '');
      if (name !== undefined) return { via: program, program: name, method: 'SIGNAL', place };
    }
  }
  if (/^python[\d.]*$/.test(program) || program === 'node' || program === 'nodejs') return oneLiner(program, args, place);
  return undefined;
}

/** `$(pgrep [-f|-x|...] NAME)`, `` `pidof NAME` ``: a lookup of a process's PIDs, and the program it looks for. */
const PID_LOOKUP = /(?:\$\(|`)\s*(pgrep|pidof)\b([^)`]*)[)`]/;
/** pgrep's options that take a value (procps pgrep(1)); pidof's take none that matter here. */
const PGREP_VALUED = new Set(['-d', '-g', '-G', '-P', '-s', '-t', '-u', '-U', '-F', '--ns', '--nslist', '--delimiter', '--pidfile']);

/** The program whose PIDs TEXT looks up with pgrep or pidof (a path's last part, a pattern's first word), if it does. */
function pidLookup(text: string): string | undefined {
  const match = PID_LOOKUP.exec(text);
  if (match === null) return undefined;
  const words = [...(match[2] as string).matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((found) => found[1] ?? found[2] ?? found[3] ?? '');
  return lookedUp(match[1] as string, words);
}

/** The program pgrep or pidof (PROGRAM) looks up with the arguments WORDS. */
function lookedUp(program: string, words: readonly string[]): string | undefined {
  const names: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (program === 'pgrep' && PGREP_VALUED.has(word)) i++;
    else if (!word.startsWith('-')) names.push(word);
  }
  // pgrep takes one pattern (the last word); pidof several names (the first is enough to aim the signal).
  const name = (program === 'pgrep' ? names.at(-1) : names[0])?.trim().split(/\s+/)[0];
  return name === undefined || name === '' ? undefined : basename(name.replace(/^\^|\$$/g, ''));
}

/**
 * Whether `pgrep ...` or `pidof ...` (WORDS, the program first), in the shell started with SCRIPT (`sh -c SCRIPT`),
 * finds a process: true, false, or undefined where either may be. `pgrep -f` matches whole command lines, and the
 * shell's own holds the script: a pattern the script's text matches finds the shell itself, always. A sidecar's
 * process runs while the job does, and another container's process is there to see only where the pod shares its
 * process namespace (SHARES; undefined: not known): otherwise neither is found, unless the script starts processes of
 * its own in the background, which may be the one looked for.
 */
export function processFound(words: readonly string[], script: string, shares: boolean | undefined): boolean | undefined {
  const program = basename(words[0] ?? '');
  const args = words.slice(1);
  if (program === 'pgrep' && args.some((arg) => arg === '--full' || /^-[a-zA-Z]*f[a-zA-Z]*$/.test(arg))) {
    const pattern = args.filter((arg, at) => !arg.startsWith('-') && !PGREP_VALUED.has(args[at - 1] ?? '')).at(-1);
    try {
      if (pattern !== undefined && new RegExp(pattern).test(script)) return true;
    } catch {}
  }
  const name = lookedUp(program, args);
  const sidecar = name !== undefined && (SIDECAR_KINDS as readonly SidecarKind[]).some((kind) => kind.template.processes.includes(name));
  if (shares !== false) return sidecar ? true : undefined;
  // `cmd &` (not `&&`, `>&`, `&>`): a process of the script's own, which it sees.
  const background = /&/.test(script.replace(/&&|[<>]&|&>/g, ''));
  return sidecar || !background ? false : undefined;
}

/** The variables a script assigns a PID lookup to (`pid=$(pgrep cloud_sql_proxy)`), with the program looked up. */
export function pidVariablesOf(script: string): ReadonlyMap<string, string> {
  const found = new Map<string, string>();
  for (const match of script.matchAll(/(?:^|[\s;&|(])(?:local\s+|export\s+|readonly\s+)?([A-Za-z_]\w*)=("?(?:\$\(|`)[^)`]*[)`])/g)) {
    const program = pidLookup(match[2] as string);
    if (program !== undefined) found.set(match[1] as string, program);
  }
  return found;
}

function curl(args: readonly string[], place: Place, loopVariables: ReadonlyMap<string, string>): Request | undefined {
  let method: string | undefined;
  let data = false;
  let head = false;
  // -G: the data goes in the URL's query, and the method is GET (unless -X names one).
  let get = false;
  let url: Url | undefined;
  let variable: string | undefined;
  let rejected: string | undefined;
  const target = (word: string): void => {
    url ??= loopback(word);
    const name = /^\$\{?(\w+)\}?$/.exec(word)?.[1];
    if (name !== undefined) variable ??= loopVariables.get(name) ?? (QUIT_URLS_VARIABLES.has(name) ? name : undefined);
  };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (arg === '--') {
      for (const rest of args.slice(i + 1)) target(rest);
      break;
    }
    if (arg.startsWith('--')) {
      // curl reads no --option=value: it says the option is unknown and exits 2.
      if (arg.includes('=')) {
        rejected ??= arg;
        continue;
      }
      const name = arg;
      const value = (): string => args[++i] ?? '';
      // curl sends the method as written: servers compare it case-sensitively.
      if (name === '--request') method = value();
      else if (name === '--get') get = true;
      else if (/^--data(-\w+)?$/.test(name) || name === '--json' || /^--form(-string)?$/.test(name)) {
        value();
        data = true;
      } else if (name === '--head') head = true;
      else if (name === '--url') target(value());
      else if (CURL_LONG_VALUED.test(name)) value();
      continue;
    }
    if (arg.startsWith('-') && arg.length > 1) {
      // A bundle of short options: -sfXPOST, -fsSX POST, -d@file.
      for (let at = 1; at < arg.length; at++) {
        const letter = arg[at] as string;
        if (letter === 'I') head = true;
        if (letter === 'G') get = true;
        if (!CURL_SHORT_VALUED.has(letter)) continue;
        const value = at + 1 < arg.length ? arg.slice(at + 1) : (args[++i] ?? '');
        if (letter === 'X') method = value;
        else if (letter === 'd' || letter === 'F') data = true;
        break;
      }
      continue;
    }
    target(arg);
  }
  const said = method ?? (data && !get ? 'POST' : head ? 'HEAD' : 'GET');
  const refused = rejected === undefined ? {} : { rejected };
  if (variable !== undefined) return { via: 'curl', method: said, variable, place, ...refused };
  if (url === undefined) return undefined;
  return { via: 'curl', ...(url as Url), method: said, place, ...refused };
}

function wget(args: readonly string[], place: Place, loopVariables: ReadonlyMap<string, string>): Request | undefined {
  let method = 'GET';
  let url: Url | undefined;
  let variable: string | undefined;
  let gnuOnly: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (WGET_GNU_ONLY.test(arg)) gnuOnly ??= arg.includes('=') ? arg : `${arg} ${args[i + 1] ?? ''}`.trim();
    if (/^--body-(data|file)$/.test(arg)) i++;
    if (/^--post-(data|file)(=|$)/.test(arg)) {
      method = 'POST';
      if (!arg.includes('=')) i++;
    } else if (/^--method(=|$)/.test(arg)) method = (arg.includes('=') ? arg.slice(9) : (args[++i] ?? method)).toUpperCase();
    else if (/^--spider$/.test(arg)) method = 'HEAD';
    else if (WGET_VALUED.test(arg)) i++;
    else if (!arg.startsWith('-')) {
      url ??= loopback(arg);
      const name = /^\$\{?(\w+)\}?$/.exec(arg)?.[1];
      if (name !== undefined) variable ??= loopVariables.get(name) ?? (QUIT_URLS_VARIABLES.has(name) ? name : undefined);
    }
  }
  const gnu = gnuOnly === undefined ? {} : { gnuOnly };
  if (variable !== undefined) return { via: 'wget', method, variable, place, ...gnu };
  if (url === undefined) return undefined;
  return { via: 'wget', ...(url as Url), method, place, ...gnu };
}

/** `python3 -c "...urlopen(Request(URL, method='POST'))"`, `node -e "fetch(URL, {method: 'POST'})"`. */
function oneLiner(program: string, args: readonly string[], place: Place): Request | undefined {
  const flag = program === 'node' || program === 'nodejs' ? /^-(e|p|-eval|-print)$/ : /^-[a-zA-Z]*c$/;
  const at = args.findIndex((arg) => flag.test(arg));
  const code = at < 0 ? undefined : args[at + 1];
  if (code === undefined) return undefined;
  // http.client's `HTTPConnection("localhost", 15020)` and `.request("POST", "/quitquitquit")`, or a URL in the text.
  const connection = /HTTP(S?)Connection\(\s*['"]([^'"]+)['"]\s*,\s*(?:port\s*=\s*)?(\d+)/.exec(code);
  const request = /\.request\(\s*['"](\w+)['"]\s*,\s*['"]([^'"]*)['"]/.exec(code);
  const found = LOOPBACK_URL_IN_TEXT.exec(code);
  const url =
    connection !== null && request !== null
      ? loopback(`${connection[1] === 'S' ? 'https' : 'http'}://${connection[2]}:${connection[3]}${request[2]}`)
      : found === null
        ? undefined
        : loopback(found[0]);
  if (url === undefined) return undefined;
  const post =
    request?.[1]?.toUpperCase() === 'POST' ||
    /method\s*[=:]\s*['"]post['"]/i.test(code) ||
    /\brequests\.post\b|\bhttpx\.post\b/.test(code) ||
    /\bdata\s*=\s*(b?['"]|\w)/.test(code) ||
    /['"]POST['"]\s*,/.test(code);
  return { via: program, ...url, method: post ? 'POST' : 'GET', place };
}
