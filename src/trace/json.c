/*
 * json.c - the Chrome trace-event JSON writer of one process's stream (json.h): a complete
 * event ("X") per call, flow events ("s", "f") per message end with the id both ends agree
 * on, async events ("b", "e") per nonblocking collective, a counter ("C") per bounds sample,
 * an instant ("i") where recording stopped. Times are microseconds with three decimals since
 * the job's origin: the ns exactly.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "trace/json.h"
#include "trace/tracks.h"

static void js_printf(struct trace_stream *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void js_printf(struct trace_stream *s, const char *fmt, ...)
{
	char b[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	if (n > 0)
		out_put(&s->js, b, (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1);
}

/* microseconds with three decimals since t0: the ns exactly */
static void js_us(struct trace_stream *s, int64_t ns)
{
	ns -= s->t0;
	js_printf(s, "%s%" PRId64 ".%03d", ns < 0 ? "-" : "", (ns < 0 ? -ns : ns) / 1000,
	          (int)((ns < 0 ? -ns : ns) % 1000));
}

static const char *fname(const struct trace_stream *s, unsigned f)
{
	return f < s->nfuncs ? s->names[f] : "?";
}

void js_process(struct trace_stream *s)
{
	js_printf(s, ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,"
	          "\"args\":{\"name\":\"%s\"}}", s->rank, s->name);
	js_printf(s, ",\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":%d,\"tid\":0,"
	          "\"args\":{\"sort_index\":%d}}", s->rank, s->rank);
}

void js_message(struct trace_stream *s, const struct rec *r, int t, uint64_t id, int send)
{
	if (!s->json_on)
		return;
	s->json_events += 1;
	if (send) {
		js_printf(s, ",\n{\"ph\":\"s\",\"cat\":\"p2p\",\"name\":\"message\",\"id\":%" PRIu64
		          ",\"pid\":%d,\"tid\":%d,\"ts\":", id >> 11, s->rank, t);
		js_us(s, r->t_g);
		js_printf(s, ",\"args\":{\"to\":%d,\"tag\":%d,\"bytes\":%" PRIu64 "}}", r->peer,
		          r->tag, r->bytes);
	} else {
		js_printf(s, ",\n{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"p2p\",\"name\":\"message\","
		          "\"id\":%" PRIu64 ",\"pid\":%d,\"tid\":%d,\"ts\":", id >> 11, s->rank, t);
		js_us(s, r->t_g);
		/* the receive's own view (its status): a test can hold it against the send's */
		js_printf(s, ",\"args\":{\"from\":%d,\"tag\":%d,\"bytes\":%" PRIu64 "}}", r->peer,
		          r->tag, r->bytes);
	}
}

void js_bound(struct trace_stream *s, const struct rec *r, int t, int64_t hw)
{
	if (!s->json_on)
		return;
	s->json_events++;
	js_printf(s, ",\n{\"ph\":\"C\",\"name\":\"clock bound half-width\",\"pid\":%d,"
	          "\"tid\":%d,\"ts\":", s->rank, t);
	js_us(s, r->t_g);
	js_printf(s, ",\"args\":{\"ns\":%" PRId64 "}}", hw);
}

void js_stop(struct trace_stream *s, int t, int64_t ts, const char *what)
{
	if (!s->json_on)
		return;
	s->json_events++;
	js_printf(s, ",\n{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"hclock\",\"name\":\"%s\","
	          "\"pid\":%d,\"tid\":%d,\"ts\":", what, s->rank, t);
	js_us(s, ts);
	js_printf(s, ",\"args\":{\"errno\":%d}}", s->stop_errno);
}

void js_nb_coll(struct trace_stream *s, const struct rec *r, int t)
{
	if (!s->json_on)
		return;
	s->json_events += 2;
	uint64_t id = (uint64_t)s->rank << 32 | s->nb_id++;
	js_printf(s, ",\n{\"ph\":\"b\",\"cat\":\"nbc\",\"name\":\"%s\",\"id\":%" PRIu64
	          ",\"pid\":%d,\"tid\":%d,\"ts\":", fname(s, r->func), id, s->rank, t);
	js_us(s, r->t_g);
	js_printf(s, ",\"args\":{\"root\":%d,\"bytes\":%" PRIu64 ",\"comm\":\"%016" PRIx64
	          "\"}}", r->peer, r->bytes, r->comm);
	js_printf(s, ",\n{\"ph\":\"e\",\"cat\":\"nbc\",\"name\":\"%s\",\"id\":%" PRIu64
	          ",\"pid\":%d,\"tid\":%d,\"ts\":", fname(s, r->func), id, s->rank, t);
	js_us(s, r->t2_g);
	js_printf(s, "}");
}

void js_call(struct trace_stream *s, const struct rec *r, int t)
{
	if (!s->json_on)
		return;
	s->json_events++;
	js_printf(s, ",\n{\"ph\":\"X\",\"cat\":\"mpi\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,"
	          "\"ts\":", fname(s, r->func), s->rank, t);
	js_us(s, r->t_g);
	int64_t d = r->t2_g - r->t_g;
	js_printf(s, ",\"dur\":%" PRId64 ".%03d", d / 1000, (int)(d % 1000));
	if (r->kind == REC_COLL)
		js_printf(s, ",\"args\":{\"root\":%d,\"bytes\":%" PRIu64 ",\"comm\":\"%016" PRIx64
		          "\"}", r->peer, r->bytes, r->comm);
	else if (r->flags & REC_F_CUT)
		js_printf(s, ",\"args\":{\"returned\":false}");
	js_printf(s, "}");
}
