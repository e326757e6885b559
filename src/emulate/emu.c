/* emu.c - the emulation spec, the virtual nodes' clocks drawn from the seed, and the truth. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock/clock.h"
#include "emulate/emu.h"
#include "util/err.h"
#include "util/parse.h"
#include "util/timeutil.h"

#define KEYS "offset, skew, drift, wander=AMP@PERIOD, noise, jitter, delay, jitter-node=K, " \
             "step=AMOUNT@TIME, " \
             "fstep=RATE@TIME, slew=RATE@TIME+DURATION, nodes=K|host, ranks-per-node, sockets, " \
             "topology=virtual|host, seed"

/* numbers and durations by the one rule of util/parse.h */
static int parse_double(const char *key, const char *v, double lo, double hi, double *out)
{
	if (parse_number_str(v, lo, hi, out))
		return err_set(HCLOCK_EINVAL, "emulation: bad value '%s' for %s; expected a number in "
		                              "[%g, %g]", v, key, lo, hi);
	return 0;
}

static int parse_seconds(const char *key, const char *v, double lo, double hi, double *out)
{
	if (parse_duration_s_str(v, lo, hi, out))
		return err_set(HCLOCK_EINVAL, "emulation: bad value '%s' for %s; expected %s, from %gs "
		                              "to %gs", v, key, PARSE_DURATION_RULE, lo, hi);
	return 0;
}

static int parse_key_int(const char *key, const char *v, long lo, long hi, long *out)
{
	if (parse_int_str(v, lo, hi, out))
		return err_set(HCLOCK_EINVAL, "emulation: bad value '%s' for %s; expected an integer in "
		                              "[%ld, %ld]", v, key, lo, hi);
	return 0;
}

/* An event of every node but node 0: "VALUE@TIME" (dur_s NULL) or "VALUE@TIME+DURATION";
 * form names it in the error line ("AMOUNT@TIME"). */
static int parse_event(const char *key, char *v, double lo, double hi, const char *form,
                       const char *example, double *value, double *at_s, double *dur_s)
{
	char *at = strchr(v, '@'), *plus = at ? strchr(at, '+') : NULL;
	if (!at || (dur_s && !plus) || (!dur_s && plus))
		return err_set(HCLOCK_EINVAL, "emulation: %s needs %s (e.g. %s), got '%s'", key, form,
		               example, v);
	*at++ = 0;
	if (plus)
		*plus++ = 0;
	char what[64];
	snprintf(what, sizeof(what), "%s value", key);
	int rc = parse_double(what, v, lo, hi, value);
	snprintf(what, sizeof(what), "%s time", key);
	if (!rc)
		rc = parse_seconds(what, at, 0, 1e9, at_s);
	snprintf(what, sizeof(what), "%s duration", key);
	if (!rc && dur_s)
		rc = parse_seconds(what, plus, 0, 1e9, dur_s);
	return rc;
}

