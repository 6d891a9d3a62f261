// --check: the recipes for a Job behind a classic sidecar that cannot work, told from the manifest alone. One
// row per rule: its id (stable: CI configurations grep for it), its level, what it finds, whether its remedy is
// the wrapper (its findings then advise --inject), what --inject does with its error (--inject reads it there), and
// its check, which reports each finding's problem and what to do instead apart (finding.ts composes the message).
// An error is a pod that hangs or a Job that reports the wrong outcome; a warning is a recipe that works only
// sometimes. The facts behind each message are the sidecars' own (src/config/kinds.ts; docs/HOW-IT-WORKS.md,
// "What does not work, and why"). `--help` and docs/MANIFESTS.md list the rules from these rows.

import type { Node, Pair } from 'yaml';
import { PROXY_CONTAINER } from '../../config/mode.ts';
import { OPTIONS } from '../../config/options.ts';
import { PROGRAM } from '../../bundle/self.ts';
import { ISTIO, type SidecarKind } from '../../config/kinds.ts';
import { argvOf } from '../pod/containers.ts';
import { type Pod, readPod } from '../pod/pod.ts';
import { ENVOY_ADMIN_PORT, type InjectedNamespaces } from '../pod/sidecars.ts';
import { quitsOf, unstopped } from '../pod/stop.ts';
import { handRolledAdvice, missingPrograms, quitInArgs, quitPath, quitPathIn } from './quits.ts';
import { columnOf, get, getIn, lineOf, pairOf, type Source, text } from '../yaml/source.ts';
import { basename } from '../script/commands.ts';
import { CONSTRUCTS } from '../script/dialect.ts';
import { shellMissing } from '../script/images.ts';
import { stopSwitch } from '../script/programs.ts';
import { workloads } from '../yaml/workloads.ts';
import type { Level } from '../../config/tool-flags.ts';
import type { Profile } from '../../config/profile.ts';
import { deprecatedNativeKeys, holdNative, NATIVE_MOOT, nativeOnlyLines } from './profile-rules.ts';
import {
  annotationsAsLabels,
  exitOnJobCompletion,
  exitOnZero,
  misplaced,
  podFailurePolicy,
  preStopAnnotations,
  yamlAnnotations,
} from './settings.ts';
import { constructMessage, nameOf, notEnabled, sidecarNames, unwrappedMessage } from './messages.ts';
import { type Finding, type Rule, type RuleSummary, WRAP } from './finding.ts';
import { blindWatcher, eventLine, judged, kindSaid, quitIn, quitsById, scriptLine, statusLost, TRIVIAL, wrongWrapper } from './paths.ts';

export type { Level };

const STATUS_PORT = ISTIO.listeners[ISTIO.quit.listener]?.port ?? 0;

