/*
 * hclock.h - a logical global clock for MPI programs.
 *
 * Data flows one way:
 *   base clock (monotonic, realtime, wtime, tsc, or an emulated clock with known truth)
 *   -> clock model (linear or offset-only, possibly nested over another model)
 *   -> offset estimator (ping-pongs between two ranks: skampi, rtt, min)
 *   -> sync algorithm (which pairs, in which rounds: hca3, hca2, hca, jk, skampi, dunigan, none,
 *      and the hierarchical h2(...)/h3(...) with prop)
 *   -> tools (hclock check, bench, align).
 *
 * Conventions
 * - Every timestamp is an int64_t count of nanoseconds ("_ns"). Only differences of
 *   timestamps are ever turned into doubles.
 * - An offset is "reference minus local": global time = local time + offset.
 * - Library calls return 0 on success or a negative HCLOCK_E* code (hclock_api.h). After a
 *   failure, hclock_last_error() returns one line saying what was wrong and what would be
 *   right (thread-local).
 * - Handles are opaque. Clocks are reference counted: every *_create / *_ref returns a
 *   reference the caller owns and gives back with hclock_clock_free().
 *
 * Inside an application
 * - hclock never touches the application's messages: every message and collective it
 *   issues on a communicator goes over a private duplicate of it, made by the first
 *   collective hclock call on that communicator (hclock_sync_run, hclock_harmonize),
 *   cached on it with an MPI attribute and freed with it (MPI_Comm_free). A receive from
 *   MPI_ANY_SOURCE with MPI_ANY_TAG on the application's communicator never takes one.
 * - No rank is left waiting: hclock_sync_run either returns 0 on every rank or the same
 *   error code and the same error line on every rank ("rank R: ..." naming the first rank
 *   that failed); hclock_emu_create fails on every rank alike. A process that fails (no
 *   memory, a failed MPI call) keeps taking part in the exchanges with dummy values until
 *   all agree. hclock_harmonize and hclock_measure_offset do not agree (each rank returns
 *   what it saw) but never leave a peer waiting either. Ranks given different sync specs
 *   or base clocks are detected before any exchange (HCLOCK_EMISMATCH).
 * - MPI errors: the private communicators have MPI_ERRORS_RETURN, so a failing MPI call is
 *   returned as HCLOCK_EMPI (with the MPI library's message) instead of aborting the
 *   application, where the MPI library reports it at all. After such an error MPI itself
 *   may no longer deliver messages; hclock cannot do better than return then.
 * - Only the hclock_* functions declared here (and in hclock_api.h) are exported.
 * - Threads: reading a clock (hclock_now, hclock_read, hclock_clock_bounds,
 *   hclock_clock_describe, hclock_true_error) is safe from several threads at once, also
 *   while a continuous sync's thread updates it (lock-free), on clocks nobody frees
 *   meanwhile; hclock_clock_ref/free are not atomic (take and drop references in one
 *   thread). Collective calls follow MPI's rules for the communicator (one thread at a
 *   time per communicator, as with MPI_THREAD_SERIALIZED). An emulated clock's read noise
 *   and jitter draw from one random generator per thread (reproducible from the seed in
 *   the creating thread; other threads' draws depend on the order they first read).
 * - Test-only: the environment variable HCLOCK_FAULT=rank=R,at=alloc|exchange|fit|agree|cont[,k=K]
 *   makes rank R fail at the K-th passage of that point (docs/library.md, "Fault injection").
 */
#ifndef HCLOCK_H
#define HCLOCK_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "hclock_api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HCLOCK_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------------------ */
/* Clocks                                                                                */

typedef struct hclock_clock hclock_clock;
typedef struct hclock_emu hclock_emu;

/*
 * Create a base clock by name: "monotonic" (CLOCK_MONOTONIC, the default), "realtime"
 * (CLOCK_REALTIME), "wtime" (MPI_Wtime, needs MPI initialised; Open MPI's origin is
 * per process), "tsc" (x86 rdtsc calibrated against CLOCK_MONOTONIC; HCLOCK_EUNSUPP
 * without an invariant TSC).
 * emu: when not NULL, the named clock is replaced by this process's emulated clock
 *      (see hclock_emu_create); the clock keeps a reference to emu's parameters.
 * out: receives a new clock reference.
 */
HCLOCK_API int hclock_base_create(const char *name, hclock_emu *emu, hclock_clock **out);

/* The clock's current time in ns. For a global clock: the reference's time scale. */
HCLOCK_API int64_t hclock_now(hclock_clock *clk);

