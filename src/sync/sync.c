/* sync.c - what every sync algorithm shares: allocation, the run and its quality counts,
 * warnings, explain lines, offset measurements, the clocks a run leaves, and the public
 * entry points on a created sync (spec.c parses and creates one). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock.h"
#include "sync/sync.h"
#include "transport/comm.h"
#include "util/err.h"
#include "util/fault.h"

int ilog2(int p)
{
	int r = 0;
	while (p >>= 1)
		r++;
	return r;
}

int sync_alloc(size_t size, const struct sync_ops *ops, struct hclock_sync **out)
{
	struct hclock_sync *s = fault_calloc(1, size);
	*out = s;
	if (!s)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	s->ops = ops;
	return 0;
}

void sync_set_spec(struct hclock_sync *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->spec, sizeof(s->spec), fmt, ap);
	va_end(ap);
}

void hclock_sync_free(hclock_sync *s)
{
	if (!s)
		return;
	if (s->ops->destroy)
		s->ops->destroy(s);
	else
		free(s);
}

const char *hclock_sync_spec(const hclock_sync *s)
{
	return s->spec;
}

int hclock_sync_stop(hclock_sync *s)
{
	return s->ops->stop ? s->ops->stop(s) : 0;
}

int hclock_sync_progress(hclock_sync *s)
{
	return s->ops->progress ? s->ops->progress(s) : 0;
}

int64_t hclock_sync_progress_due(const hclock_sync *s)
{
	return s->ops->progress_due ? s->ops->progress_due(s) : INT64_MAX;
}

int hclock_sync_stats(const hclock_sync *s, struct hclock_sync_stats *st)
{
	if (!s->ops->stats)
		return err_set(HCLOCK_EUNSUPP, "%s is not a continuous clock: it has no exchange "
		               "statistics", s->spec);
	return s->ops->stats(s, st);
}

int hclock_sync_auto_choice(const hclock_sync *s, struct hclock_sync_auto *out)
{
	if (!s->ops->auto_choice)
		return err_set(HCLOCK_EUNSUPP, "%s holds no auto(...) sync: it chose nothing",
		               s->spec);
	return s->ops->auto_choice(s, out);
}

uint64_t hclock_sync_pingpongs(const hclock_sync *s)
{
	return s->pingpongs;
}

uint64_t hclock_sync_rounds(const hclock_sync *s)
{
	return s->rounds;
}

/* Append indent spaces, the formatted line and a newline to the text in buf (size bytes),
 * nothing when it would not fit whole up to its first character. */
static void vappend_line(char *buf, size_t size, int indent, const char *fmt, va_list ap)
{
	size_t n = strlen(buf);
	if (n + (size_t)indent + 2 >= size)
		return;
	n += (size_t)snprintf(buf + n, size - n, "%*s", indent, "");
	vsnprintf(buf + n, size - n - 1, fmt, ap);
	n = strlen(buf);
	buf[n] = '\n';
	buf[n + 1] = 0;
}

void sync_warn(struct hclock_sync *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vappend_line(s->warnings, sizeof(s->warnings), 0, fmt, ap);
	va_end(ap);
}

void hclock_sync_quality(const hclock_sync *s, struct hclock_sync_quality *q)
{
	q->retakes = s->retakes;
	q->unclean = s->unclean;
	q->fit_rtt_max_ns = s->fit_rtt_max_ns;
	q->fit_span_min_ns = s->fit_span_min_ns;
	q->planned_s = s->planned_s;
}

void sync_take_quality(struct hclock_sync *s, const struct hclock_sync *inner)
{
	s->retakes += inner->retakes;
	s->unclean += inner->unclean;
	sync_note_rtt(s, inner->fit_rtt_max_ns);
	sync_note_span(s, inner->fit_span_min_ns);
	s->planned_s += inner->planned_s; /* levels run one after the other */
	if (inner->topo.levels > s->topo.levels)
		s->topo = inner->topo;
}

void hclock_sync_topology(const hclock_sync *s, struct hclock_sync_topology *t)
{
	*t = s->topo;
}

const char *hclock_sync_warnings(const hclock_sync *s)
{
	return s->warnings;
}

int sync_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	s->pingpongs = 0;
	s->rounds = 0;
	s->retakes = 0;
	s->unclean = 0;
	s->fit_rtt_max_ns = 0;
	s->fit_span_min_ns = INFINITY;
	s->warnings[0] = 0;
	s->parent = -1;
	s->shares = 0;
	s->topo = (struct hclock_sync_topology){1, 0, 0};
	s->planned_s = 0;
	*out = NULL;
	int rc = s->ops->run(s, comm, clk, out);
	if (!*out) /* every run leaves a clock, a dummy after a failure */
		*out = hclock_clock_ref(clk);
	return rc;
}

int sync_plan(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk)
{
	return s->ops->plan ? s->ops->plan(s, comm, clk) : 0;
}

void sync_explain_line(struct sync_explain *e, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vappend_line(e->text, sizeof(e->text), 2 * e->depth, fmt, ap);
	va_end(ap);
}

void sync_explain(const struct hclock_sync *s, struct sync_explain *e)
{
	sync_explain_line(e, "%s: %s", s->spec, s->type ? s->type->help : "");
	if (s->ops->explain) {
		e->depth++;
		s->ops->explain(s, e);
		e->depth--;
	}
}

/* Collective: fail together, before any exchange, when the ranks were given different
 * specs, base clocks or fault hooks (an MPMD launch, a per-rank environment variable). */