const ROWS = [
  {
    id: 'prestop-quit',
    level: 'error',
    finds: 'a preStop hook that quits a sidecar: it runs only when the pod is being stopped',
    advises: true,
    inject: 'setting',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.containers) {
          const preStop = pairOf(get(container.node, 'lifecycle'), 'preStop');
          if (quitPath(preStop?.value)) {
            report(
              preStop,
              `container ${container.name}: a preStop hook runs only when the pod is being stopped, never when the job ends`,
              `remove it and ${WRAP}`,
            );
          }
        }
        preStopAnnotations(pod, report);
      }
    },
  },
  {
    id: 'misplaced-annotation',
    level: 'error',
    finds: "a sidecar's injection annotation or label on the Job's own metadata, not the pod template's",
    check: ({ pods }, report) => {
      for (const pod of pods) misplaced(pod, report);
    },
  },
  {
    id: 'annotation-as-label',
    level: 'warning',
    finds: "a sidecar's switch that its injector reads only as an annotation (linkerd.io/inject, ...), written as a pod label",
    check: ({ pods }, report) => {
      for (const pod of pods) annotationsAsLabels(pod, report);
    },
  },
  {
    id: 'exit-on-job-completion',
    level: 'error',
    finds: 'exitOnJobCompletion, which is no Istio setting',
    advises: true,
    inject: 'setting',
    check: ({ source }, report) => exitOnJobCompletion(source, report),
  },
  {
    id: 'exit-code-lost',
    level: 'error',
    finds:
      "a script whose status after the job failed is 0 (the quit's, an exit 0's, a status saved too late): a failed Job is reported as a success",
    advises: true,
    inject: 'script',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.jobs) {
          // A watcher of another container: its status is not the job's.
          if (pod.jobs.length > 1 && container.script?.facts.watches === true) continue;
          const path = statusLost(container);
          if (path === undefined) continue;
          const line =
            path.statusAt === undefined ? scriptLine(container, 0, 0) : scriptLine(container, path.statusAt.row, path.statusAt.column);
          const why =
            path.statusBy === 'speak'
              ? "after a failed command the script goes on to this quit, so the container exits with the quit's status"
              : path.statusBy === 'exit'
                ? `after a failed command the script ends here with 0 (${path.endText ?? 'exit'})`
                : "after a failed command the script ends with this command's status, 0";
          report(
            line,
            `container ${container.name}: ${why}, not the job's, and a failed job is reported as a success`,
            `keep the job's status (rc=$? right after the job, exit $rc after the quit), or ${WRAP}, which exits with the job's code`,
          );
        }
      }
    },
  },
  {
    id: 'quit-skipped-on-failure',
    level: 'error',
    finds: 'under restartPolicy Never, a quit that does not run when the job fails (after &&, under set -e): the pod hangs then',
    advises: true,
    inject: 'script',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        if (pod.workload.restartPolicy !== 'Never') continue;
        for (const container of pod.jobs) {
          const paths = judged(container);
          if (paths === undefined || paths.failure.length === 0) continue;
          if (paths.failure.some((path) => quitIn(container, path) !== undefined)) continue;
          const sent = paths.success.map((path) => quitIn(container, path)).find((event) => event !== undefined);
          const quit = quitsOf(container).find((found) => found.runs.onSuccess && !wrongWrapper(container, found.line));
          // Sent on no way through a script known to its end: nothing quits at all (unwrapped says so).
          const successKnown = container.script?.facts.outcome.unknown.success === undefined;
          if (sent === undefined && successKnown) continue;
          const line = sent === undefined ? quit?.line : eventLine(container, sent);
          if (line === undefined || quit === undefined) continue;
          const ended = paths.failure.find((path) => path.end === 'errexit' || path.end === 'exit');
          const by = ended === undefined ? undefined : ended.end === 'errexit' ? 'set -e' : `"${ended.endText ?? 'exit'}"`;
          report(
            line,
            `container ${container.name}: ${by === undefined ? 'this quit runs only after the job succeeded, so' : by === 'set -e' ? 'under set -e a failing command ends the script before this quit, so' : `${by} ends the script before this quit when a command fails, so`} ` +
              `when the job fails the ${sidecarNames(pod, sent?.said === undefined ? quit.kind : kindSaid(container, sent.said))} is never told to quit and the pod never completes`,
            `quit in a trap on EXIT, or ${WRAP}`,
          );
        }
      }
    },
  },
  {
    id: 'onfailure-quit-always',
    level: 'error',
    finds: 'under restartPolicy OnFailure, a quit that runs after a failure too: the retry runs without the sidecar',
    inject: 'script',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        if (pod.workload.restartPolicy !== 'OnFailure') continue;
        for (const container of pod.jobs) {
          if (container.wrapper?.program === PROGRAM && (container.wrapper.options?.quit ?? 'always') === 'always') {
            report(
              pairOf(container.node, 'command') ?? container.node,
              `container ${container.name}: restartPolicy OnFailure restarts the job in the same pod, but ${PROGRAM} quits the sidecar after a failure too (--quit always), ` +
                'so the retry runs without it',
              'add --quit on-success (or set restartPolicy: Never)',
            );
          }
          const paths = judged(container);
          if (paths === undefined || paths.failure.length === 0) continue;
          const quits = paths.failure.map((path) => quitIn(container, path, undefined, true));
          const quit = quits[0];
          if (quit?.said === undefined || quits.some((found) => found === undefined)) continue;
          report(
            eventLine(container, quit),
            `container ${container.name}: restartPolicy OnFailure restarts the job in the same pod, but this quit ${quit.trap === undefined ? 'runs after a failed command too' : `runs in the ${quit.trap} trap, after a failure too`}, ` +
              `so the retry runs without the ${sidecarNames(pod, kindSaid(container, quit.said))}`,
            `quit only after success (job && quit, or set -e), set restartPolicy: Never, or ${PROGRAM} --quit on-success -- the job`,
          );
        }
      }
    },
  },
  {
    id: 'quit-before-job',
    level: 'error',
    finds: "a quit that runs before the job's command: the job runs without its sidecar",
    advises: true,
    inject: 'script',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.jobs) {
          const blindQuit = blindWatcher(pod, container);
          if (blindQuit !== undefined) {
            report(
              eventLine(container, blindQuit),
              `container ${container.name}: without shareProcessNamespace: true it cannot see the other containers' processes, so its pgrep or pidof finds none, ` +
                `its wait ends at once and this quit stops the ${sidecarNames(pod, kindSaid(container, blindQuit.said ?? -1))} while the job still runs`,
              `set shareProcessNamespace: true on the pod, or take the watcher out and ${WRAP}`,
            );
            continue;
          }
          const paths = judged(container);
          if (paths === undefined || paths.success.length === 0) continue;
          const early = paths.success.map((path) => {
            const quit = quitIn(container, path);
            const work = path.events.findIndex((event) => event.what === 'work');
            return quit !== undefined && path.events.indexOf(quit) < work ? quit : undefined;
          });
          const quit = early[0];
          if (quit?.said === undefined || early.some((found) => found === undefined)) continue;
          report(
            eventLine(container, quit),
            `container ${container.name}: this quit runs before the job's command, so the job runs without the ${sidecarNames(pod, kindSaid(container, quit.said))} ` +
              '(its connections fail)',
            `quit after the job (rc=$? after it, the quit, then exit $rc), or ${WRAP}`,
          );
        }
      }
    },
  },
  {
    id: 'quit-only-on-signal',
    level: 'error',
    finds: 'a quit only in a trap on TERM, INT or HUP: a script that ends by itself never runs it',
    advises: true,
    inject: 'script',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.jobs) {
          const outcome = container.script?.facts.outcome;
          const paths = judged(container);
          if (
            outcome === undefined ||
            paths === undefined ||
            outcome.unknown.success !== undefined ||
            outcome.unknown.failure !== undefined
          )
            continue;
          const onSignal = outcome.onSignal.find(({ said }) => quitsById(container, said));
          if (onSignal === undefined) continue;
          if ([...outcome.success, ...outcome.failure].some((path) => quitIn(container, path) !== undefined)) continue;
          const aimed = container.aimed.find((found) => found.request.id === onSignal.said);
          report(
            aimed?.line ?? scriptLine(container, 0, 0),
            `container ${container.name}: this quit runs only in the trap on ${onSignal.trap}, which runs only when the pod is being stopped; ` +
              `when the script ends by itself nothing tells the ${sidecarNames(pod, aimed?.kind)} to quit and the pod never completes`,
            `quit in a trap on EXIT, or ${WRAP}`,
          );
        }
      }
    },
  },
  {
    id: 'wrapper-never-quits',
    level: 'error',
    finds: `${PROGRAM} set not to quit the sidecar (--quit never; on-success under restartPolicy Never): the pod hangs`,
    check: ({ pods }, report) => {
      for (const pod of pods) {
        const policyOf = pod.workload.restartPolicy;
        for (const container of pod.jobs) {
          if (container.wrapper?.program !== PROGRAM) continue;
          const policy = container.wrapper.options?.quit ?? 'always';
          if (policy !== 'never' && (policy !== 'on-success' || policyOf !== 'Never')) continue;
          report(
            pairOf(container.node, 'command') ?? pairOf(container.node, 'args') ?? container.node,
            `container ${container.name}: ${PROGRAM} is set to --${OPTIONS.quit.flag} ${policy}, so under restartPolicy ${policyOf ?? 'Never'} the sidecar is not told to quit ` +
              `${policy === 'never' ? 'when the job ends' : 'when the job fails'} and the pod never completes`,
            `use --${OPTIONS.quit.flag} always (the default)`,
          );
        }
      }
    },
  },
  {
    id: 'quit-not-enabled',
    level: 'error',
    finds: "a quit of a sidecar whose quit endpoint the pod does not switch on (Linkerd's, Vault Agent's, an auth proxy's)",
    inject: 'script',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.jobs) {
          const told = new Set<SidecarKind>();
          for (const quit of quitsOf(container)) {
            const sidecar = pod.sidecars.find((found) => found.kind === quit.kind);
            if (quit.signal || sidecar === undefined || sidecar.quitOn !== false || sidecar.form === 'native' || told.has(sidecar.kind))
              continue;
            told.add(sidecar.kind);
            const { problem, instead } = notEnabled(sidecar);
            report(quit.line, `container ${container.name}: ${problem}`, instead);
          }
          const stops = container.wrapper?.stops;
          if (stops === undefined || stops === 'all') continue;
          for (const sidecar of pod.sidecars) {
            if (
              !stops.includes(sidecar.kind.name as never) ||
              sidecar.quitOn !== false ||
              sidecar.form === 'native' ||
              told.has(sidecar.kind)
            )
              continue;
            told.add(sidecar.kind);
            const { problem, instead } = notEnabled(sidecar);
            report(
              pairOf(container.node, 'command') ?? container.node,
              `container ${container.name}: ${container.wrapper?.program} ${problem}`,
              instead,
            );
          }
        }
      }
    },
  },
  {
    id: 'quit-wrong-method',
    level: 'error',
    finds: "a quit sent with a method its endpoint does not act on (a GET to Istio's quitquitquit): the sidecar keeps running",
    advises: true,
    inject: 'script',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.containers) {
          for (const aimed of container.aimed) {
            const methods = aimed.envoyAdmin === true ? ['POST'] : aimed.kind?.template.quitMethods;
            const { method, rejected } = aimed.request;
            if (aimed.what === 'quit' && rejected !== undefined) {
              const wget = aimed.request.via === 'wget';
              report(
                aimed.line,
                wget
                  ? `container ${container.name}: the wget of ${container.script?.shell.image ?? 'this image'} is busybox's, which has no ${rejected.split(/[= ]/)[0]}, so it exits 1 and sends nothing to the ${nameOf(aimed.kind)}`
                  : `container ${container.name}: curl reads no ${rejected} (it takes an option's value as the next word), so it exits 2 and sends nothing to the ${nameOf(aimed.kind)}`,
                `write ${wget ? "wget --post-data=''" : rejected.replace('=', ' ')}, or ${WRAP}`,
              );
              continue;
            }
            if (aimed.what !== 'quit' || method === 'SIGNAL' || methods === undefined || methods.includes(method)) continue;
            report(
              aimed.line,
              `container ${container.name}: this sends ${method} to the ${nameOf(aimed.kind)}'s ${aimed.request.path ?? 'quit'}, which acts on ${methods.join(' or ')} only ` +
                `(${method} is refused and the sidecar keeps running)`,
              `${aimed.request.via === 'wget' ? "use wget --post-data=''" : 'use curl -X POST'}, or ${WRAP}`,
            );
          }
        }
      }
    },
  },
  {
    id: 'quit-program-missing',
    level: 'error',
    finds:
      "a quit, or a retried wait, sent with curl or wget in an image known to lack it (Debian's, Ubuntu's, slim, Alpine's, distroless): it fails with 127, so the quit is never sent or the wait never ends",
    advises: true,
    inject: 'script',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.jobs) {
          for (const { aimed, program, image, what } of missingPrograms(container)) {
            const lacks = `${image} is ${what}, which has no ${program}`;
            const sidecar = nameOf(aimed.kind);
            if (aimed.what === 'quit')
              report(
                aimed.line,
                `container ${container.name}: ${lacks}, so this quit fails with 127 (command not found) and the ${sidecar} keeps the pod running`,
                `${WRAP}, which needs no ${program}`,
              );
            else
              report(
                aimed.line,
                `container ${container.name}: ${lacks}, so this wait for the ${sidecar} fails with 127 (command not found) every time and its loop never ends: ` +
                  `the job never runs and the ${sidecar} keeps the pod running`,
                `take the wait out and ${WRAP}, which waits for the ${sidecar} itself`,
              );
          }
        }
      }
    },
  },
  {
    id: 'shell-missing',
    level: 'error',
    finds:
      "a command that starts bash (or dash, ksh, zsh) in an image known to have none (Alpine's, busybox's, official -alpine, distroless): the container never starts, and the sidecar keeps the pod running",
    check: ({ pods }, report) => {
      for (const pod of pods) {
        if (!pod.sidecars.some((sidecar) => sidecar.form === 'classic')) continue;
        for (const container of pod.jobs) {
          const shell = container.script?.shell;
          if (shell === undefined || container.wrapper !== undefined) continue;
          const what = shellMissing(shell.image, shell.program);
          if (what === undefined) continue;
          report(
            pairOf(container.node, 'command') ?? pairOf(container.node, 'args') ?? container.node,
            `container ${container.name}: ${shell.image} is ${what}, which has no ${shell.program}, so the container never starts ` +
              `(its script never runs, nor its quit) and the ${sidecarNames(pod, undefined)} keeps the pod running`,
            `run the script with sh, or use an image with ${shell.program}`,
          );
        }
      }
    },
  },
  {
    id: 'quit-unheard',
    level: 'error',
    finds:
      "a quit its sidecar never acts on: a path it does not serve (404), https to its plain HTTP, the pod's own address instead of loopback (403)",
    advises: true,
    inject: 'setting',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.containers) {
          // Under istio-job-run, which quits the sidecar itself, a quit that goes nowhere is harmless.
          if (container.wrapper?.program === PROGRAM) continue;
          for (const aimed of container.aimed) {
            if (aimed.unheard === undefined) continue;
            const kind = aimed.kind ?? ISTIO;
            const port = pod.sidecars.find((sidecar) => sidecar.kind === kind)?.quitPort ?? kind.listeners[kind.quit.listener]?.port;
            report(
              aimed.line,
              `container ${container.name}: this quit is never heard: ${aimed.unheard}, so the sidecar keeps running`,
              `quit with a POST to http://localhost:${port}${kind.quit.path}, or ${WRAP}`,
            );
          }
        }
      }
    },
  },
  {
    id: 'wrapped-wrong-command',
    level: 'error',
    finds: 'a wrapper (linkerd-await --shutdown, istio-job-run) that runs a command other than the job',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.jobs) {
          for (const wrapper of container.scriptWrappers) {
            if (!wrapper.quits || (wrapper.child !== undefined && !TRIVIAL.has(basename(wrapper.child)))) continue;
            const skipped = wrapper.runs.skippedBy === '&&';
            report(
              wrapper.line,
              `container ${container.name}: ${wrapper.program} runs ${wrapper.child === undefined ? 'no command' : `"${wrapper.child}"`}, not the job, ` +
                `so the job ${wrapper.runs.afterWork ? 'ran before the sidecar was ready' : 'is not waited for'}` +
                `${skipped ? ', and after && the sidecar is never told to quit when the job fails (the pod never completes)' : ''}`,
              `put the job's command after ${[wrapper.program, stopSwitch(wrapper.program), '--'].filter(Boolean).join(' ')}`,
            );
          }
        }
      }
    },
  },
  {
    id: 'folded-script',
    level: 'error',
    finds: 'a script in a folded block scalar (>), whose lines YAML joins into one command',
    inject: 'script',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.containers) {
          const script = container.script;
          const line = script?.joined[0];
          if (script === undefined || line === undefined) continue;
          const raw = String(script.node.value);
          const quitText = quitPathIn(raw);
          report(
            line,
            `container ${container.name}: the script is a folded block scalar (>), so YAML joins this line onto the one before and the shell runs them as one command` +
              `${script.facts.syntaxError === undefined ? '' : ` (which it rejects near "${script.facts.syntaxError.near}")`}` +
              `${quitText ? ': the quit never runs and the sidecar keeps the pod running' : ''}`,
            'write the script as a literal block scalar (|)',
          );
        }
      }
    },
  },
  {
    id: 'quit-in-exec-args',
    level: 'error',
    finds: 'a quit written as more command or args items after a program that is no shell: they are its arguments, never run',
    advises: true,
    inject: 'setting',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.jobs) {
          const found = quitInArgs(container);
          if (found === undefined) continue;
          report(
            found.node,
            `container ${container.name}: ${found.shell ? `${found.program} -c runs only its script, so "${found.word}" and the words after it are the script's parameters ($0, $1, ...)` : `no shell runs the container's command, so "${found.word}" and the words after it are arguments of ${found.program}`}, ` +
              'not commands: the quit never runs and the sidecar keeps the pod running',
            `${WRAP}, or ${found.shell ? 'put the quit inside the script' : 'run it under a shell (command: ["sh", "-c", "..."])'}`,
          );
        }
      }
    },
  },
  {
    id: 'proxy-command-override',
    level: 'error',
    finds: `an ${PROXY_CONTAINER} container that replaces the injected proxy's command`,
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.containers) {
          if (container.name !== PROXY_CONTAINER) continue;
          for (const key of ['command', 'args']) {
            const pair = pairOf(container.node, key);
            if (pair === undefined) continue;
            report(
              pair,
              `the ${PROXY_CONTAINER} container declared here sets ${key}, which replaces the injected proxy's own`,
              `remove ${key} from it (declare only what the injected container should change)`,
            );
          }
        }
      }
    },
  },
  {
    id: 'unwrapped',
    level: 'error',
    finds: 'a pod that gets a classic sidecar that nothing stops',
    advises: true,
    inject: 'setting',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        const left = unstopped(pod);
        if (left.length === 0) continue;
        const job = pod.jobs[0];
        const at =
          job === undefined
            ? pairOf(pod.workload.template, 'spec')?.key
            : (pairOf(job.node, 'command') ?? pairOf(job.node, 'args') ?? job.node);
        const { problem, instead } = unwrappedMessage(pod, left);
        report(at, problem, instead);
      }
    },
  },
  {
    id: 'duplicate-key',
    level: 'warning',
    finds: 'a key written twice in one map: kubectl keeps the last value',
    joins: '; ',
    check: ({ source }, report) => {
      for (const { pair, key, firstLine } of source.duplicates) {
        report(pair, `${key} is written again (first on line ${firstLine}): kubectl keeps this last value and warns`, 'remove one');
      }
    },
  },
  {
    id: 'native-quit',
    level: 'warning',
    finds: 'a quit sent to a sidecar that runs native: kubelet restarts it',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.jobs) {
          for (const quit of quitsOf(container)) {
            const sidecar = pod.sidecars.find((found) => found.kind === quit.kind);
            if (sidecar?.form !== 'native') continue;
            report(
              quit.line,
              `container ${container.name}: the ${nameOf(sidecar.kind)} runs as a native sidecar (${sidecar.formBy ?? sidecar.why}), which kubelet stops after the job by itself; ` +
                'told to quit, it exits and kubelet restarts it, and traffic fails meanwhile',
              'remove the quit',
            );
          }
        }
      }
    },
  },
  {
    id: 'deprecated-native-key',
    level: 'info',
    finds: "under a profile, Linkerd's deprecated config.beta. or config.alpha. key of a native sidecar",
    check: ({ pods, profile }, report) => {
      if (profile !== undefined) for (const pod of pods) deprecatedNativeKeys(pod, report);
    },
  },
  {
    id: 'hold-native',
    level: 'info',
    finds: 'under a profile, holdApplicationUntilProxyStarts on a pod whose istio-proxy runs native, where it does nothing',
    check: ({ pods, profile }, report) => {
      if (profile !== undefined) for (const pod of pods) holdNative(pod, yamlAnnotations(pod), report);
    },
  },
  {
    id: 'wait-after-work',
    level: 'warning',
    finds: "a wait for the sidecar placed after the job's commands, which ran before it was ready",
    advises: true,
    inject: 'script',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.jobs) {
          const wait = container.aimed.find(
            (aimed) => aimed.what === 'wait' && aimed.request.runs.afterWork && aimed.request.runs.trap === undefined,
          );
          // istio-job-run in front waited for readiness before the script began.
          const waited = container.wrapper?.program === PROGRAM && container.wrapper.options?.wait !== false;
          if (wait === undefined || waited || wrongWrapper(container, wait.line)) continue;
          report(
            wait.line,
            `container ${container.name}: this waits for the ${nameOf(wait.kind)} after the job's commands, which ran before it was ready ` +
              '(their connections can fail)',
            `wait first, or ${WRAP}`,
          );
        }
      }
    },
  },
  {
    id: 'quit-admin-port',
    level: 'warning',
    finds: "a quit sent to Envoy's own admin port, not to pilot-agent",
    check: ({ pods }, report) => {
      const instead = `quit pilot-agent on ${STATUS_PORT} instead (${PROGRAM}'s default)`;
      const problem = (name: string): string =>
        `container ${name}: quitquitquit on ${ENVOY_ADMIN_PORT} stops Envoy, and pilot-agent may restart it or keep running`;
      for (const pod of pods) {
        for (const container of pod.containers) {
          for (const aimed of container.aimed) if (aimed.envoyAdmin === true) report(aimed.line, problem(container.name), instead);
          if (
            container.script === undefined &&
            argvOf(container.node).words.some((word) => word.includes(`:${ENVOY_ADMIN_PORT}${ISTIO.quit.path}`))
          )
            report(pairOf(container.node, 'args') ?? pairOf(container.node, 'command'), problem(container.name), instead);
          for (const hook of ['preStop', 'postStart']) {
            const httpGet = getIn(container.node, ['lifecycle', hook, 'httpGet']);
            const port = pairOf(httpGet, 'port');
            if (text(get(httpGet, 'path'))?.includes(ISTIO.quit.path.slice(1)) && text(port?.value) === String(ENVOY_ADMIN_PORT))
              report(port, problem(container.name), instead);
          }
        }
      }
    },
  },
  {
    id: 'shell-syntax',
    level: 'warning',
    finds: 'a script the shell would reject: it fails at once, and its other checks were skipped',
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.containers) {
          const error = container.script?.facts.syntaxError;
          if (error === undefined || (container.script?.joined.length ?? 0) > 0) continue;
          report(
            scriptLine(container, error.place.row, error.place.column),
            `container ${container.name}: the shell rejects this script near "${error.near}", so the container fails at once`,
            'fix the script',
          );
        }
      }
    },
  },
  {
    id: 'sh-pipefail',
    level: 'warning',
    finds: "`set -o pipefail` in a script run by sh: Debian's and Ubuntu's sh (dash) refuses it and ends with 2 (Alpine's takes it)",
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.jobs) {
          const outcome = container.script?.facts.outcome;
          const refused = [...(outcome?.success ?? []), ...(outcome?.failure ?? [])].find((path) => path.refused !== undefined)?.refused;
          if (refused === undefined) continue;
          report(
            scriptLine(container, refused.row, refused.column),
            `container ${container.name}: in an image whose sh is Debian's or Ubuntu's (dash, which has no pipefail) the script stops here with status 2, ` +
              "so nothing after it runs, the quit neither (Alpine's and busybox's sh take it)",
            'run the script with bash, or drop pipefail',
          );
        }
      }
    },
  },
  {
    id: 'bashism-under-sh',
    level: 'error',
    finds:
      "a construct of bash's in a script that dash or busybox's ash runs (as sh): a syntax error, command not found, or a fatal error there; a warning where it changes neither the quit nor the status",
    inject: 'refuse',
    refuses:
      "the script's own shell ends it otherwise than bash would, which a wrapper does not change: run it with bash or write the POSIX form, then --inject",
    check: ({ pods }, report) => {
      for (const pod of pods) {
        for (const container of pod.jobs) {
          const script = container.script;
          const constructs = script?.facts.constructs;
          if (script === undefined || constructs === undefined) continue;
          const said = new Set<string>();
          for (const { id, place } of constructs.found) {
            if (said.has(id)) continue;
            said.add(id);
            report(
              scriptLine(container, place.row, place.column),
              `container ${container.name}: ${constructMessage(id, script.shell, String(script.node.value))}${
                constructs.changes ? ', which changes what the script tells the sidecar or the status it ends with' : ''
              }`,
              `${CONSTRUCTS[id].fix}, or run the script with bash (bash -c)`,
              constructs.changes ? 'error' : 'warning',
            );
          }
        }
      }
    },
  },
  {
    id: 'pod-failure-policy-container',
    level: 'warning',
    finds: "a podFailurePolicy that the sidecar's exit codes can trip",
    check: ({ pods }, report) => {
      for (const pod of pods)
        if (pod.workload.kind !== 'Pod' && pod.sidecars.some((sidecar) => sidecar.form === 'classic')) podFailurePolicy(pod, report);
    },
  },
  {
    id: 'exit-on-zero-connections',
    level: 'warning',
    finds: 'EXIT_ON_ZERO_ACTIVE_CONNECTIONS: nothing sends the proxy its TERM',
    advises: true,
    inject: 'setting',
    check: ({ pods }, report) => {
      for (const pod of pods) exitOnZero(pod, report);
    },
  },
  {
    id: 'hand-rolled-quit',
    level: 'info',
    finds: 'a quit the script sends itself that works, without a wait for readiness with retries before the job',
    advises: true,
    inject: 'script',
    check: ({ pods }, report) => {
      for (const pod of pods) for (const { line, problem } of handRolledAdvice(pod)) report(line, problem, WRAP);
    },
  },
] as const satisfies readonly Rule[];

