/* serve_door.c — the front door of `sotto serve`: one thread accepts each connection,
 * peeks at its request head as it arrives (the bytes stay in the socket for
 * libmicrohttpd to read), checks it with serve_head.c under one deadline for the whole
 * head, answers a refused or late head itself (then reads and drops what follows for a
 * moment, so the answer is not lost to a reset), and hands a valid one to libmicrohttpd.
 * Peeked bytes keep a socket readable, so the sockets are watched edge-triggered (epoll):
 * an event means new bytes, or the end of the client's side. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli.h"
#include "serve.h"

enum { LINGER_MS = 2000 };         /* a refused connection's bytes are dropped this long */

typedef struct pending {
    int fd;
    struct sockaddr_storage addr;
    socklen_t len;
    double t0_ms;                  /* accepted; or, lingering, when the answer was sent */
    bool lingering;                /* answered: what arrives is dropped until EOF or LINGER_MS */
    size_t n_seen;                 /* bytes peeked so far */
    serve_head head;
} pending;

struct serve_door {
    int listen_fd, wake[2], ep;
    int timeout_s, max_pending;
    serve_door_pass pass;
    void *user;
    pthread_t thread;
    pthread_mutex_t mu;
    bool closing, stopping;        /* under MU */
    pending *p;                    /* [max_pending] */
    int n;
    char buf[SERVE_HEAD_MAX];
};

static const char *reason(int status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

bool serve_send_raw(int fd, const serve_error *e)
{
    size_t n_body = 0;
    char *body = serve_error_json(e, &n_body), head[256];
    if (!body) return false;
    int n_head = snprintf(head, sizeof head,
                          "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %zu\r\n%s"
                          "Connection: close\r\n\r\n",
                          e->http_status, reason(e->http_status), n_body,
                          e->http_status == 503 ? "Retry-After: 1\r\n" : "");
    /* small enough for any socket buffer: one non-blocking try each, never a wait */
    bool ok = send(fd, head, (size_t)n_head, MSG_NOSIGNAL | MSG_DONTWAIT) == n_head &&
              send(fd, body, n_body, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)n_body;
    free(body);
    shutdown(fd, SHUT_WR);
    return ok;
}

static void drop(serve_door *d, int i)
{
    close(d->p[i].fd);
    d->p[i] = d->p[--d->n];
}

/* Answers connection I with E and keeps it to drop what the client still sends. */
static void refuse(serve_door *d, int i, const serve_error *e)
{
    pending *c = &d->p[i];
    const char *m = c->head.n_method ? c->head.method : "-";
    fprintf(stderr, "sotto serve: %s - %d %.0fms (refused before libmicrohttpd: %s)\n", m, e->http_status,
            cli_now_ms() - c->t0_ms, e->message);
    serve_send_raw(c->fd, e);
    c->lingering = true;
    c->t0_ms = cli_now_ms();
}

/* New bytes on connection I, or (EOF) the end of the client's side. */
static void readable(serve_door *d, int i, bool eof)
{
    pending *c = &d->p[i];
    if (c->lingering) { /* edge-triggered: read until there is nothing left */
        for (;;) {
            ssize_t r = recv(c->fd, d->buf, sizeof d->buf, MSG_DONTWAIT);
            if (r > 0) continue;
            if (r == 0 || (errno != EAGAIN && errno != EINTR)) drop(d, i);
            return;
        }
    }
    ssize_t r = recv(c->fd, d->buf, sizeof d->buf, MSG_PEEK | MSG_DONTWAIT);
    if (r < 0 && errno != EAGAIN && errno != EINTR) {
        drop(d, i);
        return;
    }
    if (r == 0) eof = true;
    serve_error e;
    if (r > 0 && (size_t)r > c->n_seen) {
        c->n_seen = (size_t)r;
        int st = serve_head_scan(&c->head, d->buf, (size_t)r, &e);
        if (st == SERVE_HEAD_BAD) {
            refuse(d, i, &e);
            return;
        }
        if (st == SERVE_HEAD_OK) {
            pending keep = *c;
            d->p[i] = d->p[--d->n];
            epoll_ctl(d->ep, EPOLL_CTL_DEL, keep.fd, NULL);
            d->pass(keep.fd, (struct sockaddr *)&keep.addr, keep.len, d->user); /* it owns the socket now */
            return;
        }
    }
    if (!eof) return;
    if (c->n_seen == 0) { /* closed without a byte: nothing to answer */
        drop(d, i);
        return;
    }
    serve_error_set(&e, 400, "invalid_request_error", NULL, "bad_request",
                    "the connection ended after %zu bytes, before the end of the request head", c->n_seen);
    refuse(d, i, &e);
}

/* Connections past their deadline: a head still arriving gets 408; a lingering one closes. */
static void sweep(serve_door *d, double now)
{
    for (int i = d->n - 1; i >= 0; i--) {
        pending *c = &d->p[i];
        if (c->lingering) {
            if (now - c->t0_ms > LINGER_MS) drop(d, i);
        } else if (now - c->t0_ms > d->timeout_s * 1000.0) {
            if (c->n_seen == 0) { /* nothing asked: nothing to answer */
                drop(d, i);
                continue;
            }
            serve_error e;
            serve_error_set(&e, 408, "invalid_request_error", NULL, "timeout",
                            "the request head did not arrive within %d s", d->timeout_s);
            refuse(d, i, &e);
        }
    }
}

static void accept_some(serve_door *d)
{
    for (int k = 0; k < 64 && d->n < d->max_pending; k++) {
        pending *c = &d->p[d->n];
        memset(c, 0, sizeof *c);
        c->len = sizeof c->addr;
        c->fd = accept4(d->listen_fd, (struct sockaddr *)&c->addr, &c->len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c->fd < 0) return; /* EAGAIN: none left; EMFILE and the like: later */
        c->t0_ms = cli_now_ms();
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.fd = c->fd};
        if (epoll_ctl(d->ep, EPOLL_CTL_ADD, c->fd, &ev) != 0) {
            close(c->fd);
            continue;
        }
        d->n++;
        readable(d, d->n - 1, false); /* bytes that came with the connection raise no edge of their own */
    }
}

