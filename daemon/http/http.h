/* http — the HTTP transport of ironbelld (daemon/http/http.c): the
 * listeners on libmicrohttpd (the admin unix socket, the optional admin
 * TCP listener over TLS, the public listener), the configuration snapshot
 * each request holds, and the store reader of each listener thread.
 *
 * struct api is the listeners' state. daemon/main.c creates, binds,
 * starts, reconfigures and stops it; the handlers the transport calls (the
 * admin API's, daemon/api/, and the machine-facing routes,
 * daemon/public/) ask it for their thread's store reader and whether it
 * is ready or stopping. What the transport calls of the admin API is the
 * API's: daemon/api/api.h (routes, statuses) and daemon/api/api-internal.h
 * (the handlers, the watch stream). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct api;
struct ib_config;
struct MHD_Connection;
struct store;
struct store_reader;

/* ---- the listeners (daemon/main.c) ---- */

/* Creates the API over an open store with the config snapshot cfg (the api
 * takes ownership of cfg). Binds nothing yet. NULL on ENOMEM. */
struct api *api_new(struct store *store, struct ib_config *cfg);
/* Binds the admin unix socket, the admin TCP listener (when configured)
 * and the public listener, and starts no thread (so that the daemon can
 * drop its privileges in between). On failure returns a negative errno and
 * writes a message naming the address to err; what was bound is closed
 * again by api_free(). A second call does nothing. */
int api_bind(struct api *api, char *err, size_t errlen);
/* Binds (api_bind(), when not done yet) and starts those listeners, the
 * admin TCP one over TLS when api.tls_cert is set. On failure returns a
 * negative errno and writes a message naming the address to err; what was
 * started is stopped again by api_free(). */
int api_start(struct api *api, char *err, size_t errlen);
/* Marks the API ready (/readyz 200) or not. */
void api_set_ready(struct api *api, bool ready);
/* A further readiness check, asked at each /readyz once the API is ready:
 * fn appends lines that say why (they follow "ok" or "not ready") and
 * returns whether it is ready. Set before api_start(); fn runs on the
 * listener threads. */
struct buf;
typedef bool (*api_ready_fn)(struct buf *out, void *userdata);
void api_set_ready_check(struct api *api, api_ready_fn fn, void *userdata);
/* The check set, if any: *ret_ud gets its userdata. */
api_ready_fn api_ready_check(struct api *api, void **ret_ud);
/* Replaces the config snapshot (ownership taken). Requests in flight keep
 * the snapshot they started with; the old one is freed when the last of
 * them ends and every listener thread has moved to the new one (at its
 * next request, or when it ends). Applies what can change live (max body, token, socket mode). */
void api_set_config(struct api *api, struct ib_config *cfg);
/* A reference to the current snapshot; release it with api_config_put(). */
const struct ib_config *api_config_get(struct api *api);
void api_config_put(struct api *api, const struct ib_config *cfg);
/* Ends every watch stream, stops the listeners (waiting for their threads,
 * which frees their store readers), and removes the unix socket. Safe to
 * call twice. */
void api_stop(struct api *api);
/* Stops if needed and frees. Accepts NULL. The store stays open. */
void api_free(struct api *api);

/* ---- for the handlers (daemon/api/, daemon/public/) ---- */

/* The calling thread's store reader, created on first use and freed when
 * the thread ends. NULL on failure. */
struct store_reader *api_thread_reader(struct api *api);
/* The local IPv4 address (host byte order) of a connection of the
 * listeners, asked of the kernel once per connection and then remembered;
 * an IPv4-mapped IPv6 address counts. 0 when it is not IPv4 or cannot be
 * known. */
uint32_t api_conn_local_ipv4(struct MHD_Connection *c);
/* The store the API was made with (for the public routes' few writes). */
struct store *api_store(struct api *api);
/* What api_set_ready() last said (false until then). */
bool api_is_ready(struct api *api);
/* The eventfd that becomes readable when the API stops (watches poll it). */
int api_stop_fd(struct api *api);
/* True once api_stop() has begun. */
bool api_stopping(struct api *api);
/* Counts the watch streams that are open, so that a stop can let them send
 * their last chunk before the connections are closed. */
int api_watch_count(struct api *api, int delta); /* returns the new count */

/* ---- file answers (daemon/http/sendfile.c) ---- */

/* libmicrohttpd's sendfile() chunk in its polling modes, and what a call
 * of a file answer may be made to move instead. */
#define HTTP_MHD_SENDFILE_CHUNK ((size_t)128 * 1024)
#define HTTP_SENDFILE_CHUNK ((size_t)2 * 1024 * 1024)
/* fd (a regular file, whose fstat() st is) is about to be sent by
 * libmicrohttpd up to file offset end (exclusive): its calls may then
 * move more than libmicrohttpd's chunk, never past end. Call it when the
 * response is made, before it is queued. */
struct stat;
void http_sendfile_span(int fd, const struct stat *st, uint64_t end);
/* What a sendfile() call of count bytes of in_fd at off moves: count, or
 * more when the call is libmicrohttpd's inside a span of in_fd's (for
 * tests; the daemon's sendfile64() asks it). */
size_t http_sendfile_count(int in_fd, uint64_t off, size_t count);