export type RuleId = (typeof ROWS)[number]['id'];

/** Each rule's row as data (RuleSummary), by id, in the order of the rows. */
export const RULE_SUMMARIES = Object.fromEntries(
  (ROWS as readonly Rule[]).map(({ id, level, finds, advises, inject, refuses }) => [
    id,
    { level, finds, advises: advises === true, ...(inject === undefined ? {} : { inject }), ...(refuses === undefined ? {} : { refuses }) },
  ]),
) as Record<RuleId, RuleSummary>;

export interface CheckSettings {
  readonly namespaces: InjectedNamespaces;
  /** The namespace of objects that name none. */
  readonly namespace?: string;
  /** The cluster as stated (--kubernetes, --mesh, the config file); undefined: none. */
  readonly profile?: Profile;
}

/** Every finding of one parsed file, in the order of its lines (each once); PODS: its workloads' pods, read already. */
export function check(
  source: Source,
  settings: CheckSettings = { namespaces: new Map() },
  pods: readonly Pod[] = workloads(source).map((workload) => readPod(workload, settings.namespaces, settings.namespace, settings.profile)),
): Finding[] {
  const findings: Finding[] = [];
  const seen = new Set<string>();
  const { profile } = settings;
  for (const row of ROWS as readonly Rule[]) {
    row.check({ source, pods, ...(profile === undefined ? {} : { profile }) }, (at, problem, instead, level = row.level) => {
      const line = typeof at === 'number' ? at : lineOf(source, at as Node | Pair);
      const key = `${line}\0${row.id}\0${problem}\0${instead}`;
      if (seen.has(key)) return;
      seen.add(key);
      const column = typeof at === 'number' ? undefined : columnOf(source, at as Node | Pair);
      findings.push({
        line,
        ...(column === undefined ? {} : { column }),
        level,
        rule: row.id as RuleId,
        problem,
        ...(instead === undefined ? {} : { instead }),
        ...(row.joins === undefined ? {} : { joins: row.joins }),
        advisesInject: row.advises === true,
      });
    });
  }
  // Advice gives way to a problem: an info finding on a line that has an error or a warning is not said.
  const faulted = new Set(findings.filter((finding) => finding.level !== 'info').map((finding) => finding.line));
  const moot = profile === undefined ? new Set<number>() : nativeOnlyLines(source, pods);
  return findings
    .filter((finding) => finding.level !== 'info' || !faulted.has(finding.line))
    .filter((finding) => !(moot.has(finding.line) && NATIVE_MOOT.includes(finding.rule)))
    .sort((a, b) => a.line - b.line);
}
