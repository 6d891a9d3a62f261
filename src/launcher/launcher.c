/*
 * The launcher of the portable bundle, and the init in front of the wrapper.
 *
 * The bundle is this static program and, beside it, istio-job-run.lib/: the single executable with the C
 * libraries it needs and their loader. An ELF's loader path is fixed, so it cannot follow the path a volume
 * is mounted at; this program finds its own directory and starts the executable through the bundled loader:
 *
 *   istio-job-run.lib/<loader> --argv0 <this file> --library-path istio-job-run.lib istio-job-run.lib/istio-job-run ARGS
 *
 * It does not exec in place: it stays in front of Node for the whole run, because Node cannot own its own
 * first milliseconds, its signal dispositions or what its runtime reads from the environment, and because
 * Node may die (the out-of-memory killer's likeliest victim in a small pod) while the job's outcome and the
 * sidecar's quit still matter:
 *
 *   1. Take every signal back to its default action (a parent may leave SIGCHLD ignored across exec), then
 *      block them all: they are queued even for PID 1 and read from a signalfd, never delivered. Make fds 0-2
 *      valid, so nothing this program opens can land there.
 *   2. Start the wrapper (Node) with the environment cleaned of what belongs to the job (LD_*, NODE_*, ...), its
 *      soft limits raised to the hard ones, the signals it has no use for ignored (one sent to a group it shares
 *      must not end it), its stderr a pipe of ours, and a socket pair as the channel: another
 *      process cannot open it through /proc, so no line is forged. As PID 1 or without a terminal it gets a
 *      process group of its own (a terminal's keys never reach its first milliseconds, a signal to our group
 *      reaches it only through us); on a terminal otherwise it shares ours, so a shell's job control stops and
 *      continues it with us.
 *   3. Pass signals on at the source: while the command runs, each one it would get alone goes to it as soon as
 *      it is read here, then the wrapper is told (`passed`); the rule is the wrapper's own, generated. Before
 *      the command runs and after it ended, every signal goes to the wrapper (`sig`), with whether the kernel
 *      sent it, and the wrapper decides: a stop request ends the wait, or reaches a command asked for but not
 *      yet started. Those the command sent are neither (it has them, or the kernel spared it). A fault signal
 *      (SEGV, ABRT...) another process sent is one like the others; one it did not ends this program, as it would
 *      have without the block. The wrapper
 *      reads them once its own handlers exist. It asks for the command to run, for signals to be sent to it,
 *      says its log format, its quit plan (each sidecar's quit endpoint as it parsed it, the policy and the
 *      bounds) and its exit code, in lines of at most MAX_LINE_BYTES. Its log lines are written on to stderr,
 *      and dropped rather than block. A stopped wrapper is continued.
 *   4. Run the command when asked: its original argv and environment byte for byte, this program's own
 *      cwd, stdio, signal mask, ignored signals (but SIGCHLD) and limits, in a process group of its own (but as
 *      PID 1 on a terminal), on the terminal's foreground if we had it. Report how it ended to the wrapper.
 *      When it stops for the terminal (Ctrl-Z, a background read), this program stops the same way, so the
 *      shell sees its job stopped; continued, it continues the command.
 *   5. Reap every child (orphans included). Once the command is reaped its status is the exit code; the
 *      wrapper is stopped once it has said it is done (its own teardown would only cost time).
 *
 * The protocol's verbs and the names shared with the wrapper come from launcher-protocol.h, which
 * scripts/launcher-header.ts writes from src/launcher/protocol.ts.
 *
 * If the wrapper dies before it has said its code, this program carries on alone: a running command runs to
 * its end with the stop requests passed on, and the sidecars of the quit plan (if the wrapper had sent it) are
 * told to quit over plain HTTP, as its policy says. Once the command runs, nothing here exits before it ends.
 */

#include "launcher.h"

/* What the wrapper's runtime would read from the environment: the job's, not the wrapper's. */
static const char *const HELD_FROM_WRAPPER[] = {
    "LD_", "GLIBC_TUNABLES=", "MALLOC_", "NODE_", "UV_", "OPENSSL_", "SSL_CERT_", CHANNEL_ENV "=", NULL,
};

/* A wrapper that has not said hello by then is stuck (a thread it cannot create, say): it is stopped. */
#ifndef HELLO_TIMEOUT_MS
#define HELLO_TIMEOUT_MS 30000
#endif
/* Once the command has ended, the wrapper has its quit timeout and this long more to say its code; a wrapper
 * that stops answering (hung) is then stopped, and the launcher quits the sidecars itself. */
#ifndef FINISH_GRACE_MS
#define FINISH_GRACE_MS 10000
#endif
#define FINISH_WITHOUT_PLAN_MS 30000
/* How often a wrapper that a signal it has no use for ended before its handlers existed is started again. */
#define WRAPPER_RESTARTS 3
/* With nothing else to do, reap anyway this often: the command's end must not depend on SIGCHLD alone. */
#define REAP_EVERY_MS 1000

extern char **environ;

