/*
 * cont.c - the continuous clock as a sync spec: cont(INNER[,KEY=VALUE...]). The run is
 * INNER's one-shot sync, then the engine (cont/engine.h) keeps every process's clock right
 * in the same tree, driven by a background thread (cont/driver.h) or by the application's
 * hclock_sync_progress calls; hclock_sync_stop ends it collectively.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock.h"
#include "cont/driver.h"
#include "cont/engine.h"
#include "model/cont.h"
#include "sync/sync.h"
#include "transport/comm.h"
#include "transport/nblink_mpi.h"
#include "util/err.h"
#include "util/parse.h"

extern const struct sync_type sync_type_cont, sync_type_none;

struct cont_sync {
	struct hclock_sync s;
	struct hclock_sync *inner;
	struct cont_cfg cfg;
	struct engine *eng;
	struct driver *drv;
	hclock_clock *clk;     /* the clock it drives (drive=progress: clock_drive calls back) */
	int64_t due_ns;        /* drive=progress: base time its next progress call has work
	                          (hclock_sync_progress_due), written by cont_progress */
	struct hclock_sync_stats last; /* the statistics at the stop */
	int have_last;
};

/* The keys, their defaults and limits (docs/continuous.md explains the choices). */
static const struct cont_cfg defaults = {
	.window_s = 2, .min_s = 0.025, .max_s = 0.125, .threshold_ns = 100, .streak = 4,
	.slew = 500e-6, .drift = 5e-6, .pingpongs = 8, .stale_s = 0, .thread = 1,
};
#define STALE_PERIODS 10 /* stale after 10 max periods without an exchange, by default */

/* the clock's driver (clock_drive, from hclock_wait_until): the application's progress
 * call, and how long until it has work again */
static int drive_cb(void *arg, int64_t *sleep_ns)
{
	struct cont_sync *c = arg;
	if (!c->eng)
		return -1;
	hclock_sync_progress(&c->s);
	*sleep_ns = hclock_sync_progress_due(&c->s) - hclock_now(c->clk->base);
	return 0;
}

/* the clock no longer calls back into this sync */
static void unhook(struct cont_sync *c)
{
	cont_clock_set_driver(c->clk, NULL, NULL);
	hclock_clock_free(c->clk);
	c->clk = NULL;
}

static int cont_stats(const struct hclock_sync *s, struct hclock_sync_stats *out)
{
	const struct cont_sync *c = (const struct cont_sync *)s;
	if (!c->eng) {
		if (!c->have_last)
			return err_set(HCLOCK_EUNSUPP, "%s has not run: no exchange statistics yet",
			               s->spec);
		*out = c->last;
		return 0;
	}
	engine_stats(c->eng, out);
	int64_t cpu = driver_cpu_ns(c->drv);
	out->thread_cpu_s = cpu < 0 ? -1 : cpu * 1e-9;
	return 0;
}