int emu_parse(const char *spec, struct emu_params *p)
{
	memset(p, 0, sizeof(*p));
	p->seed = 1;
	p->wander_period_s = 30;
	if (!spec)
		return err_set(HCLOCK_EINVAL, "emulation: empty spec; expected key=value,... with keys " KEYS);
	char *copy = strdup(spec), *save = NULL;
	if (!copy)
		return err_set(HCLOCK_ENOMEM, "out of memory");
	int rc = 0;
	if (!*copy)
		rc = err_set(HCLOCK_EINVAL, "emulation: empty spec; expected key=value,... with keys " KEYS);
	for (char *tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		char *v = strchr(tok, '=');
		long l;
		if (!v) {
			rc = err_set(HCLOCK_EINVAL, "emulation: '%s' is not key=value; keys are " KEYS, tok);
			break;
		}
		*v++ = 0;
		if (!strcmp(tok, "offset"))
			rc = parse_double(tok, v, 0, 1e6, &p->offset_s);
		else if (!strcmp(tok, "skew"))
			rc = parse_double(tok, v, 0, 400e-6, &p->skew);
		else if (!strcmp(tok, "drift"))
			rc = parse_double(tok, v, 0, 1e-6, &p->drift_per_s);
		else if (!strcmp(tok, "noise"))
			rc = parse_double(tok, v, 0, 1e-2, &p->noise_s);
		else if (!strcmp(tok, "jitter"))
			rc = parse_double(tok, v, 0, 1, &p->jitter_s);
		else if (!strcmp(tok, "delay"))
			rc = parse_double(tok, v, 0, 1, &p->delay_s);
		else if (!strcmp(tok, "jitter-node")) {
			rc = parse_key_int(tok, v, 0, (1 << 24) - 1, &l);
			p->jitter_node = (int)l + 1;
		}
		else if (!strcmp(tok, "wander")) {
			char *at = strchr(v, '@');
			if (!at) {
				rc = err_set(HCLOCK_EINVAL, "emulation: wander needs AMP@PERIOD (e.g. "
				                            "wander=2e-7@30), got '%s'", v);
				break;
			}
			*at++ = 0;
			rc = parse_double("wander amplitude", v, 0, 100e-6, &p->wander_amp);
			if (!rc)
				rc = parse_seconds("wander period", at, 1e-3, 1e9, &p->wander_period_s);
		} else if (!strcmp(tok, "step")) {
			rc = parse_event(tok, v, -1e3, 1e3, "AMOUNT@TIME",
			                 "step=5e-6@0.3: every node but rank 0's jumps by 5 us 0.3 s after "
			                 "the start", &p->step_s, &p->step_at_s, NULL);
		} else if (!strcmp(tok, "fstep")) {
			rc = parse_event(tok, v, -100e-6, 100e-6, "RATE@TIME",
			                 "fstep=3.8e-6@120: every node but rank 0's runs 3.8 ppm faster from "
			                 "120 s on", &p->fstep, &p->fstep_at_s, NULL);
		} else if (!strcmp(tok, "slew")) {
			rc = parse_event(tok, v, -500e-6, 500e-6, "RATE@TIME+DURATION",
			                 "slew=500e-6@60+5: every node but rank 0's runs 500 ppm faster for "
			                 "5 s from 60 s on", &p->slew, &p->slew_at_s, &p->slew_s);
		} else if (!strcmp(tok, "nodes")) {
			if (!strcmp(v, "host")) {
				p->nodes_host = 1;
			} else {
				rc = parse_key_int(tok, v, 1, 1 << 24, &l);
				p->nodes = (int)l;
			}
		} else if (!strcmp(tok, "topology")) {
			if (!strcmp(v, "host") || !strcmp(v, "virtual"))
				p->topology_host = !strcmp(v, "host");
			else
				rc = err_set(HCLOCK_EINVAL, "emulation: bad value '%s' for topology; expected "
				                            "virtual or host", v);
		} else if (!strcmp(tok, "sockets")) {
			rc = parse_key_int(tok, v, 1, 1024, &l);
			p->sockets = (int)l;
		} else if (!strcmp(tok, "ranks-per-node")) {
			rc = parse_key_int(tok, v, 1, 1 << 24, &l);
			p->ranks_per_node = (int)l;
		} else if (!strcmp(tok, "seed")) {
			char *end;
			errno = 0;
			unsigned long long s = strtoull(v, &end, 0);
			if (!*v || *end || errno || *v == '-')
				rc = err_set(HCLOCK_EINVAL, "emulation: bad seed '%s'; expected an unsigned "
				                            "integer", v);
			p->seed = s;
		} else
			rc = err_set(HCLOCK_EINVAL, "emulation: unknown key '%s'; expected one of " KEYS, tok);
	}
	if (!rc && (!!p->nodes + !!p->ranks_per_node + p->nodes_host) > 1)
		rc = err_set(HCLOCK_EINVAL, "emulation: give one of nodes=K, nodes=host or "
		                            "ranks-per-node=R, not several");
	free(copy);
	return rc;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
}

