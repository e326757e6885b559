/* Clock models: nesting, bit-exact serialization round trip, refusing bad buffers. */
#include <string.h>

#include "clock/clock.h"
#include "hclock.h"
#include "test.h"
#include "util/rng.h"

static hclock_clock *nest(struct rng *r, hclock_clock *base, int depth)
{
	hclock_clock *c = hclock_clock_ref(base);
	for (int i = 0; i < depth; i++) {
		hclock_clock *n;
		if (rng_u64(r) % 3)
			hclock_model_linear(c, (int64_t)(rng_u64(r) >> 3), (2 * rng_uniform(r) - 1) * 1e9,
			                    (2 * rng_uniform(r) - 1) * 1e-4, &n);
		else
			hclock_model_offset(c, (2 * rng_uniform(r) - 1) * 1e6, &n);
		hclock_clock_free(c);
		c = n;
	}
	return c;
}

static void roundtrip(uint64_t seed)
{
	struct rng r;
	hclock_clock *base, *c, *back;
	void *buf, *buf2;
	size_t len, len2;
	rng_seed(&r, seed);
	test_seed = seed;
	TEST_CHECK(hclock_base_create("monotonic", NULL, &base) == 0, "%s", hclock_last_error());
	c = nest(&r, base, 1 + (int)(rng_u64(&r) % 5));
	TEST_CHECK(hclock_clock_flatten(c, &buf, &len) == 0, "%s", hclock_last_error());
	TEST_CHECK(hclock_clock_unflatten(buf, len, NULL, &back) == 0, "%s", hclock_last_error());
	TEST_CHECK(hclock_clock_flatten(back, &buf2, &len2) == 0, "%s", hclock_last_error());
	TEST_CHECK(len == len2 && !memcmp(buf, buf2, len), "second flatten differs");
	/* the same base reading maps to the same global time, to the nanosecond */
	for (int k = 0; k < 100; k++) {
		int64_t b = (int64_t)(rng_u64(&r) >> 2);
		TEST_CHECK(clock_apply_chain(c, b) == clock_apply_chain(back, b), "readings differ");
	}
	/* every truncation is refused, never a crash */
	for (size_t cut = 0; cut < len; cut++) {
		hclock_clock *x = NULL;
		TEST_CHECK(hclock_clock_unflatten(buf, cut, NULL, &x) != 0 && !x, "cut %zu accepted", cut);
	}
	/* random garbage and flipped bytes: refused or accepted, never a crash or a leak */
	unsigned char *g = malloc(len);
	for (int k = 0; k < 200; k++) {
		memcpy(g, buf, len);
		g[rng_u64(&r) % len] ^= (unsigned char)(1 + rng_u64(&r) % 255);
		hclock_clock *x = NULL;
		if (hclock_clock_unflatten(g, len, NULL, &x) == 0)
			hclock_clock_free(x);
	}
	free(g);
	free(buf);
	free(buf2);
	hclock_clock_free(back);
	hclock_clock_free(c);
	hclock_clock_free(base);
}

/* Each layer within the limits, the composed chain beyond them: refused with HCLOCK_EINVAL
 * (a read would overflow int64), directly and through unflatten. */
static void composition_bounded(void)
{
	hclock_clock *base, *a = NULL, *b = NULL, *c = NULL;
	hclock_base_create("monotonic", NULL, &base);
	int64_t t = hclock_now(base);
	TEST_CHECK(hclock_model_linear(base, t, 3e18, 0.4, &a) == 0, "layer 1: %s", hclock_last_error());
	TEST_CHECK(hclock_model_linear(a, t, 3e18, 0.4, &b) == HCLOCK_EINVAL && !b,
	           "two layers of 3e18 ns compose to 6e18 ns and must be refused");
	TEST_CHECK(strstr(hclock_last_error(), "compos") != NULL, "line: %s", hclock_last_error());
	/* slopes: 0.3 three times composes to 1.197 */
	hclock_clock_free(a);
	TEST_CHECK(hclock_model_linear(base, t, 0, 0.3, &a) == 0, "slope layer 1");
	TEST_CHECK(hclock_model_linear(a, t, 0, 0.1, &b) == 0, "slope layer 2 (0.43): %s",
	           hclock_last_error());
	TEST_CHECK(hclock_model_linear(b, t, 0, 0.3, &c) == HCLOCK_EINVAL && !c,
	           "three layers composing to a slope of 0.859 must be refused");
	/* the same chain through a serialized buffer: layer by layer within limits, refused */
	void *buf;
	size_t len;
	hclock_clock *d = NULL, *back = NULL;
	TEST_CHECK(hclock_model_linear(b, t, 0, 0.02, &d) == 0, "%s", hclock_last_error());
	TEST_CHECK(hclock_clock_flatten(d, &buf, &len) == 0, "flatten");
	/* patch the last layer's slope (its final 8 bytes) to 0.3: each layer valid alone */
	double big = 0.3;
	memcpy((char *)buf + len - 8, &big, 8);
	TEST_CHECK(hclock_clock_unflatten(buf, len, NULL, &back) == HCLOCK_EINVAL && !back,
	           "unflatten of an overflowing chain must be refused");
	free(buf);
	hclock_clock_free(d);
	hclock_clock_free(b);
	hclock_clock_free(a);
	hclock_clock_free(base);
}

