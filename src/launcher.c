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
 * first milliseconds, its signal dispositions or what its runtime reads from the environment:
 *
 *   1. Block every signal, first thing. Blocked signals are queued even for PID 1 (the kernel drops only the
 *      ones without a handler), and they are read from a signalfd, never delivered.
 *   2. Start the wrapper (Node) in its own process group, with the environment cleaned of what belongs to the
 *      job (LD_*, NODE_*, ...), its soft limits raised to the hard ones, and its stderr a pipe of ours.
 *   3. Relay: every signal goes to the wrapper over a pipe, with who sent it; the wrapper reads that pipe
 *      once its own handlers exist, and decides. It asks for the command to run, for signals to be sent to
 *      it, and says its exit code. Its log lines are written on to stderr, and dropped rather than block.
 *   4. Run the command when asked: its original argv and environment byte for byte, this program's own
 *      cwd, stdio, signal mask and limits. Report how it ended (a real-time signal too) to the wrapper.
 *   5. Reap every child (orphans included), and exit with the code the wrapper said (it is stopped then:
 *      its own teardown would only cost time).
 *
 * The protocol is text lines. To the wrapper:   sig N k|u PID | started PID | failed ERRNO | exited CODE | signaled N
 *                              From the wrapper: hello (its handlers exist) | run COUNT (the last COUNT arguments
 *                                                are the command) | kill N | exit CODE
 *
 * If the wrapper cannot start, or dies of a signal, one line says why and the exit code is 125 (or, when the
 * command was running, the command's own code once it ends).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef LOADER
#error "LOADER must name the dynamic loader, e.g. -DLOADER=\"ld-linux-x86-64.so.2\""
#endif

#define LIB_DIR "istio-job-run.lib"
#define PROGRAM "istio-job-run"
#define CHANNEL_ENV "ISTIO_JOB_RUN_LAUNCHER"
#define EXIT_FAILED 125

/* What the wrapper's runtime would read from the environment: the job's, not the wrapper's. */
static const char *const HELD_FROM_WRAPPER[] = {
    "LD_", "GLIBC_TUNABLES=", "MALLOC_", "NODE_", "UV_", "OPENSSL_", "SSL_CERT_", CHANNEL_ENV "=", NULL,
};

/* Below these the wrapper cannot start at normal speed (docs/RELIABILITY.md, the floors). */
#define FLOOR_NOFILE 64
#define FLOOR_AS_MIB 1536
#define FLOOR_PIDS 10
/* A wrapper that has not said hello by then is stuck (a thread it cannot create, say): it is stopped. */
#define START_TIMEOUT_MS 30000

/* How long the last log lines may take to be written on. */
#define LOG_FLUSH_MS 100
/* With nothing else to do, reap anyway this often: the command's end must not depend on SIGCHLD alone. */
#define REAP_EVERY_MS 1000

#define SIGNALS 64

static struct {
    char **argv;
    int argc;
    sigset_t original_mask;
    struct rlimit original_nofile, original_as;

    pid_t wrapper, command;
    int wrapper_status, wrapper_done;
    int declared, has_declared, said_hello;

    int to_wrapper, from_wrapper, wrapper_log;
    char out[8192];
    size_t out_length;
    char pending[SIGNALS + 1]; /* signals coalesced while the pipe to the wrapper is full: 'k' or 'u' */

    char in[512];
    size_t in_length;

    char log[65536];
    size_t log_length;
} s;

static long long now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Every signal but KILL and STOP (which cannot be blocked) and the faults of this program itself. */
static void fill_blockable(sigset_t *set) {
    memset(set, 0, sizeof *set);
    unsigned long long bits = ~0ULL;
    const int own_faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT};
    for (size_t i = 0; i < sizeof own_faults / sizeof *own_faults; i++) bits &= ~(1ULL << (own_faults[i] - 1));
    memcpy(set, &bits, sizeof bits);
}

/* The raw system call: a C library hides some real-time signals from sigprocmask. */
static int set_mask(int how, const sigset_t *set, sigset_t *old) {
    return (int)syscall(SYS_rt_sigprocmask, how, set, old, SIGNALS / 8);
}

