/*
 * plan.h - the parameters of a learned clock model chosen by a time budget (the `auto(...)`
 * sync spec): from a burst of ping-pongs (round trips and offsets, in paced groups) and the
 * time a model may take, the fit points, ping-pongs per point and span that minimise the
 * predicted error after a horizon, and that prediction. Knows nothing of MPI: samples in,
 * a choice out (the model: docs/check.md, "Sync specs chosen by a time budget").
 */
#ifndef HCLOCK_NUMERICS_PLAN_H
#define HCLOCK_NUMERICS_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* What the burst showed. */
struct plan_net {
	double floor_ns;  /* smallest round trip, ns */
	double spread_ns; /* median round trip minus the floor, ns */
	double tail_ns;   /* 0.99 quantile minus the floor, ns */
	double mean_ns;   /* mean round trip (what a ping-pong costs on average), ns */
	int sharp;        /* 1 when at least 10% of the round trips are within twice the floor */
};

/* The choice for one model (one round of a tree). */
struct plan_choice {
	int nfit;                  /* fit points */
	int n;                     /* ping-pongs per fit point (the smallest round trip's kept) */
	double span_ns;            /* the fit points spread over this much time, ns */
	double point_sigma_ns;     /* measured error std of a fit point with n ping-pongs, ns */
	double predicted_error_ns; /* predicted RMS error of the model after the horizon, ns */
};

/* The burst a plan needs: up to PLAN_GROUPS groups (at least PLAN_MIN_GROUPS) of PLAN_GROUP
 * ping-pongs back to back, the groups paced as fit points are (a first ping-pong after a
 * pause is not one in a stream: measured, single ping-pongs 0.3 ms apart had 3x the offset
 * error the same ping-pongs back to back showed); n up to PLAN_GROUP. A burst capped by its
 * time (slow round trips) has fewer groups. */
#define PLAN_GROUPS 48
#define PLAN_MIN_GROUPS 8
#define PLAN_GROUP 16
#define PLAN_BURST (PLAN_GROUPS * PLAN_GROUP)
#define PLAN_MAX_N PLAN_GROUP
#define PLAN_DUTY 4 /* the fit points' ping-pongs take at most 1/PLAN_DUTY of the span */
#define PLAN_SLACK 1.2 /* the largest n predicting within this factor of the best wins */
#define PLAN_MIN_NFIT 4
#define PLAN_MAX_NFIT 1000

/*
 * A group made through a stall (another job on the cores, a late wake-up) is retaken and
 * left out of a plan: its best round trip beyond PLAN_STALL_X times the smallest group's
 * best (the floor) and by at least PLAN_STALL_MIN_NS (every exchange of it slowed by more
 * than a hand-off of the core), or its time beyond PLAN_STALL_X times the fastest group's
 * and by at least PLAN_STALL_SLICE_NS (an exchange, or the wake-up, held up for a scheduler
 * slice). Against the fastest group, not a quantile: a stall that goes on through the
 * retaken groups would move any quantile. Slower exchanges by a few us, in every group or
 * in many, are the link under the machine's load, which a plan must see, not a stall. A
 * burst makes up to PLAN_TAKE_MAX groups for the PLAN_GROUPS it keeps.
 */
#define PLAN_STALL_X 4.0
#define PLAN_STALL_MIN_NS 20000.0
#define PLAN_STALL_SLICE_NS 1000000.0
#define PLAN_TAKE_MAX (PLAN_GROUPS + PLAN_GROUPS / 2)

/*
 * Which of the groups 0..n-1 (best round trip gmin_ns[g], time gtime_ns[g] from its planned
 * start, ns; not modified) were made through a stall: stalled[g] 1 or 0. Returns how many
 * were, or -1 (nothing written) when n is not in 1..PLAN_TAKE_MAX.
 */
int plan_stalled_groups(const double *gmin_ns, const double *gtime_ns, int n,
                        unsigned char *stalled);

/*
 * Summarize the round trips rtt_ns[0..m-1] of a burst (not modified) into *net. Returns 0,
 * 1 (fewer than 16: nothing written) or HCLOCK_ENOMEM.
 */
int plan_net_measure(const double *rtt_ns, size_t m, struct plan_net *net);

/*
 * In the burst (ngroups groups of PLAN_GROUP ping-pongs, group after group: local_ns[i]
 * when each was taken, off_ns[i] the offset its midpoint gives, rtt_ns[i] its round trip):
 * the error std of a fit point made of n ping-pongs, the offset of the smallest round trip
 * kept. The burst's line (the learners' robust fit) taken out, each group's first n
 * ping-pongs make one point; the std of those points' residuals, those beyond 4 robust
 * sigmas left out (as the fit leaves out a point off by a stalled exchange). NAN when n is
 * not in 1..PLAN_GROUP, ngroups not in PLAN_MIN_GROUPS..PLAN_GROUPS or the line cannot be
 * fitted.
 */
double plan_point_sigma(const int64_t *local_ns, const double *off_ns, const double *rtt_ns,
                        int ngroups, int n);

/*
 * Predicted RMS error, ns, at horizon_ns after the last of nfit points spread evenly over
 * span_ns, each off by sigma_ns (independent): the offset's error at the points' mean time
 * (sigma / sqrt(nfit)) and the slope's (sigma / (span sqrt(nfit (nfit + 1) / (12 (nfit -
 * 1))))) times the distance from there, in quadrature.
 */
double plan_predict(double sigma_ns, int nfit, double span_ns, double horizon_ns);

/*
 * The choice minimising the predicted error after horizon_ns of one model that may take
 * round_ns (a tree's rounds each take one), given the burst (local_ns, off_ns, rtt_ns of
 * ngroups groups) and net: for each n in 1..PLAN_MAX_N with a measured point sigma, the span is what is left
 * of the round after one fit point (round_ns - n mean), the fit points as many as fill a
 * 1/PLAN_DUTY of it (span / (PLAN_DUTY n mean), PLAN_MIN_NFIT..PLAN_MAX_NFIT: ping-pongs
 * slowed by other processes on the cores then still fit in the span); the largest n whose
 * prediction is within PLAN_SLACK of the smallest wins. Returns 0, or 1 when
 * the round holds no PLAN_MIN_NFIT points of one ping-pong (*out then the smallest model:
 * PLAN_MIN_NFIT points of 1 ping-pong, back to back, and its prediction).
 */
int plan_choose(const int64_t *local_ns, const double *off_ns, const double *rtt_ns,
                int ngroups, const struct plan_net *net, double round_ns, double horizon_ns,
                struct plan_choice *out);

#endif
