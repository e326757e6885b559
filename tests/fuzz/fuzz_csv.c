/*
 * fuzz_csv.c - libFuzzer target for the native CSV reader and the engine behind it.
 * The input is split at the first 0xff byte into two files, a.csv and b.csv; when they read,
 * the whole alignment runs on them (hull, bounds, composition, metrics).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hclock_align.h"

static char dir[64];

static void put(const char *name, const uint8_t *p, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		abort();
	fwrite(p, 1, n, f);
	fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *cut = memchr(data, 0xff, size);
	size_t na = cut ? (size_t)(cut - data) : size;
	char pa[128], pb[128], err[256];
	const char *in[2] = {pa, pb};
	hclock_align *a;

	if (!dir[0]) {
		strcpy(dir, "/tmp/fuzz-csv-XXXXXX");
		if (!mkdtemp(dir))
			abort();
	}
	put("a.csv", data, na);
	put("b.csv", cut ? cut + 1 : data, cut ? size - na - 1 : 0);
	snprintf(pa, sizeof(pa), "%s/a.csv", dir);
	snprintf(pb, sizeof(pb), "%s/b.csv", dir);
	if (!hclock_align_open(in, 2, &a, err, sizeof(err))) {
		struct hclock_align_opts o;
		hclock_align_opts_init(&o);
		o.segments_ns = size & 1 ? HCLOCK_ALIGN_SEGMENTS_AUTO : 0;
		if (!hclock_align_run(a, &o, err, sizeof(err))) {
			FILE *null = fopen("/dev/null", "w");
			int64_t t;
			hclock_align_convert(a, 1, 12345, &t, NULL, NULL);
			if (null) {
				hclock_align_report(a, null, 1);
				hclock_align_bounds_csv(a, null);
				hclock_align_plot_svg(a, null);
				fclose(null);
			}
		}
		hclock_align_free(a);
	}
	return 0;
}