/* A new reference to clk (returns clk). */
HCLOCK_API hclock_clock *hclock_clock_ref(hclock_clock *clk);
/* Drop one reference; the clock (and the inner clocks it holds) is freed with the last. */
HCLOCK_API void hclock_clock_free(hclock_clock *clk);

/* Human readable description, e.g. "linear(slope=1.2e-05,off=31.5ns)<monotonic>".
 * Writes at most len bytes including the NUL; returns buf. */
HCLOCK_API char *hclock_clock_describe(const hclock_clock *clk, char *buf, size_t len);

/*
 * Linear clock model over inner (a base clock or another model):
 *   now(out) = now(inner) + intercept_ns + slope * (now(inner) - x0_ns)
 * x0_ns:        the inner-clock time (ns) at which the offset equals intercept_ns
 * intercept_ns: offset (reference minus inner) at x0_ns, in ns
 * slope:        d(offset)/d(inner time), dimensionless (1e-6 = 1 us per s)
 * The new clock holds a reference to inner.
 */
HCLOCK_API int hclock_model_linear(hclock_clock *inner, int64_t x0_ns, double intercept_ns, double slope,
                        hclock_clock **out);
/*
 * Strict error bounds of a global clock at its reading t_ns (ns, e.g. a hclock_now(clk)
 * just taken): the reference's time at that instant lies in [t_ns + *lo_ns, t_ns + *hi_ns].
 * Known for a clock made by hclock_sync_run whose every model on the
 * way from rank 0 was learned with the hull learner (spec ALG/NFIT/hull/N); they widen away
 * from the end of the sync by the slope uncertainty and assume rates constant since then
 * (no frequency change of the clocks, no step). Otherwise *lo_ns = -INFINITY,
 * *hi_ns = INFINITY and HCLOCK_EUNSUPP is returned. Thread-safe for a clock no one frees.
 */
HCLOCK_API int hclock_clock_bounds(const hclock_clock *clk, int64_t t_ns, double *lo_ns,
                                   double *hi_ns);

/* How far the bounds of a reading can be trusted (hclock_read). */
enum hclock_bounds_status {
	HCLOCK_BOUNDS_NONE = 0,   /* no bounds: earliest_ns = INT64_MIN, latest_ns = INT64_MAX */
	HCLOCK_BOUNDS_LIVE = 1,   /* a running continuous clock whose exchanges are on time: the
	                             bounds hold while the rates change by at most its drift
	                             allowance (cont(...,drift=R)) between exchanges */
	HCLOCK_BOUNDS_STALE = 2,  /* a running continuous clock whose last exchange is older than
	                             its limit (cont(...,stale=S)): the parent stopped answering;
	                             the bounds still widen by the drift allowance, over a longer
	                             time than the configuration expects */
	HCLOCK_BOUNDS_FROZEN = 3, /* a one-shot clock (bounds assume constant rates since the
	                             sync) or a stopped continuous one (the drift allowance keeps
	                             widening them) */
};

/* A reading with its bounds (AWS ClockBound's now(), Google TrueTime's TT.now()). */
typedef struct hclock_reading {
	int64_t now_ns;      /* the clock's time, ns (what hclock_now returns) */
	int64_t earliest_ns; /* the reference's time at that instant lies in */
	int64_t latest_ns;   /*   [earliest_ns, latest_ns], ns, when status is not NONE */
	int status;          /* enum hclock_bounds_status */
} hclock_reading;

/*
 * Read clk with its bounds, at one instant: for a continuous clock the reading and its
 * bounds come from one snapshot of its model (lock-free). Any clock: a clock without
 * bounds gives status HCLOCK_BOUNDS_NONE. Returns 0. Thread-safe for a clock no one frees.
 */
HCLOCK_API int hclock_read(hclock_clock *clk, hclock_reading *r);

/* Offset-only model: now(out) = now(inner) + offset_ns. */
HCLOCK_API int hclock_model_offset(hclock_clock *inner, double offset_ns, hclock_clock **out);

/*
 * Serialize a clock (the whole nesting: base clock description and every model above it)
 * into a flat, versioned, little-endian byte buffer (flatten_clock of Hunold &
 * Carpen-Amarie).
 * *buf is malloc'ed and owned by the caller; *len its length in bytes.
 */
