/*
 * test_otf2.c - the OTF2 reader and writer on archives of known clocks from otf2_gen.
 *
 * Reading: every generated message is paired with its own receive (the true latency of
 * each pair, recovered from the known clocks, lies in the generator's 3-9 us), on the right
 * processes. Writing through the true inverse clocks: the output passes otf2-print
 * -Werror, has no ClockOffset, new ClockProperties, and re-read gives true latencies.
 * A conversion that steps back gets clamped (counted), and the output stays monotonic.
 * Timer resolutions other than 1 GHz convert exactly. Truncated archives fail cleanly.
 *
 * usage: test_otf2 OTF2_GEN
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "align/otf2_reader.h"
#include "align/format.h"
#include "align/trace.h"

#define OTF2 (trace_format_find("otf2")) /* the format under test, from the table */

#include "test.h"

#define MAXN 16
static int64_t off[MAXN], skew[MAXN];
static int nranks;
static char tmpdir[] = "/tmp/hclock_test_otf2.XXXXXX";
static const char *gen;

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void load_truth(const char *dir)
{
	char path[4200], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/truth.csv", dir);
	f = fopen(path, "r");
	nranks = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		int r;
		long long o, s;

		if (sscanf(line, "MPI_Rank_%d,%lld,%lld", &r, &o, &s) == 3 && r < MAXN) {
			off[r] = o;
			skew[r] = s;
			if (r + 1 > nranks)
				nranks = r + 1;
		}
	}
	fclose(f);
}

/* true ns from the read ns of rank r: read = T + off + skew * T / 1e9 */
static int64_t true_of(int r, int64_t ns)
{
	return (int64_t)(((__int128)(ns - off[r]) * 1000000000) / (1000000000 + skew[r]));
}

static int rank_of(const struct trace_set *s, size_t node)
{
	int r = -1;

	sscanf(s->nodes[node].name, "MPI_Rank_%d", &r);
	return r;
}

static int64_t conv_true(void *ctx, size_t node, int64_t ns)
{
	return true_of(rank_of(ctx, node), ns);
}

/* not monotonic: jumps back 1.5 us at every 2 us boundary */
static int64_t conv_saw(void *ctx, size_t node, int64_t ns)
{
	(void)ctx, (void)node;
	return ns - ((ns % 2000) >= 1000 ? 1500 : 0);
}

static int64_t conv_id(void *ctx, size_t node, int64_t ns)
{
	(void)ctx, (void)node;
	return ns;
}

/* every message: the true latency of its pair; returns the number of messages */
static size_t check_pairs(const struct trace_set *s, int truth, const char *what)
{
	static int64_t send_t[100000];
	static int send_node[100000];
	size_t nmsg = 0, bad = 0;

	memset(send_node, -1, sizeof(send_node));
	for (size_t n = 0; n < s->nnodes; n++)
		for (size_t i = 0; i < s->nodes[n].nev; i++) {
			const struct trace_event *e = &s->nodes[n].ev[i];

			if (i && e->time_ns < s->nodes[n].ev[i - 1].time_ns)
				bad++;
			if (e->kind == TRACE_SEND && e->msg < 100000) {
				int r = rank_of(s, n);

				send_t[e->msg] = truth ? true_of(r, e->time_ns) : e->time_ns;
				send_node[e->msg] = (int)n;
				nmsg++;
			}
		}
	TEST_CHECK(bad == 0, "%s: %zu events out of time order", what, bad);
	bad = 0;
	for (size_t n = 0; n < s->nnodes; n++)
		for (size_t i = 0; i < s->nodes[n].nev; i++) {
			const struct trace_event *e = &s->nodes[n].ev[i];
			int64_t lat;

			if (e->kind != TRACE_RECV)
				continue;
			if (e->msg >= 100000 || send_node[e->msg] != e->peer) {
				bad++;
				continue;
			}
			lat = (truth ? true_of(rank_of(s, n), e->time_ns) : e->time_ns) - send_t[e->msg];
			if (lat < 2999 || lat > 9001) {
				if (bad++ < 5)
					fprintf(stderr, "%s: message %" PRIu64 " %s -> %s latency %" PRId64 "\n",
					        what, e->msg, s->nodes[e->peer].name, s->nodes[n].name, lat);
			}
		}
	TEST_CHECK(bad == 0, "%s: %zu receives with a wrong partner or latency", what, bad);
	return nmsg;
}

/* the format's warnings (trace_warn), as the engine would collect them */
static char warned[512];

static void collect_warning(void *ctx, const char *line)
{
	(void)ctx;
	snprintf(warned, sizeof(warned), "%s", line);
}