/* Lines to the wrapper, never blocking. A signal that finds no room waits as a count: a standard one once (the
 * kernel merges those too), every instance of a real-time one; apart for each verb, `sig` (the wrapper decides) and
 * `passed` (the launcher passed it on), so a phase change never relabels one. Half of `bytes` stays free for the
 * other lines. */
enum { TO_DECIDE, PASSED, SIGNAL_VERBS };
static const char *const SIGNAL_VERB[SIGNAL_VERBS] = {TO_WRAPPER_SIGNAL, TO_WRAPPER_PASSED};
static struct {
    char bytes[8192];
    size_t length;
    unsigned pending[SIGNAL_VERBS][SIGNALS + 1];
    char pending_kind[SIGNAL_VERBS][SIGNALS + 1];
    unsigned long long waiting; /* the sum of pending */
} out;

/* Bytes from the wrapper, up to the next newline: a line is at most MAX_LINE_BYTES, its newline included. A longer
 * one is discarded through its newline (`discarding`), never read as lines of its own. */
static struct {
    char bytes[MAX_LINE_BYTES];
    size_t length;
    int discarding;
} in;

/* The raw system calls: a C library hides some real-time signals from sigprocmask and sigaction. */
static int set_mask(int how, const sigset_t *set, sigset_t *old) {
    return (int)syscall(SYS_rt_sigprocmask, how, set, old, SIGNALS / 8);
}

struct kernel_sigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    unsigned long long mask;
};

static int set_disposition(int signo, void (*handler)(int), void (**old)(int)) {
    struct kernel_sigaction action = {.handler = handler}, previous;
    if (syscall(SYS_rt_sigaction, signo, &action, &previous, SIGNALS / 8) != 0) return -1;
    if (old != NULL) *old = previous.handler;
    return 0;
}

/* Every signal (the kernel leaves KILL and STOP unblocked), the faults too: one another process sent is read from
 * the signalfd like any other, while a real fault of this program's own is delivered by the kernel all the same (it
 * unblocks it), and ends it by its default action. */
static void fill_blockable(sigset_t *set) {
    memset(set, 0, sizeof *set);
    unsigned long long bits = ~0ULL;
    memcpy(set, &bits, sizeof bits);
}

/* SIGCHLD first: ignored, the kernel would reap the command itself and its end would never be known. */
static void take_signals(sigset_t *blockable) {
    void (*previous)(int);
    if (set_disposition(SIGCHLD, SIG_DFL, &previous) != 0) fail("cannot reset SIGCHLD (rt_sigaction): %s", strerror(errno));
    given.ignored[SIGCHLD] = 0;
    for (int signo = 1; signo <= SIGNALS; signo++) {
        if (signo == SIGKILL || signo == SIGSTOP || signo == SIGCHLD) continue;
        if (set_disposition(signo, SIG_DFL, &previous) == 0) given.ignored[signo] = previous == SIG_IGN;
    }
    fill_blockable(blockable);
    if (set_mask(SIG_BLOCK, blockable, &given.mask) != 0) fail("cannot block signals (rt_sigprocmask): %s", strerror(errno));
}

static int held_from_wrapper(const char *entry) {
    for (const char *const *prefix = HELD_FROM_WRAPPER; *prefix != NULL; prefix++) {
        if (strncmp(entry, *prefix, strlen(*prefix)) == 0) return 1;
    }
    return 0;
}

/* A child's exec failed: tell the parent through the close-on-exec pipe, then end. */
__attribute__((noreturn)) static void report_exec_failure(int pipe_fd, int error) {
    ssize_t ignored = write(pipe_fd, &error, sizeof error);
    (void)ignored;
    _exit(EXIT_FAILED);
}

/* Waits for one child to end; -1, having said why, if it cannot. */
static int wait_for(pid_t pid, int *status) {
    while (waitpid(pid, status, 0) != pid) {
        if (errno == EINTR) continue;
        say("warn", "cannot wait for pid %d (waitpid): %s", (int)pid, strerror(errno));
        return -1;
    }
    return 0;
}

/* 0 once the child has exec'd (the pipe closed empty), else its errno. */
static int exec_result(int pipe_fd) {
    int error = 0;
    ssize_t n;
    do n = read(pipe_fd, &error, sizeof error);
    while (n < 0 && errno == EINTR);
    close(pipe_fd);
    return n == (ssize_t)sizeof error ? error : 0;
}

static void set_nonblocking(int fd, const char *what) {
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) fail("cannot make %s non-blocking (fcntl): %s", what, strerror(errno));
}

