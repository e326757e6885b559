/*
 * clock.c - the clock family's wrapper: factory, reference counting, chains, and the flat
 * serialized form (flatten_clock / unflatten_clock of Hunold & Carpen-Amarie, Alg. 3).
 *
 * Serialized form, little endian:
 *   "HCLK" | u16 version (2) | u16 nlayers | layers from the base outwards, each:
 *   u8 type | u16 nbytes | nbytes of the layer's parameters
 * A base layer starts with its u64 source identity.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock/clock.h"
#include "util/err.h"

#define FLAT_MAGIC "HCLK"
#define FLAT_VERSION 2 /* 2: linear layers carry their bound; version 1 is still read */
#define FLAT_MAX_LAYERS 64

void clock_init(struct hclock_clock *c, const struct clock_ops *ops, struct hclock_clock *inner)
{
	c->ops = ops;
	c->refs = 1;
	c->inner = inner ? hclock_clock_ref(inner) : NULL;
	c->source = inner ? inner->source : 0;
	c->base = inner ? inner->base : c;
	c->comp = (struct lm){0, 0, 0};
	c->truth_shift_ns = 0;
	c->bound = bound_unknown();
}

void clock_set_bound(hclock_clock *c, const struct bound *b)
{
	c->bound = *b;
}

double clock_read_error_ns(const hclock_clock *c)
{
	const struct hclock_clock *b = c->base;
	return b->ops->read_error_ns ? b->ops->read_error_ns(b) : 1;
}

int hclock_clock_bounds(const hclock_clock *clk, int64_t t_ns, double *lo_ns, double *hi_ns)
{
	if (clk->ops->bounds)
		clk->ops->bounds(clk, t_ns, lo_ns, hi_ns);
	else
		bound_at(&clk->bound, t_ns, lo_ns, hi_ns);
	if (!(isfinite(*lo_ns) && isfinite(*hi_ns)))
		return err_set(HCLOCK_EUNSUPP, "this clock has no error bounds: only a sync whose models "
		               "are learned with the hull learner (ALG/NFIT/hull/N) gives them");
	return 0;
}

int clock_set_layer(struct hclock_clock *c, const struct lm *layer)
{
	if (c->inner->ops->map)
		return err_set(HCLOCK_EINVAL, "a model cannot be stacked on a continuous clock (its "
		               "model changes while it runs); stack it on the base clock");
	struct lm comp = c->inner->inner ? lm_compose(layer, &c->inner->comp) : *layer;
	/* the same limits as one layer's: a read computes intercept + slope * (x - x0) in
	 * double and rounds it to int64 ns, which must not overflow for any x */
	if (!(fabs(comp.intercept_ns) < COMP_MAX_INTERCEPT_NS) || !(fabs(comp.slope) < COMP_MAX_SLOPE))
		return err_set(HCLOCK_EINVAL, "composing this model with the %d layers below it gives "
		               "intercept %g ns and slope %g; the chain must stay within |intercept| < "
		               "%g ns and |slope| < %g", clock_depth(c->inner), comp.intercept_ns,
		               comp.slope, COMP_MAX_INTERCEPT_NS, COMP_MAX_SLOPE);
	c->comp = comp;
	return 0;
}

int clock_depth(const struct hclock_clock *c)
{
	int n = 0;
	for (; c; c = c->inner)
		n++;
	return n;
}

int64_t hclock_now(hclock_clock *c)
{
	if (c->ops->now) /* a base clock, or a dynamic model */
		return c->ops->now(c);
	struct hclock_clock *b = c->base;
	int64_t x = b->ops->now(b);
	return x + round_ns(c->comp.intercept_ns + c->comp.slope * (double)diff_ns(x, c->comp.x0_ns));
}