static uint64_t dbits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u;
}

int hclock_emu_create(const char *spec, MPI_Comm comm, hclock_emu **out)
{
	struct emu_params p;
	*out = NULL;
	if (!spec) {
		spec = getenv("HCLOCK_EMULATE");
		if (!spec || !*spec)
			return 0;
	}
	int rc = emu_parse(spec, &p);
	if (rc)
		return rc;
	/* without memory this process still takes part in every collective below (on a
	 * scratch copy), and all fail together at the end */
	struct hclock_emu scratch, *e = calloc(1, sizeof(*e));
	int ok = e != NULL, all_ok = 0;
	if (!e)
		memset(e = &scratch, 0, sizeof(scratch));
	/* set-up collectives on a duplicate, never on the application's communicator */
	MPI_Comm user = comm;
	if (PMPI_Comm_dup(user, &comm) != MPI_SUCCESS) {
		rc = err_set(HCLOCK_EMPI, "MPI_Comm_dup failed setting up the emulation");
		goto err;
	}
	e->p = p;
	PMPI_Comm_size(comm, &e->nprocs);
	PMPI_Comm_rank(comm, &e->rank);
	/* consecutive ranks form a node; node_rank is this process's index within it */
	int node_rank, node_size;
	if (p.nodes_host) {
		MPI_Comm shm;
		int is_leader, before;
		PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, e->rank, MPI_INFO_NULL, &shm);
		PMPI_Comm_rank(shm, &node_rank);
		PMPI_Comm_size(shm, &node_size);
		is_leader = node_rank == 0;
		PMPI_Exscan(&is_leader, &before, 1, MPI_INT, MPI_SUM, comm);
		e->node = e->rank == 0 ? 0 : before;
		PMPI_Bcast(&e->node, 1, MPI_INT, 0, shm);
		PMPI_Allreduce(&is_leader, &e->nnodes, 1, MPI_INT, MPI_SUM, comm);
		PMPI_Comm_free(&shm);
		e->ranks_per_node = node_size;
	} else {
		if (p.ranks_per_node) {
			e->ranks_per_node = p.ranks_per_node;
		} else if (p.nodes) {
			int k = p.nodes < e->nprocs ? p.nodes : e->nprocs;
			e->ranks_per_node = (e->nprocs + k - 1) / k;
		} else {
			e->ranks_per_node = 1;
		}
		e->nnodes = (e->nprocs + e->ranks_per_node - 1) / e->ranks_per_node;
		e->node = e->rank / e->ranks_per_node;
		node_rank = e->rank % e->ranks_per_node;
		node_size = e->node == e->nnodes - 1 ? e->nprocs - e->node * e->ranks_per_node
		                                      : e->ranks_per_node;
	}
	e->socket = -1;
	if (p.sockets) {
		int per = (node_size + p.sockets - 1) / p.sockets;
		e->socket = node_rank / per;
	}
	e->ref_node = e->node;
	PMPI_Bcast(&e->ref_node, 1, MPI_INT, 0, comm);
	e->epoch_ns = real_now_ns();
	PMPI_Bcast(&e->epoch_ns, 1, MPI_INT64_T, 0, comm);
	PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
	PMPI_Comm_free(&comm);
	if (!all_ok) {
		/* the same line on every rank */
		rc = err_set(HCLOCK_ENOMEM, "out of memory setting up the emulation (on at least one "
		                            "rank)");
		goto err;
	}

	/* each process keeps only the two clocks it ever evaluates: 40 bytes, not 40 per node */
	emu_draw_node(&p, e->node, &e->mine);
	emu_draw_node(&p, e->ref_node, &e->ref);
	rng_seed(&e->rng, p.seed ^ (0xa0761d6478bd642full * (uint64_t)(e->rank + 1)));
	e->owner = pthread_self();
	/* every parameter that shapes a node's clock */
	const double shape[] = {p.offset_s, p.skew,      p.drift_per_s, p.wander_amp,
	                        p.wander_period_s, p.step_s, p.step_at_s, p.fstep,
	                        p.fstep_at_s, p.slew, p.slew_at_s, p.slew_s};
	uint64_t h = mix(p.seed, (uint64_t)e->epoch_ns);
	for (size_t i = 0; i < sizeof(shape) / sizeof(shape[0]); i++)
		h = mix(h, dbits(shape[i]));
	h = mix(h, (uint64_t)e->nnodes);
	e->spec_hash = h;
	*out = e;
	return 0;
