/*
 * test_truthfile.c - trace/truthfile.h: the reader of DIR/raw/truth.RANK, on files written
 * here by hand in a temporary directory.
 *   - a small file: exact hits, a reading repeated (its truths unioned), misses before the
 *     first entry, between entries and after the last, the first and the last entry, lost;
 *   - random files (seeds 1-10): every lookup against a linear scan of the entries;
 *   - an empty file; no file (0 and NULL); files that are cut (inside the header, inside the
 *     entries), not one (wrong magic), of another rank, with bytes after the entries, not
 *     sorted, or a truth that ends before it starts: HCLOCK_EINVAL with a line naming the
 *     file, *out NULL;
 *   - NULL handles are safe (free, lookup, lost), for ASan builds with every path freed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hclock_api.h"
#include "test.h"
#include "trace/truthfile.h"
#include "util/rng.h"

#define RANK 3

static char dir[] = "/tmp/test_truthfile.XXXXXX";
static char path[sizeof(dir) + 32];

/* DIR/raw/truth.RANK: a header saying count entries (of magic, rank, lost), then n of e,
 * then extra zero bytes; cut to its first cut_at bytes when cut_at >= 0 */
static void put(const char *magic, int32_t rank, uint64_t count, uint64_t lost,
                const struct truth_entry *e, size_t n, size_t extra, long cut_at)
{
	struct truth_header h = {.rank = rank, .count = count, .lost = lost};
	memcpy(h.magic, magic, 8);
	FILE *f = fopen(path, "wb");
	TEST_CHECK(f != NULL, "cannot write %s", path);
	if (!f)
		return;
	TEST_CHECK(fwrite(&h, sizeof(h), 1, f) == 1, "header");
	if (n)
		TEST_CHECK(fwrite(e, sizeof(*e), n, f) == n, "entries");
	for (size_t i = 0; i < extra; i++)
		fputc(0, f);
	TEST_CHECK(!fclose(f), "close");
	if (cut_at >= 0)
		TEST_CHECK(!truncate(path, cut_at), "truncate");
}

/* loading the file fails with HCLOCK_EINVAL and a line naming it */
static void refused(const char *what)
{
	truthfile *t = (truthfile *)&t; /* not NULL: the call must clear it */
	int rc = truthfile_load(dir, RANK, &t);
	TEST_CHECK(rc == HCLOCK_EINVAL, "%s: rc %d", what, rc);
	TEST_CHECK(t == NULL, "%s: *out not cleared", what);
	TEST_CHECK(strstr(hclock_last_error(), "truth.3") != NULL, "%s: the line '%s' names no file",
	           what, hclock_last_error());
	if (rc == 0)
		truthfile_free(t);
}

static void small(void)
{
	const struct truth_entry e[] = {
		{10, 1000, 1100}, {20, 2000, 2050}, {20, 1990, 2010}, {20, 2005, 2100},
		{35, 3500, 3500}, {50, 5000, 5090},
	};
	put(TRUTH_FILE_MAGIC, RANK, 6, 7, e, 6, 0, -1);
	truthfile *t = NULL;
	int rc = truthfile_load(dir, RANK, &t);
	TEST_CHECK(rc == 0 && t != NULL, "load: rc %d (%s)", rc, hclock_last_error());
	if (!t)
		return;
	int64_t lo = -1, hi = -1;
	TEST_CHECK(truthfile_at(t, 10, &lo, &hi) == 1 && lo == 1000 && hi == 1100,
	           "the first: [%lld, %lld]", (long long)lo, (long long)hi);
	TEST_CHECK(truthfile_at(t, 20, &lo, &hi) == 1 && lo == 1990 && hi == 2100,
	           "a reading three times: the union, got [%lld, %lld]", (long long)lo,
	           (long long)hi);
	TEST_CHECK(truthfile_at(t, 35, &lo, &hi) == 1 && lo == 3500 && hi == 3500,
	           "an interval of 0 ns: [%lld, %lld]", (long long)lo, (long long)hi);
	TEST_CHECK(truthfile_at(t, 50, &lo, &hi) == 1 && lo == 5000 && hi == 5090,
	           "the last: [%lld, %lld]", (long long)lo, (long long)hi);
	lo = hi = -1;
	const int64_t miss[] = {INT64_MIN, 9, 11, 19, 21, 49, 51, INT64_MAX};
	for (size_t i = 0; i < sizeof(miss) / sizeof(*miss); i++)
		TEST_CHECK(truthfile_at(t, miss[i], &lo, &hi) == 0 && lo == -1 && hi == -1,
		           "%lld: a miss, left alone", (long long)miss[i]);
	TEST_CHECK(truthfile_lost(t) == 7, "lost %llu", (unsigned long long)truthfile_lost(t));
	truthfile_free(t);
}

static int by_reading(const void *a, const void *b)
{
	int64_t x = ((const struct truth_entry *)a)->t_g, y = ((const struct truth_entry *)b)->t_g;
	return (x > y) - (x < y);
}

