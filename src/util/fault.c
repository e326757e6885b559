/* fault.c - the test-only fault injection hook (fault.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "util/err.h"
#include "util/fault.h"
#include "util/parse.h"

static const char *const names[FAULT_NPOINTS] = {"alloc", "exchange", "fit", "agree",
                                                    "cont", "op", "store", "collect",
                                                    "mute", "write",
                                                    "slack", "burst"};

int fault_armed;
static int initialised, fired;
static enum fault_point point;
static long nth = 1, seen;

int fault_init(int world_rank)
{
	if (initialised)
		return 0;
	initialised = 1;
	return fault_configure(getenv("HCLOCK_FAULT"), world_rank);
}

int fault_configure(const char *v, int world_rank)
{
	initialised = 1;
	fault_armed = 0;
	point = FAULT_ALLOC;
	nth = 1;
	fault_reset();
	if (!v || !*v)
		return 0;
	long rank = -1;
	int have_point = 0;
	const char *p = v;
	while (*p) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		size_t kn = eq ? (size_t)(eq - p) : n, vn = eq ? n - kn - 1 : 0;
		const char *val = eq ? eq + 1 : p + n;
		int ok = 0;
		if (eq && kn == 4 && !strncmp(p, "rank", 4))
			ok = !parse_int(val, vn, 0, 1L << 30, &rank);
		else if (eq && kn == 1 && *p == 'k')
			ok = !parse_int(val, vn, 1, 1L << 40, &nth);
		else if (eq && kn == 2 && !strncmp(p, "at", 2))
			for (int i = 0; i < FAULT_NPOINTS; i++)
				if (strlen(names[i]) == vn && !strncmp(val, names[i], vn)) {
					point = (enum fault_point)i;
					ok = have_point = 1;
				}
		if (!ok) {
			char list[128] = "";
			for (int i = 0; i < FAULT_NPOINTS; i++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				         i ? "|" : "", names[i]);
			return err_set(HCLOCK_EINVAL, "HCLOCK_FAULT='%s': bad item '%.*s'; expected "
			               "rank=R,at=%s[,k=K] (a test-only hook)", v, (int)n, p, list);
		}
		p += n;
		if (*p == ',')
			p++;
	}
	if (rank < 0 || !have_point)
		return err_set(HCLOCK_EINVAL, "HCLOCK_FAULT='%s': needs rank=R and at=POINT (a test-only "
		               "hook)", v);
	fault_armed = rank == world_rank;
	return 0;
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
