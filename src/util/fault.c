/* fault.c - the test-only fault injection hook (fault.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/parse.h"
#include "util/rng.h"

static const char *const names[FAULT_NPOINTS] = {"alloc", "exchange", "fit", "agree",
                                                    "cont", "op", "store", "collect",
                                                    "mute", "write", "finalize", "freeze",
                                                    "slowpart", "slack", "burst", "shift", "unbounded",
                                                    "corrupt", "late"};

int fault_armed, fault_stall_armed;
/* at=stall: share of measurements stalled, the stall's range, ns, the sites drawn for (a
 * bit per enum fault_stall_site), and the draws (under the lock: a continuous clock's
 * thread draws while the program's thread may) */
static double stall_share;
static int64_t stall_lo_ns, stall_hi_ns;
static unsigned stall_sites;
static int stall_configured;  /* at=stall armed here (fault_stall_force restores it) */
static int64_t stall_forced_ns; /* fault_stall_force's stall, ns (0: none) */
static uint64_t stall_count[3]; /* stalls drawn, per site */
static struct rng stall_rng;
static pthread_mutex_t stall_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *const stall_on[] = {"all", "oneshot", "cont", "child", "parent"};
static const unsigned stall_on_sites[] = {
	1u << FAULT_STALL_ONESHOT | 1u << FAULT_STALL_CHILD | 1u << FAULT_STALL_PARENT,
	1u << FAULT_STALL_ONESHOT, 1u << FAULT_STALL_CHILD | 1u << FAULT_STALL_PARENT,
	1u << FAULT_STALL_CHILD, 1u << FAULT_STALL_PARENT};
static int initialised, fired;
static enum fault_point point;
static long nth = 1, seen;
static int have_nth;

int fault_init(int world_rank)
{
	if (initialised)
		return 0;
	initialised = 1;
	return fault_configure(getenv("HCLOCK_FAULT"), world_rank);
}

/* "LO[-HI]" milliseconds into ns */
static int parse_ms_range(const char *v, size_t n, int64_t *lo, int64_t *hi)
{
	const char *dash = memchr(v, '-', n);
	double a, b;
	size_t an = dash ? (size_t)(dash - v) : n;
	if (parse_number(v, an, 0, 1e6, &a))
		return -1;
	b = a;
	if (dash && parse_number(dash + 1, n - an - 1, a, 1e6, &b))
		return -1;
	*lo = (int64_t)(a * 1e6);
	*hi = (int64_t)(b * 1e6);
	return 0;
}

/* on=NAME: the sites it names into *sites; whether it named any */
static int stall_site_set(const char *v, size_t n, unsigned *sites)
{
	for (size_t i = 0; i < sizeof(stall_on) / sizeof(stall_on[0]); i++)
		if (strlen(stall_on[i]) == n && !strncmp(v, stall_on[i], n)) {
			*sites = stall_on_sites[i];
			return 1;
		}
	return 0;
}

static int bad_value(const char *v, const char *item, size_t n)
{
	char list[256] = "";
	for (int i = 0; i < FAULT_NPOINTS; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? "|" : "",
		         names[i]);
	return err_set(HCLOCK_EINVAL, "HCLOCK_FAULT='%s': bad item '%.*s'; expected "
	               "rank=R,at=%s[,k=K] or rank=R|all,at=shift|unbounded|corrupt|late[,k=K] or "
	               "rank=R|all,at=stall[,ms=LO[-HI]][,share=P][,seed=S]"
	               "[,on=all|oneshot|cont|child|parent] "
	               "(a test-only hook)", v, (int)n, item, list);
}