/* The argv the wrapper is started with: the bundled loader running the executable, then our arguments. */
static char **wrapper_argv(void) {
    char **args = calloc((size_t)given.argc + 8, sizeof *args);
    if (args == NULL) fail("cannot start the wrapper (calloc): %s", strerror(errno));
    int n = 0;
#ifdef TEST_WRAPPER
    /* Tests only (test/unit/launcher/): a stand-in wrapper, a list of string literals; never in a bundle. */
    static const char *const stand_in[] = {TEST_WRAPPER};
    for (size_t i = 0; i < sizeof stand_in / sizeof *stand_in; i++) args[n++] = (char *)stand_in[i];
#else
    static char lib[PATH_MAX], loader[PATH_MAX], program[PATH_MAX];
    size_t dir_length = (size_t)(strrchr(given.self, '/') - given.self);
    if (snprintf(lib, sizeof lib, "%.*s/%s", (int)dir_length, given.self, LIB_DIR) >= (int)sizeof lib ||
        snprintf(loader, sizeof loader, "%s/%s", lib, LOADER) >= (int)sizeof loader ||
        snprintf(program, sizeof program, "%s/%s", lib, PROGRAM) >= (int)sizeof program) {
        fail("path too long: %s", given.self);
    }
    args[n++] = loader;
    args[n++] = "--argv0";
    args[n++] = given.self;
    args[n++] = "--library-path";
    args[n++] = lib;
    args[n++] = program;
#endif
    for (int i = 1; i < given.argc; i++) args[n++] = given.argv[i];
    return args;
}

/* What the wrapper takes from nobody directly, ignored before any can reach it: one sent to a process group it
 * shares would end it for nothing. Node's start-up takes 1-31 back to their default action, and its handlers then
 * hold them; from 32 up they stay ignored (Node can take none of those, the real-time signals). */
static int ignore_unused(void) {
    for (int signo = 1; signo <= SIGNALS; signo++) {
        if (IGNORED_BY_WRAPPER(signo) && set_disposition(signo, SIG_IGN, NULL) != 0) return -1;
    }
    return 0;
}

static void start_wrapper(void) {
    char **args = wrapper_argv();
    size_t env_count = 0;
    for (char **e = environ; *e != NULL; e++) env_count++;
    char **env = calloc(env_count + 2, sizeof *env);
    if (env == NULL) fail("cannot start the wrapper (calloc): %s", strerror(errno));

    int channel[2], log[2], exec_pipe[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0)
        fail("cannot start the wrapper (socketpair): %s", strerror(errno));
    if (pipe2(log, O_CLOEXEC) != 0 || pipe2(exec_pipe, O_CLOEXEC) != 0) fail("cannot start the wrapper (pipe2): %s", strerror(errno));
    static char channel_entry[64];
    snprintf(channel_entry, sizeof channel_entry, "%s=%d", CHANNEL_ENV, channel[1]);
    set_nonblocking(log[1], "the wrapper's stderr"); /* its log writes never wait: a line that does not fit is dropped */
    size_t kept = 0;
    for (char **e = environ; *e != NULL; e++) {
        if (!held_from_wrapper(*e)) env[kept++] = *e;
    }
    env[kept++] = channel_entry;

    pid_t pid = fork();
    if (pid < 0) fail("cannot start the wrapper (fork): %s", strerror(errno));
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        /* As PID 1, a group of its own: a terminal's keys reach the command, never the wrapper's first milliseconds.
         * Without a terminal too: a signal sent to our group (coreutils timeout's, a parent's kill 0) reaches this
         * program alone, which passes it on or tells the wrapper; a fault signal would end Node, whose start-up
         * takes back every mask and whose handler would hold a real fault for good. On a terminal, ours, so a
         * shell's job control stops and continues it with us, and it writes --help and --version from the
         * terminal's foreground group (a background one stops for it under stty tostop). */
        if (((given.pid1 || given.tty < 0) && setpgid(0, 0) != 0) || dup2(log[1], 2) < 0 || fcntl(channel[1], F_SETFD, 0) != 0 ||
            ignore_unused() != 0 || set_mask(SIG_SETMASK, &none, NULL) != 0) {
            report_exec_failure(exec_pipe[1], errno);
        }
        execve(args[0], args, env);
        report_exec_failure(exec_pipe[1], errno);
    }
    wrapper.pid = pid;
    close(exec_pipe[1]);
    close(channel[1]);
    close(log[1]);
    int error = exec_result(exec_pipe[0]);
    if (error != 0) {
        wait_for(pid, &wrapper.status);
        wrapper.ended = 1;
        fail("cannot start %s: %s", args[0], strerror(error));
    }
    wrapper.channel = channel[0];
    wrapper.log = log[0];
    set_nonblocking(wrapper.channel, "the channel to the wrapper");
    set_nonblocking(wrapper.log, "the wrapper's stderr");
    wrapper.deadline = now_ms() + HELLO_TIMEOUT_MS;
    free(args);
    free(env);
}