static void test_read_write(void)
{
	char in[4096], anchor[4200], out[4096], outanchor[8192];
	struct trace_set s, s2;
	const char *p = in;
	size_t nmsg;

	snprintf(in, sizeof(in), "%s/run1", tmpdir);
	if (sh("%s %s --ranks 5 --messages 500 --seed 7", gen, in)) {
		TEST_CHECK(0, "otf2_gen failed");
		return;
	}
	load_truth(in);
	TEST_CHECK(nranks == 5, "truth for %d ranks", nranks);
	snprintf(anchor, sizeof(anchor), "%s/traces.otf2", in);
	TEST_CHECK(OTF2->probe(in) && OTF2->probe(anchor), "probe");
	TEST_CHECK(!OTF2->probe(tmpdir), "probe of a directory without an archive");

	memset(&s, 0, sizeof(s));
	if (OTF2->read(&p, 1, &s)) {
		TEST_CHECK(0, "read: %s", hclock_last_error());
		return;
	}
	TEST_CHECK(s.nnodes == 5, "%zu nodes", s.nnodes);
	for (size_t n = 0; n < s.nnodes; n++)
		TEST_CHECK(rank_of(&s, n) == (int)n, "node %zu is %s", n, s.nodes[n].name);
	nmsg = check_pairs(&s, 1, "input");
	TEST_CHECK(nmsg == 500, "%zu messages matched of 500", nmsg);

	snprintf(out, sizeof(out), "%s/out", tmpdir);
	mkdir(out, 0755);
	s.warn = collect_warning;
	warned[0] = 0;
	if (OTF2->write(&s, conv_true, &s, out)) {
		TEST_CHECK(0, "write: %s", hclock_last_error());
	} else {
		TEST_CHECK(trace_otf2_clamps(&s) == 0, "%" PRIu64 " clamps", trace_otf2_clamps(&s));
		TEST_CHECK(!warned[0], "warning from a monotonic conversion: %s", warned);
		TEST_CHECK(trace_otf2_clock_offsets_dropped(&s) == 12, "%" PRIu64 " ClockOffsets dropped",
		      trace_otf2_clock_offsets_dropped(&s));
		snprintf(outanchor, sizeof(outanchor), "%s/%s/traces.otf2", out,
		         trace_otf2_output_dir(&s));
		TEST_CHECK(sh("otf2-print -Werror --silent %s >/dev/null 2>&1", outanchor) == 0,
		      "otf2-print -Werror rejects %s", outanchor);
		TEST_CHECK(sh("otf2-print -C %s 2>&1 | grep -q CLOCK_OFFSET", outanchor) != 0,
		      "ClockOffset left in the output");
		TEST_CHECK(sh("otf2-print -G %s 2>&1 | grep -q 'CLOCK_PROPERTIES.*Global Offset: 17000000000'",
		         outanchor) == 0, "ClockProperties");
		/* same events per location as the input */
		TEST_CHECK(sh("test \"$(otf2-print %s | awk 'NR>5{print $1, $2}' | sort | uniq -c | md5sum)\" = "
		         "\"$(otf2-print %s | awk 'NR>5{print $1, $2}' | sort | uniq -c | md5sum)\"",
		         anchor, outanchor) == 0, "event kinds per location differ");
		{
			const char *op = outanchor;

			memset(&s2, 0, sizeof(s2));
			if (OTF2->read(&op, 1, &s2)) {
				TEST_CHECK(0, "re-read: %s", hclock_last_error());
			} else {
				TEST_CHECK(check_pairs(&s2, 0, "output") == 500, "output messages");
				OTF2->release(&s2);
			}
		}
		/* writing again replaces the earlier result */
		TEST_CHECK(OTF2->write(&s, conv_true, &s, out) == 0,
		      "second write: %s", hclock_last_error());
		TEST_CHECK(sh("ls -a %s | grep -q '^\\.'\"run1\"", out) != 0, "temporary left in %s", out);
	}
	/* a conversion that steps back: clamped, and the output still valid */
	if (OTF2->write(&s, conv_saw, NULL, out)) {
		TEST_CHECK(0, "saw write: %s", hclock_last_error());
	} else {
		TEST_CHECK(trace_otf2_clamps(&s) > 0, "no clamps from a conversion that steps back");
		TEST_CHECK(strstr(warned, "event times clamped to keep locations monotonic"),
		           "no warning of the clamps: '%s'", warned);
		TEST_CHECK(sh("otf2-print -Werror --silent %s >/dev/null 2>&1", outanchor) == 0,
		      "otf2-print rejects the clamped output");
	}
	/* the input's own parent as output directory: refused, input intact */
	TEST_CHECK(OTF2->write(&s, conv_id, NULL, tmpdir) == HCLOCK_EINVAL &&
	      strstr(hclock_last_error(), "input"), "overwrite of the input: %s", hclock_last_error());
	TEST_CHECK(access(anchor, R_OK) == 0, "input archive gone");
	/* an unwritable output directory: an error, nothing else */
	TEST_CHECK(OTF2->write(&s, conv_id, NULL, "/nonexistent/dir") == HCLOCK_EIO &&
	      strstr(hclock_last_error(), "/nonexistent/dir"), "missing out dir: %s",
	      hclock_last_error());
	OTF2->release(&s);
}

