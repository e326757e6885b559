/* test_settings.c - the tracer's settings (src/trace/settings.c) without MPI: defaults, a
 * round trip options -> struct -> environment -> struct, an option over its variable, one
 * line naming the option or variable for each bad value, and a garbage pass (random bytes
 * into every field) that must not crash and must say why whenever it refuses. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hclock.h"
#include "test.h"
#include "trace/settings.h"
#include "util/rng.h"

static const char *const vars[TS_COUNT] = {
	"HCLOCK_TRACE_DIR", "HCLOCK_TRACE_SYNC", "HCLOCK_TRACE_EMULATE", "HCLOCK_TRACE_FILTER",
	"HCLOCK_TRACE_BUFFER", "HCLOCK_TRACE_TRUTH", "HCLOCK_TRACE_TEST_SLOW_WRITER",
	"HCLOCK_TRACE_JSON", "HCLOCK_TRACE_MAX_SIZE", "HCLOCK_TRACE_WHEN_FULL",
	"HCLOCK_TRACE_TEST_WAIT_MAX"};

static void clear_env(void)
{
	for (int f = 0; f < TS_COUNT; f++)
		unsetenv(vars[f]);
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* refused, with one line that names name */
static void refused(const char *const *given, const char *name)
{
	struct trace_settings s;
	char err[600] = "";
	int rc = trace_settings_load(&s, given, err, sizeof(err));
	TEST_CHECK(rc == -1 && strstr(err, name) && !strchr(err, '\n') &&
	           (strstr(err, "expected") || strstr(err, "needs")),
	           "%s: rc %d, '%s'", name, rc, err);
}

int main(void)
{
	struct trace_settings s, back;
	char err[600], spec[512];
	test_seed = 11;
	clear_env();
	TEST_CHECK(!trace_settings_from_env(&s, err, sizeof(err)), "defaults: %s", err);
	TEST_CHECK(!strcmp(s.dir, "hclock-trace") && !s.sync && !s.emulate && !s.filter &&
	           s.buffer == 65536 && !s.event_truth && !s.slow_writer_ns && !s.max_size &&
	           !s.when_full_wait && s.wait_max_ns == TRACE_WAIT_MAX_NS,
	           "defaults");
	TEST_CHECK(!strcmp(trace_settings_sync(&s, spec, sizeof(spec)),
	                   "cont(" HCLOCK_SYNC_DEFAULT_SPEC ",drive=progress)"), "%s", spec);

	/* options -> struct -> environment -> struct */
	const char *given[TS_COUNT] = {"d/x", "cont(hca3/100/skampi/20)", "skew=1e-4,nodes=2",
	                               "MPI_Allreduce,!MPI_Comm_*", "32", "1", "2000", "1", "3m",
	                               "wait", "250"};
	TEST_CHECK(!trace_settings_load(&s, given, err, sizeof(err)), "options: %s", err);
	TEST_CHECK(!trace_settings_to_env(&s), "to_env");
	TEST_CHECK(!trace_settings_from_env(&back, err, sizeof(err)), "back: %s", err);
	TEST_CHECK(same(s.dir, back.dir) && same(s.sync, back.sync) &&
	           same(s.emulate, back.emulate) && same(s.filter, back.filter) &&
	           s.buffer == back.buffer && back.buffer == 32 && back.event_truth == 1 &&
	           back.slow_writer_ns == 2000000 && back.json == 1 &&
	           back.max_size == 3u << 20 && back.when_full_wait == 1 &&
	           back.wait_max_ns == 250000000, "round trip");
	TEST_CHECK(!strcmp(trace_settings_sync(&back, spec, sizeof(spec)),
	                   "cont(hca3/100/skampi/20,drive=progress)"), "%s", spec);
	/* an empty variable is unset; the option wins over its variable */
	setenv("HCLOCK_TRACE_BUFFER", "", 1);
	setenv("HCLOCK_TRACE_SYNC", "hca9", 1);
	const char *sync_only[TS_COUNT] = {[TS_SYNC] = "none"};
	TEST_CHECK(!trace_settings_load(&s, sync_only, err, sizeof(err)) && s.buffer == 65536 &&
	           !strcmp(s.sync, "none"), "option over variable: %s", err);
	refused(NULL, "HCLOCK_TRACE_SYNC");
	clear_env();

	/* every bad value, as an option and as its variable */
	static const struct {
		enum trace_field f;
		const char *opt, *val;
	} bad[] = {
		{TS_DIR, "-o", ""},           {TS_SYNC, "--sync", "hca9/1"},
		{TS_SYNC, "--sync", ""},      {TS_EMULATE, "--emulate", "skew=lots"},
		{TS_FILTER, "--filter", "MPI_Nonesuch"}, {TS_FILTER, "--filter", "MPI_Send,,"},
		{TS_BUFFER, "--buffer", "15"}, {TS_BUFFER, "--buffer", "67108865"},
		{TS_BUFFER, "--buffer", "64k"}, {TS_BUFFER, "--buffer", ""},
		{TS_TRUTH, "--event-truth", "2"}, {TS_SLOW_WRITER, NULL, "10000001"},
		{TS_SLOW_WRITER, NULL, "-1"}, {TS_JSON, "--json", "yes"},
		{TS_MAX_SIZE, "--max-size", "1"}, {TS_MAX_SIZE, "--max-size", "63K"},
		{TS_MAX_SIZE, "--max-size", "10MB"}, {TS_MAX_SIZE, "--max-size", "-5M"},
		{TS_MAX_SIZE, "--max-size", "1025T"}, {TS_MAX_SIZE, "--max-size", "1.5G"},
		{TS_MAX_SIZE, "--max-size", ""},
		{TS_WHEN_FULL, "--when-full", "block"}, {TS_WHEN_FULL, "--when-full", "WAIT"},
		{TS_WHEN_FULL, "--when-full", ""}, {TS_WAIT_MAX, NULL, "0"},
		{TS_WAIT_MAX, NULL, "600001"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *g[TS_COUNT] = {0};
		g[bad[i].f] = bad[i].val;
		if (bad[i].opt)
			refused(g, bad[i].opt);
		if (bad[i].val[0]) { /* an empty variable is unset */
			setenv(vars[bad[i].f], bad[i].val, 1);
			refused(NULL, vars[bad[i].f]);
			unsetenv(vars[bad[i].f]);
		}
	}
	const char *truth[TS_COUNT] = {[TS_TRUTH] = "1"};
	refused(truth, "--event-truth");
	setenv("HCLOCK_TRACE_TRUTH", "1", 1);
	refused(NULL, "HCLOCK_TRACE_TRUTH=1");
	clear_env();

	/* garbage: random bytes (NUL-terminated) into a random field */
	struct rng r;
	rng_seed(&r, test_seed);
	for (int i = 0; i < 5000; i++) {
		char v[48];
		size_t n = rng_u64(&r) % sizeof(v);
		for (size_t k = 0; k < n; k++)
			v[k] = (char)(1 + rng_u64(&r) % (i % 2 ? 255 : 127));
		v[n] = 0;
		const char *g[TS_COUNT] = {0};
		g[rng_u64(&r) % TS_COUNT] = v;
		err[0] = 0;
		if (trace_settings_load(&s, g, err, sizeof(err)))
			TEST_CHECK(err[0], "garbage %d refused without a line", i);
	}
	return test_end("test_settings");
}