HCLOCK_API int hclock_clock_flatten(const hclock_clock *clk, void **buf, size_t *len);
/*
 * Rebuild a clock from a buffer made by hclock_clock_flatten (unflatten_clock). The base
 * clock is re-created in this process; emu is needed when the buffer's base clock is an
 * emulated one (else NULL). HCLOCK_EINVAL on a malformed buffer, HCLOCK_EVERSION on an
 * unknown version.
 */
HCLOCK_API int hclock_clock_unflatten(const void *buf, size_t len, hclock_emu *emu, hclock_clock **out);

/* ------------------------------------------------------------------------------------ */
/* Clock emulation with ground truth                                                    */

/*
 * Parse an emulation spec and set it up for the processes of comm (collective):
 *   "offset=1,skew=100e-6,drift=1e-9,wander=2e-7@30,noise=20e-9,jitter=2e-6,nodes=2,seed=7"
 * Each key is optional. For every virtual node the parameters are drawn uniformly from
 * [-X, X] (offset s, skew fraction, drift 1/s; wander: frequency amplitude in [0, A] with
 * period P s and a random phase); node 0's clock is drawn like any other. noise is the
 * std (s) of a Gaussian read noise, jitter the maximum (s) of a random delay put before
 * every sync message. nodes=K groups consecutive ranks into K virtual nodes that share
 * one clock (ranks-per-node=R instead: nodes of R ranks). The common epoch T=0 is rank 0's
 * real CLOCK_MONOTONIC at this call, broadcast to all. Rates are kept physical: skew at
 * most 400e-6, wander amplitude at most 100e-6, drift at most 1e-6 per s, so that the
 * sync algorithms may reject any fitted slope beyond 2e-3 as the work of stalled exchanges.
 * spec NULL: use the environment variable HCLOCK_EMULATE; *out = NULL if that is unset.
 * Every rank must give the same spec (a malformed one fails on every rank alike); the
 * set-up collectives run on a temporary duplicate of comm.
 * out: new emulation handle, freed with hclock_emu_free (after every clock built on it).
 */
HCLOCK_API int hclock_emu_create(const char *spec, MPI_Comm comm, hclock_emu **out);
HCLOCK_API void hclock_emu_free(hclock_emu *emu);
/* The virtual node of this process (0..nodes-1). */
HCLOCK_API int hclock_emu_node(const hclock_emu *emu);
/* Number of virtual nodes. */
HCLOCK_API int hclock_emu_nodes(const hclock_emu *emu);

/*
 * Truth. For a global clock clk whose reference is rank 0 of the synchronized
 * communicator, the true error is clk's reading at true time T minus the reference's
 * local (base) clock reading at the same T, without read noise.
 * emu: the emulation in use, or NULL for "one physical clock" truth (--truth: valid only
 *      for a system-wide base clock, i.e. monotonic, realtime or tsc on one machine).
 * err_ns: receives the true error now, in ns.
 * HCLOCK_EUNSUPP if no truth is available for this clock.
 */
HCLOCK_API int hclock_true_error(hclock_clock *clk, hclock_emu *emu, double *err_ns);

/* ------------------------------------------------------------------------------------ */
/* Synchronization                                                                      */

typedef struct hclock_sync hclock_sync;

/*
 * Parse a sync spec and create the algorithm. Grammar (labels of the papers):
 *   ALG/NFITPOINTS/OFFSETALG/NPINGPONGS[/ri][/span=S]   ALG in hca3, hca2, hca, jk;
 *                                              ri: recompute the intercept after the fit;
 *                                              span=S: spread each model's fit points over
 *                                              S seconds (slope error falls like 1/S)
 *   skampi/OFFSETALG/NPINGPONGS                offset only, no drift model
 *   dunigan/S/K                                offsets at start and after S s, K tries each
 *   none                                       the base clock itself
 *   h2(INTER,INTRA), h3(INTER,SOCKET,INTRA)    hierarchical; any spec per level, or prop
 *   cont(INNER[,KEY=VALUE...])                 INNER once, then the continuous clock
 *   auto(BUDGET[,horizon=H])                   HCA3 whose parameters a burst of ping-pongs
 *                                              picks to fit BUDGET s (default horizon 10 s)
 * OFFSETALG in skampi, rtt, min, hull (strict bounds). `hclock specs` lists them all. On a
 * bad spec returns HCLOCK_EINVAL and
 * hclock_last_error() names the bad token and the valid choices.
 */
HCLOCK_API int hclock_sync_create(const char *spec, hclock_sync **out);