int main(void)
{
	for (uint64_t seed = 1; seed <= 30; seed++)
		roundtrip(seed);

	/* known values: linear over offset over the base */
	hclock_clock *base, *o, *l;
	hclock_base_create("monotonic", NULL, &base);
	hclock_model_offset(base, 1000.4, &o);
	hclock_model_linear(o, 5000, 10, 1e-3, &l);
	/* x=1e6 -> offset: 1e6+1000 = 1001000 -> linear: + 10 + 1e-3*(1001000-5000) = 1011 */
	TEST_CHECK(clock_apply_chain(l, 1000000) == 1001000 + 10 + 996, "got %lld",
	           (long long)clock_apply_chain(l, 1000000));
	/* hclock_now of a model is its chain applied to a base reading in between two reads */
	int64_t a = hclock_now(base), m = hclock_now(l), b = hclock_now(base);
	TEST_CHECK(m >= clock_apply_chain(l, a) && m <= clock_apply_chain(l, b), "now out of range");
	/* the base outlives the models only through references */
	hclock_clock_free(base);
	TEST_CHECK(hclock_now(l) > 0, "nested clock lost its base");

	/* version, magic and time source checks */
	void *buf;
	size_t len;
	hclock_clock *x = NULL;
	hclock_clock_flatten(l, &buf, &len);
	unsigned char *p = buf;
	p[4] = 99;
	TEST_CHECK(hclock_clock_unflatten(buf, len, NULL, &x) == HCLOCK_EVERSION, "version accepted");
	p[4] = 1;
	p[0] = 'X';
	TEST_CHECK(hclock_clock_unflatten(buf, len, NULL, &x) == HCLOCK_EINVAL, "magic accepted");
	p[0] = 'H';
	p[11] ^= 0x55; /* inside the base layer's source identity */
	TEST_CHECK(hclock_clock_unflatten(buf, len, NULL, &x) == HCLOCK_ESHARE,
	           "another time source accepted: %s", hclock_last_error());
	free(buf);
	hclock_clock_free(l);
	hclock_clock_free(o);

	/* models refuse nonsense */
	hclock_base_create("realtime", NULL, &base);
	TEST_CHECK(hclock_model_linear(base, 0, 0, 0.7, &x) == HCLOCK_EINVAL, "slope 0.7 accepted");
	TEST_CHECK(hclock_model_offset(base, 1.0 / 0.0, &x) == HCLOCK_EINVAL, "inf accepted");
	TEST_CHECK(hclock_base_create("sundial", NULL, &x) == HCLOCK_EINVAL, "unknown clock accepted");
	hclock_clock_free(base);

	/* tsc: available here (invariant TSC) or refused with a clear error */
	int rc = hclock_base_create("tsc", NULL, &x);
	if (rc == 0) {
		int64_t t1 = hclock_now(x);
		hclock_clock_flatten(x, &buf, &len);
		hclock_clock *y;
		TEST_CHECK(hclock_clock_unflatten(buf, len, NULL, &y) == 0, "%s", hclock_last_error());
		int64_t t2 = hclock_now(y);
		TEST_CHECK(t2 >= t1 && t2 - t1 < 1000000000, "rebuilt tsc clock reads %lld after %lld",
		           (long long)t2, (long long)t1);
		free(buf);
		hclock_clock_free(y);
		hclock_clock_free(x);
	} else {
		TEST_CHECK(rc == HCLOCK_EUNSUPP, "tsc: %s", hclock_last_error());
	}
	composition_bounded();
	return test_end("test_model");
}
