/*
 * settings.c - the tracer's settings (settings.h): one validator per field, used alike for
 * the launcher's options and for the variables the library reads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emulate/emu.h"
#include "hclock.h"
#include "trace/filter.h"
#include "util/parse.h"
#include "trace/settings.h"
#include "trace_funcs.h"

#define DEFAULT_DIR "hclock-trace"
#define DEFAULT_BUFFER 65536L
#define BUFFER_MIN 16L
#define BUFFER_MAX (1L << 26)
#define DIR_MAX 4000      /* bytes: DIR/raw/rank.R fits the tracer's paths */
#define SPEC_MAX 400      /* bytes of a sync spec, drive=progress added */
#define SLOW_WRITER_MAX_US 10000000LL
#define MAX_SIZE_MIN (64ULL << 10) /* bytes: the header and names (~12 KiB) and some records */
#define MAX_SIZE_MAX (1ULL << 50)
#define WAIT_MAX_MS 600000LL

/* a validator: v (not NULL) is the value NAME gave; sets its field or says why not */
typedef int (*field_set)(struct trace_settings *s, const char *v, const char *name, char *err,
                         size_t len);

__attribute__((format(printf, 3, 4))) static int say(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int set_dir(struct trace_settings *s, const char *v, const char *name, char *err,
                   size_t len)
{
	if (!*v)
		return say(err, len, "%s '': expected a directory for the trace", name);
	if (strlen(v) > DIR_MAX)
		return say(err, len, "%s %.60s...: the path is too long (at most %d bytes)", name, v,
		           DIR_MAX);
	s->dir = v;
	return 0;
}

static int set_sync(struct trace_settings *s, const char *v, const char *name, char *err,
                    size_t len)
{
	if (strlen(v) > SPEC_MAX - 32)
		return say(err, len, "%s %.60s...: the spec is too long (at most %d bytes)", name, v,
		           SPEC_MAX - 32);
	s->sync = v;
	char spec[SPEC_MAX];
	hclock_sync *chk = NULL;
	if (hclock_sync_create(trace_settings_sync(s, spec, sizeof(spec)), &chk))
		return say(err, len, "%s: %s", name, hclock_last_error());
	hclock_sync_free(chk);
	return 0;
}

static int set_emulate(struct trace_settings *s, const char *v, const char *name, char *err,
                       size_t len)
{
	struct emu_params ep;
	if (emu_parse(v, &ep))
		return say(err, len, "%s: %s", name, hclock_last_error());
	s->emulate = v;
	return 0;
}

static int set_filter(struct trace_settings *s, const char *v, const char *name, char *err,
                      size_t len)
{
	static const char eg[] = "expected names or patterns, comma separated, e.g. "
	                         "MPI_Allreduce,MPI_*send or !MPI_Comm_rank";
	char bad[128];
	if (trace_filter_apply(v, trace_func_names, TF_COUNT, NULL, bad, sizeof(bad))) {
		if (bad[0] && strcmp(bad, "!"))
			return say(err, len, "%s: '%s' names no MPI function of this MPI library (%s)",
			           name, bad, eg);
		return say(err, len, "%s '%.100s': an empty item (%s)", name, v, eg);
	}
	s->filter = v;
	return 0;
}

/* a whole decimal number in [lo, hi] */
static int whole(const char *v, long long lo, long long hi, long long *out)
{
	char *end;
	errno = 0;
	long long x = strtoll(v, &end, 10);
	if (end == v || *end || errno || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

static int set_buffer(struct trace_settings *s, const char *v, const char *name, char *err,
                      size_t len)
{
	long long b;
	if (whole(v, BUFFER_MIN, BUFFER_MAX, &b))
		return say(err, len, "%s '%.100s': expected a number of records from %ld to %ld", name,
		           v, BUFFER_MIN, BUFFER_MAX);
	s->buffer = (long)b;
	return 0;
}

static int set_truth(struct trace_settings *s, const char *v, const char *name, char *err,
                     size_t len)
{
	if (strcmp(v, "0") && strcmp(v, "1") && strcmp(v, "realtime"))
		return say(err, len, "%s '%.100s': expected 1 (on: the emulation's truth), realtime "
		           "(the hosts' shared CLOCK_REALTIME) or 0 (off)", name, v);
	s->event_truth = v[0] == '1' ? 1 : v[0] == 'r' ? TRACE_TRUTH_REALTIME : 0;
	return 0;
}

static int set_json(struct trace_settings *s, const char *v, const char *name, char *err,
                    size_t len)
{
	if (strcmp(v, "0") && strcmp(v, "1"))
		return say(err, len, "%s '%.100s': expected 1 (always) or 0 (small traces only)", name,
		           v);
	s->json = v[0] == '1';
	return 0;
}

static int set_max_size(struct trace_settings *s, const char *v, const char *name, char *err,
                        size_t len)
{
	uint64_t b;
	if (parse_bytes(v, strlen(v), MAX_SIZE_MIN, MAX_SIZE_MAX, &b))
		return say(err, len, "%s '%.100s': expected %s, from 64K to 1024T", name, v,
		           PARSE_SIZE_RULE);
	s->max_size = b;
	return 0;
}

static int set_slow_writer(struct trace_settings *s, const char *v, const char *name, char *err,
                           size_t len)
{
	long long us;
	if (whole(v, 0, SLOW_WRITER_MAX_US, &us))
		return say(err, len, "%s '%.100s': expected microseconds from 0 to %lld (tests only)",
		           name, v, SLOW_WRITER_MAX_US);
	s->slow_writer_ns = 1000 * us;
	return 0;
}

static int set_when_full(struct trace_settings *s, const char *v, const char *name, char *err,
                         size_t len)
{
	if (strcmp(v, "wait") && strcmp(v, "drop"))
		return say(err, len, "%s '%.100s': expected wait (the program waits for the writer) "
		           "or drop (records dropped and counted)", name, v);
	s->when_full_wait = v[0] == 'w';
	return 0;
}

static int set_wait_max(struct trace_settings *s, const char *v, const char *name, char *err,
                        size_t len)
{
	long long ms;
	if (whole(v, 1, WAIT_MAX_MS, &ms))
		return say(err, len, "%s '%.100s': expected milliseconds from 1 to %lld (tests only)",
		           name, v, WAIT_MAX_MS);
	s->wait_max_ns = 1000000 * ms;
	return 0;
}

static const struct field {
	const char *option, *env;
	field_set set;
} fields[TS_COUNT] = {
	[TS_DIR] = {"-o", "HCLOCK_TRACE_DIR", set_dir},
	[TS_SYNC] = {"--sync", "HCLOCK_TRACE_SYNC", set_sync},
	[TS_EMULATE] = {"--emulate", "HCLOCK_TRACE_EMULATE", set_emulate},
	[TS_FILTER] = {"--filter", "HCLOCK_TRACE_FILTER", set_filter},
	[TS_BUFFER] = {"--buffer", "HCLOCK_TRACE_BUFFER", set_buffer},
	[TS_TRUTH] = {"--event-truth", "HCLOCK_TRACE_TRUTH", set_truth},
	[TS_SLOW_WRITER] = {NULL, "HCLOCK_TRACE_TEST_SLOW_WRITER", set_slow_writer},
	[TS_JSON] = {"--json", "HCLOCK_TRACE_JSON", set_json},
	[TS_MAX_SIZE] = {"--max-size", "HCLOCK_TRACE_MAX_SIZE", set_max_size},
	[TS_WHEN_FULL] = {"--when-full", "HCLOCK_TRACE_WHEN_FULL", set_when_full},
	[TS_WAIT_MAX] = {NULL, "HCLOCK_TRACE_TEST_WAIT_MAX", set_wait_max},
};

int trace_settings_load(struct trace_settings *s, const char *const *given, char *err,
                        size_t errlen)
{
	*s = (struct trace_settings){.dir = DEFAULT_DIR, .buffer = DEFAULT_BUFFER,
	                             .wait_max_ns = TRACE_WAIT_MAX_NS};
	int opt[TS_COUNT] = {0};
	for (int f = 0; f < TS_COUNT; f++) {
		const char *v = given ? given[f] : NULL, *name = fields[f].option;
		opt[f] = v != NULL;
		if (!v) {
			v = getenv(fields[f].env);
			name = fields[f].env;
		}
		if (v && (*v || opt[f]) && fields[f].set(s, v, name, err, errlen))
			return -1;
	}
	if (s->event_truth == 1 && !s->emulate)
		return say(err, errlen, "%s needs %s (the truth comes from emulated clocks)",
		           opt[TS_TRUTH] ? "--event-truth" : "HCLOCK_TRACE_TRUTH=1",
		           opt[TS_TRUTH] ? "--emulate SPEC" : "HCLOCK_TRACE_EMULATE");
	return 0;
}

int trace_settings_from_env(struct trace_settings *s, char *err, size_t errlen)
{
	return trace_settings_load(s, NULL, err, errlen);
}

static int put(enum trace_field f, const char *v)
{
	return v ? setenv(fields[f].env, v, 1) : unsetenv(fields[f].env);
}

int trace_settings_to_env(const struct trace_settings *s)
{
	char buf[32], us[32], ms[32], wm[32];
	snprintf(buf, sizeof(buf), "%ld", s->buffer);
	snprintf(wm, sizeof(wm), "%lld", (long long)(s->wait_max_ns / 1000000));
	snprintf(ms, sizeof(ms), "%llu", (unsigned long long)s->max_size);
	snprintf(us, sizeof(us), "%lld", (long long)(s->slow_writer_ns / 1000));
	int rc = put(TS_DIR, s->dir) | put(TS_SYNC, s->sync) | put(TS_EMULATE, s->emulate) |
	         put(TS_FILTER, s->filter) | put(TS_BUFFER, buf) |
	         put(TS_TRUTH, s->event_truth == 1 ? "1" : s->event_truth ? "realtime" : NULL) |
	         put(TS_SLOW_WRITER, s->slow_writer_ns ? us : NULL) |
	         put(TS_JSON, s->json ? "1" : NULL) | put(TS_MAX_SIZE, s->max_size ? ms : NULL) |
	         put(TS_WHEN_FULL, s->when_full_wait ? "wait" : NULL) |
	         put(TS_WAIT_MAX, s->wait_max_ns != TRACE_WAIT_MAX_NS ? wm : NULL);
	return rc ? -1 : 0;
}

const char *trace_settings_sync(const struct trace_settings *s, char *buf, size_t len)
{
	const char *spec = s->sync;
	if (!spec) {
		snprintf(buf, len, "cont(%s,drive=progress)", HCLOCK_SYNC_DEFAULT_SPEC);
		return buf;
	}
	size_t sl = strlen(spec);
	if (!strncmp(spec, "cont(", 5) && !strstr(spec, "drive=") && spec[sl - 1] == ')')
		snprintf(buf, len, "%.*s,drive=progress)", (int)(sl - 1), spec);
	else
		snprintf(buf, len, "%s", spec);
	return buf;
}