/* Lines to the wrapper: never blocking; what cannot be written now waits in `out`, then the signals counted. */
static void flush_to_wrapper(void) {
    /* None before it said hello: a wrapper started again (restart_wrapper) is told every one. */
    while (wrapper.channel >= 0 && wrapper.said_hello) {
        while (out.length > 0) {
            ssize_t n = send(wrapper.channel, out.bytes, out.length, MSG_NOSIGNAL);
            if (n <= 0) {
                if (n < 0 && errno == EINTR) continue;
                if (n < 0 && errno != EAGAIN) out.length = 0; /* the wrapper is gone */
                return;
            }
            memmove(out.bytes, out.bytes + n, out.length - (size_t)n);
            out.length -= (size_t)n;
        }
        if (out.waiting == 0) return;
        for (int verb = 0; verb < SIGNAL_VERBS; verb++) {
            for (int signo = 1; signo <= SIGNALS; signo++) {
                while (out.pending[verb][signo] > 0 && out.length < sizeof out.bytes / 2) {
                    int n = snprintf(out.bytes + out.length, sizeof out.bytes - out.length, "%s %d %c\n", SIGNAL_VERB[verb], signo,
                                     out.pending_kind[verb][signo]);
                    out.length += (size_t)n;
                    out.pending[verb][signo]--;
                    out.waiting--;
                }
            }
        }
    }
}

__attribute__((format(printf, 1, 2))) static void tell_wrapper(const char *format, ...) {
    if (wrapper.done || wrapper.channel < 0) return;
    char line[128];
    va_list args;
    va_start(args, format);
    int length = vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (length > 0 && out.length + (size_t)length <= sizeof out.bytes) {
        memcpy(out.bytes + out.length, line, (size_t)length);
        out.length += (size_t)length;
    }
    flush_to_wrapper();
}

/* Whether another process sent this (kill, sigqueue, tgkill: si_code SI_USER or below, as the kernel's SI_FROMUSER
 * reads it), not the kernel, nor this program itself. As PID 1, one from outside the namespace has pid 0. */
static int sent_by_another(const struct signalfd_siginfo *info) {
    int own = (pid_t)info->ssi_pid == getpid() && (info->ssi_code == SI_USER || info->ssi_code == SI_TKILL);
    return info->ssi_code <= SI_USER && !own;
}

/* A fault this program did not get from another process: its own, as the kernel would have ended it without the
 * block (a synchronous fault never comes here: the kernel delivers it at once). Taken back to its default action and
 * let through; as PID 1 the kernel drops it, as it always did. */
static void end_of_own_fault(int signo) {
    flush_log(LOG_FLUSH_MS);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signo);
    if (set_disposition(signo, SIG_DFL, NULL) != 0 || kill(getpid(), signo) != 0 || set_mask(SIG_UNBLOCK, &one, NULL) != 0 ||
        set_mask(SIG_BLOCK, &one, NULL) != 0) {
        say("warn", "cannot end with signal %d: %s", signo, strerror(errno));
    }
}

/* Fault signals another process sent this program: on a terminal the wrapper shares our group and gets them too, and
 * dies of one (Node takes none), which is then no crash of its own. */
static int sent_faults[SIGNALS + 1];

/* Whether the command itself sent this: a broadcast or group signal (kill -1, kill 0) it already has, or never got. */
static int sent_by_command(const struct signalfd_siginfo *info) {
    return command.running && info->ssi_code == SI_USER && (pid_t)info->ssi_pid == command.pid;
}

/* A manifest tool (it said `tool`) is ended by TERM, INT or HUP: sent to it as the signal itself, whose default
 * action ends it even in the middle of synchronous work; finish() then exits with 128+N. */
static void end_tool(int signo) {
    if (wrapper.ended || wrapper.done) return;
    if (kill(wrapper.pid, signo) != 0 && errno != ESRCH)
        say("warn", "cannot pass signal %d on to the wrapper (kill): %s", signo, strerror(errno));
}

/* While the command runs, a signal it would get alone goes to it at once, as read: the same instances, in the same
 * order, whatever the wrapper is doing (PASSES_WHILE_RUNNING, generated from the wrapper's own rule). */
static int pass_to_command(const struct signalfd_siginfo *info) {
    int signo = (int)info->ssi_signo;
    if (!command.running || !PASSES_WHILE_RUNNING(signo, info->ssi_code == SI_KERNEL)) return 0;
    if (kill(command.pid, signo) != 0 && errno != ESRCH)
        say("warn", "cannot pass signal %d on to the command (kill): %s", signo, strerror(errno));
    return 1;
}

/* Every signal read: passed on to a running command, or left to the wrapper to decide (before the command runs, after
 * it ended, or one the command does not get); either way the wrapper is told. */
static void relay_signal(const struct signalfd_siginfo *info) {
    int signo = (int)info->ssi_signo;
    if (signo < 1 || signo > SIGNALS || signo == SIGPIPE) return; /* SIGPIPE: our own write to a closed pipe */
    if (IS_FAULT(signo) && !sent_by_another(info)) {
        end_of_own_fault(signo);
        return;
    }
    if (IS_FAULT(signo)) sent_faults[signo] = 1;
    if (sent_by_command(info)) return;
    char kind = info->ssi_code == SI_KERNEL ? SENT_BY_KERNEL : SENT_BY_PROCESS;
    if (kind == SENT_BY_KERNEL && IS_FROM_TERMINAL(signo)) wrapper.typed[signo] = 1;
    if (wrapper.tool) {
        if (IS_ENDS_TOOL(signo)) end_tool(signo);
        return;
    }
    if (IS_ENDS_TOOL(signo)) wrapper.stop_relayed = signo;
    int verb = pass_to_command(info) ? PASSED : TO_DECIDE;
    if (wrapper.done || wrapper.channel < 0) return;
    if (out.length > sizeof out.bytes / 2 || out.waiting > 0) {
        if (signo >= FIRST_QUEUED || out.pending[verb][signo] == 0) {
            out.pending[verb][signo]++;
            out.waiting++;
        }
        out.pending_kind[verb][signo] = kind;
        return;
    }
    tell_wrapper("%s %d %c\n", SIGNAL_VERB[verb], signo, kind);
}