/*
 * The one-shot spec hclock's tools synchronize with unless told otherwise (docs/check.md,
 * "Hierarchical sync"): HCA3 over one leader per node with hull-learned models whose fit
 * points span 0.3 s, the other processes of a node given their leader's clock (prop). A
 * string literal; `hclock check` runs cont(HCLOCK_SYNC_DEFAULT_SPEC), `hclock trace`
 * cont(HCLOCK_SYNC_DEFAULT_SPEC,drive=progress).
 */
#define HCLOCK_SYNC_DEFAULT_SPEC "h2(hca3/100/hull/20/span=0.3,prop)"
HCLOCK_API void hclock_sync_free(hclock_sync *s);
/* The canonical spec string of s (owned by s). */
HCLOCK_API const char *hclock_sync_spec(const hclock_sync *s);

/*
 * Synchronize (collective over comm). base: this process's local clock. On return *global
 * is this process's global clock (a new reference): rank 0 of comm is the reference.
 * Errors are agreed on by all ranks: either every rank returns 0 or every rank returns
 * the same error code with the same hclock_last_error() line (no rank is left waiting);
 * *global is NULL then. HCLOCK_EMISMATCH: the ranks were given different specs or base
 * clocks (detected before any exchange). HCLOCK_ESHARE: prop refused to copy a clock to a
 * process of another time source. HCLOCK_EMPI, HCLOCK_ENOMEM: as named. The first call on
 * comm makes hclock's private duplicate of it (see "Inside an application").
 */
HCLOCK_API int hclock_sync_run(hclock_sync *s, MPI_Comm comm, hclock_clock *base, hclock_clock **global);

/* What an auto(BUDGET[,horizon=H]) sync measured and chose in its last run: the same on
 * every rank of its run (docs/check.md, "Sync specs chosen by a time budget"). */
struct hclock_sync_auto {
	double budget_s;           /* the budget it was given, s */
	double horizon_s;          /* the horizon it minimised the predicted error at, s */
	double burst_s;            /* the bursts' time (every pair's, counted in the budget), s */
	int pairs;                 /* the pairs of the tree that measured a burst each */
	int worst_ref, worst_client; /* the pair whose choice won (the largest predicted
	                              error): its MPI_COMM_WORLD ranks */
	int groups;                /* its burst's groups of 16 ping-pongs (fewer than 48: capped
	                              by the time, a quarter of the budget) */
	double slowest_group_s;    /* the longest a group of 16 took, over all pairs, s */
	double run_s;              /* the whole run's time, bursts and HCA3, the slowest rank's
	                              (0 after a plan without a run: hclock specs --explain), s */
	double slowest_point_s;    /* the longest one of HCA3's fit points took, from its planned
	                              start (a round stops taking points where its time ends: one
	                              point may overrun it), s */
	double floor_ns;           /* its burst's smallest round trip, ns */
	double spread_ns;          /* its median round trip minus the floor, ns */
	double tail_ns;            /* its 0.99 quantile minus the floor, ns */
	int nfit;                  /* fit points per model */
	int nfit_made;             /* the fewest a model made (fewer than nfit: a round's time ran
	                              out, round trips slower than in the bursts; 0 after a plan
	                              without a run) */
	int npingpongs;            /* ping-pongs per fit point */
	double span_s;             /* the fit points spread over, s (0: back to back) */
	char estimator[8];         /* "hull" (a sharp floor) or "skampi" (min-filtered) */
	double point_sigma_ns;     /* measured error std of one fit point, ns */
	double predicted_error_ns; /* predicted RMS true error at the horizon, ns (for the points
	                              made, over the span they took, where a round was cut) */
	char spec[128];            /* the spec it ran, e.g. "hca3/250/hull/4/span=0.29" */
	double agree_s;            /* the steps between the bursts and HCA3 (the reductions that
	                              agree on the choice; untimed by the budget, a stall there
	                              included), the slowest rank's, s (0 after a plan alone) */
	int groups_made;           /* the groups its burst made, retaken ones included (0 after a
	                              plan without a run) */
	int groups_stalled;        /* of them, those made through a stall (left out of the plan
	                              when 8 or more were clean) */
};
/* Fill *out for an auto(...) sync that has run, or one inside cont(...) or a level of
 * h2/h3(...) (there every process gets rank 0's: the first such level that ran on rank 0,
 * the outermost, which a node's other processes do not run themselves): 0;
 * HCLOCK_EUNSUPP for another spec or before a run. */
HCLOCK_API int hclock_sync_auto_choice(const hclock_sync *s, struct hclock_sync_auto *out);

