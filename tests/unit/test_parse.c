/* test_parse.c - the one rule for numbers and durations (util/parse.h). */
#include <string.h>

#include "test.h"
#include "util/parse.h"

static void dur(const char *s, double want_s)
{
	double v = -1;
	int64_t ns = -1;
	int rc = parse_duration_s(s, strlen(s), 0, 1e6, &v);
	TEST_CHECK(rc == 0 && v == want_s, "'%s' -> rc %d, %g s (expected %g)", s, rc, v, want_s);
	rc = parse_duration_ns(s, strlen(s), 0, INT64_MAX, &ns);
	TEST_CHECK(rc == 0 && ns == (int64_t)(want_s * 1e9 + 0.5), "'%s' -> %lld ns", s, (long long)ns);
}

static void bad_dur(const char *s)
{
	double v;
	TEST_CHECK(parse_duration_s(s, strlen(s), 0, 1e6, &v) == -1, "'%s' accepted", s);
}

int main(void)
{
	dur("2", 2);
	dur("2s", 2);
	dur("500ms", 0.5);
	dur("250us", 250e-6);
	dur("1500ns", 1.5e-6);
	dur("10m", 600);
	dur("1h", 3600);
	dur("1e-3", 1e-3);
	dur("0.25", 0.25);
	dur("1e3ms", 1);
	const char *bad[] = {"", " 1", "1 ", "s", "ms", "1x", "1sec", "1mm", "nan", "inf", "0x10",
	                     "-1", "1e", "1e400", "2e6"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		bad_dur(bad[i]);
	/* a token inside a spec: only its n characters count */
	double v;
	TEST_CHECK(parse_duration_s("300ms/ri", 5, 0, 10, &v) == 0 && v == 0.3, "token");
	long l;
	TEST_CHECK(parse_int("20", 2, 1, 100, &l) == 0 && l == 20, "int");
	TEST_CHECK(parse_int("2.5", 3, 1, 100, &l) == -1, "int 2.5");
	TEST_CHECK(parse_int("0", 1, 1, 100, &l) == -1, "int range");
	TEST_CHECK(parse_number("1e-6", 4, 0, 1, &v) == 0 && v == 1e-6, "number");
	TEST_CHECK(parse_number("1s", 2, 0, 10, &v) == -1, "a number has no unit");
	/* sizes */
	uint64_t b;
	TEST_CHECK(parse_bytes("64", 2, 0, UINT64_MAX, &b) == 0 && b == 64, "size 64");
	TEST_CHECK(parse_bytes("4k", 2, 0, UINT64_MAX, &b) == 0 && b == 4096, "size 4k");
	TEST_CHECK(parse_bytes("16M", 3, 0, UINT64_MAX, &b) == 0 && b == 16u << 20, "size 16M");
	TEST_CHECK(parse_bytes("2T", 2, 0, UINT64_MAX, &b) == 0 && b == 2ULL << 40, "size 2T");
	TEST_CHECK(parse_bytes("1M/x", 2, 0, UINT64_MAX, &b) == 0 && b == 1u << 20, "size token");
	const char *bad_size[] = {"", " 1", "1 ", "1KB", "K", "-1", "1.5M", "1 K", "1\x20",
	                          "99999999999999999999", "20000000T", "1e3", "0x10"};
	for (size_t i = 0; i < sizeof(bad_size) / sizeof(bad_size[0]); i++)
		TEST_CHECK(parse_bytes(bad_size[i], strlen(bad_size[i]), 0, UINT64_MAX, &b) == -1,
		           "bad size '%s'", bad_size[i]);
	TEST_CHECK(parse_bytes("1K", 2, 0, 1000, &b) == -1, "size above hi");
	TEST_CHECK(parse_bytes("1", 1, 2, 1000, &b) == -1, "size below lo");
	TEST_CHECK(parse_bytes("1 ", 1, 0, 9, &b) == 0 && b == 1, "size: n characters only");
	return test_end("test_parse");
}
