/*
 * settings.h - the tracer's settings, in one struct with one parser and one validator per
 * field, shared by the launcher (`hclock trace`, tools/cmd_trace.c) and the preloaded
 * library (tracer.c). They travel from one to the other as environment variables:
 *
 *   launcher's options (over its environment) -> struct -> HCLOCK_TRACE_* -> struct in the
 *   library, at MPI_Init
 *
 * Every field has an option and a variable (the test-only one a variable only). An empty
 * variable counts as unset. A bad value is refused with one line naming the option or the
 * variable it came from, what was wrong and what would be right; nobody falls back to a
 * default silently.
 */
#ifndef HCLOCK_TRACE_SETTINGS_H
#define HCLOCK_TRACE_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#define TRACE_TRUTH_REALTIME 2 /* event_truth: --event-truth=realtime */

struct trace_settings {
	const char *dir;     /* output directory: records in DIR/raw, outputs in DIR */
	const char *sync;    /* sync spec as given; NULL: the default (trace_settings_sync) */
	const char *emulate; /* emulated clocks (hclock_emu_create's spec); NULL: real ones */
	const char *filter;  /* which calls are recorded (filter.h); NULL: every call */
	long buffer;         /* records per buffer, two buffers a process (64 B a record):
	                        16 to 2^26 */
	int json;            /* 1: DIR/trace.json whatever the trace's size (--json); 0: only
	                        for a trace of at most STREAM_JSON_LIMIT records (stream.h) */
	int event_truth;     /* 1: the true error of every reading, summarized at MPI_Finalize
	                        (emulated clocks); TRACE_TRUTH_REALTIME: the same on real
	                        clocks, the truth from the shared CLOCK_REALTIME; 0: off */
	uint64_t max_size;   /* bytes of records a process writes at most (its raw file, header
	                        included); recording stops there; 0: no limit */
	int64_t slow_writer_ns; /* tests only: the writer thread sleeps this long before each
	                           buffer it writes (a slow disk), ns; 0: never */
	int when_full_wait;  /* both buffers full: 1: the program's thread waits for the writer
	                        (--when-full wait), 0: the record is dropped and counted (drop,
	                        the default) */
	int64_t wait_max_ns; /* waiting: one wait's deadline, after which the tracer drops from
	                        then on, ns (default TRACE_WAIT_MAX_NS; tests set it) */
};

#define TRACE_WAIT_MAX_NS 10000000000LL /* 10 s: a writer slower than that is stuck */

/* The fields, in the order they are read; each has an option and a variable (settings.c's
 * table): -o HCLOCK_TRACE_DIR, --sync HCLOCK_TRACE_SYNC, --emulate HCLOCK_TRACE_EMULATE,
 * --filter HCLOCK_TRACE_FILTER, --buffer HCLOCK_TRACE_BUFFER, --event-truth
 * HCLOCK_TRACE_TRUTH (1 or 0), --json HCLOCK_TRACE_JSON (1 or 0), --max-size
 * HCLOCK_TRACE_MAX_SIZE (util/parse.h's size), --when-full HCLOCK_TRACE_WHEN_FULL (wait
 * or drop), and HCLOCK_TRACE_TEST_SLOW_WRITER (microseconds) and HCLOCK_TRACE_TEST_WAIT_MAX
 * (milliseconds) alone. */
enum trace_field {
	TS_DIR,
	TS_SYNC,
	TS_EMULATE,
	TS_FILTER,
	TS_BUFFER,
	TS_TRUTH,
	TS_SLOW_WRITER,
	TS_JSON,
	TS_MAX_SIZE,
	TS_WHEN_FULL,
	TS_WAIT_MAX,
	TS_COUNT
};

/*
 * Fill s: each field from given[f] (the launcher's option value, "1" for a flag; given or
 * given[f] NULL: not given), else from its variable, else its default; each value through
 * the field's validator (a spec is parsed as hclock_sync_create and hclock_emu_create would,
 * a filter checked against this MPI library's functions), then the fields against each
 * other (event_truth needs emulate). The strings of s point into given and the environment.
 * Returns 0, or -1 with one line in err (errlen bytes) naming the option or variable the
 * first bad value came from, what was wrong and what would be right.
 */
int trace_settings_load(struct trace_settings *s, const char *const *given, char *err,
                        size_t errlen);

/* The same from the environment alone (the library at MPI_Init). */
int trace_settings_from_env(struct trace_settings *s, char *err, size_t errlen);

/* Set every HCLOCK_TRACE_* variable from s (unset those at their default), so that the
 * program's tracer reads exactly s. Returns 0, or -1 without memory. */
int trace_settings_to_env(const struct trace_settings *s);

/* The sync spec the tracer runs, in buf (len bytes; returns buf): s->sync or the default
 * cont(HCLOCK_SYNC_DEFAULT_SPEC), a cont(...) spec without drive= given drive=progress (the
 * program's MPI calls drive the clock: no thread in its process). */
const char *trace_settings_sync(const struct trace_settings *s, char *buf, size_t len);

#endif
