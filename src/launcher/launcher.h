/*
 * What the files of the launcher share: the state that more than one of them reads, and their functions.
 * launcher.c is the init (signals, the Node half, the command, reaping, the loop); preflight.c checks the limits
 * and cgroups before the wrapper starts; quit.c is the last-resort quit; shared.c holds the state more than one
 * reads and the failure before the command runs; log.c writes its own lines. Each uses only those after it.
 */
#ifndef LAUNCHER_H
#define LAUNCHER_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "launcher-protocol.h"

/* Written for each compile, which is given its id: any other header found first (a stale copy beside these files,
 * say) is refused, whatever names it has. */
#if !defined(LAUNCHER_PROTOCOL_ID) || !defined(LAUNCHER_PROTOCOL_WANTED) || LAUNCHER_PROTOCOL_ID != LAUNCHER_PROTOCOL_WANTED
#error "launcher-protocol.h is not the one this compile wrote: build through launcherCompile (scripts/build.ts)"
#endif

#define SIGNALS 64
/* The kernel queues every instance of a signal from 32 on (its own SIGRTMIN; the C libraries keep a few). */
#define FIRST_QUEUED 32

/* What this program was given: the command gets it back. */
struct given {
    int argc;
    char **argv;
    char self[PATH_MAX];
    sigset_t mask;
    int ignored[SIGNALS + 1]; /* signals its parent left ignored (the command keeps them so, but SIGCHLD) */
    int closed[3];            /* fds 0-2 that were closed: stand-ins here, closed again for the command */
    int tty;                  /* the first of fds 0-2 that is a terminal, or -1 */
    int pid1;                 /* PID 1 of its namespace: a container's first process */
    struct rlimit limits[RLIM_NLIMITS];
};
extern struct given given;

/* The Node half. */
struct wrapper {
    pid_t pid;
    int channel; /* socket for lines both ways; -1 once closed */
    int log;     /* its stderr, a pipe; -1 once closed */
    int ended, status;
    int said_hello;
    int done;               /* it said its exit code, or was stopped for not starting: it is killed, no more lines */
    int declared;           /* its exit code, once done */
    long long deadline;     /* when it must have said hello, or said its code after the command ended; 0 for none */
    int typed[SIGNALS + 1]; /* signals a terminal sent our group (the wrapper's too, but as PID 1): Ctrl-C, say */
    int tool;               /* it said `tool`: a manifest tool, which TERM, INT and HUP end by their default action */
    int stop_relayed;       /* the last of those relayed to it as a line before it said so (read by nobody), or 0 */
};
extern struct wrapper wrapper;

/* The job's command. */
struct command {
    pid_t pid; /* 0 before it starts */
    int running, ended;
    int code; /* its exit code once ended: 128 + N for a death by signal N */
};
extern struct command command;

/* What goes to stderr: the wrapper's lines and ours, written when stderr takes them, dropped rather than block. */
struct log_out {
    char bytes[65536];
    size_t length;
    int json;
};
extern struct log_out log_out;

/* One sidecar's quit endpoint, as the wrapper parsed it (a `target` line) and this program POSTs it itself. */
struct quit_target {
    char label[64]; /* the sidecar, as the wrapper's lines name it: "proxy", "linkerd-proxy" */
    struct sockaddr_storage address;
    socklen_t address_length;
    char host[MAX_LINE_BYTES]; /* the Host header */
    char path[MAX_LINE_BYTES]; /* the request's path and query */
    int done;
    int status; /* the last HTTP status; 0 for no answer, -1 for refused */
    int attempts;
};

/* The sidecars to tell to quit if the wrapper cannot: the `target` lines are staged until the `quit` line counts
 * them. The retry rules and the backoff are the wrapper's (launcher-protocol.h); the bounds are its options. */
struct plan {
    int known;
    int only_on_success;
    long timeout_ms;
    long request_ms; /* --request-timeout */
    int count;
    int unread; /* targets the quit line counted that were not read (a line discarded) */
    struct quit_target urls[MAX_QUIT_TARGETS];
    int staged;
    struct quit_target staging[MAX_QUIT_TARGETS];
};
extern struct plan plan;

/* log.c */
/* How long the last log lines may take to be written on. */
#define LOG_FLUSH_MS 100
long long now_ms(void);
void flush_log(int wait_ms);
void add_log(const char *bytes, size_t length);
__attribute__((format(printf, 2, 3))) void say(const char *level, const char *format, ...);

/* shared.c: before the command runs, one line and exit 125. */
__attribute__((format(printf, 1, 2), noreturn)) void fail(const char *format, ...);

/* preflight.c */
extern const int RAISED[];
extern const size_t RAISED_COUNT;
void hold_std_fds(void);
int json_asked_for(int argc, char **argv);
void find_self(const char *argv0);
void raise_limits(void);
long long for_cgroup(const char *controller, long long (*body)(const char *dir));
long long pids_room(const char *dir);
long long oom_kills(void);

/* quit.c */
void read_target(char *words);
void read_plan(char *words);
void last_resort_quit(int code, const char *why);

#endif
