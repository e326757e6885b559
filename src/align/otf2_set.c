/*
 * otf2_set.c - what the OTF2 trace format's reader and writer share (otf2_set.h): the
 * conversion between the archive's ticks and ns, the lookup of a location, the opening of
 * every location's files (libotf2's error messages are caught in otf2_defs.c).
 */

#include "align/otf2_set.h"

int otf2_ticks_to_ns(const struct otf2_set *o, uint64_t t, int64_t *ns)
{
	return otf2_defs_ns(o->res, (__int128)t - (__int128)o->goff, ns);
}

int otf2_ns_to_ticks(const struct otf2_set *o, int64_t ns, uint64_t *t)
{
	__int128 num = (__int128)ns * (__int128)o->res;
	__int128 q = num / NS_PER_S, rem = num % NS_PER_S;

	/* round half away from zero: otf2_ticks_to_ns(otf2_ns_to_ticks(x)) == x when
	 * res <= 1 GHz */
	if (rem * 2 >= NS_PER_S)
		q++;
	else if (rem * 2 <= -NS_PER_S)
		q--;
	q += o->goff;
	if (q < 0 || q >= (__int128)OTF2_UNDEFINED_TIMESTAMP)
		return -1;
	*t = (uint64_t)q;
	return 0;
}

long otf2_find_loc(const struct otf2_set *o, uint64_t ref)
{
	size_t lo = 0, hi = o->nlocs;

	while (lo < hi) { /* locs are sorted by ref */
		size_t mid = lo + (hi - lo) / 2;

		if (o->locs[mid].ref < ref)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->nlocs && o->locs[lo].ref == ref ? (long)lo : -1;
}

OTF2_ErrorCode otf2_open_locations(OTF2_Reader *rdr, const struct otf2_set *o, int *defs)
{
	for (size_t i = 0; i < o->nlocs; i++)
		OTF2_Reader_SelectLocation(rdr, o->locs[i].ref);
	*defs = OTF2_Reader_OpenDefFiles(rdr) == OTF2_SUCCESS;
	return OTF2_Reader_OpenEvtFiles(rdr);
}