/*
 * The continuous clock (spec cont(INNER[,KEY=VALUE...]), docs/continuous.md): after
 * hclock_sync_run the clock keeps learning in the background and *global stays right for
 * hours; its reads stay lock-free, slewed (never backwards) and bounded (hclock_read).
 *
 * hclock_sync_stop: collective over the comm of the run: stops the exchanges everywhere and
 * leaves every process's clock frozen on its last model (usable after, and after
 * hclock_sync_free; hclock_read says HCLOCK_BOUNDS_FROZEN). Returns 0 or the first error
 * any process's exchanges met while running (agreed: the same on every rank). A no-op
 * returning 0 for a one-shot sync. Freeing a running continuous sync without stopping it
 * stops this process alone (its peers time out on it: they do not hang).
 *
 * hclock_sync_progress: for cont(...,drive=progress): do the exchange work that is due
 * (answer a child's ping, send the next ping of this process's own exchange), never
 * blocking; call it often (a PMPI tracer calls it at every MPI call). Calls from several
 * threads are allowed (a call finding another one running returns at once). Returns 0 or
 * the engine's first error. A no-op for any other sync.
 *
 * hclock_sync_progress_due: when hclock_sync_progress next has work, in ns of the base clock
 * given to hclock_sync_run (hclock_now of it), as the last progress call left it: at once
 * while an exchange is under way and its messages flow (until 100 us after the last), then
 * after naps of 50 us doubling up to 1 ms while it waits; the time of the next exchange
 * (or of a child's, less 50 us) otherwise; INT64_MAX for a sync that needs no calls.
 * hclock_wait_until on the clock of such a sync drives it the same way while it waits. A caller that polls at
 * every MPI call skips the calls before it with one comparison (the tracer does: it keeps
 * answers prompt while an exchange runs and costs nothing between exchanges). Lock-free.
 */
HCLOCK_API int hclock_sync_stop(hclock_sync *s);
HCLOCK_API int hclock_sync_progress(hclock_sync *s);
HCLOCK_API int64_t hclock_sync_progress_due(const hclock_sync *s);

/* What a continuous clock's exchanges did in this process so far (or until its stop). */
struct hclock_sync_stats {
	uint64_t exchanges;   /* exchanges completed with its parent */
	uint64_t timeouts;    /* exchanges given up: the parent did not answer in 50 ms */
	uint64_t served;      /* pings answered as a parent */
	uint64_t halvings;    /* adaptive period: halved (a projection missed) */
	uint64_t doublings;   /* and doubled (a streak of good ones) */
	uint64_t shrinks;     /* fits whose learning window shrank (a change of rate) */
	uint64_t kept_inside; /* exchanges that knew less than the clock (a late answer, a
	                         stall): the old estimate kept, or the new moved into its bound */
	double period_s;      /* the exchange period now, s */
	double max_corr_ns;   /* the largest correction slewed in, ns */
	double last_dev_ns;   /* the last exchange's |projected - measured offset| beyond its
	                         excess round trip (what the period adapts on), ns */
	double noise_ns;      /* the robust scatter of the window's offsets about its line, ns:
	                         the period halves on a deviation beyond the threshold key or
	                         three times this, whichever is larger */
	double rtt_ns;        /* the latest exchange's fastest round trip, ns */
	double thread_cpu_s;  /* CPU time of its background thread, s (-1: no thread) */
	int running;          /* 1 while the exchanges run (0 after hclock_sync_stop) */
};

/*
 * The statistics of the continuous clock of s's last run in this process (local, lock-free
 * enough to call while it runs: counters may be one exchange apart). 0, or HCLOCK_EUNSUPP
 * for a sync that is not a continuous one or has not run. A clock whose exchanges all time
 * out (exchanges 0, timeouts > 0) runs on its one-shot model, its bounds going stale
 * (hclock_read): tools warn then.
 */
HCLOCK_API int hclock_sync_stats(const hclock_sync *s, struct hclock_sync_stats *st);

