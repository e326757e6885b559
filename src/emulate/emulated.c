/* emulated.c - base clock "emulated": this process's virtual node clock plus read noise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock/clock.h"
#include "emulate/emu.h"
#include "util/err.h"

struct emulated_clock {
	struct hclock_clock c;
	struct hclock_emu *emu;
	int node;
};

static int64_t emulated_now(struct hclock_clock *c)
{
	struct emulated_clock *e = (struct emulated_clock *)c;
	int64_t t = emu_local_ns(e->emu, &e->emu->mine, emu_T_ns(e->emu));
	if (e->emu->p.noise_s > 0)
		t += (int64_t)llround(rng_normal(&e->emu->rng) * e->emu->p.noise_s * 1e9);
	return t;
}

static void emulated_flatten(const struct hclock_clock *c, struct wbuf *w)
{
	const struct emulated_clock *e = (const struct emulated_clock *)c;
	wbuf_put_u32(w, (uint32_t)e->node);
}

static int emulated_describe(const struct hclock_clock *c, char *buf, size_t len)
{
	const struct emulated_clock *e = (const struct emulated_clock *)c;
	return snprintf(buf, len, "emulated(node %d)", e->node);
}

static const struct clock_ops emulated_ops = {
	.name = "emulated", .type = CLOCK_T_EMULATED, .now = emulated_now,
	.flatten = emulated_flatten, .describe = emulated_describe,
};

hclock_emu *emu_of_clock(const hclock_clock *c)
{
	const struct hclock_clock *b = clock_base(c);
	return b->ops == &emulated_ops ? ((const struct emulated_clock *)b)->emu : NULL;
}

int clock_emulated_create(hclock_emu *emu, struct rbuf *r, struct hclock_clock **out)
{
	/* A rebuilt clock is always this process's own node clock; a buffer made on another
	 * node is then refused by the source identity check of the caller. */
	if (r) {
		uint32_t node;
		if (rbuf_u32(r, &node))
			return err_set(HCLOCK_EINVAL, "serialized emulated clock is truncated");
	}
	struct emulated_clock *e = calloc(1, sizeof(*e));
	if (!e)
		return err_set(HCLOCK_ENOMEM, "out of memory creating a clock");
	clock_init(&e->c, &emulated_ops, NULL);
	e->emu = emu;
	e->node = emu->node;
	e->c.source = emu->spec_hash ^ ((uint64_t)(emu->node + 1) * 0x9e3779b97f4a7c15ull);
	*out = &e->c;
	return 0;
}