static void *door_main(void *arg)
{
    serve_door *d = arg;
    struct epoll_event evs[64];
    bool listening = true;
    for (;;) {
        pthread_mutex_lock(&d->mu);
        bool stopping = d->stopping;
        if (d->closing && listening) {
            epoll_ctl(d->ep, EPOLL_CTL_DEL, d->listen_fd, NULL);
            close(d->listen_fd);
            d->listen_fd = -1;
            listening = false;
        }
        pthread_mutex_unlock(&d->mu);
        if (stopping) break;
        int r = epoll_wait(d->ep, evs, 64, 100); /* the deadlines are swept at least this often */
        if (r < 0 && errno != EINTR) break;
        for (int k = 0; k < r; k++) {
            int fd = evs[k].data.fd;
            if (fd == d->wake[0]) {
                char b[64];
                while (read(d->wake[0], b, sizeof b) > 0) {
                }
            } else if (fd == d->listen_fd) {
                accept_some(d);
            } else {
                for (int i = 0; i < d->n; i++)
                    if (d->p[i].fd == fd) {
                        readable(d, i, (evs[k].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0);
                        break;
                    }
            }
        }
        if (listening && d->n < d->max_pending) accept_some(d); /* those a full table left waiting */
        sweep(d, cli_now_ms());
    }
    return NULL;
}

serve_door *serve_door_start(int listen_fd, int timeout_s, int max_pending, serve_door_pass pass, void *user)
{
    serve_door *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->listen_fd = listen_fd, d->timeout_s = timeout_s, d->max_pending = max_pending;
    d->pass = pass, d->user = user;
    d->p = calloc((size_t)max_pending, sizeof *d->p);
    pthread_mutex_init(&d->mu, NULL);
    d->ep = epoll_create1(EPOLL_CLOEXEC);
    if (!d->p || d->ep < 0 || pipe2(d->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
        if (d->ep >= 0) close(d->ep);
        free(d->p);
        free(d);
        return NULL;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = d->wake[0]};
    epoll_ctl(d->ep, EPOLL_CTL_ADD, d->wake[0], &ev);
    ev = (struct epoll_event){.events = EPOLLIN | EPOLLET, .data.fd = listen_fd}; /* and polled: a full table */
    fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
    epoll_ctl(d->ep, EPOLL_CTL_ADD, listen_fd, &ev);
    if (pthread_create(&d->thread, NULL, door_main, d) != 0) {
        close(d->wake[0]), close(d->wake[1]), close(d->ep);
        free(d->p);
        free(d);
        return NULL;
    }
    return d;
}

static void wake(serve_door *d)
{
    ssize_t w = write(d->wake[1], "x", 1);
    (void)w;
}

void serve_door_close(serve_door *d)
{
    pthread_mutex_lock(&d->mu);
    d->closing = true;
    pthread_mutex_unlock(&d->mu);
    wake(d);
}

void serve_door_free(serve_door *d)
{
    if (!d) return;
    pthread_mutex_lock(&d->mu);
    d->stopping = true;
    pthread_mutex_unlock(&d->mu);
    wake(d);
    pthread_join(d->thread, NULL);
    for (int i = 0; i < d->n; i++) close(d->p[i].fd);
    if (d->listen_fd >= 0) close(d->listen_fd);
    close(d->wake[0]), close(d->wake[1]), close(d->ep);
    pthread_mutex_destroy(&d->mu);
    free(d->p);
    free(d);
}
