/*
 * filter.c - which MPI calls hclock trace records (--filter, HCLOCK_TRACE_FILTER): filter.h.
 */
#define _GNU_SOURCE /* FNM_CASEFOLD */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "trace/filter.h"

int trace_filter_apply(const char *spec, const char *const *names, int n, unsigned char *enabled,
                       char *bad, size_t badlen)
{
	int any_include = 0, rc = 0;
	for (const char *p = spec; p && *p;) {
		size_t k = strcspn(p, ",");
		if (k && *p != '!')
			any_include = 1;
		p += k + (p[k] == ',');
	}
	if (enabled)
		memset(enabled, !any_include, (size_t)n);
	for (const char *p = spec; p && *p;) {
		size_t k = strcspn(p, ",");
		int excl = *p == '!';
		char pat[128];
		size_t m = k - (size_t)(k && excl);
		const char *item = p + (k && excl);
		p += k + (p[k] == ',');
		if (!m || m >= sizeof(pat)) {
			if (!rc && bad)
				snprintf(bad, badlen, "%.*s", (int)(k < 100 ? k : 100), item - excl);
			rc = -1;
			continue;
		}
		memcpy(pat, item, m);
		pat[m] = 0;
		int matched = 0;
		for (int i = 0; i < n; i++)
			if (!fnmatch(pat, names[i], FNM_CASEFOLD)) {
				matched = 1;
				if (enabled)
					enabled[i] = !excl;
			}
		if (!matched && !rc) {
			if (bad)
				snprintf(bad, badlen, "%s", pat);
			rc = -1;
		}
	}
	return rc;
}