static int same_setup(MPI_Comm c, const struct hclock_sync *s, hclock_clock *base)
{
	int w, frc;
	char text[512];
	const char *fault = getenv("HCLOCK_FAULT");
	PMPI_Comm_rank(MPI_COMM_WORLD, &w);
	frc = fault_init(w);
	snprintf(text, sizeof(text), "%s on clock %s%s%s", s->spec, clock_base(base)->ops->name,
	         fault ? ", HCLOCK_FAULT=" : "", fault ? fault : "");
	int rc = comm_same(c, "sync specs (or base clocks)", text);
	return rc ? rc : frc; /* the same HCLOCK_FAULT everywhere: the same verdict */
}

int hclock_sync_run(hclock_sync *s, MPI_Comm comm, hclock_clock *base, hclock_clock **global)
{
	MPI_Comm c;
	*global = NULL;
	int rc = comm_private(comm, &c);
	if (rc)
		return rc;
	if ((rc = same_setup(c, s, base)))
		return rc;
	fault_reset();
	/* with bounds, rank 0's clock is the reference itself: its bound is exact (a layer of
	 * offset 0 carries it; the other ranks compose theirs from it) */
	hclock_clock *clk = NULL;
	int r;
	PMPI_Comm_rank(c, &r);
	if (s->bounded && r == 0) {
		struct bound exact = bound_exact();
		rc = clock_from_lm(base, &(struct lm){0, 0, 0}, &exact, &clk);
	}
	if (!clk) /* no bounds wanted, another rank, or no memory (then rc says so) */
		clk = hclock_clock_ref(base);
	rc = first_err(rc, sync_run(s, c, clk, global));
	hclock_clock_free(clk);
	if (fault_hit(FAULT_AGREE))
		rc = first_err(rc, err_set(HCLOCK_EINJECTED, "injected fault (HCLOCK_FAULT) at the "
		                                             "final agreement"));
	int all = comm_agree(c, rc);
	if (all) {
		/* a continuous sync that started everywhere (its start is agreed) ends with the run;
		 * a stop is collective and every rank is here */
		if (s->ops->stop) {
			char line[512];
			snprintf(line, sizeof(line), "%s", hclock_last_error());
			s->ops->stop(s);
			err_set(all, "%s", line);
			err_mark_agreed();
		}
		hclock_clock_free(*global);
		*global = NULL;
	}
	return all;
}

int measure_pair(struct hclock_sync *s, struct offset_alg *oa, MPI_Comm comm, int ref, int client,
                 hclock_clock *clk, struct offset_sample *smp)
{
	struct pp_link l;
	pp_link_init(&l, comm, ref, client, clk, &s->pingpongs);
	l.retakes = &s->retakes;
	return offset_measure(oa, &l, smp);
}

int measure_all(struct hclock_sync *s, struct offset_alg *oa, MPI_Comm comm, hclock_clock *clk,
                struct offset_sample *smp)
{
	int p, r, rc = 0;
	PMPI_Comm_size(comm, &p);
	PMPI_Comm_rank(comm, &r);
	for (int c = 1; c < p; c++)
		if (r == 0 || r == c)
			rc = first_err(rc, measure_pair(s, oa, comm, 0, c, clk, smp));
	return rc;
}

int clock_from_lm(hclock_clock *clk, const struct lm *lm, const struct bound *bd,
                  hclock_clock **out)
{
	int rc = hclock_model_linear(clk, lm->x0_ns, lm->intercept_ns, lm->slope, out);
	if (!rc && bd)
		clock_set_bound(*out, bd);
	return rc;
}

int finish_lm(MPI_Comm comm, hclock_clock *clk, const struct lm *lm, const struct bound *bd,
              int rc, hclock_clock **out)
{
	int r;
	PMPI_Comm_rank(comm, &r);
	if (r == 0 || rc) {
		*out = hclock_clock_ref(clk);
		return rc;
	}
	return clock_from_lm(clk, lm, bd, out);
}

int hclock_measure_offset(MPI_Comm comm, hclock_clock *clk, int ref, int client, int npingpongs,
                          double *offset_ns, double *rtt_ns)
{
	MPI_Comm c;
	int rc = comm_private_cached(comm, &c);
	return rc ? rc : measure_offset_on(c, clk, ref, client, npingpongs, offset_ns, rtt_ns);
}

int measure_offset_on(MPI_Comm c, hclock_clock *clk, int ref, int client, int npingpongs,
                      double *offset_ns, double *rtt_ns)
{
	return measure_offset_at(c, clk, ref, client, npingpongs, offset_ns, rtt_ns, NULL);
}

int measure_offset_at(MPI_Comm c, hclock_clock *clk, int ref, int client, int npingpongs,
                      double *offset_ns, double *rtt_ns, int64_t *local_ns)
{
	/* SKaMPI-Offset keeps no state beyond the family's own: on the stack, so that no failed
	 * allocation can leave one end out of the exchange (and its retakes' messages) */
	const struct offset_type *t = offset_type_find("skampi", 6);
	struct offset_alg oa = {.ops = t->ops, .type = t, .nexchanges = npingpongs};
	struct offset_sample smp = {0, 0, 0};
	struct pp_link l;
	if (npingpongs < 1)
		return err_set(HCLOCK_EINVAL, "hclock_measure_offset needs at least 1 ping-pong, got %d",
		               npingpongs);
	pp_link_init(&l, c, ref, client, clk, NULL);
	int rc = offset_measure(&oa, &l, &smp);
	if (l.me == client) {
		*offset_ns = smp.offset_ns;
		if (rtt_ns)
			*rtt_ns = smp.rtt_ns;
		if (local_ns)
			*local_ns = smp.local_ns;
	}
	return rc;
}
