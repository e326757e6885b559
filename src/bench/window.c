/*
 * window.c - scheme "window", in the style of SKaMPI's synchronized windows: a batch of
 * repetitions gets start times t0 + i * w on the global clock (t0 broadcast by the
 * reference with the start slack, as in Round-Time). A repetition is invalid on every rank
 * when any process reached its start time late (the previous call, or the process, ran
 * over) or when any process's call ended after the next start (overlong). After each batch
 * the flags are agreed on and the window adapts: doubled when more than 1/8 of the batch
 * was invalid, shrunk by 1/8 (never below 1.25 x the batch's longest valid latency) when
 * none was. The first window is twice the longest of 5 harmonized trial calls.
 *
 * Arguments: batch=N repetitions per batch (1-64, default 16); w=T the first window
 * (a duration, at least 1 us), instead of the trial calls.
 */
#include <stdlib.h>

#include "bench/buf.h"
#include "bench/scheme.h"
#include "hclock_api.h"
#include "transport/comm.h"
#include "util/err.h"
#include "util/parse.h"

#define WBATCH 16
#define WBATCH_MAX 64
#define TRIALS 5
#define MIN_WINDOW_NS 1000
#define MAX_WINDOW_NS (86400 * (int64_t)1000000000)

struct window {
	struct bench_scheme base;
	int batch;       /* repetitions per harmonized batch */
	int64_t w0_ns;   /* first window, ns; 0: from trial calls */
};

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* Longest of TRIALS harmonized calls (last exit minus the common start), ns. All trials
 * are made even after a failure (the peers are in the same calls); 0 or the first error. */
static int trial_latency(const struct bench_params *p, struct bench_buf *b, int64_t slack,
                         int64_t *lat_ns)
{
	int64_t longest = 0;
	int rc = 0;
	for (int i = 0; i < TRIALS; i++) {
		int64_t common = 0, late = 0, end, last = 0;
		int hrc = hclock_harmonize(p->comm, p->clk, slack, &common, &late);
		int c = bench_op_call(b);
		end = hclock_now(p->clk);
		int arc = PMPI_Allreduce(&end, &last, 1, MPI_INT64_T, MPI_MAX, p->comm);
		rc = rc ? rc : hrc ? hrc : c ? c : comm_check(arc, "MPI_Allreduce (trial calls)");
		longest = max64(longest, last - common);
	}
	*lat_ns = longest;
	return rc;
}

/* One batch of nb repetitions at t0 + i w: entry, exit and this rank's invalid flags. */
static int window_batch(const struct bench_params *p, struct bench_buf *b, int nb, int64_t t0,
                        int64_t late, int64_t w, int64_t *st, int64_t *en, int64_t *fl)
{
	int rc = 0;
	for (int i = 0; i < nb; i++) {
		int64_t start = t0 + i * w;
		fl[i] = i == 0 ? late > 0 : hclock_now(p->clk) > start;
		if (!fl[i])
			hclock_wait_until(p->clk, start);
		st[i] = hclock_now(p->clk);
		int c = bench_op_call(b);
		en[i] = hclock_now(p->clk);
		rc = rc ? rc : c;
		if (en[i] > start + w)
			fl[i] = 1; /* overlong: it ran into the next start */
	}
	return rc;
}

static int window_measure(struct bench_scheme *s, const struct bench_params *p,
                          struct bench_buf *b, struct bench_series *out)
{
	const struct window *ws = container_of(s, struct window, base);
	const int nb = ws->batch;
	int64_t st[WBATCH_MAX], en[WBATCH_MAX], fl[WBATCH_MAX], inv[WBATCH_MAX];
	int64_t first[WBATCH_MAX], last[WBATCH_MAX], w = ws->w0_ns;
	struct bench_stop stop;
	struct bench_slack slack;
	/* after a failure this rank goes on to the next agreement, where all stop */
	int rc = scheme_warmup(p, b), arc;
	slack_init(&slack, scheme_slack_base(p, 1), p->time_slice_ns / 10);
	if (!w) {
		int trc = trial_latency(p, b, slack.cur_ns, &w);
		rc = rc ? rc : trc;
		w = max64(2 * w, MIN_WINDOW_NS);
	}
	stop_begin(&stop, p);
	for (int done = 0; !done;) {
		int64_t t0 = 0, late = 0;
		int prc = bench_buf_prepare(b); /* --buffers offcache: once per batch */
		int hrc = hclock_harmonize(p->comm, p->clk, slack.cur_ns, &t0, &late);
		hrc = hrc ? hrc : prc;
		int brc = window_batch(p, b, nb, t0, late || hrc, w, st, en, fl);
		rc = rc ? rc : hrc ? hrc : brc;
		int oot = stop_out_of_time(&stop, p->clk) || rc;
		if ((arc = scheme_agree(p->comm, nb, fl, st, en, oot, inv, first, last, &done)))
			return rc ? rc : arc;
		slack_update(&slack, inv[0] != 0);
		int ninv = 0, full = 0;
		int64_t longest = 0;
		for (int i = 0; i < nb && !full; i++) {
			int64_t start = t0 + i * w;
			if (!rc)
				rc = bench_series_add(out, start, st[i], en[i], !inv[i]);
			if (inv[i]) {
				ninv++;
				continue;
			}
			longest = max64(longest, last[i] - start);
			full = stop_add_valid(&stop, (double)(last[i] - start));
		}
		if (ninv > nb / 8)
			w = 2 * w < stop.slice_ns ? 2 * w : max64(stop.slice_ns, MIN_WINDOW_NS);
		else if (ninv == 0)
			w = max64(max64(w - w / 8, longest + longest / 4), MIN_WINDOW_NS);
		done |= full;
	}
	out->window_ns = w;
	out->slack_ns = slack.cur_ns;
	return rc;
}

static int window_create(const struct scheme_type *t, const char *args,
                         struct bench_scheme **out)
{
	struct scheme_arg a;
	long batch = WBATCH;
	int64_t w0 = 0;
	while (scheme_arg_next(&args, &a)) {
		if (scheme_arg_is(&a, "batch") && a.val) {
			if (parse_int(a.val, a.vlen, 1, WBATCH_MAX, &batch))
				return scheme_arg_bad(t, &a, "batch=N needs an integer from 1 to 64");
		} else if (scheme_arg_is(&a, "w") && a.val) {
			if (parse_duration_ns(a.val, a.vlen, MIN_WINDOW_NS, MAX_WINDOW_NS, &w0))
				return scheme_arg_bad(t, &a, "w=T needs a duration of at least 1us, "
				                             "e.g. 20us; a bare number is seconds");
		} else {
			return scheme_arg_bad(t, &a, "unknown");
		}
	}
	struct window *ws = calloc(1, sizeof(*ws));
	if (!ws)
		return err_set(HCLOCK_ENOMEM, "out of memory for scheme %s", t->name);
	ws->base.type = t;
	ws->batch = (int)batch;
	ws->w0_ns = w0;
	*out = &ws->base;
	return 0;
}

const struct scheme_type scheme_type_window = {
	.name = "window",
	.usage = "window[/batch=N][/w=T]",
	.help = "SKaMPI style: start times t0 + i w in batches of N (16); the window w "
	        "adapts, starting from T or from 5 trial calls",
	.common_start = 1,
	.create = window_create,
	.measure = window_measure,
};