static int cont_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	struct cont_sync *c = (struct cont_sync *)s;
	int rc = 0, level = MPI_THREAD_MULTIPLE;
	if (c->eng)
		rc = err_set(HCLOCK_EINVAL, "%s is still running: hclock_sync_stop it before running it "
		             "again", s->spec);
	PMPI_Query_thread(&level);
	if (!rc && c->cfg.thread && level < MPI_THREAD_MULTIPLE)
		rc = err_set(HCLOCK_EUNSUPP, "cont(...) runs a background thread, which needs MPI "
		             "initialised with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) (this "
		             "process has %s); initialise MPI so, or use cont(...,drive=progress) and "
		             "call hclock_sync_progress", level == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE"
		             : level == MPI_THREAD_FUNNELED ? "MPI_THREAD_FUNNELED"
		             : "MPI_THREAD_SERIALIZED");
	if ((rc = comm_agree(comm, rc)))
		return rc;
	hclock_clock *g0 = NULL;
	rc = sync_run(c->inner, comm, clk, &g0);
	s->pingpongs = c->inner->pingpongs;
	sync_take_quality(s, c->inner);
	s->rounds = c->inner->rounds;
	s->parent = c->inner->parent;
	s->shares = c->inner->shares;
	if (c->inner->warnings[0])
		sync_warn(s, "%.*s", (int)strlen(c->inner->warnings) - 1, c->inner->warnings);
	if ((rc = comm_agree(comm, rc))) {
		*out = g0;
		return rc;
	}
	/* start from the one-shot model: base -> reference, and its bound */
	struct lm t0 = g0->inner ? g0->comp : (struct lm){0, 0, 0};
	struct bound b0 = g0->bound;
	hclock_clock *cc = NULL;
	struct nblink *link;
	c->have_last = 0;
	rc = nblink_mpi_create(comm, &link);
	if (!rc)
		rc = engine_create(link, clk->base, &c->cfg, s->parent, s->shares, &t0, &b0, &c->eng,
		                   &cc);
	if (!rc && c->cfg.thread)
		rc = comm_agree(comm, driver_start(c->eng, &c->drv));
	if (rc) {
		driver_stop(c->drv);
		c->drv = NULL;
		engine_destroy(c->eng);
		c->eng = NULL;
		hclock_clock_free(cc);
		*out = g0;
		return rc;
	}
	hclock_clock_free(g0);
	if (!c->cfg.thread) { /* its waits (hclock_wait_until) drive it as its calls do */
		c->clk = hclock_clock_ref(cc);
		cont_clock_set_driver(cc, drive_cb, c);
	}
	*out = cc;
	return 0;
}

static int cont_stop(struct hclock_sync *s)
{
	struct cont_sync *c = (struct cont_sync *)s;
	if (!c->eng)
		return 0;
	unhook(c);
	cont_stats(&c->s, &c->last);
	c->last.running = 0;
	c->have_last = 1;
	driver_stop(c->drv); /* its error is the engine's, agreed on below */
	c->drv = NULL;
	int rc = engine_stop(c->eng);
	engine_destroy(c->eng);
	c->eng = NULL;
	if (rc)
		err_set(rc, "the continuous clock's exchanges failed: %s", hclock_last_error());
	return rc;
}

static int cont_progress(struct hclock_sync *s)
{
	struct cont_sync *c = (struct cont_sync *)s;
	int64_t sleep_ns, now;
	if (!c->eng || c->cfg.thread)
		return 0;
	int rc = engine_drive(c->eng, &sleep_ns, &now);
	__atomic_store_n(&c->due_ns, now + sleep_ns, __ATOMIC_RELAXED);
	return rc;
}

static int64_t cont_progress_due(const struct hclock_sync *s)
{
	const struct cont_sync *c = (const struct cont_sync *)s;
	if (!c->eng || c->cfg.thread)
		return INT64_MAX;
	return __atomic_load_n(&c->due_ns, __ATOMIC_RELAXED);
}

static void cont_destroy(struct hclock_sync *s)
{
	struct cont_sync *c = (struct cont_sync *)s;
	unhook(c);
	driver_stop(c->drv);
	engine_destroy(c->eng); /* alone: this process stops, its peers time out on it */
	hclock_sync_free(c->inner);
	free(c);
}

static int cont_plan(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk)
{
	return sync_plan(((struct cont_sync *)s)->inner, comm, clk);
}

static int cont_auto_choice(const struct hclock_sync *s, struct hclock_sync_auto *out)
{
	return hclock_sync_auto_choice(((const struct cont_sync *)s)->inner, out);
}