/* Write to the real stderr only when it can take the bytes now: a log reader that stalls must not stall us. */
static void flush_log(int wait_ms) {
    long long deadline = now_ms() + wait_ms;
    while (s.log_length > 0) {
        struct pollfd p = {.fd = 2, .events = POLLOUT};
        long long left = deadline - now_ms();
        if (poll(&p, 1, left > 0 ? (int)left : 0) != 1 || !(p.revents & POLLOUT)) return;
        size_t chunk = s.log_length < 256 ? s.log_length : 256; /* a tty promises room for 256 */
        ssize_t n = write(2, s.log, chunk);
        if (n <= 0) {
            if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
            s.log_length = 0; /* stderr is closed or broken: nothing more to say */
            return;
        }
        memmove(s.log, s.log + n, s.log_length - (size_t)n);
        s.log_length -= (size_t)n;
    }
}

static void add_log(const char *bytes, size_t length) {
    size_t room = sizeof s.log - s.log_length;
    if (length > room) length = room; /* dropped: never block, never grow */
    memcpy(s.log + s.log_length, bytes, length);
    s.log_length += length;
}

static void say(const char *format, const char *a, const char *b) {
    char line[PATH_MAX + 256];
    int n = snprintf(line, sizeof line, format, a, b);
    if (n > 0) add_log(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    flush_log(LOG_FLUSH_MS);
}

static void fail(const char *what, const char *path) {
    say("istio-job-run: %s %s\n", what, path);
    _exit(EXIT_FAILED);
}

static void fail_errno(const char *what, const char *path) {
    char line[PATH_MAX + 64];
    snprintf(line, sizeof line, "%s: %s", path, strerror(errno));
    fail(what, line);
}

/* This file's absolute path: /proc/self/exe, or argv[0] where /proc is not mounted (a bare chroot). */
static void find_self(const char *argv0, char self[PATH_MAX]) {
    ssize_t n = readlink("/proc/self/exe", self, PATH_MAX - 1);
    if (n > 0) {
        self[n] = '\0';
        return;
    }
    if (argv0 == NULL || strchr(argv0, '/') == NULL || realpath(argv0, self) == NULL) {
        fail("cannot find its own path (mount /proc, or start it by path):", argv0 == NULL ? "" : argv0);
    }
}

/* The wrapper's soft limits up to the hard ones; the command gets the originals back. */
static void raise_limits(void) {
    getrlimit(RLIMIT_NOFILE, &s.original_nofile);
    getrlimit(RLIMIT_AS, &s.original_as);
    struct rlimit nofile = s.original_nofile, as = s.original_as;
    nofile.rlim_cur = nofile.rlim_max;
    as.rlim_cur = as.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
    setrlimit(RLIMIT_AS, &as);
    getrlimit(RLIMIT_NOFILE, &nofile);
    getrlimit(RLIMIT_AS, &as);
    char have[64], need[96];
    if (nofile.rlim_cur != RLIM_INFINITY && nofile.rlim_cur < FLOOR_NOFILE) {
        snprintf(have, sizeof have, "%llu", (unsigned long long)nofile.rlim_cur);
        snprintf(need, sizeof need, "needs at least %d (ulimit -n)", FLOOR_NOFILE);
        say("istio-job-run: the open files limit (RLIMIT_NOFILE) is %s; the wrapper %s\n", have, need);
        _exit(EXIT_FAILED);
    }
    if (as.rlim_cur != RLIM_INFINITY && as.rlim_cur < (rlim_t)FLOOR_AS_MIB << 20) {
        snprintf(have, sizeof have, "%llu MiB", (unsigned long long)(as.rlim_cur >> 20));
        snprintf(need, sizeof need, "needs at least %d MiB (ulimit -v)", FLOOR_AS_MIB);
        say("istio-job-run: the address space limit (RLIMIT_AS) is %s; the wrapper %s\n", have, need);
        _exit(EXIT_FAILED);
    }
}

/* A number from a one-line file such as pids.max; -1 for "max", a missing file or anything else. */
static long long read_number(const char *path) {
    char text[32] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    char *end;
    long long value = n > 0 ? strtoll(text, &end, 10) : -1;
    return n > 0 && end != text && (*end == '\n' || *end == '\0') ? value : -1;
}

/* The pids cgroup (v1 or v2) this process is in must leave room for the wrapper's threads. */
static void check_pids(void) {
    char cgroups[4096] = {0}, dir[PATH_MAX], path[PATH_MAX + 16];
    int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t n = read(fd, cgroups, sizeof cgroups - 1);
    close(fd);
    if (n <= 0) return;
    for (char *line = strtok(cgroups, "\n"); line != NULL; line = strtok(NULL, "\n")) {
        char *controllers = strchr(line, ':'), *where = controllers ? strchr(controllers + 1, ':') : NULL;
        if (where == NULL) continue;
        *where++ = '\0';
        controllers++;
        int v2 = controllers[0] == '\0';
        if (!v2 && strstr(controllers, "pids") == NULL) continue;
        snprintf(dir, sizeof dir, "/sys/fs/cgroup%s%s", v2 ? "" : "/pids", strcmp(where, "/") == 0 ? "" : where);
        snprintf(path, sizeof path, "%s/pids.max", dir);
        long long max = read_number(path);
        snprintf(path, sizeof path, "%s/pids.current", dir);
        long long current = read_number(path);
        if (max < 0 || current < 0 || max - current >= FLOOR_PIDS) continue;
        char have[64], need[64];
        snprintf(have, sizeof have, "%lld with %lld in use", max, current);
        snprintf(need, sizeof need, "needs %d more for its process and threads", FLOOR_PIDS);
        say("istio-job-run: the pids limit (cgroup pids.max) is %s; the wrapper %s\n", have, need);
        _exit(EXIT_FAILED);
    }
}

static int held_from_wrapper(const char *entry) {
    for (const char *const *prefix = HELD_FROM_WRAPPER; *prefix != NULL; prefix++) {
        if (strncmp(entry, *prefix, strlen(*prefix)) == 0) return 1;
    }
    return 0;
}

/* A child's exec failed: tell the parent through the close-on-exec pipe, then end. */
static void report_exec_failure(int pipe_fd, int error) {
    ssize_t ignored = write(pipe_fd, &error, sizeof error);
    (void)ignored;
    _exit(EXIT_FAILED);
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

static void start_wrapper(const char *self) {
    static char lib[PATH_MAX], loader[PATH_MAX], program[PATH_MAX];
    size_t dir_length = (size_t)(strrchr(self, '/') - self);
    if (snprintf(lib, sizeof lib, "%.*s/%s", (int)dir_length, self, LIB_DIR) >= (int)sizeof lib ||
        snprintf(loader, sizeof loader, "%s/%s", lib, LOADER) >= (int)sizeof loader ||
        snprintf(program, sizeof program, "%s/%s", lib, PROGRAM) >= (int)sizeof program) {
        errno = ENAMETOOLONG;
        fail_errno("path too long:", self);
    }

    char **args = calloc((size_t)s.argc + 7, sizeof *args);
    size_t env_count = 0;
    for (char **e = environ; *e != NULL; e++) env_count++;
    char **env = calloc(env_count + 2, sizeof *env);
    if (args == NULL || env == NULL) fail_errno("cannot start", loader);
    int n = 0;
    args[n++] = loader;
    args[n++] = "--argv0";
    args[n++] = (char *)self;
    args[n++] = "--library-path";
    args[n++] = lib;
    args[n++] = program;
    for (int i = 1; i < s.argc; i++) args[n++] = s.argv[i];

    int to[2], from[2], log[2], exec_pipe[2];
    if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0 || pipe2(log, O_CLOEXEC) != 0 ||
        pipe2(exec_pipe, O_CLOEXEC) != 0) {
        fail_errno("cannot start", loader);
    }
    static char channel[64];
    snprintf(channel, sizeof channel, "%s=%d,%d", CHANNEL_ENV, to[0], from[1]);
    fcntl(log[1], F_SETFL, O_NONBLOCK); /* the wrapper's log writes never wait: a line that does not fit is dropped */
    size_t kept = 0;
    for (char **e = environ; *e != NULL; e++) {
        if (!held_from_wrapper(*e)) env[kept++] = *e;
    }
    env[kept++] = channel;

    pid_t pid = fork();
    if (pid < 0) fail_errno("cannot start the wrapper (fork):", loader);
    if (pid == 0) {
        setpgid(0, 0); /* a terminal's keys reach the command, never the wrapper's first milliseconds */
        dup2(log[1], 2);
        fcntl(to[0], F_SETFD, 0);
        fcntl(from[1], F_SETFD, 0);
        set_mask(SIG_SETMASK, &s.original_mask, NULL);
        execve(loader, args, env);
        report_exec_failure(exec_pipe[1], errno);
    }
    close(exec_pipe[1]);
    close(to[0]);
    close(from[1]);
    close(log[1]);
    int error = exec_result(exec_pipe[0]);
    if (error != 0) {
        errno = error;
        fail_errno("cannot start", loader);
    }
    s.wrapper = pid;
    s.to_wrapper = to[1];
    s.from_wrapper = from[0];
    s.wrapper_log = log[0];
    fcntl(s.to_wrapper, F_SETFL, O_NONBLOCK);
    fcntl(s.from_wrapper, F_SETFL, O_NONBLOCK);
    fcntl(s.wrapper_log, F_SETFL, O_NONBLOCK);
    free(args);
    free(env);
}

/* Lines to the wrapper: never blocking; a signal that finds the pipe full is coalesced with its kind. */
static void flush_to_wrapper(void) {
    while (s.out_length > 0 && !s.wrapper_done) {
        ssize_t n = write(s.to_wrapper, s.out, s.out_length);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && errno != EAGAIN) s.out_length = 0; /* the wrapper is gone */
            return;
        }
        memmove(s.out, s.out + n, s.out_length - (size_t)n);
        s.out_length -= (size_t)n;
    }
    if (s.out_length > 0) return;
    for (int signo = 1; signo <= SIGNALS; signo++) {
        if (s.pending[signo] == 0) continue;
        char line[48];
        int n = snprintf(line, sizeof line, "sig %d %c 0\n", signo, s.pending[signo]);
        s.pending[signo] = 0;
        memcpy(s.out + s.out_length, line, (size_t)n);
        s.out_length += (size_t)n;
    }
    if (s.out_length > 0) flush_to_wrapper();
}

