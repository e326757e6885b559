/* sync.c - the sync family's factory, the public entry points and LEARN_CLOCK_MODEL. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/yield.h"
#include "numerics/stats.h"
#include "sync/sync.h"
#include "util/err.h"
#include "util/timeutil.h"

int ilog2(int p)
{
	int r = 0;
	while (p >>= 1)
		r++;
	return r;
}

int sync_create(const struct sync_spec *sp, struct hclock_sync **out)
{
	int rc;
	*out = NULL;
	switch (sp->kind) {
	case SYNC_NONE: rc = sync_none_create(sp, out); break;
	case SYNC_HCA3: rc = sync_hca3_create(sp, out); break;
	case SYNC_HCA2: rc = sync_hca2_create(sp, out); break;
	case SYNC_HCA: rc = sync_hca_create(sp, out); break;
	case SYNC_JK: rc = sync_jk_create(sp, out); break;
	case SYNC_SKAMPI: rc = sync_skampi_create(sp, out); break;
	case SYNC_DUNIGAN: rc = sync_dunigan_create(sp, out); break;
	case SYNC_PROP: rc = sync_prop_create(sp, out); break;
	case SYNC_H2:
	case SYNC_H3: rc = sync_hier_create(sp, out); break;
	default: return err_set(HCLOCK_EINVAL, "unknown sync algorithm kind %d", (int)sp->kind);
	}
	if (!rc)
		sync_spec_format(sp, (*out)->spec, sizeof((*out)->spec));
	return rc;
}

int hclock_sync_create(const char *spec, hclock_sync **out)
{
	struct sync_spec *sp;
	*out = NULL;
	int rc = sync_spec_parse(spec, &sp);
	if (rc)
		return rc;
	rc = sync_create(sp, out);
	sync_spec_free(sp);
	return rc;
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

uint64_t hclock_sync_pingpongs(const hclock_sync *s)
{
	return s->pingpongs;
}

uint64_t hclock_sync_rounds(const hclock_sync *s)
{
	return s->rounds;
}

int sync_run(struct hclock_sync *s, MPI_Comm comm, hclock_clock *clk, hclock_clock **out)
{
	s->pingpongs = 0;
	s->rounds = 0;
	*out = NULL;
	return s->ops->run(s, comm, clk, out);
}

int hclock_sync_run(hclock_sync *s, MPI_Comm comm, hclock_clock *base, hclock_clock **global)
{
	MPI_Comm c;
	*global = NULL;
	if (MPI_Comm_dup(comm, &c) != MPI_SUCCESS)
		return err_set(HCLOCK_EMPI, "MPI_Comm_dup failed");
	int rc = sync_run(s, c, base, global), all;
	/* every rank returns the same verdict */
	yield_allreduce(&rc, &all, 1, MPI_INT, MPI_MIN, c);
	MPI_Comm_free(&c);
	if (all && !rc)
		err_set(all, "sync failed on another rank: %s", hclock_strerror(all));
	if (all) {
		hclock_clock_free(*global);
		*global = NULL;
	}
	return all;
}

int learning_sync_create(const struct sync_spec *sp, const struct sync_ops *ops,
                         struct hclock_sync **out)
{
	struct learning_sync *ls = calloc(1, sizeof(*ls));
	if (!ls)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	ls->s.ops = ops;
	ls->L.nfit = sp->nfit;
	ls->L.ri = sp->ri;
	ls->L.span_ns = sp->span_s * 1e9;
	int rc = offset_create(sp->offalg, sp->npingpongs, &ls->L.oa);
	if (rc) {
		free(ls);
		return rc;
	}
	*out = &ls->s;
	return 0;
}

void learning_sync_destroy(struct hclock_sync *s)
{
	struct learning_sync *ls = container_of(s, struct learning_sync, s);
	offset_destroy(ls->L.oa);
	free(ls);
}

int measure_all(struct hclock_sync *s, struct offset_alg *oa, MPI_Comm comm, hclock_clock *clk,
                struct offset_sample *smp)
{
	int p, r, rc = 0;
	MPI_Comm_size(comm, &p);
	MPI_Comm_rank(comm, &r);
	for (int c = 1; c < p; c++)
		if (r == 0 || r == c) {
			int m = measure_pair(s, oa, comm, 0, c, clk, smp);
			if (!rc)
				rc = m;
		}
	return rc;
}

int measure_pair(struct hclock_sync *s, struct offset_alg *oa, MPI_Comm comm, int ref, int client,
                 hclock_clock *clk, struct offset_sample *smp)
{
	struct pp_link l;
	pp_link_init(&l, comm, ref, client, clk, &s->pingpongs);
	return offset_measure(oa, &l, smp);
}

