/* Before the wrapper starts: fds 0-2 held, the log format asked for, where this program is, the limits raised
 * for Node and checked against its floors, the room left in the pids cgroup, the out-of-memory kills so far. */

#include "launcher.h"

/* Below these the wrapper cannot start at normal speed (docs/RELIABILITY.md, the floors). */
#define FLOOR_NOFILE 64
#define FLOOR_AS_MIB 1536
#define FLOOR_DATA_MIB 1024
#define FLOOR_STACK_KIB 1024 /* Node's own stack size is 984 KiB */
#define FLOOR_PIDS 10

/* A closed fd 0, 1 or 2 gets /dev/null until the command starts: a pipe of ours must not become stderr. */
void hold_std_fds(void) {
    for (int fd = 0; fd <= 2; fd++) given.closed[fd] = fcntl(fd, F_GETFD) < 0 && errno == EBADF;
    for (int fd = 0; fd <= 2; fd++) {
        if (!given.closed[fd] || fcntl(fd, F_GETFD) >= 0) continue; /* held already, by a pipe's other end */
        int held = open("/dev/null", O_RDWR);
        if (held < 0) {
            int ends[2]; /* no /dev/null (a bare chroot): a pipe holds the number */
            if (pipe(ends) != 0) _exit(EXIT_FAILED);
            held = ends[0];
            if (ends[1] > 2) close(ends[1]);
        }
        if (held != fd && (dup2(held, fd) < 0 || close(held) != 0)) _exit(EXIT_FAILED);
    }
}

/* The log format asked for, until the wrapper says it: its flag before `--`, else its variable. The wrapper's
 * word is final; this is for the lines said before it can (a limit below its floor, say). */
int json_asked_for(int argc, char **argv) {
    size_t length = strlen(LOG_FORMAT_FLAG);
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], LOG_FORMAT_FLAG) == 0 && i + 1 < argc) return strcmp(argv[i + 1], LOG_JSON) == 0;
        if (strncmp(argv[i], LOG_FORMAT_FLAG, length) == 0 && argv[i][length] == '=') return strcmp(argv[i] + length + 1, LOG_JSON) == 0;
    }
    const char *variable = getenv(LOG_FORMAT_ENV);
    return variable != NULL && strcmp(variable, LOG_JSON) == 0;
}

/* This file's absolute path: /proc/self/exe, or argv[0] where /proc is not mounted (a bare chroot). */
void find_self(const char *argv0) {
    ssize_t n = readlink("/proc/self/exe", given.self, sizeof given.self - 1);
    if (n > 0) {
        given.self[n] = '\0';
        return;
    }
    if (argv0 == NULL || strchr(argv0, '/') == NULL || realpath(argv0, given.self) == NULL) {
        fail("cannot find its own path (mount /proc, or start it by path): %s", argv0 == NULL ? "" : argv0);
    }
}

static int is_flag(const char *arg, const char *const flags[]) {
    for (const char *const *flag = flags; *flag != NULL; flag++) {
        size_t length = strlen(*flag);
        if (strncmp(arg, *flag, length) == 0 && (arg[length] == '\0' || arg[length] == '=')) return 1;
    }
    return 0;
}

/* Whether ARG is one of the names, exactly (a flag without `=VALUE`). */
static int is_name(const char *arg, const char *const names[]) {
    for (const char *const *name = names; *name != NULL; name++)
        if (strcmp(arg, *name) == 0) return 1;
    return 0;
}

/* Whether this start-up is a manifest tool: isManifestInvocation() of src/manifest/cli/select.ts, over its names. */
static int tool_asked_for(void) {
    static const char *const modes[] = TOOL_MODE_FLAGS, *const options[] = TOOL_OPTIONS, *const valued[] = TOOL_VALUE_FLAGS;
    const char *name = given.argc > 0 ? given.argv[0] : "", *slash = strrchr(name, '/');
    if (strcmp(slash == NULL ? name : slash + 1, TOOL_PLUGIN_NAME) == 0) return 1;
    for (int i = 1; i < given.argc; i++) {
        if (is_flag(given.argv[i], modes)) return 1;
        if (!is_flag(given.argv[i], options)) return 0;
        const char *next = i + 1 < given.argc ? given.argv[i + 1] : NULL;
        if (next != NULL && (next[0] != '-' || strcmp(next, "-") == 0) && is_name(given.argv[i], valued)) i++;
    }
    return 0;
}

/* A limit below a floor: one line naming it. A manifest tool has no sidecars: its usage exit, not the wrapper's. */
__attribute__((noreturn)) static void below_floor(const char *limit, const char *needs) {
    if (!tool_asked_for()) fail("%s; the wrapper needs %s", limit, needs);
    say("error", "%s; the manifest tools need %s", limit, needs);
    _exit(EXIT_TOOL_USAGE);
}

