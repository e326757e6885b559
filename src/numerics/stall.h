/*
 * stall.h - telling a measurement made through a stall from a clean one, by its round trip.
 * Knows nothing of MPI or clocks: round trips in ns.
 *
 * An offset measured from a ping-pong is off by at most half its round trip. A process that
 * the scheduler leaves waiting (a busy machine, a noisy neighbour, an interrupt storm) hands
 * a message over late, and a fit point whose every ping-pong met such a wait carries up to
 * half of a millisecond round trip into the line, unseen by a fit through the offsets. Its
 * round trip shows it: the floor of the link (the smallest round trip seen with that peer)
 * is what the network allows, and a measurement whose best round trip is far above it went
 * through a stall. Far above: more than STALL_FACTOR times the floor plus STALL_MARGIN_NS
 * (the margin keeps the jitter of a busy but working machine, 2-20 us here, from counting
 * as stalls where the floor is below a microsecond). docs/choices.md says how the sync
 * families use it.
 */
#ifndef HCLOCK_NUMERICS_STALL_H
#define HCLOCK_NUMERICS_STALL_H

#include <stddef.h>
#include <stdint.h>

#define STALL_FACTOR 3.0
#define STALL_MARGIN_NS 2000.0

/* Whether a measurement with round trip rtt_ns went through a stall, against the floor
 * floor_ns (<= 0 or not finite: unknown, never a stall). */
static inline int stall_judge(double rtt_ns, double floor_ns)
{
	return floor_ns > 0 && floor_ns < 1e300 && rtt_ns > STALL_FACTOR * floor_ns + STALL_MARGIN_NS;
}

/* The smallest of n round trips (INFINITY for n = 0). */
double stall_floor(const double *rtt_ns, size_t n);

/* Copy, in order, the points (x_ns[i], y[i]) whose round trip rtt_ns[i] is not a stall
 * against the smallest of all n into xo_ns, yo (room for n); returns how many. */
size_t stall_keep(const int64_t *x_ns, const double *y, const double *rtt_ns, size_t n,
                  int64_t *xo_ns, double *yo);

#endif
