/*
 * clock.c - the clock family's wrapper: factory, reference counting, chains, and the flat
 * serialized form (flatten_clock / unflatten_clock of the paper, Alg. 3).
 *
 * Serialized form, little endian:
 *   "HCLK" | u16 version (1) | u16 nlayers | layers from the base outwards, each:
 *   u8 type | u16 nbytes | nbytes of the layer's parameters
 * A base layer starts with its u64 source identity.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock/clock.h"
#include "util/err.h"

#define FLAT_MAGIC "HCLK"
#define FLAT_VERSION 1
#define FLAT_MAX_LAYERS 64

void clock_init(struct hclock_clock *c, const struct clock_ops *ops, struct hclock_clock *inner)
{
	c->ops = ops;
	c->refs = 1;
	c->inner = inner ? hclock_clock_ref(inner) : NULL;
	c->source = inner ? inner->source : 0;
	c->base = inner ? inner->base : c;
	c->comp = (struct lm){0, 0, 0};
}

void clock_set_layer(struct hclock_clock *c, const struct lm *layer)
{
	c->comp = c->inner->inner ? lm_compose(layer, &c->inner->comp) : *layer;
}

int64_t hclock_now(hclock_clock *c)
{
	if (!c->inner)
		return c->ops->now(c);
	struct hclock_clock *b = c->base;
	int64_t x = b->ops->now(b);
	return x + round_ns(c->comp.intercept_ns + c->comp.slope * (double)diff_ns(x, c->comp.x0_ns));
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

int hclock_base_create(const char *name, hclock_emu *emu, hclock_clock **out)
{
	*out = NULL;
	if (!name)
		name = "monotonic";
	if (emu)
		return clock_emulated_create(emu, NULL, out);
	if (!strcmp(name, "monotonic"))
		return clock_posix_create(CLOCK_T_MONOTONIC, NULL, out);
	if (!strcmp(name, "realtime"))
		return clock_posix_create(CLOCK_T_REALTIME, NULL, out);
	if (!strcmp(name, "wtime"))
		return clock_wtime_create(NULL, out);
	if (!strcmp(name, "tsc"))
		return clock_tsc_create(NULL, out);
	return err_set(HCLOCK_EINVAL, "unknown clock '%s'; expected monotonic, realtime, wtime or tsc",
	               name);
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
	struct wbuf w = {0};
	wbuf_put_bytes(&w, FLAT_MAGIC, 4);
	wbuf_put_u16(&w, FLAT_VERSION);
	wbuf_put_u16(&w, (uint16_t)n);
	while (n--) {
		const struct hclock_clock *c = chain[n];
		struct wbuf layer = {0};
		if (!c->inner)
			wbuf_put_u64(&layer, c->source);
		if (c->ops->flatten)
			c->ops->flatten(c, &layer);
		if (layer.oom || layer.len > UINT16_MAX) {
			free(layer.p);
			free(w.p);
			return err_set(HCLOCK_ENOMEM, "out of memory flattening a clock");
		}
		wbuf_put_u8(&w, c->ops->type);
		wbuf_put_u16(&w, (uint16_t)layer.len);
		wbuf_put_bytes(&w, layer.p, layer.len);
		free(layer.p);
	}
	if (w.oom) {
		free(w.p);
		return err_set(HCLOCK_ENOMEM, "out of memory flattening a clock");
	}
	*buf = w.p;
	*len = w.len;
	return 0;
}

static int unflatten_base(uint8_t type, struct rbuf *r, hclock_emu *emu, struct hclock_clock **out)
{
	uint64_t source;
	int rc;
	if (rbuf_u64(r, &source))
		return err_set(HCLOCK_EINVAL, "serialized clock truncated in its base layer");
	switch (type) {
	case CLOCK_T_MONOTONIC:
	case CLOCK_T_REALTIME: rc = clock_posix_create(type, r, out); break;
	case CLOCK_T_WTIME: rc = clock_wtime_create(r, out); break;
	case CLOCK_T_TSC: rc = clock_tsc_create(r, out); break;
	case CLOCK_T_EMULATED:
		if (!emu)
			return err_set(HCLOCK_EINVAL,
			               "serialized clock is emulated but this process has no emulation");
		rc = clock_emulated_create(emu, r, out);
		break;
	default: return err_set(HCLOCK_EINVAL, "serialized clock has unknown base type %u", type);
	}
	if (rc)
		return rc;
	if ((*out)->source != source) {
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

int hclock_clock_unflatten(const void *buf, size_t len, hclock_emu *emu, hclock_clock **out)
{
	struct rbuf r = {buf, len, 0};
	char magic[4];
	uint16_t version, nlayers;
	struct hclock_clock *c = NULL;
	*out = NULL;
	if (rbuf_bytes(&r, magic, 4) || memcmp(magic, FLAT_MAGIC, 4))
		return err_set(HCLOCK_EINVAL, "not a serialized hclock clock (bad magic)");
	if (rbuf_u16(&r, &version) || rbuf_u16(&r, &nlayers))
		return err_set(HCLOCK_EINVAL, "serialized clock truncated in its header");
	if (version != FLAT_VERSION)
		return err_set(HCLOCK_EVERSION, "serialized clock version %u; this hclock reads version %d",
		               version, FLAT_VERSION);
	if (nlayers < 1 || nlayers > FLAT_MAX_LAYERS)
		return err_set(HCLOCK_EINVAL, "serialized clock has %u layers; expected 1 to %d", nlayers,
		               FLAT_MAX_LAYERS);
	for (unsigned i = 0; i < nlayers; i++) {
		uint8_t type;
		uint16_t nbytes;
		if (rbuf_u8(&r, &type) || rbuf_u16(&r, &nbytes) || len - r.pos < nbytes) {
			hclock_clock_free(c);
			return err_set(HCLOCK_EINVAL, "serialized clock truncated in layer %u", i);
		}
		struct rbuf lr = {r.p + r.pos, nbytes, 0};
		struct hclock_clock *next = NULL;
		int rc;
		r.pos += nbytes;
		if (i == 0) {
			rc = unflatten_base(type, &lr, emu, &next);
		} else if (type == CLOCK_T_LINEAR) {
			rc = model_linear_unflatten(&lr, c, &next);
		} else if (type == CLOCK_T_OFFSET) {
			rc = model_offset_unflatten(&lr, c, &next);
		} else {
			rc = err_set(HCLOCK_EINVAL, "serialized clock layer %u has unknown model type %u", i,
			             type);
		}
		hclock_clock_free(c); /* next holds its own reference */
		c = next;
		if (rc)
			return rc;
		if (lr.pos != lr.len) {
			hclock_clock_free(c);
			return err_set(HCLOCK_EINVAL, "serialized clock layer %u has %zu trailing bytes", i,
			               lr.len - lr.pos);
		}
	}
	if (r.pos != len) {
		hclock_clock_free(c);
		return err_set(HCLOCK_EINVAL, "serialized clock has %zu trailing bytes", len - r.pos);
	}
	*out = c;
	return 0;
}