int hclock_read(hclock_clock *c, hclock_reading *r)
{
	if (c->ops->read) {
		c->ops->read(c, r);
		return 0;
	}
	double lo, hi;
	r->now_ns = hclock_now(c);
	bound_at(&c->bound, r->now_ns, &lo, &hi);
	if (!bound_known(&c->bound)) {
		r->earliest_ns = INT64_MIN;
		r->latest_ns = INT64_MAX;
		r->status = HCLOCK_BOUNDS_NONE;
		return 0;
	}
	/* the reading is rounded to whole ns: half a ns either way */
	r->earliest_ns = r->now_ns + (int64_t)floor(lo - 0.5);
	r->latest_ns = r->now_ns + (int64_t)ceil(hi + 0.5);
	r->status = HCLOCK_BOUNDS_FROZEN;
	return 0;
}

hclock_clock *hclock_clock_ref(hclock_clock *c)
{
	if (c)
		c->refs++;
	return c;
}

void hclock_clock_free(hclock_clock *c)
{
	while (c && --c->refs == 0) {
		struct hclock_clock *inner = c->inner;
		if (c->ops->destroy)
			c->ops->destroy(c);
		else
			free(c);
		c = inner;
	}
}

const struct hclock_clock *clock_base(const struct hclock_clock *c)
{
	return c->base;
}

int64_t clock_apply_chain(const struct hclock_clock *c, int64_t x)
{
	if (c->ops->map)
		return c->ops->map(c, x);
	if (!c->inner)
		return x;
	return x + round_ns(c->comp.intercept_ns + c->comp.slope * (double)diff_ns(x, c->comp.x0_ns));
}

char *hclock_clock_describe(const hclock_clock *c, char *buf, size_t len)
{
	size_t pos = 0;
	if (!len)
		return buf;
	buf[0] = 0;
	for (; c; c = c->inner) {
		int n = c->ops->describe(c, buf + pos, len - pos);
		if (n < 0 || (size_t)n >= len - pos)
			break;
		pos += (size_t)n;
		if (c->inner && len - pos > 3) {
			memcpy(buf + pos, " o ", 4);
			pos += 3;
		}
	}
	return buf;
}

