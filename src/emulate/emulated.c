/*
 * emulated.c - base clock "emulated": this process's virtual node clock plus read noise.
 * It provides the clock layer's hooks (clock.h), so nothing above the clock layer names
 * the emulation: the jitter before a sync message, the virtual node and socket for the
 * hierarchy, the ground truth, and the context a rebuilt clock needs.
 */
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

/* Read noise is Gaussian clipped at NOISE_CLIP standard deviations (a reading beyond that
 * happens once in 16,000 reads unclipped): bounded, so strict bounds can allow for it. */
#define NOISE_CLIP 4.0

static int64_t emulated_now(struct hclock_clock *c)
{
	struct emulated_clock *e = (struct emulated_clock *)c;
	int64_t t = emu_local_ns(e->emu, &e->emu->mine, emu_T_ns(e->emu));
	if (e->emu->p.noise_s > 0) {
		double z = rng_normal(emu_rng(e->emu));
		z = z > NOISE_CLIP ? NOISE_CLIP : z < -NOISE_CLIP ? -NOISE_CLIP : z;
		t += (int64_t)llround(z * e->emu->p.noise_s * 1e9);
	}
	return t;
}

/* the clipped noise, plus the roundings to whole ns: the node clock's and the noise's here,
 * a model's above */
static double emulated_read_error_ns(const struct hclock_clock *c)
{
	const struct hclock_emu *e = ((const struct emulated_clock *)c)->emu;
	return NOISE_CLIP * e->p.noise_s * 1e9 + 1.5;
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

static void emulated_before_send(struct hclock_clock *c)
{
	emu_jitter(((struct emulated_clock *)c)->emu);
}

/* the virtual node (and socket) drive the hierarchy, unless topology=host */
static int emulated_topology(const struct hclock_clock *c, int *node, int *socket)
{
	const struct hclock_emu *e = ((const struct emulated_clock *)c)->emu;
	if (e->p.topology_host)
		return -1;
	*node = e->node;
	*socket = e->socket;
	return 0;
}

/* the noise-free node clocks of this process and of rank 0 at one true instant */
static int emulated_truth(struct hclock_clock *c, int64_t *mine, int64_t *ref)
{
	const struct hclock_emu *e = ((const struct emulated_clock *)c)->emu;
	int64_t T = emu_T_ns(e);
	*mine = emu_local_ns(e, &e->mine, T);
	*ref = emu_local_ns(e, &e->ref, T);
	return 0;
}

static void emulated_context(const struct hclock_clock *c, struct clock_ctx *ctx)
{
	ctx->emu = ((const struct emulated_clock *)c)->emu;
}

static const struct clock_ops emulated_ops = {
	.name = "emulated", .type = CLOCK_T_EMULATED, .now = emulated_now,
	.flatten = emulated_flatten, .describe = emulated_describe,
	.before_send = emulated_before_send, .topology = emulated_topology,
	.truth = emulated_truth, .context = emulated_context,
	.read_error_ns = emulated_read_error_ns,
};

static int emulated_create(const struct clock_ctx *ctx, struct hclock_clock **out)
{
	hclock_emu *emu = ctx->emu;
	if (!emu)
		return err_set(HCLOCK_EINVAL, "an emulated clock needs an emulation (hclock_emu_create)");
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

/* A rebuilt clock is always this process's own node clock; a buffer made on another node
 * is then refused by the source identity check of the caller. */
static int emulated_unflatten(struct rbuf *r, const struct clock_ctx *ctx,
                              struct hclock_clock *inner, struct hclock_clock **out)
{
	uint32_t node;
	(void)inner;
	if (rbuf_u32(r, &node))
		return err_set(HCLOCK_EINVAL, "serialized emulated clock is truncated");
	if (!ctx->emu)
		return err_set(HCLOCK_EINVAL,
		               "serialized clock is emulated but this process has no emulation");
	return emulated_create(ctx, out);
}

const struct clock_type clock_type_emulated = {
	.name = "emulated", .tag = CLOCK_T_EMULATED,
	.help = "this process's virtual node clock (--emulate), with known truth",
	.emulation = 1, .create = emulated_create, .unflatten = emulated_unflatten,
};
