/*
 * test_waits.c - the wait-state analysis (src/waits) against runs of known truth.
 *
 * Each seed makes a random run on P processes in true time: messages whose receiver enters
 * its receive before or after the send starts, blocking sends (standard and synchronous)
 * whose receive is posted before or after they end, collectives of every kind whose members
 * enter in random order, blocking and nonblocking. Every timestamp the analysis sees is the
 * true time plus an error of up to a few us, with half-widths that hold the truth (or none,
 * now and then); each call has its own function id, so an instance is found back. Checked:
 *   - every instance's interval holds its true waiting time and its estimate;
 *   - proven (lower end above 0) instances have a true waiting time above 0;
 *   - every case whose estimate is above 0 has its instance (none missed);
 *   - the totals are the instances' sums, the rows' sums are the totals;
 *   - fed in another interleaving of the processes, the same totals;
 *   - with the stamps' truths (as an emulation gives them, within up to 100 ns, now and then
 *     none), every instance's true interval holds its case's waiting time and is no wider
 *     than two stamps' truths, and none misses its bounds' interval;
 *   - with half-widths cut below the errors, some interval misses its truth (the check bites),
 *     and the analysis's own truth check counts it;
 *   - a call completing two messages is one instance, two calls entered at the same time
 *     two (told apart by their ids); collectives whose members disagree are counted, not
 *     analysed; a message received before an earlier
 *     sent one is a Wrong Order; a lone end and an incomplete collective are counted left.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "util/rng.h"
#include "waits/waits.h"

#define P 5
#define BASE 1700000000000000000ll /* true times around 2023, ns */
#define MAXCASE 4000

static struct rng g;

static int64_t urand(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rng_uniform(&g) * (double)(hi - lo));
}

/* the error model of this seed: every stamp off by up to err_ns, half-widths holding it plus
 * up to slack_ns, or cut to shrink x the error (wrong on purpose) */
static int64_t err_ns, slack_ns;
static double shrink = 1;
static int no_bounds_share = 10; /* 1 stamp in this many without bounds */

static struct waits_stamp stamp(int64_t truth)
{
	int64_t e = urand(-err_ns, err_ns + 1);
	struct waits_stamp s = {.t_ns = truth + e};
	s.below_ns = (int64_t)((double)(e > 0 ? e : 0) * shrink) + urand(0, slack_ns + 1);
	s.above_ns = (int64_t)((double)(e < 0 ? -e : 0) * shrink) + urand(0, slack_ns + 1);
	if (shrink < 1) {
		s.below_ns = (int64_t)((double)(e > 0 ? e : 0) * shrink);
		s.above_ns = (int64_t)((double)(e < 0 ? -e : 0) * shrink);
	}
	if (no_bounds_share && urand(0, no_bounds_share) == 0)
		s.below_ns = WAITS_NO_BOUND;
	if (no_bounds_share && urand(0, no_bounds_share) == 0)
		s.above_ns = WAITS_NO_BOUND;
	/* the truth as an emulation gives it: within a read's uncertainty, now and then not */
	if (urand(0, 20)) {
		s.has_truth = 1;
		s.true_lo_ns = truth - urand(0, 101);
		s.true_hi_ns = truth + urand(0, 101);
	}
	return s;
}