/* random files: readings in a narrow range (many repeats), each lookup against a scan */
static void random_files(void)
{
	enum { MAXN = 3000 };
	struct truth_entry *e = malloc(MAXN * sizeof(*e));
	TEST_CHECK(e != NULL, "out of memory");
	for (test_seed = 1; e && test_seed <= 10; test_seed++) {
		struct rng r;
		rng_seed(&r, test_seed);
		size_t n = 1 + rng_u64(&r) % MAXN;
		int64_t base = (int64_t)(rng_u64(&r) >> 4), span = 1 + (int64_t)(rng_u64(&r) % (2 * n));
		for (size_t i = 0; i < n; i++) {
			e[i].t_g = base + (int64_t)(rng_u64(&r) % (uint64_t)span);
			e[i].true_lo_ns = e[i].t_g - 5000 + (int64_t)(rng_u64(&r) % 10000);
			e[i].true_hi_ns = e[i].true_lo_ns + (int64_t)(rng_u64(&r) % 3000);
		}
		qsort(e, n, sizeof(*e), by_reading);
		put(TRUTH_FILE_MAGIC, RANK, n, test_seed, e, n, 0, -1);
		truthfile *t = NULL;
		int rc = truthfile_load(dir, RANK, &t);
		TEST_CHECK(rc == 0 && t, "load: rc %d (%s)", rc, hclock_last_error());
		for (int64_t g = base - 2; t && g <= base + span + 1; g++) {
			int64_t lo = INT64_MAX, hi = INT64_MIN, glo = 0, ghi = 0;
			for (size_t i = 0; i < n; i++)
				if (e[i].t_g == g) {
					lo = e[i].true_lo_ns < lo ? e[i].true_lo_ns : lo;
					hi = e[i].true_hi_ns > hi ? e[i].true_hi_ns : hi;
				}
			int want = lo != INT64_MAX, got = truthfile_at(t, g, &glo, &ghi);
			TEST_CHECK(got == want && (!want || (glo == lo && ghi == hi)),
			           "g = base + %lld: found %d [%lld, %lld], want %d [%lld, %lld]",
			           (long long)(g - base), got, (long long)glo, (long long)ghi, want,
			           (long long)lo, (long long)hi);
			if (got != want)
				break;
		}
		TEST_CHECK(truthfile_lost(t) == test_seed, "lost");
		truthfile_free(t);
	}
	test_seed = 0;
	free(e);
}

static void bad_files(void)
{
	const struct truth_entry e[] = {{10, 100, 200}, {20, 300, 400}, {30, 500, 600}};
	const struct truth_entry unsorted[] = {{10, 100, 200}, {30, 500, 600}, {20, 300, 400}};
	const struct truth_entry backwards[] = {{10, 100, 200}, {20, 400, 300}};
	truthfile *t = (truthfile *)&t;

	/* no file: nothing to check against, no error */
	unlink(path);
	TEST_CHECK(truthfile_load(dir, RANK, &t) == 0 && t == NULL, "no file: 0 and NULL");

	/* no entries */
	put(TRUTH_FILE_MAGIC, RANK, 0, 5, NULL, 0, 0, -1);
	int64_t lo, hi;
	TEST_CHECK(truthfile_load(dir, RANK, &t) == 0 && t, "empty: %s", hclock_last_error());
	TEST_CHECK(!truthfile_at(t, 10, &lo, &hi) && truthfile_lost(t) == 5, "empty: no entry");
	truthfile_free(t);

	put(TRUTH_FILE_MAGIC, RANK, 3, 0, e, 3, 0, 20);
	refused("cut inside the header");
	put(TRUTH_FILE_MAGIC, RANK, 3, 0, e, 3, 0, 0);
	refused("an empty file");
	put(TRUTH_FILE_MAGIC, RANK, 3, 0, e, 2, 0, -1);
	refused("an entry short");
	put(TRUTH_FILE_MAGIC, RANK, 3, 0, e, 3, 0, (long)(sizeof(struct truth_header) + 3 * 24 - 1));
	refused("cut inside the last entry");
	put(TRUTH_FILE_MAGIC, RANK, UINT64_MAX, 0, e, 3, 0, -1);
	refused("a count beyond any file");
	put(TRUTH_FILE_MAGIC, RANK, 3, 0, e, 3, 24, -1);
	refused("an entry too many");
	put("HCTRUTH2", RANK, 3, 0, e, 3, 0, -1);
	refused("wrong magic");
	put("HCLOCKR1", RANK, 3, 0, e, 3, 0, -1);
	refused("another file's magic");
	put(TRUTH_FILE_MAGIC, RANK + 1, 3, 0, e, 3, 0, -1);
	refused("another rank's file");
	put(TRUTH_FILE_MAGIC, RANK, 3, 0, unsorted, 3, 0, -1);
	refused("not sorted");
	put(TRUTH_FILE_MAGIC, RANK, 2, 0, backwards, 2, 0, -1);
	refused("a truth ending before it starts");

	/* NULL is safe everywhere */
	truthfile_free(NULL);
	TEST_CHECK(truthfile_at(NULL, 10, &lo, &hi) == 0, "a NULL file has nothing");
	TEST_CHECK(truthfile_lost(NULL) == 0, "a NULL file lost nothing");
	unlink(path);
}

int main(void)
{
	char raw[sizeof(dir) + 8];
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(raw, sizeof(raw), "%s/raw", dir);
	snprintf(path, sizeof(path), "%s/truth.%d", raw, RANK);
	TEST_CHECK(!mkdir(raw, 0700), "mkdir %s", raw);
	small();
	random_files();
	bad_files();
	unlink(path);
	rmdir(raw);
	rmdir(dir);
	return test_end("test_truthfile");
}
