// The requests a script's commands send to a sidecar: curl and wget to a loopback URL, a sidecar's own
// program (`pilot-agent request`, `cloud-sql-proxy shutdown`), a signal to a sidecar's process; recognised
// from a command's words, which the walk of the script (shell.ts) hands over.

import { ISTIO, kindNamed } from '../../config/kinds.ts';

/** The Cloud SQL Proxy operator's variable of quit URLs, which its scripts loop over. */
export const QUIT_URLS_VARIABLE = 'CSQL_PROXY_QUIT_URLS';

/** A place in a script: its row and column, from 0. */
export interface Place {
  readonly row: number;
  readonly column: number;
}

/** A command of the script that speaks to a sidecar over HTTP, or a program that does so for it. */
export interface Request {
  /** curl, wget, a sidecar's own command (`cloud-sql-proxy shutdown`), or the variable of URLs it loops over. */
  readonly via: string;
  readonly host?: string;
  readonly port?: number;
  readonly path?: string;
  readonly method: string;
  /** An environment variable that holds the URLs (the Cloud SQL Proxy operator's CSQL_PROXY_QUIT_URLS). */
  readonly variable?: string;
  /** A sidecar's own program that sends it (`cloud-sql-proxy shutdown`, `pilot-agent request`). */
  readonly program?: string;
  readonly place: Place;
}

/** A URL on this pod's own loopback, as curl and wget take it (with or without the scheme). */
const LOOPBACK_URL = /^(?:https?:\/\/)?(localhost|127(?:\.\d{1,3}){3}|0\.0\.0\.0|\[::1\])(?::(\d{1,5}))?(\/[^\s?#]*)?/i;

/** curl, wget (GNU or busybox), or a sidecar's own program, when it asks something of a loopback address. */
export function requestOf(
  program: string,
  args: readonly string[],
  urlVariables: ReadonlyMap<string, string>,
  place: Place,
): Request | undefined {
  if (program === 'curl' || program === 'wget') {
    let method = 'GET';
    let url: RegExpExecArray | undefined;
    let variable: string | undefined;
    for (let i = 0; i < args.length; i++) {
      const arg = args[i] as string;
      const inline = /^-X(.+)$/.exec(arg);
      if (program === 'curl' && (arg === '-X' || arg === '--request')) method = (args[++i] ?? method).toUpperCase();
      else if (program === 'curl' && inline !== null) method = (inline[1] as string).toUpperCase();
      else if (program === 'curl' && /^(-d|--data.*|-F|--form.*|--json)$/.test(arg)) {
        if (method === 'GET') method = 'POST';
        i++;
      } else if (program === 'curl' && /^-d./.test(arg) && method === 'GET') method = 'POST';
      else if (program === 'curl' && (arg === '-I' || arg === '--head')) method = 'HEAD';
      else if (program === 'wget' && /^--post-(data|file)(=|$)/.test(arg)) {
        method = 'POST';
        if (!arg.includes('=')) i++;
      } else if (program === 'wget' && /^--method(=|$)/.test(arg))
        method = (arg.includes('=') ? arg.slice(9) : (args[++i] ?? method)).toUpperCase();
      else if (
        /^-(H|o|O|u|w|m|A|e|b|c|T|x|K|U|Y|y|E)$/.test(arg) ||
        /^--(header|output|user|write-out|max-time|connect-timeout|retry|retry-delay|retry-max-time|user-agent|timeout|tries|output-document|header|cacert|cert|key)$/.test(
          arg,
        )
      )
        i++;
      else if (!arg.startsWith('-')) {
        const match = LOOPBACK_URL.exec(arg);
        if (match !== null && url === undefined) url = match;
        const name = /^\$\{?(\w+)\}?$/.exec(arg)?.[1];
        if (name !== undefined) variable = urlVariables.get(name) ?? (name === QUIT_URLS_VARIABLE ? name : undefined);
      }
    }
    if (variable !== undefined) return { via: program, method, variable, place };
    if (url === undefined) return undefined;
    const port = url[2] === undefined ? 80 : Number(url[2]);
    return { via: program, host: (url[1] as string).toLowerCase(), port, path: url[3] ?? '/', method, place };
  }
  // `cloud-sql-proxy shutdown`, `alloydb-auth-proxy shutdown`, `pilot-agent request POST quitquitquit`.
  if ((program === 'cloud-sql-proxy' || program === 'alloydb-auth-proxy') && args.includes('shutdown')) {
    return { via: program, program, method: 'POST', path: kindNamed(program).quit.path, place };
  }
  if (program === 'pilot-agent' && args[0] === 'request') {
    const [method = 'GET', path = ''] = args.slice(1).filter((arg) => !arg.startsWith('-'));
    return { via: program, program, method: method.toUpperCase(), path: `/${path.replace(/^\//, '')}`, place };
  }
  // `pkill envoy`, `killall -INT cloud_sql_proxy`, `kill $(pidof daprd)`: a signal to a sidecar's process, which
  // only a pod that shares its process namespace lets a container see.
  if (program === 'pkill' || program === 'killall') {
    const name = args.filter((arg) => !arg.startsWith('-')).at(-1);
    if (name !== undefined) return { via: program, program: name, method: 'SIGNAL', place };
  }
  if (program === 'kill') {
    const name = /\$\((?:pidof|pgrep)(?:\s+-\S+)*\s+([\w.-]+)\)/.exec(args.join(' '))?.[1];
    if (name !== undefined) return { via: program, program: name, method: 'SIGNAL', place };
  }
  if (program === 'pilot-agent' && args[0] === 'wait')
    return { via: program, program, method: 'GET', ...(ISTIO.ready && { path: ISTIO.ready.path }), place };
  return undefined;
}
