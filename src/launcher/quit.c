/* The last-resort quit: the quit plan the wrapper sends (a `target` line per sidecar, then the `quit` line), and,
 * when the wrapper cannot quit the sidecars itself, the POSTs this program sends, under the same rules. */

#include "launcher.h"

struct plan plan;

/* Copies a word into a field; 0 if it does not fit or is missing. */
static int copy_word(char *field, size_t size, const char *word) {
    if (word == NULL || strlen(word) >= size) return 0;
    memcpy(field, word, strlen(word) + 1);
    return 1;
}

/* `target LABEL ADDRESS PORT HOST PATH`: one quit endpoint, parsed by the wrapper, staged for the `quit` line. */
void read_target(char *words) {
    char *save = NULL, *label = strtok_r(words, " ", &save), *address = strtok_r(NULL, " ", &save);
    char *port_text = strtok_r(NULL, " ", &save), *host = strtok_r(NULL, " ", &save), *path = strtok_r(NULL, " ", &save);
    if (plan.staged >= MAX_QUIT_TARGETS) return; /* the wrapper sends no more: a usage error there */
    struct quit_target *target = &plan.staging[plan.staged];
    memset(target, 0, sizeof *target);
    long port = port_text == NULL ? 0 : strtol(port_text, NULL, 10);
    struct sockaddr_in *v4 = (struct sockaddr_in *)&target->address;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&target->address;
    if (!copy_word(target->label, sizeof target->label, label) || !copy_word(target->host, sizeof target->host, host) ||
        !copy_word(target->path, sizeof target->path, path) || address == NULL || port < 1 || port > 65535) {
        say("warn", "a quit target from the wrapper that cannot be read: ignored");
        return;
    }
    if (inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
        target->address_length = sizeof *v4;
    } else if (inet_pton(AF_INET6, address, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        target->address_length = sizeof *v6;
    } else {
        say("warn", "a quit target from the wrapper with no numeric address (%s): ignored", address);
        return;
    }
    plan.staged++;
}

/* `quit POLICY TIMEOUT_MS REQUEST_TIMEOUT_MS COUNT`: the staged targets become the plan. */
void read_plan(char *words) {
    char *save = NULL, *when = strtok_r(words, " ", &save), *timeout = strtok_r(NULL, " ", &save);
    char *request = strtok_r(NULL, " ", &save), *count = strtok_r(NULL, " ", &save);
    if (when == NULL || timeout == NULL || request == NULL || count == NULL) return;
    plan.known = 1;
    plan.only_on_success = strcmp(when, QUIT_ON_SUCCESS) == 0;
    plan.timeout_ms = strtol(timeout, NULL, 10);
    plan.request_ms = strtol(request, NULL, 10);
    if (plan.request_ms < 1) plan.request_ms = 1;
    long counted = strtol(count, NULL, 10);
    memcpy(plan.urls, plan.staging, (size_t)plan.staged * sizeof *plan.urls);
    plan.count = plan.staged;
    plan.unread = counted > plan.staged ? (int)(counted - plan.staged) : 0;
    plan.staged = 0;
}

/* One POST to one sidecar, bounded: its HTTP status, 0 for no answer, -1 for a refused connection. */
static int post_quit(struct quit_target *target, int bound_ms) {
    int fd = socket(target->address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return 0;
    long long deadline = now_ms() + bound_ms;
    int status = 0;
    if (connect(fd, (struct sockaddr *)&target->address, target->address_length) != 0 && errno != EINPROGRESS) {
        if (errno == ECONNREFUSED) status = -1;
        goto done;
    }
    struct pollfd p = {.fd = fd, .events = POLLOUT};
    if (poll(&p, 1, bound_ms) != 1) goto done;
    int error = 0;
    socklen_t length = sizeof error;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
        if (error == ECONNREFUSED) status = -1;
        goto done;
    }
    char request[2 * MAX_LINE_BYTES + 128];
    int n = snprintf(request, sizeof request, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                     target->path, target->host);
    if (n <= 0 || send(fd, request, (size_t)n, MSG_NOSIGNAL) != n) goto done;
    char answer[64] = {0};
    size_t got = 0;
    while (got < 12) {
        long long left = deadline - now_ms();
        p = (struct pollfd){.fd = fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) != 1) break;
        ssize_t r = read(fd, answer + got, sizeof answer - 1 - got);
        if (r <= 0) break;
        got += (size_t)r;
    }
    if (got >= 12 && strncmp(answer, "HTTP/1.", 7) == 0) status = (int)strtol(answer + 9, NULL, 10);
done:
    close(fd);
    return status;
}