/* A PATH search like the one Node's spawn made: no shell for ENOEXEC, EACCES only if nothing else ran. */
__attribute__((noreturn)) static void exec_command(char **argv, int report) {
    const char *file = argv[0];
    if (file[0] == '\0') report_exec_failure(report, ENOENT);
    if (strchr(file, '/') != NULL) {
        execve(file, argv, environ);
        report_exec_failure(report, errno);
    }
    const char *path = getenv("PATH");
    if (path == NULL) path = "/usr/bin:/bin";
    int seen_eacces = 0;
    char candidate[PATH_MAX];
    for (const char *start = path;; start++) {
        const char *end = strchrnul(start, ':');
        int length = (int)(end - start);
        if (snprintf(candidate, sizeof candidate, "%.*s%s%s", length, start, length > 0 ? "/" : "", file) < (int)sizeof candidate) {
            execve(candidate, argv, environ);
            if (errno == EACCES) seen_eacces = 1;
            else if (errno != ENOENT && errno != ENOTDIR) report_exec_failure(report, errno);
        }
        if (*end == '\0') break;
        start = end;
    }
    report_exec_failure(report, seen_eacces ? EACCES : ENOENT);
}

/* What the command gets back from before this program: limits, ignored signals, mask, closed fds. */
static int restore_given(void) {
    for (size_t i = 0; i < RAISED_COUNT; i++) {
        if (setrlimit(RAISED[i], &given.limits[RAISED[i]]) != 0) return -1;
    }
    for (int signo = 1; signo <= SIGNALS; signo++) {
        if (given.ignored[signo] && set_disposition(signo, SIG_IGN, NULL) != 0) return -1;
    }
    for (int fd = 0; fd <= 2; fd++) {
        if (given.closed[fd]) close(fd);
    }
    return set_mask(SIG_SETMASK, &given.mask, NULL);
}

/* Whether the command leads a process group of its own, as a shell's job does: its `kill 0` and `kill -- -$$`
 * reach its own, and a signal to our group reaches it once, passed on. As PID 1 on a terminal it shares ours. */
static int command_own_group(void) {
    return !(given.pid1 && given.tty >= 0);
}

/* The command: its own argv and environment, our cwd, stdio, and what we were given. */
static void run_command(long count) {
    if (command.pid != 0 || count < 1 || count >= given.argc) {
        tell_wrapper("%s %d\n", TO_WRAPPER_FAILED, EINVAL);
        return;
    }
    int exec_pipe[2];
    if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
        tell_wrapper("%s %d\n", TO_WRAPPER_FAILED, errno);
        return;
    }
    /* On the terminal's foreground, the command takes it: its keys and reads are the command's. */
    int foreground = command_own_group() && given.tty >= 0 && tcgetpgrp(given.tty) == getpgrp();
    pid_t pid = fork();
    if (pid == 0) {
        /* Every signal is still blocked here: tcsetpgrp from what becomes a background group raises no SIGTTOU. */
        if (command_own_group() && setpgid(0, 0) != 0) report_exec_failure(exec_pipe[1], errno);
        if (foreground && tcsetpgrp(given.tty, getpid()) != 0) report_exec_failure(exec_pipe[1], errno);
        if (restore_given() != 0) report_exec_failure(exec_pipe[1], errno);
        exec_command(given.argv + (given.argc - count), exec_pipe[1]);
    }
    int fork_error = errno;
    close(exec_pipe[1]);
    if (pid < 0) {
        close(exec_pipe[0]);
        tell_wrapper("%s %d\n", TO_WRAPPER_FAILED, fork_error);
        return;
    }
    int error = exec_result(exec_pipe[0]);
    if (error != 0) {
        int status;
        wait_for(pid, &status);
        tell_wrapper("%s %d\n", TO_WRAPPER_FAILED, error);
        return;
    }
    command.pid = pid;
    command.running = 1;
    tell_wrapper("%s %d\n", TO_WRAPPER_STARTED, (int)pid);
}

/* The wrapper is done: it is stopped now, its own teardown would only cost the job time (and can stall). */
static void end_wrapper(int code) {
    wrapper.declared = code;
    wrapper.done = 1;
    if (!wrapper.ended && kill(wrapper.pid, SIGKILL) != 0 && errno != ESRCH)
        say("warn", "cannot stop the wrapper (kill): %s", strerror(errno));
}

