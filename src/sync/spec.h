/*
 * spec.h - the sync spec grammar, parsed into a tree (no MPI here):
 *   spec   := model | "skampi/" OFF "/" N | "dunigan/" S "/" K | "none" | "prop"
 *           | "h2(" spec "," spec ")" | "h3(" spec "," spec "," spec ")"
 *   model  := ("hca3"|"hca2"|"hca"|"jk") "/" NFIT "/" OFF "/" N ["/ri"] ["/span=" S]
 *   OFF    := "skampi" | "rtt" | "min"
 */
#ifndef HCLOCK_SYNC_SPEC_H
#define HCLOCK_SYNC_SPEC_H

enum sync_kind {
	SYNC_NONE,
	SYNC_HCA3,
	SYNC_HCA2,
	SYNC_HCA,
	SYNC_JK,
	SYNC_SKAMPI,
	SYNC_DUNIGAN,
	SYNC_PROP,
	SYNC_H2,
	SYNC_H3,
};

struct sync_spec {
	enum sync_kind kind;
	int nfit;                  /* fit points per learned model (hca*, jk) */
	char offalg[8];            /* offset algorithm: skampi, rtt, min */
	int npingpongs;            /* ping-pongs per offset measurement */
	int ri;                    /* recompute the intercept after each fit */
	double span_s;             /* spread one model's fit points over this time, s (0: back
	                              to back); the slope error falls like 1/span */
	double interval_s;         /* dunigan: S, seconds between the two offsets */
	int tries;                 /* dunigan: K exchanges per offset (minimum filter) */
	int nlevels;               /* h2: 2, h3: 3 */
	struct sync_spec *level[3]; /* h2/h3: inter-node, [socket,] intra level specs */
};

/* Parse; returns 0 or HCLOCK_EINVAL (hclock_last_error() names the bad token and the
 * choices). *out is owned by the caller: sync_spec_free. */
int sync_spec_parse(const char *s, struct sync_spec **out);
void sync_spec_free(struct sync_spec *sp);
/* Canonical text of sp into buf (at most len bytes). */
void sync_spec_format(const struct sync_spec *sp, char *buf, unsigned len);

#endif