uint64_t clock_machine_id(void)
{
	static uint64_t id;
	if (id)
		return id;
	char b[128] = {0};
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (!f || !fgets(b, sizeof(b), f))
		gethostname(b, sizeof(b) - 1);
	if (f)
		fclose(f);
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (const char *s = b; *s && *s != '\n'; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return id = h ? h : 1;
}

uint64_t clock_timens_id(void)
{
	static uint64_t id;
	static int done;
	if (done)
		return id;
	char line[128];
	FILE *f = fopen("/proc/self/timens_offsets", "r"); /* Linux 5.6 and later */
	while (f && fgets(line, sizeof(line), f)) {
		long long sec, nsec;
		if (sscanf(line, "monotonic %lld %lld", &sec, &nsec) == 2 && (sec || nsec))
			id = ((uint64_t)sec * 1000000000ull + (uint64_t)nsec) * 0x9e3779b97f4a7c15ull;
	}
	if (f)
		fclose(f);
	done = 1;
	return id;
}

int clock_truth(struct hclock_clock *base, int64_t *mine_ns, int64_t *ref_ns)
{
	if (!base->ops->truth || base->ops->truth(base, mine_ns, ref_ns))
		return HCLOCK_EUNSUPP;
	*ref_ns += base->truth_shift_ns;
	return 0;
}

void clock_realtime_offset(struct hclock_clock *base, int64_t *offset_ns, int64_t *width_ns)
{
	*width_ns = INT64_MAX;
	*offset_ns = 0;
	for (int i = 0; i < 64; i++) {
		struct timespec a, b;
		clock_gettime(CLOCK_REALTIME, &a);
		int64_t m = base->ops->now(base);
		clock_gettime(CLOCK_REALTIME, &b);
		int64_t ra = (int64_t)a.tv_sec * 1000000000 + a.tv_nsec;
		int64_t rb = (int64_t)b.tv_sec * 1000000000 + b.tv_nsec;
		if (rb >= ra && rb - ra < *width_ns) {
			*width_ns = rb - ra;
			*offset_ns = m - (ra + (rb - ra) / 2);
		}
	}
}

void clock_before_send(hclock_clock *c)
{
	struct hclock_clock *b = c->base;
	if (b->ops->before_send)
		b->ops->before_send(b);
}

int clock_topology(const hclock_clock *c, int *node, int *socket)
{
	const struct hclock_clock *b = c->base;
	*node = *socket = -1;
	return b->ops->topology ? b->ops->topology(b, node, socket) : -1;
}

static void context_of(const hclock_clock *c, struct clock_ctx *ctx)
{
	const struct hclock_clock *b = c->base;
	ctx->emu = NULL;
	if (b->ops->context)
		b->ops->context(b, ctx);
}

int hclock_true_error(hclock_clock *clk, hclock_emu *emu, double *err_ns)
{
	struct hclock_clock *b = clk->base;
	struct clock_ctx ctx;
	int64_t mine, ref;
	context_of(clk, &ctx);
	if (emu && ctx.emu != emu)
		return err_set(HCLOCK_EUNSUPP, "true error needs a clock built on the emulation");
	if (clock_truth(b, &mine, &ref))
		return err_set(HCLOCK_EUNSUPP, "--truth needs a system-wide base clock (monotonic or "
		                               "realtime) read by every rank on one machine, not %s",
		               b->ops->name);
	*err_ns = (double)(clock_apply_chain(clk, mine) - ref);
	return 0;
}

static const struct clock_type *type_by_tag(uint8_t tag)
{
	for (size_t i = 0; clock_types[i]; i++)
		if (clock_types[i]->tag == tag)
			return clock_types[i];
	return NULL;
}

int hclock_base_create(const char *name, hclock_emu *emu, hclock_clock **out)
{
	const struct clock_ctx ctx = {emu};
	*out = NULL;
	if (!name)
		name = "monotonic";
	for (size_t i = 0; clock_types[i]; i++) {
		const struct clock_type *t = clock_types[i];
		if (emu ? t->emulation : t->help && !t->emulation && !strcmp(t->name, name))
			return t->create(&ctx, out);
	}
	return err_set(HCLOCK_EINVAL, "unknown clock '%s'; expected %s", name, clock_type_names());
}

int hclock_clock_flatten(const hclock_clock *clk, void **buf, size_t *len)
{
	const struct hclock_clock *chain[FLAT_MAX_LAYERS];
	int n = 0;
	for (const struct hclock_clock *c = clk; c; c = c->inner) {
		if (n == FLAT_MAX_LAYERS)
			return err_set(HCLOCK_EINVAL, "clock nested deeper than %d layers", FLAT_MAX_LAYERS);
		chain[n++] = c;
	}
	struct wbuf w = {0}, layer = {0};
	wbuf_put_bytes(&w, FLAT_MAGIC, 4);
	wbuf_put_u16(&w, FLAT_VERSION);
	wbuf_put_u16(&w, (uint16_t)n);
	while (n--) {
		const struct hclock_clock *c = chain[n];
		layer = (struct wbuf){0};
		if (!c->inner)
			wbuf_put_u64(&layer, c->source);
		if (c->ops->flatten)
			c->ops->flatten(c, &layer);
		if (layer.oom || layer.len > UINT16_MAX)
			goto err;
		wbuf_put_u8(&w, c->ops->type);
		wbuf_put_u16(&w, (uint16_t)layer.len);
		wbuf_put_bytes(&w, layer.p, layer.len);
		free(layer.p);
		layer.p = NULL;
	}
	if (w.oom)
		goto err;
	*buf = w.p;
	*len = w.len;
	return 0;
err:
	free(layer.p);
	free(w.p);
	return err_set(HCLOCK_ENOMEM, "out of memory flattening a clock");
}

static int unflatten_layer(unsigned i, uint8_t tag, struct rbuf *r, const struct clock_ctx *ctx,
                           struct hclock_clock *inner, struct hclock_clock **out)
{
	const struct clock_type *t = type_by_tag(tag);
	uint64_t source = 0;
	int rc;
	if (!t || !t->unflatten || (i == 0) != !!t->create)
		return err_set(HCLOCK_EINVAL, "serialized clock layer %u has unknown %s type %u", i,
		               i ? "model" : "base", tag);
	if (i == 0 && rbuf_u64(r, &source))
		return err_set(HCLOCK_EINVAL, "serialized clock truncated in its base layer");
	if ((rc = t->unflatten(r, ctx, inner, out)))
		return rc;
	if (i == 0 && (*out)->source != source) {
		char what[64];
		(*out)->ops->describe(*out, what, sizeof(what));
		hclock_clock_free(*out);
		*out = NULL;
		return err_set(HCLOCK_ESHARE,
		               "clock model was made on another time source than this process's %s "
		               "(different machine, boot, process-local clock or emulated node)",
		               what);
	}
	return 0;
}

static int unflatten(const void *buf, size_t len, const struct clock_ctx *ctx, hclock_clock **out);

int hclock_clock_unflatten(const void *buf, size_t len, hclock_emu *emu, hclock_clock **out)
{
	const struct clock_ctx ctx = {emu};
	return unflatten(buf, len, &ctx, out);
}

int clock_unflatten_like(const void *buf, size_t len, const hclock_clock *like, hclock_clock **out)
{
	struct clock_ctx ctx;
	context_of(like, &ctx);
	int rc = unflatten(buf, len, &ctx, out);
	if (!rc) /* the same time source (unflatten checked): the same truth */
		(*out)->base->truth_shift_ns = like->base->truth_shift_ns;
	return rc;
}

static int unflatten(const void *buf, size_t len, const struct clock_ctx *ctx, hclock_clock **out)
{
	struct rbuf r = {buf, len, 0};
	char magic[4];
	uint16_t version, nlayers;
	struct hclock_clock *c = NULL;
	int rc;
	*out = NULL;
	if (rbuf_bytes(&r, magic, 4) || memcmp(magic, FLAT_MAGIC, 4))
		return err_set(HCLOCK_EINVAL, "not a serialized hclock clock (bad magic)");
	if (rbuf_u16(&r, &version) || rbuf_u16(&r, &nlayers))
		return err_set(HCLOCK_EINVAL, "serialized clock truncated in its header");
	if (version != FLAT_VERSION && version != 1)
		return err_set(HCLOCK_EVERSION, "serialized clock version %u; this hclock reads versions 1 "
		               "and %d", version, FLAT_VERSION);
	if (nlayers < 1 || nlayers > FLAT_MAX_LAYERS)
		return err_set(HCLOCK_EINVAL, "serialized clock has %u layers; expected 1 to %d", nlayers,
		               FLAT_MAX_LAYERS);
	for (unsigned i = 0; i < nlayers; i++) {
		uint8_t type;
		uint16_t nbytes;
		if (rbuf_u8(&r, &type) || rbuf_u16(&r, &nbytes) || len - r.pos < nbytes) {
			rc = err_set(HCLOCK_EINVAL, "serialized clock truncated in layer %u", i);
			goto err;
		}
		struct rbuf lr = {r.p + r.pos, nbytes, 0};
		struct hclock_clock *next = NULL;
		r.pos += nbytes;
		rc = unflatten_layer(i, type, &lr, ctx, c, &next);
		hclock_clock_free(c); /* next holds its own reference (NULL on failure) */
		c = next;
		if (rc)
			goto err;
		if (lr.pos != lr.len) {
			rc = err_set(HCLOCK_EINVAL, "serialized clock layer %u has %zu trailing bytes", i,
			             lr.len - lr.pos);
			goto err;
		}
	}
	if (r.pos != len) {
		rc = err_set(HCLOCK_EINVAL, "serialized clock has %zu trailing bytes", len - r.pos);
		goto err;
	}
	*out = c;
	return 0;
err:
	hclock_clock_free(c);
	return rc;
}

int clock_drive(struct hclock_clock *c, int64_t *sleep_ns)
{
	for (; c; c = c->inner)
		if (c->ops->drive && c->ops->drive(c, sleep_ns))
			return 1;
	return 0;
}