/* every key with its value, "(default)" where it is one */
static void cont_explain(const struct hclock_sync *s, struct sync_explain *e)
{
	const struct cont_sync *c = (const struct cont_sync *)s;
	const struct cont_cfg *g = &c->cfg;
	sync_explain_line(e, "first, once:");
	e->depth++;
	sync_explain(c->inner, e);
	e->depth--;
	sync_explain_line(e, "then each process keeps learning against its parent in that tree:");
	e->depth++;
#define DEF(cond) ((cond) ? " (default)" : "")
	sync_explain_line(e, "window=%gs%s: the sliding window of exchanges each model is fitted to",
	                  g->window_s, DEF(g->window_s == defaults.window_s));
	sync_explain_line(e, "min=%gs%s, max=%gs%s: the exchange period adapts between them",
	                  g->min_s, DEF(g->min_s == defaults.min_s), g->max_s,
	                  DEF(g->max_s == defaults.max_s));
	sync_explain_line(e, "threshold=%gns%s, streak=%d%s: a projected offset off by more (or by "
	                  "3x the link's noise, when larger) halves the period; that many within "
	                  "doubles it", g->threshold_ns,
	                  DEF(g->threshold_ns == defaults.threshold_ns), g->streak,
	                  DEF(g->streak == defaults.streak));
	sync_explain_line(e, "n=%d%s: ping-pongs per exchange", g->pingpongs,
	                  DEF(g->pingpongs == defaults.pingpongs));
	sync_explain_line(e, "slew=%g%s: the largest rate of a correction (the clock never steps "
	                  "or runs backwards)", g->slew, DEF(g->slew == defaults.slew));
	sync_explain_line(e, "drift=%g%s: the bounds' drift allowance between exchanges", g->drift,
	                  DEF(g->drift == defaults.drift));
	sync_explain_line(e, "stale=%gs%s: the bounds' status stale after this long without an "
	                  "exchange", g->stale_s, DEF(g->stale_s == STALE_PERIODS * g->max_s));
	sync_explain_line(e, "drive=%s%s: %s", g->thread ? "thread" : "progress",
	                  DEF(g->thread == defaults.thread), g->thread
	                  ? "a background thread makes the exchanges (needs MPI_THREAD_MULTIPLE)"
	                  : "the application's hclock_sync_progress calls make the exchanges");
#undef DEF
	e->depth--;
}

static const struct sync_ops cont_ops = {
	.run = cont_run, .destroy = cont_destroy, .stop = cont_stop, .progress = cont_progress,
	.progress_due = cont_progress_due, .stats = cont_stats, .auto_choice = cont_auto_choice,
	.explain = cont_explain, .plan = cont_plan,
};

#define KEYS "window=S, min=S, max=S, threshold=T, streak=N, slew=R, drift=R, n=N, stale=S " \
             "or drive=thread|progress"

static int parse_key(struct spec_parser *ps, struct cont_cfg *cfg)
{
	const char *t = ps->p;
	size_t n = spec_toklen(t);
	const char *eq = memchr(t, '=', n);
	if (!eq)
		return spec_bad(ps, t, n, "KEY=VALUE: " KEYS);
	size_t kn = (size_t)(eq - t);
	ps->p = eq + 1;
#define KEY(k) (kn == strlen(k) && !strncmp(t, k, kn))
	if (KEY("window"))
		return spec_duration(ps, 0.01, 86400, "window=S, the learning window", &cfg->window_s);
	if (KEY("min"))
		return spec_duration(ps, 1e-3, 3600, "min=S, the shortest exchange period", &cfg->min_s);
	if (KEY("max"))
		return spec_duration(ps, 1e-3, 3600, "max=S, the longest exchange period", &cfg->max_s);
	if (KEY("stale"))
		return spec_duration(ps, 1e-3, 86400, "stale=S, the bounds' staleness limit",
		                     &cfg->stale_s);
	if (KEY("threshold")) {
		double v;
		int rc = spec_duration(ps, 0, 1, "threshold=T, the projected offset's error that halves "
		                       "the period", &v);
		cfg->threshold_ns = v * 1e9;
		return rc;
	}
	if (KEY("streak"))
		return spec_int(ps, 1, 1000, "streak=N, exchanges within the threshold before the period "
		                "doubles", &cfg->streak);
	if (KEY("n"))
		return spec_int(ps, 1, 1000, "n=N, ping-pongs per exchange", &cfg->pingpongs);
	if (KEY("drive")) {
		if (spec_word(ps, "thread"))
			cfg->thread = 1;
		else if (spec_word(ps, "progress"))
			cfg->thread = 0;
		else
			return spec_bad(ps, ps->p, spec_toklen(ps->p), "drive=thread or drive=progress");
		return 0;
	}
	double *rate = KEY("slew") ? &cfg->slew : KEY("drift") ? &cfg->drift : NULL;
	if (rate) {
		size_t vn = spec_toklen(ps->p);
		double hi = rate == &cfg->slew ? 1e-2 : 1e-3, lo = rate == &cfg->slew ? 1e-9 : 0;
		if (parse_number(ps->p, vn, lo, hi, rate)) {
			char want[160];
			snprintf(want, sizeof(want), "%s, a rate from %g to %g (500e-6 = 500 ppm)",
			         rate == &cfg->slew ? "slew=R, the largest correction rate"
			                            : "drift=R, the bounds' drift allowance", lo, hi);
			return spec_bad(ps, ps->p, vn, want);
		}
		ps->p += vn;
		return 0;
	}
#undef KEY
	return spec_bad(ps, t, kn, "a key of cont(...): " KEYS);
}

