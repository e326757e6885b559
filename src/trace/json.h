/*
 * json.h - the Chrome JSON writer: one process's records as trace-event JSON objects, each
 * preceded by ",\n", written to the stream's JSON part (tracks.h's s->js) as stream.c
 * hands the records over; the launcher puts the parts between the array's brackets
 * (assemble.h). Each event is counted (s->json_events) and left out once s->json_on is off
 * (a process above its JSON limit). MPI-free.
 */
#ifndef HCLOCK_TRACE_JSON_H
#define HCLOCK_TRACE_JSON_H

#include <stdint.h>

#include "util/record.h"

struct trace_stream;

/* The process's name and sort index (metadata events), at the stream's start. */
void js_process(struct trace_stream *s);
/* A call of thread t (REC_CALL, a blocking REC_COLL): a complete event. */
void js_call(struct trace_stream *s, const struct rec *r, int t);
/* A message's end (send: 1) with the id both ends agree on (util/msgmatch.h). */
void js_message(struct trace_stream *s, const struct rec *r, int t, uint64_t id, int send);
/* A nonblocking collective: an async begin and end. */
void js_nb_coll(struct trace_stream *s, const struct rec *r, int t);
/* A bounds sample: the half-width hw (ns) as a counter. */
void js_bound(struct trace_stream *s, const struct rec *r, int t, int64_t hw);
/* An instant named what where recording stopped (ts, ns), with s->stop_errno. */
void js_stop(struct trace_stream *s, int t, int64_t ts, const char *what);

#endif