static void tell_wrapper(const char *line) {
    size_t length = strlen(line);
    if (s.out_length + length <= sizeof s.out) {
        memcpy(s.out + s.out_length, line, length);
        s.out_length += length;
    }
    flush_to_wrapper();
}

static void relay_signal(const struct signalfd_siginfo *info) {
    int signo = (int)info->ssi_signo;
    if (signo < 1 || signo > SIGNALS || signo == SIGPIPE) return; /* SIGPIPE: our own write to a closed pipe */
    char kind = info->ssi_code == SI_KERNEL ? 'k' : 'u';
    if (s.wrapper_done) {
        /* The wrapper died while the command runs: pass stop requests on, so the command still ends. */
        if (s.command > 0 && signo != SIGCHLD && !(kind == 'k' && (signo == SIGINT || signo == SIGQUIT || signo == SIGWINCH))) {
            kill(s.command, signo);
        }
        return;
    }
    if (s.out_length > sizeof s.out / 2) {
        s.pending[signo] = kind;
        return;
    }
    char line[64];
    snprintf(line, sizeof line, "sig %d %c %u\n", signo, kind, info->ssi_pid);
    tell_wrapper(line);
}

/* The command: its own argv and environment, our cwd, stdio, limits and the signal mask we were given. */
static void run_command(long count) {
    char line[64];
    if (s.command != 0 || count < 1 || count >= s.argc) {
        snprintf(line, sizeof line, "failed %d\n", EINVAL);
        tell_wrapper(line);
        return;
    }
    char **argv = s.argv + (s.argc - count);
    int exec_pipe[2];
    if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
        snprintf(line, sizeof line, "failed %d\n", errno);
        tell_wrapper(line);
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        setrlimit(RLIMIT_NOFILE, &s.original_nofile);
        setrlimit(RLIMIT_AS, &s.original_as);
        set_mask(SIG_SETMASK, &s.original_mask, NULL);
        const char *file = argv[0];
        if (file[0] == '\0') report_exec_failure(exec_pipe[1], ENOENT);
        if (strchr(file, '/') != NULL) {
            execve(file, argv, environ);
            report_exec_failure(exec_pipe[1], errno);
        }
        /* A PATH search like the one Node's spawn made: no shell for ENOEXEC, EACCES only if nothing else ran. */
        const char *path = getenv("PATH");
        if (path == NULL) path = "/usr/bin:/bin";
        int seen_eacces = 0;
        char candidate[PATH_MAX];
        for (const char *start = path;; start++) {
            const char *end = strchrnul(start, ':');
            int length = (int)(end - start);
            if (snprintf(candidate, sizeof candidate, "%.*s%s%s", length, start, length > 0 ? "/" : "", file) <
                (int)sizeof candidate) {
                execve(candidate, argv, environ);
                if (errno == EACCES) seen_eacces = 1;
                else if (errno != ENOENT && errno != ENOTDIR) report_exec_failure(exec_pipe[1], errno);
            }
            if (*end == '\0') break;
            start = end;
        }
        report_exec_failure(exec_pipe[1], seen_eacces ? EACCES : ENOENT);
    }
    close(exec_pipe[1]);
    if (pid < 0) {
        snprintf(line, sizeof line, "failed %d\n", errno);
        close(exec_pipe[0]);
        tell_wrapper(line);
        return;
    }
    int error = exec_result(exec_pipe[0]);
    if (error != 0) {
        waitpid(pid, NULL, 0);
        snprintf(line, sizeof line, "failed %d\n", error);
    } else {
        s.command = pid;
        snprintf(line, sizeof line, "started %d\n", (int)pid);
    }
    tell_wrapper(line);
}