static int cont_parse(struct spec_parser *ps, struct hclock_sync **out)
{
	int rc = sync_alloc(sizeof(struct cont_sync), &cont_ops, out);
	if (rc)
		return rc;
	struct cont_sync *c = (struct cont_sync *)*out;
	c->cfg = defaults;
	if ((rc = spec_expect(ps, '(', "cont(INNER[,KEY=VALUE...])")))
		return rc;
	ps->depth++;
	rc = spec_parse_one(ps, &c->inner);
	ps->depth--;
	if (rc)
		return rc;
	if (c->inner->type == &sync_type_cont || c->inner->type == &sync_type_none ||
	    c->inner->type->level_only)
		return err_set(HCLOCK_EINVAL, "sync spec '%s': cont(...) needs a one-shot sync inside "
		               "(e.g. cont(hca3/100/skampi/20)), not %s%s", ps->s, c->inner->type->name,
		               c->inner->type->level_only ? " (a lower level of h2/h3 only)" : "");
	while (*ps->p == ',') {
		ps->p++;
		if ((rc = parse_key(ps, &c->cfg)))
			return rc;
	}
	if ((rc = spec_expect(ps, ')', "closing cont(INNER[,KEY=VALUE...])")))
		return rc;
	struct cont_cfg *g = &c->cfg;
	if (g->min_s > g->max_s)
		return err_set(HCLOCK_EINVAL, "sync spec '%s': min=%gs is longer than max=%gs; the "
		               "period adapts between them (equal: a fixed period)", ps->s, g->min_s,
		               g->max_s);
	if (!(g->stale_s > 0))
		g->stale_s = STALE_PERIODS * g->max_s;
	(*out)->bounded = c->inner->bounded;
	/* the canonical form: the keys that differ from the defaults */
	char keys[200] = "";
	size_t k = 0;
#define ADD(cond, ...) \
	if (cond && k < sizeof(keys)) \
		k += (size_t)snprintf(keys + k, sizeof(keys) - k, __VA_ARGS__)
	ADD(g->window_s != defaults.window_s, ",window=%gs", g->window_s);
	ADD(g->min_s != defaults.min_s, ",min=%gs", g->min_s);
	ADD(g->max_s != defaults.max_s, ",max=%gs", g->max_s);
	ADD(g->threshold_ns != defaults.threshold_ns, ",threshold=%gns", g->threshold_ns);
	ADD(g->streak != defaults.streak, ",streak=%d", g->streak);
	ADD(g->slew != defaults.slew, ",slew=%g", g->slew);
	ADD(g->drift != defaults.drift, ",drift=%g", g->drift);
	ADD(g->pingpongs != defaults.pingpongs, ",n=%d", g->pingpongs);
	ADD(g->stale_s != STALE_PERIODS * g->max_s, ",stale=%gs", g->stale_s);
	ADD(!g->thread, ",drive=progress");
#undef ADD
	sync_set_spec(*out, "cont(%s%s)", c->inner->spec, keys);
	return 0;
}

const struct sync_type sync_type_cont = {
	.name = "cont",
	.usage = "cont(INNER[,KEY=VALUE...])",
	.help = "continuous: INNER once, then each process keeps learning against its parent in "
	        "the same tree (sliding-window hulls, adaptive period, slewed, bounded)",
	.parse = cont_parse,
};
