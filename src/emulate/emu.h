/*
 * emu.h - emulated clocks with known truth (Liao et al.'s injected drift, made exact).
 *
 * Every virtual node k has a local clock
 *   L_k(T) = E + off_k + (1 + skew_k) T + drift_k T^2 / 2 + wander_k(T) + step_k(T) + noise
 * where T is the machine's real monotonic time since the common epoch E (ns), and
 *   wander_k(T) = A_k P / (2 pi) (cos(phi_k) - cos(2 pi T / P + phi_k))
 * is the phase of a sinusoidal frequency error of amplitude A_k and period P, and
 * step_k(T) = S for T >= T_step on every node but node 0 (rank 0's, the reference), else 0,
 * plus, likewise on every node but node 0, a frequency step F from T_f on (F (T - T_f)) and an
 * NTP-style slewing episode at rate R for D from T_s (R min(T - T_s, D)).
 * The parameters of every node are drawn from the seed, so any process can evaluate any
 * node's clock exactly: that is the ground truth.
 */
#ifndef HCLOCK_EMULATE_EMU_H
#define HCLOCK_EMULATE_EMU_H

#include <stdint.h>

#include "hclock.h"
#include <pthread.h>

#include "util/rng.h"

/* What the user asked for: the ranges parameters are drawn from. */
struct emu_params {
	double offset_s;        /* |offset| up to this, s */
	double skew;            /* |skew| up to this, fraction (1e-6 = 1 ppm) */
	double drift_per_s;     /* |d skew / dT| up to this, 1/s */
	double wander_amp;      /* frequency wander amplitude up to this, fraction */
	double wander_period_s; /* wander period, s */
	double noise_s;         /* read noise std, s */
	double jitter_s;        /* random delay before each sync message, up to this, s */
	double delay_s;         /* fixed delay before each sync message, before the jitter, s
	                           (with jitter_node: a path's asymmetry, which no round trip shows) */
	int jitter_node;        /* 0: every node's messages; K + 1: only virtual node K's (the
	                           messages its processes send: one slow node), jitter and delay */
	double step_s;          /* a step of every node's clock but node 0's, s (0: none) */
	double step_at_s;       /* ... at this real time since the epoch, s */
	double fstep;           /* a frequency step of every node but node 0, fraction (0: none) */
	double fstep_at_s;      /* ... from this real time since the epoch on, s */
	double slew;            /* a slewing episode's rate change, fraction (0: none) */
	double slew_at_s;       /* ... from this real time since the epoch, s */
	double slew_s;          /* ... lasting this long, s */
	int nodes;              /* virtual nodes (0: one per rank, or from ranks_per_node) */
	int nodes_host;         /* nodes=host: one virtual node per real (or simulated) host */
	int sockets;            /* sockets per virtual node for the h3 socket level (0: hwloc) */
	int topology_host;      /* topology=host: hierarchical sync splits by the real hosts, not
	                           by the virtual nodes (to show prop refusing different clocks) */
	int ranks_per_node;     /* ranks per virtual node (0: from nodes) */
	uint64_t seed;
};

/* One virtual node's clock, drawn from the seed. */
struct emu_node {
	double off_ns;       /* offset at T = 0, ns */
	double skew;         /* frequency error, fraction */
	double drift;        /* frequency change, 1/s */
	double wander_amp;   /* frequency wander amplitude, fraction */
	double wander_phase; /* rad */
	double step_ns;      /* its step (step_s; 0 on node 0), ns */
	double fstep;        /* its frequency step (fstep; 0 on node 0), fraction */
	double slew;         /* its slewing rate (slew; 0 on node 0), fraction */
};

struct hclock_emu {
	struct emu_params p;
	uint64_t spec_hash;      /* identity of this emulation (parameters and epoch) */
	int64_t epoch_ns;        /* real monotonic time of T = 0, ns (rank 0's, broadcast) */
	int nprocs, rank;
	int nnodes, node;        /* number of virtual nodes; this process's node */
	int ref_node;            /* node of rank 0, the reference of the truth */
	int socket;              /* emulated socket of this process within its node, or -1 */
	int ranks_per_node;
	struct emu_node mine;    /* this process's node clock */
	struct emu_node ref;     /* the reference node's clock (rank 0's), for the truth */
	struct rng rng;          /* this process's read noise and jitter (the creating thread's;
	                            other threads, such as the continuous clock's, draw from their
	                            own: emu_rng) */
	pthread_t owner;         /* the thread that created it */
};

/* Parse "key=value,..." into p (defaults: all zero, seed 1). Returns 0 or HCLOCK_EINVAL with
 * hclock_last_error() naming the bad token. */
int emu_parse(const char *spec, struct emu_params *p);

/* Node k's clock parameters, drawn from the seed (any process can draw any node's). */
void emu_draw_node(const struct emu_params *p, int k, struct emu_node *out);

/* A node clock n at real time T since the epoch (ns), without read noise. */
int64_t emu_local_ns(const struct hclock_emu *e, const struct emu_node *n, int64_t T_ns);

/* Real time since the epoch, ns. */
int64_t emu_T_ns(const struct hclock_emu *e);

/* The random generator of the calling thread for e's noise and jitter: e->rng in the
 * thread that created e, a generator of the thread's own (seeded from e's seed and the
 * thread's arrival order) in any other, so that reads from several threads do not race. */
struct rng *emu_rng(struct hclock_emu *e);

/* Wait delay plus a random time in [0, jitter] before a sync message (no-op when both are 0). */
void emu_jitter(struct hclock_emu *e);
/* (The clock layer reaches the emulation only through the emulated clock's hooks,
 * emulate/emulated.c.) */

#endif