static void check_floor(const char *name, const char *what, struct rlimit *limit, rlim_t floor, const char *unit, int shift,
                        const char *ulimit) {
    if (limit->rlim_cur == RLIM_INFINITY || limit->rlim_cur >= floor) return;
    char is[256], needs[128];
    snprintf(is, sizeof is, "the %s limit (%s) is %llu%s", what, name, (unsigned long long)(limit->rlim_cur >> shift), unit);
    snprintf(needs, sizeof needs, "at least %llu%s (%s)", (unsigned long long)(floor >> shift), unit, ulimit);
    below_floor(is, needs);
}

/* The limits Node needs room under: the wrapper's soft ones go up to the hard ones, the command gets its own back. */
const int RAISED[] = {RLIMIT_NOFILE, RLIMIT_AS, RLIMIT_DATA, RLIMIT_STACK};
const size_t RAISED_COUNT = sizeof RAISED / sizeof *RAISED;

/* The wrapper's soft limits up to the hard ones; the command gets the originals back. */
void raise_limits(void) {
    for (size_t i = 0; i < sizeof RAISED / sizeof *RAISED; i++) {
        int resource = RAISED[i];
        if (getrlimit(resource, &given.limits[resource]) != 0) fail("cannot read limit %d (getrlimit): %s", resource, strerror(errno));
        struct rlimit limit = given.limits[resource];
        if (limit.rlim_cur == limit.rlim_max) continue;
        limit.rlim_cur = limit.rlim_max;
        if (setrlimit(resource, &limit) != 0) fail("cannot raise limit %d (setrlimit): %s", resource, strerror(errno));
    }
    struct rlimit now;
    if (getrlimit(RLIMIT_NOFILE, &now) == 0) check_floor("RLIMIT_NOFILE", "open files", &now, FLOOR_NOFILE, "", 0, "ulimit -n");
    if (getrlimit(RLIMIT_AS, &now) == 0)
        check_floor("RLIMIT_AS", "address space", &now, (rlim_t)FLOOR_AS_MIB << 20, " MiB", 20, "ulimit -v");
    if (getrlimit(RLIMIT_DATA, &now) == 0) check_floor("RLIMIT_DATA", "data", &now, (rlim_t)FLOOR_DATA_MIB << 20, " MiB", 20, "ulimit -d");
    if (getrlimit(RLIMIT_STACK, &now) == 0)
        check_floor("RLIMIT_STACK", "stack", &now, (rlim_t)FLOOR_STACK_KIB << 10, " KiB", 10, "ulimit -s");
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

/* Each cgroup directory of this process for a v1 controller (or v2): body(dir) until it returns nonzero. */
long long for_cgroup(const char *controller, long long (*body)(const char *dir)) {
    char cgroups[4096] = {0}, dir[PATH_MAX];
    int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, cgroups, sizeof cgroups - 1);
    close(fd);
    if (n <= 0) return -1;
    char *save = NULL;
    for (char *line = strtok_r(cgroups, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        char *controllers = strchr(line, ':'), *where = controllers ? strchr(controllers + 1, ':') : NULL;
        if (where == NULL) continue;
        *where++ = '\0';
        controllers++;
        int v2 = controllers[0] == '\0';
        if (!v2 && strstr(controllers, controller) == NULL) continue;
        snprintf(dir, sizeof dir, "/sys/fs/cgroup%s%s%s", v2 ? "" : "/", v2 ? "" : controller, strcmp(where, "/") == 0 ? "" : where);
        long long result = body(dir);
        if (result >= 0) return result;
    }
    return -1;
}

long long pids_room(const char *dir) {
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/pids.max", dir);
    long long max = read_number(path);
    snprintf(path, sizeof path, "%s/pids.current", dir);
    long long current = read_number(path);
    if (max < 0 || current < 0 || max - current >= FLOOR_PIDS) return -1;
    char is[128], needs[128];
    snprintf(is, sizeof is, "the pids limit (cgroup pids.max) is %lld with %lld in use", max, current);
    snprintf(needs, sizeof needs, "%d more for its process and threads", FLOOR_PIDS);
    below_floor(is, needs);
}

/* The kernel's count of out-of-memory kills in this cgroup (v2 memory.events, v1 memory.oom_control); -1 unknown. */
static long long oom_kills_in(const char *dir) {
    const char *files[] = {"memory.events", "memory.oom_control"};
    for (size_t i = 0; i < 2; i++) {
        char path[PATH_MAX + 32], text[1024] = {0};
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n = read(fd, text, sizeof text - 1);
        close(fd);
        const char *count = n > 0 ? strstr(text, "oom_kill ") : NULL;
        if (count != NULL) return strtoll(count + 9, NULL, 10);
    }
    return -1;
}

long long oom_kills(void) {
    return for_cgroup("memory", oom_kills_in);
}