static void handle_wrapper_line(char *line) {
    char *end;
    if (strncmp(line, "run ", 4) == 0) {
        run_command(strtol(line + 4, &end, 10));
    } else if (strncmp(line, "kill ", 5) == 0) {
        long signo = strtol(line + 5, &end, 10);
        if (s.command > 0 && signo >= 1 && signo <= SIGNALS) kill(s.command, (int)signo);
    } else if (strcmp(line, "hello") == 0) {
        s.said_hello = 1;
    } else if (strncmp(line, "exit ", 5) == 0) {
        /* Its work is done and its lines are in the pipe: Node's own teardown would only cost the job time
         * (and can stall, joining a thread stuck in DNS). */
        s.declared = (int)strtol(line + 5, &end, 10) & 0xff;
        s.has_declared = 1;
        kill(s.wrapper, SIGKILL);
    }
}

static void read_from_wrapper(void) {
    for (;;) {
        ssize_t n = read(s.from_wrapper, s.in + s.in_length, sizeof s.in - 1 - s.in_length);
        if (n <= 0) {
            if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                close(s.from_wrapper);
                s.from_wrapper = -1;
            }
            return;
        }
        s.in_length += (size_t)n;
        char *newline;
        while ((newline = memchr(s.in, '\n', s.in_length)) != NULL) {
            *newline = '\0';
            handle_wrapper_line(s.in);
            size_t used = (size_t)(newline - s.in) + 1;
            memmove(s.in, s.in + used, s.in_length - used);
            s.in_length -= used;
        }
        if (s.in_length == sizeof s.in - 1) s.in_length = 0; /* no line is that long: drop garbage */
    }
}

