/* test_ctf_clock.c - the corrected CTF clock (src/align/ctf_clock.c): the metadata's clock
 * block found and rewritten whatever surrounds it (comments, strings, other blocks, missing
 * attributes, hex values), refused when there is none or several; packetized metadata read
 * back as text; and the new clock's times, computed the way babeltrace2 computes them, within
 * the stated error of the line at every raw value of the range, for random lines at 1 GHz and
 * at other frequencies, with the error no larger than the frequency's rounding allows. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"
#include "hclock_api.h"
#include "align/ctf_clock.h"

static const char *const META =
	"/* CTF 1.8 */\n"
	"/* a comment: clock { freq = 5; } */\n"
	"trace { major = 1; minor = 8; byte_order = le; };\n"
	"env { note = \"clock { freq = 7; }\"; };\n"
	"clock {\n\tname = \"monotonic\";\n\tfreq = 0x3B9ACA00; // 1 GHz\n"
	"\toffset_s = 1700000000;\n\tabsolute = FALSE;\n};\n"
	"stream { event.header := struct { integer { size = 64; map = clock.monotonic.value; } "
	"timestamp; }; };\n";

static void test_block(void)
{
	struct ctf_clock old, nw = {999999937, -5, 12345}, back;
	char *out = NULL, *out2 = NULL;

	TEST_CHECK(ctf_metadata_clock(META, &old, NULL, NULL) == 0, "%s", hclock_last_error());
	TEST_CHECK(old.freq_hz == 1000000000u && old.offset_s == 1700000000 &&
	           old.offset_cycles == 0, "read %llu %lld %llu", (unsigned long long)old.freq_hz,
	           (long long)old.offset_s, (unsigned long long)old.offset_cycles);
	TEST_CHECK(ctf_metadata_clock(META, &old, &nw, &out) == 0, "%s", hclock_last_error());
	TEST_CHECK(out && ctf_metadata_clock(out, &back, NULL, NULL) == 0 &&
	           back.freq_hz == nw.freq_hz && back.offset_s == nw.offset_s &&
	           back.offset_cycles == nw.offset_cycles, "rewritten: %s", out ? out : "");
	/* everything else kept: the comment, the string, the other attributes, the stream */
	TEST_CHECK(out && strstr(out, "/* a comment: clock { freq = 5; } */") &&
	           strstr(out, "\"clock { freq = 7; }\"") && strstr(out, "absolute = FALSE;") &&
	           strstr(out, "name = \"monotonic\";") && strstr(out, "map = clock.monotonic.value") &&
	           !strstr(out, "0x3B9ACA00") && !strstr(out, "1700000000"), "%s", out ? out : "");
	/* a second rewrite of the rewritten text changes nothing else */
	TEST_CHECK(out && ctf_metadata_clock(out, &old, &nw, &out2) == 0 && !strcmp(out, out2),
	           "not idempotent:\n%s\n%s", out, out2 ? out2 : "");
	free(out);
	free(out2);
	out = NULL;
	TEST_CHECK(ctf_metadata_clock("trace { major = 1; };", &old, NULL, NULL) == HCLOCK_EINVAL &&
	           strstr(hclock_last_error(), "no clock"), "%s", hclock_last_error());
	TEST_CHECK(ctf_metadata_clock("clock { name = a; }; clock { name = b; };", &old, NULL,
	                              NULL) == HCLOCK_EINVAL &&
	           strstr(hclock_last_error(), "several"), "%s", hclock_last_error());
	TEST_CHECK(ctf_metadata_clock("clock { freq = fast; };", &old, NULL, NULL) ==
	           HCLOCK_EINVAL && strstr(hclock_last_error(), "freq"), "%s",
	           hclock_last_error());
	TEST_CHECK(ctf_metadata_clock("clock { name = x; };", &old, &nw, &out) == 0 &&
	           old.freq_hz == 1000000000u && old.offset_s == 0 && old.offset_cycles == 0 &&
	           out && strstr(out, "freq = 999999937;") && strstr(out, "offset_s = -5;"),
	           "defaults: %s", out ? out : "");
	free(out);
}