static int64_t clip(int64_t x, int64_t lo, int64_t hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* a case: the truth of one call's waiting under one pattern */
struct truth {
	int pattern;
	int64_t w_ns;     /* true waiting */
	int64_t est_ns;   /* the estimate the trace's stamps give */
	int found;
};
static struct truth cases[MAXCASE];
static int ncases;

static int pat(const char *name)
{
	for (int p = 0; p < waits_pattern_count(); p++)
		if (!strcmp(waits_pattern_name(p), name))
			return p;
	return -1;
}

/* one item to feed: its process and the call */
struct item {
	int proc;
	int kind; /* 0 send, 1 recv, 2 coll */
	int64_t key; /* the process's order */
	struct waits_send s;
	struct waits_recv r;
	struct waits_coll c;
};
static struct item items[4 * MAXCASE];
static int nitems;

static struct waits_call call(int proc, int64_t b, int64_t l, int *id)
{
	struct waits_call c = {.proc = proc, .func = (uint32_t)*id, .enter = stamp(b),
	                       .leave = stamp(l)};
	(*id)++;
	return c;
}

static int new_case(int pattern, int64_t w, int64_t est)
{
	cases[ncases] = (struct truth){.pattern = pattern, .w_ns = w, .est_ns = est};
	return ncases++;
}

static int64_t clock_[P]; /* each process's true time */

/* a message from s to r: the receiver enters at b, the send starts at t0 */
static void gen_message(int *id)
{
	int s = (int)urand(0, P), r = (int)urand(0, P - 1);
	r += r >= s;
	int64_t ts = clock_[s] + urand(0, 20000), tb = clock_[r] + urand(0, 20000);
	int sync = urand(0, 4) == 0, blocking = sync || urand(0, 2) == 0;
	int64_t lat = urand(500, 3000);
	/* the receive: blocking (posted at its enter) or completed by a wait entered at tb */
	int posted = urand(0, 2) == 0;
	int64_t post = posted ? tb : tb - urand(0, 5000);
	/* the send ends after the post for a synchronous one, eagerly else (now and then
	 * after the post: a rendezvous) */
	int rendezvous = sync || urand(0, 3) == 0;
	int64_t send_leave = rendezvous ? (post > ts ? post : ts) + lat : ts + urand(100, 800);
	int64_t recv_leave = (ts > tb ? ts : tb) + lat;
	if (recv_leave < post + lat)
		recv_leave = post + lat;
	int idr = *id;
	struct waits_recv rv = {.call = call(r, tb, recv_leave, id), .src = s, .comm = 7,
	                        .tag = 3, .posted_in_call = posted};
	int ids = *id;
	struct waits_send sd = {.call = call(s, ts, send_leave, id), .dst = r, .comm = 7, .tag = 3,
	                        .bytes = 8, .blocking = blocking, .synchronous = sync};
	/* Late Sender's truth and estimate */
	int64_t w = clip(ts - tb, 0, recv_leave - tb);
	int64_t est = clip(sd.call.enter.t_ns - rv.call.enter.t_ns, 0,
	                   rv.call.leave.t_ns - rv.call.enter.t_ns);
	int c = new_case(pat("late_sender"), w, est);
	(void)c;
	/* Late Receiver's */
	if (blocking && posted) {
		int64_t wl = sync || post < send_leave ? clip(post - ts, 0, send_leave - ts) : 0;
		int64_t el = 0;
		if (sync || rv.call.enter.t_ns < sd.call.leave.t_ns)
			el = clip(rv.call.enter.t_ns - sd.call.enter.t_ns, 0,
			          sd.call.leave.t_ns - sd.call.enter.t_ns);
		/* the case's index is its call id: ids is the sender's */
		(void)ids;
		cases[ncases] = (struct truth){.pattern = pat("late_receiver"), .w_ns = wl,
		                               .est_ns = el};
		ncases++;
	} else {
		cases[ncases] = (struct truth){.pattern = -1};
		ncases++;
	}
	(void)idr;
	items[nitems++] = (struct item){.proc = s, .kind = 0, .key = ts, .s = sd};
	items[nitems++] = (struct item){.proc = r, .kind = 1, .key = recv_leave, .r = rv};
	clock_[s] = send_leave + urand(0, 3000);
	clock_[r] = recv_leave + urand(0, 3000);
}

static const char *kind_pattern[] = {"wait_nxn", "wait_barrier", "late_broadcast",
                                     "early_reduce", NULL};

/* a collective on all P processes */
static void gen_coll(int *id)
{
	enum waits_coll_kind k = (enum waits_coll_kind)urand(0, 5);
	int root = (int)urand(0, P), nb[P];
	int64_t start[P], b[P], l[P], last = 0, first = INT64_MAX, lat = urand(1000, 5000);
	int who_last = 0, who_first = -1;
	for (int p = 0; p < P; p++) {
		nb[p] = urand(0, 3) == 0;
		start[p] = clock_[p] + urand(0, 30000);
		b[p] = nb[p] ? start[p] + urand(0, 20000) : start[p];
		if (start[p] > last)
			last = start[p], who_last = p;
		if (p != root && start[p] < first)
			first = start[p], who_first = p;
	}
	(void)who_last;
	(void)who_first;
	for (int p = 0; p < P; p++) {
		int64_t rel = k == WAITS_COLL_1TON ? start[root] : k == WAITS_COLL_NTO1 && p == root ?
		              first : last;
		l[p] = (b[p] > rel ? b[p] : rel) + lat;
		if (k == WAITS_COLL_NTO1 && p == root && l[p] < last + lat)
			l[p] = last + lat;
	}
	for (int p = 0; p < P; p++) {
		struct waits_coll c = {.call = call(p, b[p], l[p], id), .comm = 9, .size = P,
		                       .root = k == WAITS_COLL_1TON || k == WAITS_COLL_NTO1 ? root : -1,
		                       .kind = k, .seq = -1};
		c.start = nb[p] ? stamp(start[p]) : c.call.enter;
		int64_t w = 0, est = 0;
		int pattern = -1;
		if (k != WAITS_COLL_OTHER && !(k == WAITS_COLL_1TON && p == root) &&
		    !(k == WAITS_COLL_NTO1 && p != root)) {
			pattern = pat(kind_pattern[k]);
			int64_t rel = k == WAITS_COLL_1TON ? start[root] :
			              k == WAITS_COLL_NTO1 ? first : last;
			w = clip(rel - b[p], 0, l[p] - b[p]);
			est = -1; /* the estimate needs every member's stamp: computed when fed */
		}
		cases[ncases++] = (struct truth){.pattern = pattern, .w_ns = w, .est_ns = est};
		items[nitems++] = (struct item){.proc = p, .kind = 2, .key = start[p], .c = c};
	}
	for (int p = 0; p < P; p++)
		clock_[p] = l[p] + urand(0, 3000);
}

/* the estimate of each collective case, from the stamps fed */
static void coll_estimates(void)
{
	for (int i = 0; i < nitems;) {
		if (items[i].kind != 2) {
			i++;
			continue;
		}
		/* the P members are consecutive in generation order */
		struct waits_coll *m[P];
		for (int p = 0; p < P; p++)
			m[p] = &items[i + p].c;
		int64_t last = INT64_MIN, first = INT64_MAX, root_t = 0;
		for (int p = 0; p < P; p++) {
			if (m[p]->start.t_ns > last)
				last = m[p]->start.t_ns;
			if (m[p]->call.proc != m[p]->root && m[p]->start.t_ns < first)
				first = m[p]->start.t_ns;
			if (m[p]->call.proc == m[p]->root)
				root_t = m[p]->start.t_ns;
		}
		for (int p = 0; p < P; p++) {
			struct truth *c = &cases[m[p]->call.func];
			if (c->est_ns != -1)
				continue;
			int64_t rel = m[p]->kind == WAITS_COLL_1TON ? root_t :
			              m[p]->kind == WAITS_COLL_NTO1 ? first : last;
			int64_t d = m[p]->call.leave.t_ns - m[p]->call.enter.t_ns;
			c->est_ns = clip(rel - m[p]->call.enter.t_ns, 0, d > 0 ? d : 0);
		}
		i += P;
	}
}

struct seen {
	int bad, bad_truth, checked;
	int with_truth, outside; /* instances with their truth; ... whose truth misses */
};

static int on_instance(void *ctx, const struct waits_instance *in)
{
	struct seen *s = ctx;
	if (in->func >= (uint32_t)ncases)
		return 0;
	struct truth *c = &cases[in->func];
	if (in->has_truth) {
		s->with_truth++;
		s->outside += in->true_hi_ns < in->lo_ns || in->true_lo_ns > in->hi_ns;
	}
	if (c->pattern != in->pattern)
		return 0; /* another pattern's look at the same call (wrong order) */
	c->found++;
	s->checked++;
	int ok = in->lo_ns <= c->w_ns && c->w_ns <= in->hi_ns;
	if (!ok)
		s->bad_truth++;
	if (in->has_truth) {
		/* the truth the analysis computed from the stamps' truths holds the case's */
		TEST_CHECK(in->true_lo_ns <= c->w_ns && c->w_ns <= in->true_hi_ns,
		           "%s on process %d: true wait %lld ns outside its truth's [%lld, %lld]",
		           waits_pattern_name(in->pattern), in->proc, (long long)c->w_ns,
		           (long long)in->true_lo_ns, (long long)in->true_hi_ns);
		/* and is no wider than two stamps' truths (up to 200 ns each): a wider one would
		 * hold the case's by luck (a Late Receiver's post and the send's end closer than
		 * their truths tell apart: [0, the wait had it been posted in time]) */
		TEST_CHECK(in->true_hi_ns - in->true_lo_ns <= 400 ||
		           (in->pattern == pat("late_receiver") && in->true_lo_ns == 0),
		           "%s on process %d: its truth's interval [%lld, %lld] wider than two "
		           "stamps' truths", waits_pattern_name(in->pattern), in->proc,
		           (long long)in->true_lo_ns, (long long)in->true_hi_ns);
	}
	if (!ok && shrink >= 1) {
		TEST_CHECK(0, "%s on process %d: true wait %lld ns outside [%lld, %lld] (est %lld)",
		           waits_pattern_name(in->pattern), in->proc, (long long)c->w_ns,
		           (long long)in->lo_ns, (long long)in->hi_ns, (long long)in->est_ns);
		s->bad++;
	}
	if (shrink >= 1) {
		TEST_CHECK(in->lo_ns <= in->est_ns && in->est_ns <= in->hi_ns,
		           "%s: estimate %lld ns outside [%lld, %lld]", waits_pattern_name(in->pattern),
		           (long long)in->est_ns, (long long)in->lo_ns, (long long)in->hi_ns);
		TEST_CHECK(in->lo_ns <= 0 || c->w_ns > 0, "%s: proven (lo %lld) with no true wait",
		           waits_pattern_name(in->pattern), (long long)in->lo_ns);
		TEST_CHECK(in->est_ns == c->est_ns, "%s: estimate %lld ns, expected %lld",
		           waits_pattern_name(in->pattern), (long long)in->est_ns,
		           (long long)c->est_ns);
	}
	return 0;
}

/* feed the items: each process's in its order, the processes interleaved by key, or at
 * random (shuffled) */
static void feed(waits *w, int shuffled)
{
	int order[4 * MAXCASE], pos[P] = {0}, n = 0;
	int *per[P];
	int cnt[P] = {0};
	for (int p = 0; p < P; p++)
		per[p] = malloc(sizeof(int) * (size_t)nitems);
	for (int i = 0; i < nitems; i++)
		per[items[i].proc][cnt[items[i].proc]++] = i;
	while (n < nitems) {
		int best = -1;
		if (shuffled) {
			do
				best = (int)urand(0, P);
			while (pos[best] == cnt[best]);
		} else {
			for (int p = 0; p < P; p++)
				if (pos[p] < cnt[p] &&
				    (best < 0 || items[per[p][pos[p]]].key < items[per[best][pos[best]]].key))
					best = p;
		}
		order[n++] = per[best][pos[best]++];
	}
	for (int i = 0; i < n; i++) {
		struct item *it = &items[order[i]];
		int rc = it->kind == 0 ? waits_add_send(w, &it->s) :
		         it->kind == 1 ? waits_add_recv(w, &it->r) : waits_add_coll(w, &it->c);
		TEST_CHECK(rc == 0, "feeding item %d: %d", order[i], rc);
	}
	for (int p = 0; p < P; p++)
		free(per[p]);
	TEST_CHECK(waits_finish(w) == 0, "finish");
}

static void gen_run(void)
{
	int id = 0;
	ncases = nitems = 0;
	for (int p = 0; p < P; p++)
		clock_[p] = BASE + urand(0, 50000);
	/* the case index is the id of the call that waits: receives and sends make a case
	 * each, collectives one per member */
	while (ncases < MAXCASE - P - 2) {
		if (urand(0, 3) == 0)
			gen_coll(&id);
		else
			gen_message(&id);
	}
	coll_estimates();
}

static void run_case(unsigned long long seed)
{
	test_seed = seed;
	rng_seed(&g, seed);
	err_ns = urand(0, 3000);
	slack_ns = urand(0, 2000);
	shrink = 1;
	gen_run();
	struct seen s = {0};
	struct waits_opts o = {.worst = 5, .on_instance = on_instance, .ctx = &s};
	waits *w = waits_create(&o);
	feed(w, 0);
	/* none missed: every case whose estimate is above 0 */
	int missed = 0;
	for (int i = 0; i < ncases; i++)
		if (cases[i].pattern >= 0 && cases[i].est_ns > 0 && !cases[i].found)
			missed++;
	TEST_CHECK(missed == 0, "%d cases with a positive estimate not reported (of %d)", missed,
	           ncases);
	if (getenv("TEST_WAITS_VERBOSE"))
		printf("seed %llu: %d instances of %d cases checked\n", seed, s.checked, ncases);
	TEST_CHECK(s.checked > ncases / 10, "only %d instances checked of %d cases", s.checked,
	           ncases);
	/* the rows sum to the totals, the totals to the instances */
	size_t nr;
	const struct waits_row *rows = waits_rows(w, &nr);
	struct waits_total sum[16] = {{0}};
	for (size_t i = 0; i < nr; i++) {
		sum[rows[i].pattern].n += rows[i].t.n;
		sum[rows[i].pattern].est_ns += rows[i].t.est_ns;
		sum[rows[i].pattern].lo_ns += rows[i].t.lo_ns;
		TEST_CHECK(i == 0 || rows[i - 1].t.est_ns >= rows[i].t.est_ns, "rows not sorted");
	}
	struct waits_total tot[16];
	uint64_t truth_n = 0, outside = 0;
	for (int p = 0; p < waits_pattern_count(); p++) {
		tot[p] = waits_pattern_total(w, p);
		truth_n += tot[p].truth_n;
		outside += tot[p].truth_outside;
		TEST_CHECK(tot[p].true_lo_ns <= tot[p].true_hi_ns, "%s: true total [%lld, %lld]",
		           waits_pattern_name(p), (long long)tot[p].true_lo_ns,
		           (long long)tot[p].true_hi_ns);
		TEST_CHECK(sum[p].n == tot[p].n && sum[p].est_ns == tot[p].est_ns &&
		           sum[p].lo_ns == tot[p].lo_ns, "%s: rows sum to %llu / %lld ns, total %llu / "
		           "%lld ns", waits_pattern_name(p), (unsigned long long)sum[p].n,
		           (long long)sum[p].est_ns, (unsigned long long)tot[p].n,
		           (long long)tot[p].est_ns);
		TEST_CHECK(tot[p].lo_ns <= tot[p].est_ns && tot[p].est_ns <= tot[p].hi_ns,
		           "%s: total estimate outside its interval", waits_pattern_name(p));
		/* waits of up to 30 us under errors of at most 3 us: every pattern found, most
		 * proven (wrong order's waiting may well be 0) */
		TEST_CHECK(tot[p].n > 0, "%s: no instance", waits_pattern_name(p));
		TEST_CHECK(!strcmp(waits_pattern_name(p), "wrong_order") || tot[p].proven > 0,
		           "%s: none of %llu proven", waits_pattern_name(p),
		           (unsigned long long)tot[p].n);
		if (getenv("TEST_WAITS_VERBOSE"))
			printf("  %-15s %5llu instances, %5llu proven, %lld ns in [%lld, %lld]\n",
			       waits_pattern_name(p), (unsigned long long)tot[p].n,
			       (unsigned long long)tot[p].proven, (long long)tot[p].est_ns,
			       (long long)tot[p].lo_ns, (long long)tot[p].hi_ns);
	}
	/* the totals' truth: the instances' (of every pattern: wrong order's too) */
	TEST_CHECK(truth_n == (uint64_t)s.with_truth && truth_n > 0 && outside == 0 &&
	           s.outside == 0, "truth in the totals: %llu instances (%d seen), %llu outside "
	           "(%d seen)", (unsigned long long)truth_n, s.with_truth,
	           (unsigned long long)outside, s.outside);
	size_t nw;
	const struct waits_instance *worst = waits_worst(w, &nw);
	TEST_CHECK(nw == 5 || nw == (size_t)s.checked, "%zu worst", nw);
	for (size_t i = 1; i < nw; i++)
		TEST_CHECK(worst[i - 1].est_ns >= worst[i].est_ns, "worst not sorted");
	struct waits_left left;
	waits_left(w, &left);
	TEST_CHECK(left.sends == 0 && left.recvs == 0 && left.colls_open == 0,
	           "left: %llu sends, %llu receives, %llu collectives",
	           (unsigned long long)left.sends, (unsigned long long)left.recvs,
	           (unsigned long long)left.colls_open);
	waits_free(w);

	/* another interleaving: the same totals (wrong order aside: its window sees the
	 * messages in another order) */
	for (int i = 0; i < ncases; i++)
		cases[i].found = 0;
	struct seen s2 = {0};
	o.ctx = &s2;
	w = waits_create(&o);
	feed(w, 1);
	for (int p = 0; p < waits_pattern_count(); p++) {
		struct waits_total t = waits_pattern_total(w, p);
		if (!strcmp(waits_pattern_name(p), "wrong_order"))
			continue;
		TEST_CHECK(t.n == tot[p].n && t.est_ns == tot[p].est_ns && t.lo_ns == tot[p].lo_ns,
		           "%s shuffled: %llu instances, %lld ns; in time order %llu, %lld ns",
		           waits_pattern_name(p), (unsigned long long)t.n, (long long)t.est_ns,
		           (unsigned long long)tot[p].n, (long long)tot[p].est_ns);
	}
	waits_free(w);
}

/* half-widths below the errors: some interval must miss its truth */
static void bites(unsigned long long seed)
{
	test_seed = seed;
	rng_seed(&g, seed);
	err_ns = 3000;
	slack_ns = 0;
	shrink = 0.2;
	no_bounds_share = 0;
	gen_run();
	struct seen s = {0};
	struct waits_opts o = {.on_instance = on_instance, .ctx = &s};
	waits *w = waits_create(&o);
	feed(w, 0);
	waits_free(w);
	if (getenv("TEST_WAITS_VERBOSE"))
		printf("bites seed %llu: %d of %d intervals missed\n", seed, s.bad_truth, s.checked);
	TEST_CHECK(s.bad_truth > 0, "bounds cut to a fifth of the errors: every one of %d "
	           "intervals still held its truth", s.checked);
	/* and the analysis's own check by the stamps' truths says so */
	TEST_CHECK(s.outside > 0, "bounds cut to a fifth of the errors: the truth of every one "
	           "of %d instances (%d with truth) met its interval", s.checked, s.with_truth);
	shrink = 1;
	no_bounds_share = 10;
}

static struct waits_instance got[16];
static int ngot;
static int keep(void *ctx, const struct waits_instance *in)
{
	(void)ctx;
	if (ngot < 16)
		got[ngot++] = *in;
	return 0;
}

static struct waits_stamp exact(int64_t t)
{
	return (struct waits_stamp){.t_ns = t, .below_ns = 10, .above_ns = 10};
}

/* a Waitall that completes two late messages: one instance, the larger; the second sent
 * first but received second: wrong order; a lone send and half a collective are left */
static void special(void)
{
	test_seed = 0;
	struct waits_opts o = {.on_instance = keep};
	waits *w = waits_create(&o);
	ngot = 0;
	struct waits_call wait = {.proc = 0, .func = 1, .enter = exact(1000), .leave = exact(9000)};
	struct waits_send a = {.call = {.proc = 1, .func = 2, .enter = exact(5000),
	                                .leave = exact(5100)}, .dst = 0, .comm = 1, .tag = 1};
	struct waits_send b = {.call = {.proc = 2, .func = 2, .enter = exact(3000),
	                                .leave = exact(3100)}, .dst = 0, .comm = 1, .tag = 1};
	struct waits_recv ra = {.call = wait, .src = 1, .comm = 1, .tag = 1};
	struct waits_recv rb = {.call = wait, .src = 2, .comm = 1, .tag = 1};
	rb.call.leave = exact(9001); /* completed just after a, in the same call */
	waits_add_send(w, &a);
	waits_add_send(w, &b);
	waits_add_recv(w, &ra);
	waits_add_recv(w, &rb);
	struct waits_send lone = {.call = {.proc = 3, .func = 3, .enter = exact(100),
	                                   .leave = exact(200)}, .dst = 0, .comm = 1, .tag = 99};
	waits_add_send(w, &lone);
	struct waits_coll half = {.call = {.proc = 0, .func = 4, .enter = exact(100),
	                                   .leave = exact(200)}, .comm = 5, .size = 2, .root = -1,
	                          .kind = WAITS_COLL_BARRIER, .seq = -1};
	half.start = half.call.enter;
	waits_add_coll(w, &half);
	TEST_CHECK(waits_add_coll(w, &(struct waits_coll){.size = 0}) != 0, "size 0 taken");
	TEST_CHECK(waits_add_send(w, &(struct waits_send){.call = {.proc = -1}}) != 0,
	           "process -1 taken");
	waits_finish(w);
	int ls = 0, wo = 0;
	for (int i = 0; i < ngot; i++) {
		if (got[i].pattern == pat("late_sender")) {
			ls++;
			TEST_CHECK(got[i].est_ns == 4000 && got[i].peer == 1 && got[i].lo_ns == 3980 &&
			           got[i].hi_ns == 4020, "Waitall: est %lld from %lld, [%lld, %lld]; "
			           "expected 4000 from 1, [3980, 4020]", (long long)got[i].est_ns,
			           (long long)got[i].peer, (long long)got[i].lo_ns, (long long)got[i].hi_ns);
		}
		if (got[i].pattern == pat("wrong_order")) {
			wo++;
			TEST_CHECK(got[i].peer == 1, "wrong order names %lld, expected 1",
			           (long long)got[i].peer);
		}
	}
	TEST_CHECK(ls == 1 && wo == 1, "%d late sender instances (1), %d wrong order (1)", ls, wo);
	struct waits_left l;
	waits_left(w, &l);
	TEST_CHECK(l.messages == 2 && l.sends == 1 && l.recvs == 0 && l.colls_open == 1,
	           "left: %llu messages, %llu sends, %llu receives, %llu collectives open",
	           (unsigned long long)l.messages, (unsigned long long)l.sends,
	           (unsigned long long)l.recvs, (unsigned long long)l.colls_open);
	waits_free(w);
}

/* two receiving calls of one process with the same enter time and function (a coarse clock):
 * told apart by their ids, two instances; without ids, one (the rule they replace) */
static void same_enter(void)
{
	for (int ids = 0; ids < 2; ids++) {
		struct waits_opts o = {.on_instance = keep};
		waits *w = waits_create(&o);
		ngot = 0;
		struct waits_call c1 = {.proc = 0, .func = 1, .id = ids ? 7 : 0, .enter = exact(1000),
		                        .leave = exact(4000)};
		struct waits_call c2 = c1;
		c2.id = ids ? 8 : 0;
		c2.leave = exact(6000);
		for (int k = 0; k < 2; k++) {
			struct waits_send sd = {.call = {.proc = 1, .func = 2, .enter = exact(3000 + 2000 * k),
			                                 .leave = exact(3100 + 2000 * k)},
			                        .dst = 0, .comm = 1, .tag = 1};
			struct waits_recv rv = {.call = k ? c2 : c1, .src = 1, .comm = 1, .tag = 1};
			waits_add_send(w, &sd);
			waits_add_recv(w, &rv);
		}
		waits_finish(w);
		int ls = 0;
		for (int i = 0; i < ngot; i++)
			ls += got[i].pattern == pat("late_sender");
		TEST_CHECK(ls == (ids ? 2 : 1), "two calls entered at the same time, %s ids: %d Late "
		           "Sender instances, expected %d", ids ? "with" : "without", ls, ids ? 2 : 1);
		waits_free(w);
	}
}

/* two processes whose nonblocking collectives completed in different orders (a barrier and
 * a broadcast, fed in completion order): the members of each place disagree, counted as
 * mismatched, not analysed */
static void mismatch(void)
{
	struct waits_opts o = {.on_instance = keep};
	waits *w = waits_create(&o);
	ngot = 0;
	enum waits_coll_kind order[2][2] = {{WAITS_COLL_BARRIER, WAITS_COLL_1TON},
	                                    {WAITS_COLL_1TON, WAITS_COLL_BARRIER}};
	for (int p = 0; p < 2; p++)
		for (int k = 0; k < 2; k++) {
			struct waits_coll c = {.call = {.proc = p, .func = 5, .enter = exact(1000 + 500 * p),
			                                .leave = exact(3000)},
			                       .comm = 9, .size = 2, .kind = order[p][k], .seq = -1};
			c.root = c.kind == WAITS_COLL_1TON ? 0 : -1;
			c.start = c.call.enter;
			waits_add_coll(w, &c);
		}
	waits_finish(w);
	struct waits_left l;
	waits_left(w, &l);
	TEST_CHECK(l.colls_mismatched == 2 && l.colls == 0 && ngot == 0,
	           "collectives out of order: %llu mismatched (2), %llu analysed (0), %d instances "
	           "(0)", (unsigned long long)l.colls_mismatched, (unsigned long long)l.colls, ngot);
	waits_free(w);
}

/* garbage: random items, no crash, no leak (the sanitizer build runs this too) */
static void garbage(void)
{
	rng_seed(&g, 99);
	struct waits_opts o = {.worst = 3};
	waits *w = waits_create(&o);
	for (int i = 0; i < 20000; i++) {
		struct waits_stamp s = {.t_ns = urand(-1000000, 1000000),
		                        .below_ns = urand(0, 3) ? urand(0, 1000) : WAITS_NO_BOUND,
		                        .above_ns = urand(0, 3) ? urand(0, 1000) : WAITS_NO_BOUND};
		struct waits_call c = {.proc = (int32_t)urand(-1, 6), .func = (uint32_t)urand(0, 5),
		                       .enter = s, .leave = s};
		c.leave.t_ns += urand(-100, 100000);
		switch (urand(0, 3)) {
		case 0:
			waits_add_send(w, &(struct waits_send){.call = c, .dst = urand(-1, 6),
			                                       .comm = (uint64_t)urand(0, 3),
			                                       .tag = urand(0, 3),
			                                       .blocking = (int)urand(0, 2),
			                                       .synchronous = (int)urand(0, 2)});
			break;
		case 1:
			waits_add_recv(w, &(struct waits_recv){.call = c, .src = urand(-1, 6),
			                                       .comm = (uint64_t)urand(0, 3),
			                                       .tag = urand(0, 3),
			                                       .posted_in_call = (int)urand(0, 2)});
			break;
		default:
			waits_add_coll(w, &(struct waits_coll){.call = c, .start = s,
			                                       .comm = (uint64_t)urand(0, 3),
			                                       .size = (int32_t)urand(0, 5),
			                                       .root = urand(-1, 5),
			                                       .kind = (enum waits_coll_kind)urand(0, 6),
			                                       .seq = urand(-1, 3)});
		}
	}
	waits_finish(w);
	size_t n;
	waits_rows(w, &n);
	waits_worst(w, &n);
	waits_free(w);
}

int main(void)
{
	for (unsigned long long seed = 1; seed <= 20; seed++)
		run_case(seed);
	for (unsigned long long seed = 1; seed <= 3; seed++)
		bites(seed);
	special();
	same_enter();
	mismatch();
	garbage();
	return test_end("test_waits");
}