static void read_wrapper_log(void) {
    char chunk[4096];
    for (;;) {
        ssize_t n = read(s.wrapper_log, chunk, sizeof chunk);
        if (n <= 0) {
            if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                close(s.wrapper_log);
                s.wrapper_log = -1;
            }
            return;
        }
        add_log(chunk, (size_t)n);
    }
}

static void reap(void) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid == s.command) {
            char line[48];
            if (WIFSIGNALED(status)) snprintf(line, sizeof line, "signaled %d\n", WTERMSIG(status));
            else snprintf(line, sizeof line, "exited %d\n", WEXITSTATUS(status));
            s.command = -1;
            if (s.wrapper_done) {
                s.declared = WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
                s.has_declared = 1;
            }
            tell_wrapper(line);
        } else if (pid == s.wrapper) {
            s.wrapper_status = status;
            s.wrapper_done = 1;
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

/* The wrapper is gone: its code, or why it has none. */
static int wrapper_exit_code(void) {
    if (s.has_declared) return s.declared;
    if (WIFEXITED(s.wrapper_status)) return WEXITSTATUS(s.wrapper_status);
    char signal_name[64];
    snprintf(signal_name, sizeof signal_name, "signal %d (%s)", WTERMSIG(s.wrapper_status), strsignal(WTERMSIG(s.wrapper_status)));
    const char *hint = WTERMSIG(s.wrapper_status) == SIGKILL
                           ? "; the out-of-memory killer does this when the memory limit is too small"
                           : "; too small a limit on memory, pids or open files does this";
    say("istio-job-run: the wrapper died of %s%s\n", signal_name, hint);
    return -1;
}

int main(int argc, char **argv) {
    sigset_t blockable;
    fill_blockable(&blockable);
    set_mask(SIG_BLOCK, &blockable, &s.original_mask);
    int signal_fd = signalfd(-1, &blockable, SFD_NONBLOCK | SFD_CLOEXEC);

    s.argc = argc;
    s.argv = argv;
    static char self[PATH_MAX];
    find_self(argc > 0 ? argv[0] : NULL, self);
    if (signal_fd < 0) fail_errno("cannot watch signals:", "signalfd");
    if (getpid() != 1) prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    raise_limits();
    check_pids();
    start_wrapper(self);
    long long start_deadline = now_ms() + START_TIMEOUT_MS;

    for (;;) {
        reap();
        if (s.wrapper_done) {
            if (s.from_wrapper >= 0) read_from_wrapper(); /* its last lines: the exit code it said */
            if (s.wrapper_log >= 0) read_wrapper_log();
            int code = wrapper_exit_code();
            if (code >= 0 || s.command <= 0) {
                flush_log(LOG_FLUSH_MS);
                _exit(code >= 0 ? code : EXIT_FAILED);
            }
            say("istio-job-run: %s%s\n", "waiting for the command; the sidecar was not told to quit", "");
            s.has_declared = 0;
            /* go on: the command's end gives the code (reap sets it) */
            while (!s.has_declared) {
                struct pollfd p = {.fd = signal_fd, .events = POLLIN};
                poll(&p, 1, REAP_EVERY_MS);
                read_signals(signal_fd);
                reap();
            }
            flush_log(LOG_FLUSH_MS);
            _exit(s.declared);
        }

        struct pollfd fds[5];
        int n = 0;
        fds[n++] = (struct pollfd){.fd = signal_fd, .events = POLLIN};
        fds[n++] = (struct pollfd){.fd = s.from_wrapper, .events = POLLIN};
        fds[n++] = (struct pollfd){.fd = s.wrapper_log, .events = POLLIN};
        fds[n++] = (struct pollfd){.fd = s.out_length > 0 ? s.to_wrapper : -1, .events = POLLOUT};
        fds[n++] = (struct pollfd){.fd = s.log_length > 0 ? 2 : -1, .events = POLLOUT};
        if (!s.said_hello && !s.has_declared && now_ms() > start_deadline) {
            say("istio-job-run: the wrapper did not start within %s%s\n", "30 s (too few pids or threads allowed, or too little memory?)", "");
            kill(s.wrapper, SIGKILL);
            s.said_hello = 1;
        }
        if (poll(fds, (nfds_t)n, REAP_EVERY_MS) < 0 && errno != EINTR) fail_errno("cannot wait:", "poll");
        if (fds[0].revents) read_signals(signal_fd);
        if (fds[1].revents && s.from_wrapper >= 0) read_from_wrapper();
        if (fds[2].revents && s.wrapper_log >= 0) read_wrapper_log();
        if (s.out_length > 0) flush_to_wrapper();
        if (s.log_length > 0) flush_log(0);
    }
}