/* packets of at most 100 bytes of text, padded, with LTTng's header */
static void test_packetized(void)
{
	char path[] = "/tmp/hclock-ctf-clock-XXXXXX", *text = NULL;
	int fd = mkstemp(path);
	size_t n = strlen(META), len = 0;
	FILE *f = fdopen(fd, "wb");

	for (size_t at = 0; f && at < n; at += 100) {
		unsigned char h[37] = {0x57, 0x1d, 0xd1, 0x75};
		size_t k = n - at < 100 ? n - at : 100;
		uint32_t content = (uint32_t)((37 + k) * 8), packet = (37 + 100 + 16) * 8;
		memcpy(h + 24, &content, 4);
		memcpy(h + 28, &packet, 4);
		h[35] = 1;
		h[36] = 8;
		fwrite(h, 1, 37, f);
		fwrite(META + at, 1, k, f);
		for (size_t z = k; z < 100 + 16; z++)
			fputc(0, f);
	}
	TEST_CHECK(f && fclose(f) == 0, "cannot write %s", path);
	TEST_CHECK(ctf_metadata_read(path, &text, &len) == 0 && len == n && !memcmp(text, META, n),
	           "packetized read back: %zu bytes of %zu: %s", len, n, hclock_last_error());
	free(text);
	text = NULL;
	/* a packet that claims more than the file holds */
	f = fopen(path, "r+b");
	if (f) {
		uint32_t big = 1u << 30;
		fseek(f, 28, SEEK_SET);
		fwrite(&big, 4, 1, f);
		fclose(f);
	}
	TEST_CHECK(ctf_metadata_read(path, &text, &len) == HCLOCK_EINVAL &&
	           strstr(hclock_last_error(), path), "%s", hclock_last_error());
	free(text);
	unlink(path);
}

/* babeltrace2's ns from origin of raw value c */
static int64_t bt_read(const struct ctf_clock *k, uint64_t c)
{
	uint64_t v = k->freq_hz == 1000000000u ? c :
	             (uint64_t)(1e9 * (double)c / (double)k->freq_hz);
	uint64_t o = k->freq_hz == 1000000000u ? k->offset_cycles :
	             (uint64_t)(1e9 * (double)k->offset_cycles / (double)k->freq_hz);
	return k->offset_s * 1000000000LL + (int64_t)o + (int64_t)v;
}

static void test_correct(void)
{
	for (test_seed = 1; test_seed <= 400; test_seed++) {
		struct ctf_clock old, nw;
		struct trace_line l;
		double err;
		uint64_t span_c, c0;
		long double worst = 0, span_s;
		srand((unsigned)test_seed);
		old.freq_hz = test_seed % 4 ? 1000000000u : (uint64_t)(1000000 + rand() % 3000000000u);
		old.offset_s = 1700000000 + rand() % 1000;
		old.offset_cycles = (uint64_t)rand() % old.freq_hz;
		c0 = (uint64_t)rand() * 1000u;                                 /* uptime-sized */
		span_c = (uint64_t)(1 + rand() % 3600) * old.freq_hz;          /* 1 s .. 1 h */
		span_s = (long double)span_c / (long double)old.freq_hz;
		l.x0_ns = bt_read(&old, c0 + span_c / 3);
		l.y0_ns = l.x0_ns + (rand() % 2000000001 - 1000000000) * 1000LL;
		l.y0_frac = (rand() % 1000) / 1000.0L;
		l.slope = 1 + (rand() % 2000001 - 1000000) * 1e-10L;         /* +-100 ppm */
		if (ctf_clock_correct(&old, &l, bt_read(&old, c0), bt_read(&old, c0 + span_c), &nw,
		                      &err)) {
			TEST_CHECK(0, "no clock: %s", hclock_last_error());
			continue;
		}
		for (int i = 0; i <= 200; i++) {
			uint64_t c = c0 + (i == 200 ? span_c : (uint64_t)((long double)span_c * rand() /
			                                                  RAND_MAX));
			/* relative to the line's anchor: a long double keeps 0.1 ns at 1e18 only */
			long double d = fabsl((long double)(bt_read(&nw, c) - l.y0_ns) - l.y0_frac -
			                      l.slope * (long double)(bt_read(&old, c) - l.x0_ns));
			if (d > worst)
				worst = d;
		}
		/* stated error covers every raw value; and it is what the integer freq allows:
		 * half a unit of 1/freq over half the span, the offset's and the truncations' ns */
		TEST_CHECK(worst <= err + 1e-3, "freq %llu: an event %.3Lf ns off, stated %.3f",
		           (unsigned long long)old.freq_hz, worst, err);
		TEST_CHECK(err <= 0.5e9L / (long double)nw.freq_hz * span_s / 2 * 1.01L +
		           1e9L / (long double)nw.freq_hz + 3, "stated %.3f ns over %.0Lf s at %llu Hz",
		           err, span_s, (unsigned long long)nw.freq_hz);
	}
	/* no clock for a slope that is no rate */
	{
		struct ctf_clock old = {1000000000u, 0, 0}, nw;
		struct trace_line l = {0, 0, 0, -1};
		double err;
		TEST_CHECK(ctf_clock_correct(&old, &l, 0, 1000, &nw, &err) == HCLOCK_EINVAL, "slope -1");
	}
}

int main(void)
{
	test_block();
	test_packetized();
	test_correct();
	return test_end("test_ctf_clock");
}