/* How a target reads in the last line: its URL with the query replaced by `***`, as the wrapper shows URLs, and cut
 * short past 200 bytes. */
static void shown_url(const struct quit_target *target, char *text, size_t size) {
    const char *query = strpbrk(target->path, "?#");
    int path_length = query == NULL ? (int)strlen(target->path) : (int)(query - target->path);
    int cut = path_length > 200;
    snprintf(text, size, "http://%s%.*s%s%s", target->host, cut ? 200 : path_length, target->path, cut ? "..." : "",
             query == NULL   ? ""
             : *query == '?' ? "?***"
                             : "#***");
}

/* The wrapper ended before its quits: this program tells the sidecars itself, as the policy says, with the
 * wrapper's retry rules and bounds, and says in one line what each sidecar answered. */
void last_resort_quit(int code, const char *why) {
    if (!plan.known) {
        say("error", "the wrapper %s before it knew the sidecars; none was told to quit", why);
        return;
    }
    if (plan.count == 0) {
        say("error", "the wrapper %s%s", why, plan.unread > 0 ? "; the quit plan could not be read, no sidecar was told to quit" : "");
        return;
    }
    if (plan.only_on_success && code != 0) {
        say("error", "the wrapper %s; the sidecar is left running (quit on-success, exit %d)", why, code);
        return;
    }
    long long deadline = now_ms() + plan.timeout_ms;
    int pause = QUIT_FIRST_BACKOFF_MS, left = plan.count;
    while (left > 0) {
        for (int i = 0; i < plan.count; i++) {
            struct quit_target *target = &plan.urls[i];
            if (target->done) continue;
            long long remaining = deadline - now_ms();
            if (remaining <= 0) break;
            target->attempts++;
            int status = post_quit(target, (int)(remaining < plan.request_ms ? remaining : plan.request_ms));
            if (status != 0) target->status = status;
            /* Answered and not worth a retry, or gone: a sidecar closes its listener once told to quit, and it
             * listened when the command started (it was waited for). */
            if ((status > 0 && !QUIT_RETRIED(status)) || (status < 0 && command.pid != 0)) {
                target->done = 1;
                left--;
            }
        }
        if (left == 0 || now_ms() + pause >= deadline) break;
        struct timespec nap = {.tv_sec = pause / 1000, .tv_nsec = (long)(pause % 1000) * 1000000};
        nanosleep(&nap, NULL);
        pause = pause * 2 > QUIT_MAX_BACKOFF_MS ? QUIT_MAX_BACKOFF_MS : pause * 2;
    }
    static char results[MAX_QUIT_TARGETS * 400];
    results[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < plan.count && used < sizeof results; i++) {
        struct quit_target *target = &plan.urls[i];
        char url[300], last[32], tally[32];
        shown_url(target, url, sizeof url);
        if (target->status > 0) snprintf(last, sizeof last, "%d", target->status);
        else snprintf(last, sizeof last, target->status < 0 ? "refused" : "no answer");
        snprintf(tally, sizeof tally, "%d attempt%s", target->attempts, target->attempts == 1 ? "" : "s");
        const char *sep = i > 0 ? "; " : "";
        size_t room = sizeof results - used;
        int n;
        if (target->done && QUIT_ACKNOWLEDGED(target->status)) {
            n = snprintf(results + used, room, "%sthe %s acknowledged the quit (POST %s: %s, %s)", sep, target->label, url, last, tally);
        } else if (target->done && target->status < 0) {
            n = snprintf(results + used, room, "%sthe %s was already gone (POST %s refused, %s)", sep, target->label, url, tally);
        } else if (target->done) {
            n = snprintf(results + used, room, "%sthe %s rejected the quit (POST %s: %s, %s)", sep, target->label, url, last, tally);
        } else {
            n = snprintf(results + used, room, "%sgave up telling the %s to quit (POST %s: last %s, %s)", sep, target->label, url, last,
                         tally);
        }
        used += n > 0 ? (size_t)n : 0;
    }
    if (plan.unread > 0 && used < sizeof results) {
        snprintf(results + used, sizeof results - used, "; %d more in the quit plan could not be read", plan.unread);
    }
    say("error", "the wrapper %s; the launcher sent the quits itself: %s", why, results);
}