static void handle_wrapper_line(char *line) {
    char *verb = line, *rest = strchr(line, ' ');
    if (rest != NULL) *rest++ = '\0';
    else rest = "";
    if (strcmp(verb, FROM_WRAPPER_RUN) == 0) {
        run_command(strtol(rest, NULL, 10));
    } else if (strcmp(verb, FROM_WRAPPER_KILL) == 0) {
        long signo = strtol(rest, NULL, 10);
        if (command.running && signo >= 1 && signo <= SIGNALS && kill(command.pid, (int)signo) != 0 && errno != ESRCH) {
            say("warn", "cannot send signal %ld to the command (kill): %s", signo, strerror(errno));
        }
    } else if (strcmp(verb, FROM_WRAPPER_TOOL) == 0) {
        wrapper.said_hello = 1;
        wrapper.tool = 1;
        if (!command.ended) wrapper.deadline = 0;
        if (wrapper.stop_relayed != 0) end_tool(wrapper.stop_relayed); /* a line it will never read */
    } else if (strcmp(verb, FROM_WRAPPER_HELLO) == 0) {
        wrapper.said_hello = 1;
        if (!command.ended) wrapper.deadline = 0;
    } else if (strcmp(verb, FROM_WRAPPER_LOG) == 0) {
        log_out.json = strcmp(rest, LOG_JSON) == 0;
    } else if (strcmp(verb, FROM_WRAPPER_TARGET) == 0) {
        read_target(rest);
    } else if (strcmp(verb, FROM_WRAPPER_QUIT) == 0) {
        read_plan(rest);
    } else if (strcmp(verb, FROM_WRAPPER_EXIT) == 0) {
        end_wrapper((int)strtol(rest, NULL, 10) & 0xff);
    }
}

static void read_from_wrapper(void) {
    while (wrapper.channel >= 0 && !wrapper.done) {
        ssize_t n = read(wrapper.channel, in.bytes + in.length, sizeof in.bytes - in.length);
        if (n <= 0) {
            if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                close(wrapper.channel);
                wrapper.channel = -1;
            }
            return;
        }
        in.length += (size_t)n;
        char *newline;
        while (!wrapper.done && (newline = memchr(in.bytes, '\n', in.length)) != NULL) {
            *newline = '\0';
            if (!in.discarding) handle_wrapper_line(in.bytes);
            in.discarding = 0; /* the newline that ends a line too long: the next one is whole */
            size_t used = (size_t)(newline - in.bytes) + 1;
            memmove(in.bytes, in.bytes + used, in.length - used);
            in.length -= used;
        }
        /* Full without a newline: the line is longer than the protocol allows. Its rest, through its newline, is
         * dropped too, never read as a line. */
        if (in.length == sizeof in.bytes) {
            if (!in.discarding) {
                say("warn", "a line from the wrapper was longer than %d bytes (the protocol's longest): discarded", MAX_LINE_BYTES);
            }
            in.discarding = 1;
            in.length = 0;
        }
    }
}

static void read_wrapper_log(void) {
    char chunk[4096];
    while (wrapper.log >= 0) {
        ssize_t n = read(wrapper.log, chunk, sizeof chunk);
        if (n <= 0) {
            if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                close(wrapper.log);
                wrapper.log = -1;
            }
            return;
        }
        add_log(chunk, (size_t)n);
    }
}

/* Node's start-up takes 1-31 back to their default action a moment before its handlers exist: one it has no use
 * for, sent to a group it shares in that moment, ends it before it has said or done anything. It is started again
 * (a few times at most), and then told every signal relayed so far. */
static int restart_wrapper(void) {
    static int restarts;
    int signo = WIFSIGNALED(wrapper.status) ? WTERMSIG(wrapper.status) : 0;
    if (wrapper.said_hello || !IGNORED_BY_WRAPPER(signo) || restarts >= WRAPPER_RESTARTS) return 0;
    restarts++;
    read_wrapper_log();
    if (wrapper.log >= 0) close(wrapper.log);
    if (wrapper.channel >= 0) close(wrapper.channel);
    in.length = 0;
    in.discarding = 0;
    struct wrapper before = wrapper;
    wrapper = (struct wrapper){.channel = -1, .log = -1, .declared = -1, .stop_relayed = before.stop_relayed};
    memcpy(wrapper.typed, before.typed, sizeof wrapper.typed);
    start_wrapper();
    return 1;
}

/* Started by a shell with job control: its parent is in its session but leads another group (the shell's). */
static int under_job_control(void) {
    pid_t parent = getppid();
    return !given.pid1 && getsid(parent) == getsid(0) && getpgid(parent) != getpgrp();
}

/* The command (or the wrapper, before it) stopped for the terminal: Ctrl-Z, a read or write from the
 * background. This program stops the same way, so the shell sees its job stopped and gets its prompt; once
 * continued (fg, bg) it continues the command, on the terminal's foreground if the shell gave it back. */
