/*
 * spec.h - the sync family's table and the spec parser (spec.c): the parser's state and the
 * helpers every algorithm's own parser uses (no MPI here). A spec is a name from the sync
 * table (sync/types.def) followed by that algorithm's arguments, which its file parses
 * itself:
 *   spec := NAME ARGS        e.g. hca3/100/skampi/20/span=0.3, h2(hca3/10/skampi/5,prop),
 *                            cont(h2(hca3/100/hull/20,prop),window=4s)
 * (the whole grammar: hclock_sync_create in hclock.h). Tokens end at / , ( ) or the end.
 * Numbers and durations follow util/parse.h (a bare number of seconds, or a unit).
 */
#ifndef HCLOCK_SYNC_SPEC_H
#define HCLOCK_SYNC_SPEC_H

#include <stddef.h>

struct hclock_sync;
struct offset_alg;
struct sync_explain;
struct sync_type;

struct spec_parser {
	const char *s; /* whole input */
	const char *p; /* position */
	int depth;     /* nesting inside h2(...)/h3(...)/cont(...) */
};

/* The table, in sync/types.def order, NULL-terminated. */
extern const struct sync_type *const sync_types[];
/* The algorithm called name (n characters), or NULL. */
const struct sync_type *sync_type_find(const char *name, size_t n);
/* "hca3, hca2, ... or prop" from the table. */
const char *sync_type_names(void);

/* Length of the token at p. */
size_t spec_toklen(const char *p);
/* The error line for a bad or missing token (returns HCLOCK_EINVAL). */
int spec_bad(struct spec_parser *ps, const char *tok, size_t n, const char *want);
/* Consume character c, or fail naming what was expected. */
int spec_expect(struct spec_parser *ps, char c, const char *want);
/* Consume an integer in [lo, hi] / a duration in seconds in [lo, hi]. what: for the error. */
int spec_int(struct spec_parser *ps, long lo, long hi, const char *what, int *out);
int spec_duration(struct spec_parser *ps, double lo_s, double hi_s, const char *what,
                  double *out);
/* Consume the token if it equals word exactly; returns 1 if it did. */
int spec_word(struct spec_parser *ps, const char *word);
/* Parse "OFF/N" (an offset estimator and its exchanges) and create it. */
int offset_spec_parse(struct spec_parser *ps, const char *form, struct offset_alg **out);
/* An optional "/paper" next (the paper's algorithm exactly: oa->paper); anything else is
 * left for the parser's line about what follows. */
void offset_spec_paper(struct spec_parser *ps, struct offset_alg *oa);
/* The explain line of oa's stall handling (retakes, or paper), more appended ("" or what
 * the algorithm adds). */
void offset_explain_stalls(struct sync_explain *e, const struct offset_alg *oa, const char *more);
/* Parse one whole spec at ps (for nesting; a whole string, nothing after it, is
 * hclock_sync_create's in hclock.h): looks the name up in the table and lets the algorithm
 * parse the rest. */
int spec_parse_one(struct spec_parser *ps, struct hclock_sync **out);

#endif