/* other timer resolutions: the identity conversion gives back the same event times */
static void test_resolution(const char *res)
{
	char in[4096], out[4096], a[8192], b[8192];
	struct trace_set s;
	const char *p = in;

	snprintf(in, sizeof(in), "%s/res%s", tmpdir, res);
	snprintf(out, sizeof(out), "%s/outres%s", tmpdir, res);
	mkdir(out, 0755);
	if (sh("%s %s --messages 100 --resolution %s --no-clock-offsets", gen, in, res)) {
		TEST_CHECK(0, "otf2_gen --resolution %s", res);
		return;
	}
	memset(&s, 0, sizeof(s));
	if (OTF2->read(&p, 1, &s)) {
		TEST_CHECK(0, "read res %s: %s", res, hclock_last_error());
		return;
	}
	load_truth(in);
	TEST_CHECK(check_pairs(&s, 1, res) == 100, "messages at resolution %s", res);
	TEST_CHECK(OTF2->write(&s, conv_id, NULL, out) == 0, "write: %s",
	      hclock_last_error());
	snprintf(a, sizeof(a), "%s/traces.otf2", in);
	snprintf(b, sizeof(b), "%s/res%s/traces.otf2", out, res);
	TEST_CHECK(sh("bash -c 'cmp -s <(otf2-print %s | tail -n +5) <(otf2-print %s | tail -n +5)'",
	         a, b) == 0, "identity conversion changed events at resolution %s", res);
	OTF2->release(&s);
}

static void test_bad(void)
{
	char in[4096], evt[8192];
	struct trace_set s;
	const char *p = in;
	const char *missing = "/nonexistent/x.otf2";

	memset(&s, 0, sizeof(s));
	TEST_CHECK(OTF2->read(&missing, 1, &s) == HCLOCK_EINVAL &&
	      strstr(hclock_last_error(), missing), "missing: %s", hclock_last_error());
	snprintf(in, sizeof(in), "%s/run1", tmpdir);
	snprintf(evt, sizeof(evt), "%s/traces/2.evt", in);
	/* cut one event file at several lengths, garble it */
	for (int cut = 0; cut < 8; cut++) {
		int r;

		if (sh("cp %s %s.orig 2>/dev/null; head -c %d %s.orig > %s", evt, evt,
		       cut < 6 ? cut * 997 + 3 : 64, evt, evt))
			break;
		if (cut == 7)
			sh("head -c 2000 /dev/urandom >> %s", evt);
		memset(&s, 0, sizeof(s));
		r = OTF2->read(&p, 1, &s);
		TEST_CHECK(r == HCLOCK_EINVAL && strstr(hclock_last_error(), "traces.otf2"),
		           "cut %d: %d %s", cut, r, r ? hclock_last_error() : "accepted");
		if (r == 0)
			OTF2->release(&s);
		sh("mv %s.orig %s", evt, evt);
	}
	/* a garbage anchor */
	sh("cp %s/traces.otf2 %s/anchor.orig && head -c 40 /dev/urandom > %s/traces.otf2", in, in, in);
	memset(&s, 0, sizeof(s));
	TEST_CHECK(OTF2->read(&p, 1, &s) == HCLOCK_EINVAL, "garbage anchor accepted");
	sh("mv %s/anchor.orig %s/traces.otf2", in, in);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_otf2 OTF2_GEN\n");
		return 2;
	}
	gen = argv[1];
	if (!mkdtemp(tmpdir))
		return 1;
	test_read_write();
	test_resolution("100000000");
	test_resolution("3000000000");
	test_bad();
	if (!getenv("KEEP"))
		sh("rm -rf %s", tmpdir);
	if (test_failures)
		fprintf(stderr, "%d test_failures\n", test_failures);
	else
		printf("ok\n");
	return test_failures ? 1 : 0;
}