err:
	if (ok)
		free(e);
	return rc;
}

void hclock_emu_free(hclock_emu *e)
{
	free(e);
}

void emu_draw_node(const struct emu_params *p, int k, struct emu_node *n)
{
	struct rng r;
	rng_seed(&r, p->seed * 0x2545f4914f6cdd1dull + (uint64_t)k);
	n->off_ns = (2 * rng_uniform(&r) - 1) * p->offset_s * 1e9;
	n->skew = (2 * rng_uniform(&r) - 1) * p->skew;
	n->drift = (2 * rng_uniform(&r) - 1) * p->drift_per_s;
	n->wander_amp = rng_uniform(&r) * p->wander_amp;
	n->wander_phase = 2 * M_PI * rng_uniform(&r);
	/* rank 0's node is the reference: its clock never steps, changes rate or slews */
	n->step_ns = k ? p->step_s * 1e9 : 0;
	n->fstep = k ? p->fstep : 0;
	n->slew = k ? p->slew : 0;
}

int hclock_emu_node(const hclock_emu *e)
{
	return e->node;
}

int hclock_emu_nodes(const hclock_emu *e)
{
	return e->nnodes;
}

int64_t emu_T_ns(const struct hclock_emu *e)
{
	return real_now_ns() - e->epoch_ns;
}

int64_t emu_local_ns(const struct hclock_emu *e, const struct emu_node *n, int64_t T_ns)
{
	double T = (double)T_ns; /* a difference from the epoch: safe as a double */
	double dev = n->off_ns + n->skew * T + 0.5 * n->drift * T * T * 1e-9;
	if (n->wander_amp != 0) {
		double P = e->p.wander_period_s * 1e9;
		dev += n->wander_amp * P / (2 * M_PI) *
		       (cos(n->wander_phase) - cos(2 * M_PI * T / P + n->wander_phase));
	}
	if (n->step_ns != 0 && T >= e->p.step_at_s * 1e9)
		dev += n->step_ns;
	if (n->fstep != 0 && T > e->p.fstep_at_s * 1e9)
		dev += n->fstep * (T - e->p.fstep_at_s * 1e9);
	if (n->slew != 0 && T > e->p.slew_at_s * 1e9)
		dev += n->slew * fmin(T - e->p.slew_at_s * 1e9, e->p.slew_s * 1e9);
	return e->epoch_ns + T_ns + (int64_t)llround(dev);
}

struct rng *emu_rng(struct hclock_emu *e)
{
	static int arrivals;
	static _Thread_local struct {
		const struct hclock_emu *emu;
		struct rng r;
	} mine;
	if (pthread_equal(pthread_self(), e->owner))
		return &e->rng;
	if (mine.emu != e) {
		int k = __atomic_add_fetch(&arrivals, 1, __ATOMIC_RELAXED);
		rng_seed(&mine.r, e->p.seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(e->rank + 1)) ^
		                  ((uint64_t)k << 48));
		mine.emu = e;
	}
	return &mine.r;
}

void emu_jitter(struct hclock_emu *e)
{
	if (e && (e->p.jitter_s > 0 || e->p.delay_s > 0) &&
	    (!e->p.jitter_node || e->p.jitter_node - 1 == e->node))
		real_delay_ns((int64_t)(e->p.delay_s * 1e9) +
		              (e->p.jitter_s > 0 ?
		               (int64_t)(rng_uniform(emu_rng(e)) * e->p.jitter_s * 1e9) : 0));
}
