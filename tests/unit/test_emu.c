/* The emulation spec and the virtual clocks' formula. */
#include <math.h>
#include <string.h>

#include "emulate/emu.h"
#include "test.h"

static void good(const char *s)
{
	struct emu_params p;
	TEST_CHECK(emu_parse(s, &p) == 0, "'%s' refused: %s", s, hclock_last_error());
}

static void bad(const char *s, const char *must_name)
{
	struct emu_params p;
	TEST_CHECK(emu_parse(s, &p) == HCLOCK_EINVAL, "'%s' accepted", s);
	TEST_CHECK(strstr(hclock_last_error(), must_name) != NULL, "'%s': message '%s' lacks '%s'", s,
	           hclock_last_error(), must_name);
}

int main(void)
{
	struct emu_params p;
	good("offset=1,skew=100e-6,drift=1e-9,wander=2e-7@30,noise=20e-9,nodes=2,seed=7");
	good("skew=1e-4");
	good("jitter=1e-6,ranks-per-node=4,sockets=2");
	good("nodes=host,topology=host");
	TEST_CHECK(emu_parse("delay=20e-6,jitter-node=0", &p) == 0 && p.delay_s == 20e-6 &&
	           p.jitter_s == 0 && p.jitter_node == 1, "delay: %s", hclock_last_error());
	TEST_CHECK(emu_parse("skew=5e-5,wander=1e-7@10,seed=9,nodes=3", &p) == 0, "parse");
	TEST_CHECK(p.skew == 5e-5 && p.wander_amp == 1e-7 && p.wander_period_s == 10 && p.seed == 9 &&
	           p.nodes == 3, "values");
	bad("", "empty");
	bad("skew", "not key=value");
	bad("skew=abc", "'abc'");
	bad("skew=0.5", "skew");
	bad("skew=500e-6", "[0, 0.0004]");
	bad("drift=1e-5", "drift");
	bad("wander=2e-4@30", "wander amplitude");
	bad("sekw=1e-6", "'sekw'");
	bad("wander=1e-7", "AMP@PERIOD");
	bad("noise=-1", "noise");
	bad("delay=2", "delay");
	bad("nodes=0", "nodes");
	bad("nodes=2,ranks-per-node=2", "not several");
	bad("seed=-3", "seed");
	bad("topology=star", "topology");

	bad("step=1e-6", "AMOUNT@TIME");
	bad("step=1e-6@x", "step time");
	good("step=-5e-6@300ms,skew=1e-4");
	good("fstep=3.8e-6@120,slew=-500e-6@60+5s");
	bad("fstep=3.8e-6", "RATE@TIME");
	bad("fstep=2e-4@1", "fstep value");
	bad("slew=500e-6@60", "RATE@TIME+DURATION");
	bad("slew=1e-3@60+5", "slew value");
	bad("slew=1e-4@60+x", "slew duration");

	/* L(T) = E + off + (1+skew) T + drift T^2/2 + wander(T) + step(T), checked against the
	 * formula; the step of 3 us at T = 50 s, a 4 ppm frequency step at 20 s, a -300 ppm slew
	 * from 30 to 35 s */
	struct emu_node node = {250e6, 80e-6, 2e-9, 1e-7, 0.3, 3000, 4e-6, -300e-6};
	struct hclock_emu e;
	memset(&e, 0, sizeof(e));
	e.p.wander_period_s = 30;
	e.p.step_at_s = 50;
	e.p.fstep_at_s = 20;
	e.p.slew_at_s = 30;
	e.p.slew_s = 5;
	e.epoch_ns = 1000000000000LL;
	for (int64_t T = 0; T <= 100000000000LL; T += 3500000000LL) {
		double t = (double)T * 1e-9, P = 30;
		double want = 0.25 + (1 + 80e-6) * t + 1e-9 * t * t +
		              1e-7 * P / (2 * M_PI) * (cos(0.3) - cos(2 * M_PI * t / P + 0.3)) +
		              (t >= 50 ? 3e-6 : 0) + (t > 20 ? 4e-6 * (t - 20) : 0) -
		              300e-6 * fmin(fmax(t - 30, 0), 5);
		double got = (double)(emu_local_ns(&e, &node, T) - e.epoch_ns) * 1e-9;
		TEST_CHECK(fabs(got - want) < 2e-9, "T=%lld: %.9f vs %.9f", (long long)T, got, want);
	}
	return test_end("test_emu");
}