/* Ping-pong exchanges this process took part in during the last hclock_sync_run. */
HCLOCK_API uint64_t hclock_sync_pingpongs(const hclock_sync *s);
/* How clean the measurements of the last hclock_sync_run were in this process. */
struct hclock_sync_quality {
	uint64_t retakes;      /* offset measurements retaken because they went through a stall
	                          (a round trip far above the fastest of the pair: a busy
	                          machine); 0 for specs with the key paper */
	uint64_t unclean;      /* models fitted with fewer than half of their fit points clean
	                          (each also a warning, hclock_sync_warnings) */
	double fit_rtt_max_ns; /* the largest round trip among the measurements this process's
	                          clock rests on as a client (the fit points its models kept, its
	                          offsets), ns: each is off by at most half of its round trip;
	                          0 where it measured nothing (rank 0, prop) */
	double fit_span_min_ns; /* the shortest span (first to last point, ns) among the models
	                           this process fitted: a slope fitted over S is good to about
	                           the points' errors / S, and that error grows with the time
	                           the model is carried (through the rest of the sync, then
	                           the wait); INFINITY where it fitted none (rank 0, prop,
	                           skampi's offsets) */
	double planned_s;      /* the real time its spec planned the measurements of this process
	                          to take (each model's span=, auto's budget; levels summed), s;
	                          0 when they run back to back. A sync that took far longer was
	                          slowed by round trips or stalls (hclock check warns) */
};
HCLOCK_API void hclock_sync_quality(const hclock_sync *s, struct hclock_sync_quality *q);
/* The hierarchy the last hclock_sync_run found, the same on every process: h2/h3 find the
 * nodes by MPI_COMM_TYPE_SHARED (the launcher's hosts; the emulation's virtual nodes under
 * --emulate) and h3 the sockets by hwloc; inside cont(...) or auto(...) the inner spec's. */
struct hclock_sync_topology {
	int levels;  /* 1: flat (every process in one level); 2: h2 (nodes); 3: h3 (sockets) */
	int nodes;   /* nodes found (one leader each at the upper level); 0 for a flat spec */
	int sockets; /* h3: sockets found over all nodes; 0 otherwise */
};
HCLOCK_API void hclock_sync_topology(const hclock_sync *s, struct hclock_sync_topology *t);
/* Sequential pairwise rounds of the last run as seen by this process (depth of the
 * critical path in units of LEARN_CLOCK_MODEL / MEASURE_OFFSET calls). */
HCLOCK_API uint64_t hclock_sync_rounds(const hclock_sync *s);
/* This process's warnings of the last hclock_sync_run, one line each ("" if none), e.g.
 * when the hull learner's hulls intersected (a clock step during the sync) and a fallback
 * line without bounds was used. The library never prints. Owned by s; valid until its next
 * run. */
HCLOCK_API const char *hclock_sync_warnings(const hclock_sync *s);

/*
 * Measure the offset of client's clock to ref's clock (collective over the two ranks only;
 * other ranks return at once). Both use clk. Used by hclock check (Alg. 6).
 * npingpongs: exchanges (SKaMPI-Offset, Alg. 7). On the client, *offset_ns receives
 * ref minus client at the end of the exchange and *rtt_ns (if not NULL) the smallest round
 * trip of the exchanges; elsewhere both are left alone.
 * The messages go over comm's private duplicate, which a collective call must have made
 * first (hclock_sync_run or hclock_harmonize on comm): HCLOCK_EINVAL otherwise. Errors are
 * not agreed on (two ranks only): both ends always finish the exchange, and each returns
 * its own error.
 */
HCLOCK_API int hclock_measure_offset(MPI_Comm comm, hclock_clock *clk, int ref, int client,
                          int npingpongs, double *offset_ns, double *rtt_ns);

/* ------------------------------------------------------------------------------------ */
/* Waiting on the global clock                                                          */

/* Return when hclock_now(clk) >= t_ns (sleeps while far, spins for the last stretch;
 * under SimGrid it sleeps in simulated time). A continuous clock with drive=progress is
 * driven meanwhile (hclock_sync_progress of its sync, as its own thread would be), so a
 * program that waits keeps its clock learning. Returns hclock_now(clk) - t_ns at return. */
HCLOCK_API int64_t hclock_wait_until(hclock_clock *clk, int64_t t_ns);

/*
 * Harmonize (collective over comm, on its private duplicate): rank 0 picks a start time
 * slack_ns after its now, broadcasts it, and every process returns when its global clock
 * reaches it. Returns 0, or HCLOCK_EMPI/HCLOCK_ENOMEM (on the ranks that saw it).
 * late_ns: receives how late this process was (>0: it learned the start time only after it
 * had passed; 0 when on time). start_ns: receives the common start time (may be NULL).
 */
HCLOCK_API int hclock_harmonize(MPI_Comm comm, hclock_clock *clk, int64_t slack_ns, int64_t *start_ns,
                     int64_t *late_ns);

#ifdef __cplusplus
}
#endif
#endif