static void suspend_job(int signo) {
    if (given.tty >= 0 && command.running && tcgetpgrp(given.tty) == command.pid && tcsetpgrp(given.tty, getpgrp()) != 0) {
        say("warn", "cannot take the terminal back (tcsetpgrp): %s", strerror(errno));
    }
    flush_log(LOG_FLUSH_MS);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signo);
    /* Sent to itself and let through for a moment: its default action stops this process here. */
    if (kill(getpid(), signo) != 0 || set_mask(SIG_UNBLOCK, &one, NULL) != 0 || set_mask(SIG_BLOCK, &one, NULL) != 0) {
        say("warn", "cannot stop with the job (%s): %s", "kill", strerror(errno));
    }
    if (!wrapper.ended && kill(wrapper.pid, SIGCONT) != 0) say("warn", "cannot continue the wrapper (kill): %s", strerror(errno));
    if (!command.running) return;
    if (given.tty >= 0 && tcgetpgrp(given.tty) == getpgrp() && tcsetpgrp(given.tty, command.pid) != 0) {
        say("warn", "cannot give the terminal to the command (tcsetpgrp): %s", strerror(errno));
    }
    if (kill(command_own_group() ? -command.pid : command.pid, SIGCONT) != 0) {
        say("warn", "cannot continue the command (kill): %s", strerror(errno));
    }
}

/* Every child that ended (orphans too); a stopped wrapper is continued: nothing of the job may stop it for good. */
static void reap(void) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0) {
        if (WIFSTOPPED(status)) {
            int signo = WSTOPSIG(status);
            int job_control = signo == SIGTSTP || signo == SIGTTIN || signo == SIGTTOU;
            if (job_control && (pid == command.pid || pid == wrapper.pid) && under_job_control()) {
                suspend_job(signo);
            } else if (pid == wrapper.pid && kill(wrapper.pid, SIGCONT) != 0) {
                say("warn", "cannot continue the stopped wrapper (kill): %s", strerror(errno));
            }
            continue;
        }
        if (pid == command.pid && command.running) {
            command.running = 0;
            command.ended = 1;
            command.code = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
            wrapper.deadline = now_ms() + (plan.known ? plan.timeout_ms + FINISH_GRACE_MS : FINISH_WITHOUT_PLAN_MS);
            /* The terminal back to our group, which the shell gave it to: the command's group is gone. */
            if (given.tty >= 0 && tcgetpgrp(given.tty) == pid && tcsetpgrp(given.tty, getpgrp()) != 0) {
                say("warn", "cannot take the terminal back (tcsetpgrp): %s", strerror(errno));
            }
            if (WIFSIGNALED(status)) tell_wrapper("%s %d\n", TO_WRAPPER_SIGNALED, WTERMSIG(status));
            else tell_wrapper("%s %d\n", TO_WRAPPER_EXITED, WEXITSTATUS(status));
        } else if (pid == wrapper.pid) {
            wrapper.status = status;
            wrapper.ended = 1;
        }
    }
}

static void read_signals(int signal_fd) {
    struct signalfd_siginfo info;
    while (read(signal_fd, &info, sizeof info) == (ssize_t)sizeof info) {
        if (info.ssi_signo == SIGCHLD) reap();
        else relay_signal(&info);
    }
}

/* The wrapper died of a key typed at the terminal (before its handlers existed): the job was interrupted. */
static int wrapper_interrupted(void) {
    return WIFSIGNALED(wrapper.status) && WTERMSIG(wrapper.status) <= SIGNALS && wrapper.typed[WTERMSIG(wrapper.status)];
}

/* How the wrapper ended, for the line that says it did not finish. */
static void describe_wrapper_end(char *text, size_t size, long long oom_before) {
    if (WIFEXITED(wrapper.status)) {
        snprintf(text, size, "exited with %d", WEXITSTATUS(wrapper.status));
        return;
    }
    int signo = WTERMSIG(wrapper.status);
    int crashed = signo == SIGSEGV || signo == SIGBUS || signo == SIGABRT || signo == SIGTRAP || signo == SIGILL || signo == SIGFPE;
    const char *why = "";
    if (signo == SIGKILL) {
        long long oom_after = oom_kills();
        if (oom_before >= 0 && oom_after > oom_before) why = " (the kernel's out-of-memory killer: raise the memory limit)";
    } else if (signo <= SIGNALS && sent_faults[signo]) {
        why = ", which another process sent to the launcher's process group";
    } else if (crashed) {
        why = "; too small a limit on memory, pids or open files does this";
    } else if (wrapper_interrupted()) {
        why = " from the terminal";
    }
    snprintf(text, size, "died of signal %d (%s)%s", signo, strsignal(signo), why);
}

/* The wrapper died while the command runs: wait for its end alone, passing its signals on. Returns once it ended. */
static void outlive_wrapper(int signal_fd) {
    say("error", "the wrapper ended while the command runs; waiting for the command (pid %d) alone", (int)command.pid);
    while (command.running) {
        struct pollfd p = {.fd = signal_fd, .events = POLLIN};
        if (poll(&p, 1, REAP_EVERY_MS) < 0 && errno != EINTR) {
            say("warn", "cannot wait for signals (poll): %s", strerror(errno));
            struct timespec nap = {.tv_sec = 0, .tv_nsec = 100 * 1000000};
            nanosleep(&nap, NULL);
        }
        read_signals(signal_fd);
        reap();
        flush_log(0);
    }
}