/* Real oscillators are off by up to a few hundred ppm (NTP tolerates 500 ppm); the emulation
 * allows at most 600 ppm per node over 100 s (emu.c), so two clocks differ by at most about
 * 1.2e-3. A fitted slope beyond 2e-3 comes from stalled exchanges, not from a clock:
 * measured, MPICH ping-pongs on shared cores shift their delay asymmetry by 1-2 us within
 * 20 fit points taken in 250 us, which fits a 1% slope and leaves the model 9 ms off 0.8 s
 * later. */
#define MAX_PLAUSIBLE_SLOPE 2e-3
/* A slope within this many of its standard errors of zero is not kept: the fit points
 * cannot tell it from noise. Kept, its error grows with every second of extrapolation;
 * dropped, the error grows only with the true rate difference, which is then itself at
 * most about this many standard errors. (The standard error assumes independent fit
 * points; a bias that drifts across the fit tilts the slope further than it says, which
 * is what the limit above is for.) */
#define MIN_SLOPE_T 2.0

int learn_model(struct hclock_sync *s, struct learner *L, MPI_Comm comm, int ref, int client,
                hclock_clock *clk, struct lm *lm)
{
	struct pp_link l;
	int rc = 0;
	pp_link_init(&l, comm, ref, client, clk, &s->pingpongs);
	if (l.me == ref) {
		for (int i = 0; i < L->nfit && !rc; i++)
			rc = offset_measure(L->oa, &l, NULL);
		if (!rc && L->ri)
			rc = offset_measure(L->oa, &l, NULL);
		return rc;
	}
	if (l.me != client)
		return 0;
	int64_t *x = malloc((size_t)L->nfit * sizeof(*x));
	double *y = malloc((size_t)L->nfit * sizeof(*y));
	struct offset_sample smp;
	if (!x || !y)
		rc = err_set(HCLOCK_ENOMEM, "out of memory");
	/* on allocation failure still take part in the exchanges so the reference never hangs */
	/* paced from the end of the first exchange: the reference may still be busy in an
	 * earlier round when this client starts waiting for it */
	int64_t t_start = 0;
	for (int i = 0; i < L->nfit; i++) {
		if (L->span_ns > 0 && i == 1)
			t_start = real_now_ns();
		if (L->span_ns > 0 && i > 1)
			real_delay_ns(t_start + (int64_t)(L->span_ns * (i - 1) / (L->nfit - 1)) -
			              real_now_ns());
		int r = offset_measure(L->oa, &l, &smp);
		if (!rc && r)
			rc = r;
		if (x && y) {
			x[i] = smp.local_ns;
			y[i] = smp.offset_ns;
		}
	}
	struct linreg_info info;
	if (!rc && (linreg_fit_robust(x, y, (size_t)L->nfit, lm, &info) ||
	            fabs(lm->slope) > MAX_PLAUSIBLE_SLOPE ||
	            fabs(lm->slope) < MIN_SLOPE_T * info.slope_se)) {
		/* all fit points at one instant (coarse clock), or a slope no clock has (the
		 * exchanges were stalled), or one the points cannot pin down: an offset alone,
		 * the median of the fit points, at the most recent one */
		struct stats_summary st;
		lm->x0_ns = x[L->nfit - 1];
		lm->intercept_ns = stats_summarize(y, (size_t)L->nfit, &st) ? y[L->nfit - 1] : st.median;
		lm->slope = 0;
	}
	if (L->ri) {
		/* COMPUTE_AND_SET_INTERCEPT: keep the slope, re-anchor on a fresh offset */
		int r = offset_measure(L->oa, &l, &smp);
		if (!rc && !r) {
			lm->x0_ns = smp.local_ns;
			lm->intercept_ns = smp.offset_ns;
		}
		if (!rc)
			rc = r;
	}
	free(x);
	free(y);
	return rc;
}

int clock_from_lm(hclock_clock *clk, const struct lm *lm, hclock_clock **out)
{
	return hclock_model_linear(clk, lm->x0_ns, lm->intercept_ns, lm->slope, out);
}

int finish_lm(MPI_Comm comm, hclock_clock *clk, const struct lm *lm, hclock_clock **out)
{
	int r;
	MPI_Comm_rank(comm, &r);
	if (r == 0) {
		*out = hclock_clock_ref(clk);
		return 0;
	}
	return clock_from_lm(clk, lm, out);
}

int hclock_measure_offset(MPI_Comm comm, hclock_clock *clk, int ref, int client, int npingpongs,
                          double *offset_ns, double *rtt_ns)
{
	struct offset_alg *oa;
	struct offset_sample smp;
	struct pp_link l;
	int rc = offset_create("skampi", npingpongs, &oa);
	if (rc)
		return rc;
	pp_link_init(&l, comm, ref, client, clk, NULL);
	rc = offset_measure(oa, &l, &smp);
	if (!rc && l.me == client) {
		*offset_ns = smp.offset_ns;
		if (rtt_ns)
			*rtt_ns = smp.rtt_ns;
	}
	offset_destroy(oa);
	return rc;
}