int fault_configure(const char *v, int world_rank)
{
	initialised = 1;
	fault_armed = fault_stall_armed = stall_configured = 0;
	stall_forced_ns = 0;
	point = FAULT_ALLOC;
	nth = 1;
	have_nth = 0;
	fault_reset();
	if (!v || !*v)
		return 0;
	long rank = -1, seed = 1;
	int have_point = 0, stall = 0, all = 0, have_on = 0;
	unsigned sites = stall_on_sites[0];
	double share = 0.05;
	int64_t lo = 1000000, hi = 5000000;
	const char *p = v;
	while (*p) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		size_t kn = eq ? (size_t)(eq - p) : n, vn = eq ? n - kn - 1 : 0;
		const char *val = eq ? eq + 1 : p + n;
		int ok = 0;
		if (eq && kn == 4 && !strncmp(p, "rank", 4) && vn == 3 && !strncmp(val, "all", 3))
			ok = all = 1;
		else if (eq && kn == 4 && !strncmp(p, "rank", 4))
			ok = !parse_int(val, vn, 0, 1L << 30, &rank);
		else if (eq && kn == 1 && *p == 'k')
			ok = have_nth = !parse_int(val, vn, 1, 1L << 40, &nth);
		else if (eq && kn == 2 && !strncmp(p, "ms", 2))
			ok = !parse_ms_range(val, vn, &lo, &hi);
		else if (eq && kn == 5 && !strncmp(p, "share", 5))
			ok = !parse_number(val, vn, 0, 1, &share);
		else if (eq && kn == 4 && !strncmp(p, "seed", 4))
			ok = !parse_int(val, vn, 0, 1L << 40, &seed);
		else if (eq && kn == 2 && !strncmp(p, "on", 2))
			ok = have_on = stall_site_set(val, vn, &sites);
		else if (eq && kn == 2 && !strncmp(p, "at", 2) && vn == 5 && !strncmp(val, "stall", 5))
			ok = have_point = stall = 1;
		else if (eq && kn == 2 && !strncmp(p, "at", 2))
			for (int i = 0; i < FAULT_NPOINTS; i++)
				if (strlen(names[i]) == vn && !strncmp(val, names[i], vn)) {
					point = (enum fault_point)i;
					ok = have_point = 1;
				}
		if (!ok)
			return bad_value(v, p, n);
		p += n;
		if (*p == ',')
			p++;
	}
	int mode = !stall && (point == FAULT_SHIFT || point == FAULT_UNBOUNDED ||
	                      point == FAULT_CORRUPT || point == FAULT_LATE);
	if ((rank < 0 && !all) || !have_point || (all && !stall && !mode) || (have_on && !stall))
		return err_set(HCLOCK_EINVAL, "HCLOCK_FAULT='%s': needs rank=R and at=POINT (rank=all "
		               "only with at=stall, shift, unbounded, corrupt or late, on= only with "
		               "at=stall; a test-only hook)", v);
	if (point == FAULT_LATE && !have_nth)
		nth = 5;
	if (stall) {
		fault_stall_armed = stall_configured = all || rank == world_rank;
		stall_share = share;
		stall_lo_ns = lo;
		stall_hi_ns = hi;
		stall_sites = sites;
		memset(stall_count, 0, sizeof(stall_count));
		rng_seed(&stall_rng, (uint64_t)seed * 0x9e3779b97f4a7c15ULL + (uint64_t)world_rank);
		return 0;
	}
	fault_armed = all || rank == world_rank;
	return 0;
}

int fault_mode(enum fault_point p)
{
	return fault_armed && point == p;
}

long fault_period(void)
{
	return nth;
}

void fault_stall_force(int64_t ns)
{
	stall_forced_ns = ns > 0 ? ns : 0;
	fault_stall_armed = stall_configured || stall_forced_ns > 0;
}

int64_t fault_stall_draw_slow(enum fault_stall_site site)
{
	int64_t d = 0;
	if (stall_forced_ns > 0 && site == FAULT_STALL_ONESHOT)
		return stall_forced_ns;
	if (!stall_configured || !(stall_sites & 1u << site))
		return 0;
	pthread_mutex_lock(&stall_lock);
	if (rng_uniform(&stall_rng) < stall_share) {
		d = stall_lo_ns + (int64_t)(rng_uniform(&stall_rng) *
		                            (double)(stall_hi_ns - stall_lo_ns));
		stall_count[site]++;
	}
	pthread_mutex_unlock(&stall_lock);
	return d;
}

uint64_t fault_stalls(enum fault_stall_site site)
{
	pthread_mutex_lock(&stall_lock);
	uint64_t n = stall_count[site];
	pthread_mutex_unlock(&stall_lock);
	return n;
}

void fault_reset(void)
{
	seen = 0;
	fired = 0;
}

int fault_hit_slow(enum fault_point p)
{
	if (p != point)
		return 0;
	if (++seen != nth)
		return 0;
	fired = 1;
	return 1;
}

int fault_fired(void)
{
	return fired;
}

void *fault_malloc(size_t n)
{
	return fault_hit(FAULT_ALLOC) ? NULL : malloc(n);
}

void *fault_calloc(size_t n, size_t size)
{
	return fault_hit(FAULT_ALLOC) ? NULL : calloc(n, size);
}

void *fault_realloc(void *p, size_t n)
{
	return fault_hit(FAULT_ALLOC) ? NULL : realloc(p, n);
}