/* The wrapper has ended: the exit code, from the command once it ran, else from the wrapper. */
__attribute__((noreturn)) static void finish(int signal_fd, long long oom_before) {
    if (wrapper.channel >= 0) read_from_wrapper(); /* its last lines: the exit code it said */
    if (wrapper.log >= 0) read_wrapper_log();
    if (!wrapper.ended && wait_for(wrapper.pid, &wrapper.status) != 0) wrapper.status = SIGKILL; /* as good as killed */
    wrapper.ended = 1;
    char why[256];
    describe_wrapper_end(why, sizeof why, oom_before);
    int finished = wrapper.done && wrapper.declared >= 0;
    /* A manifest tool that ended without saying its code has no sidecars: a shell's code for its end (128+N for
     * signal N), said in its own words unless TERM, INT or HUP ended it as asked. */
    if (wrapper.tool && !finished && command.pid == 0) {
        int signaled = WIFSIGNALED(wrapper.status);
        if (!signaled || !IS_ENDS_TOOL(WTERMSIG(wrapper.status))) say("error", "the manifest tool %s", why);
        flush_log(LOG_FLUSH_MS);
        _exit(signaled ? 128 + WTERMSIG(wrapper.status) : WEXITSTATUS(wrapper.status));
    }
    if (command.running) {
        outlive_wrapper(signal_fd);
        last_resort_quit(command.code, why);
    } else if (command.ended && !finished) {
        last_resort_quit(command.code, why);
    } else if (!command.ended && !finished) {
        last_resort_quit(EXIT_FAILED, why);
    }
    /* Reaped orphans do not matter now; the command's status, when it ran, is the code. */
    int code = command.ended           ? command.code
               : finished              ? wrapper.declared
               : wrapper_interrupted() ? 128 + WTERMSIG(wrapper.status)
                                       : EXIT_FAILED;
    flush_log(LOG_FLUSH_MS);
    _exit(code);
}

int main(int argc, char **argv) {
    sigset_t blockable;
    take_signals(&blockable);
    hold_std_fds();
    log_out.json = json_asked_for(argc, argv);
    given.pid1 = getpid() == 1;
    given.tty = isatty(0) ? 0 : isatty(1) ? 1 : isatty(2) ? 2 : -1;
    int signal_fd = signalfd(-1, &blockable, SFD_NONBLOCK | SFD_CLOEXEC);
    given.argc = argc;
    given.argv = argv;
    find_self(argc > 0 ? argv[0] : NULL);
    if (signal_fd < 0) fail("cannot watch signals (signalfd): %s", strerror(errno));
    if (!given.pid1 && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
        say("warn", "cannot become the job's subreaper (prctl): %s; its orphans go to PID 1", strerror(errno));
    }
    raise_limits();
    for_cgroup("pids", pids_room);
    long long oom_before = oom_kills();
    start_wrapper();

    /* From here, once the command runs, no path exits before it ends: finish() waits for it. */
    for (;;) {
        reap();
        if (wrapper.ended && restart_wrapper()) continue;
        if (wrapper.ended || wrapper.done) finish(signal_fd, oom_before);
        if (wrapper.deadline != 0 && now_ms() > wrapper.deadline) {
            if (!wrapper.said_hello) {
                say("error", "the wrapper did not start within %d ms (too few pids or threads allowed, or too little memory?)",
                    HELLO_TIMEOUT_MS);
            } else {
                say("error", "the wrapper did not finish after the command ended: stopping it");
            }
            if (kill(wrapper.pid, SIGKILL) != 0 && errno != ESRCH) say("warn", "cannot stop the wrapper (kill): %s", strerror(errno));
            wrapper.deadline = 0;
        }
        struct pollfd fds[] = {
            {.fd = signal_fd, .events = POLLIN},
            {.fd = wrapper.channel, .events = POLLIN | (out.length > 0 && wrapper.said_hello ? POLLOUT : 0)},
            {.fd = wrapper.log, .events = POLLIN},
            {.fd = log_out.length > 0 ? 2 : -1, .events = POLLOUT},
        };
        int timeout = wrapper.deadline == 0 ? REAP_EVERY_MS : (int)(wrapper.deadline - now_ms() + 1);
        if (poll(fds, sizeof fds / sizeof *fds, timeout < REAP_EVERY_MS ? timeout : REAP_EVERY_MS) < 0 && errno != EINTR) {
            say("warn", "cannot wait (poll): %s", strerror(errno));
            struct timespec nap = {.tv_sec = 0, .tv_nsec = 100 * 1000000};
            nanosleep(&nap, NULL);
        }
        read_signals(signal_fd);
        if (fds[1].revents) read_from_wrapper();
        if (fds[2].revents) read_wrapper_log();
        if (out.length > 0) flush_to_wrapper();
        if (log_out.length > 0) flush_log(0);
    }
}
