/* servo.c - the servo family's factory and wrappers (cont/servo.h). */
#include "cont/servo.h"
#include "hclock_api.h"
#include "util/err.h"

int servo_create(enum servo_type type, const struct servo_cfg *cfg, struct servo **out)
{
	*out = NULL;
	switch (type) {
	case SERVO_TRACK:
		return servo_track_create(cfg, out);
	}
	return err_set(HCLOCK_EINVAL, "servo type %d unknown", (int)type);
}

void servo_destroy(struct servo *s)
{
	if (s)
		s->ops->destroy(s);
}

int servo_sample(struct servo *s, uint32_t exch, int64_t t1_ns, int64_t t2_ns, int64_t t3_ns,
                 int64_t t4_ns, const struct lm *tp, const struct bound *bp)
{
	return s->ops->sample(s, exch, t1_ns, t2_ns, t3_ns, t4_ns, tp, bp);
}

int servo_finish(struct servo *s, const struct lm *cur, const struct bound *cur_b,
                 struct servo_out *out)
{
	return s->ops->finish(s, cur, cur_b, out);
}

void servo_lost(struct servo *s)
{
	if (s->ops->lost)
		s->ops->lost(s);
}

int64_t servo_period_ns(const struct servo *s)
{
	return s->ops->period_ns(s);
}

void servo_stats(const struct servo *s, struct servo_stats *st)
{
	s->ops->stats(s, st);
}
