/* record.c - a raw trace file of the tracer located in memory (record.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hclock_api.h"
#include "util/err.h"
#include "util/record.h"

/* limits a sane header stays within (the tracer writes ~400-600 names, ~12 KiB of them) */
#define MAX_FUNCS 100000
#define MAX_NAMES_BYTES (1u << 24)
#define MAX_SIZE (1 << 24)

static int parse_names(const char *path, struct rec_file *f)
{
	const char *p = f->buf + sizeof(f->h), *end = p + f->h.names_bytes;

	f->names = calloc(f->h.nfuncs ? f->h.nfuncs : 1, sizeof(*f->names));
	if (!f->names)
		return err_set(HCLOCK_ENOMEM, "%s: out of memory for %u function names", path,
		               f->h.nfuncs);
	for (uint32_t i = 0; i < f->h.nfuncs; i++) {
		const char *nul = memchr(p, 0, (size_t)(end - p));
		if (!nul) {
			free(f->names);
			f->names = NULL;
			return err_set(HCLOCK_EINVAL, "%s: the header announces %u function names, its "
			               "%u bytes of names hold %u; a corrupt file", path, f->h.nfuncs,
			               f->h.names_bytes, i);
		}
		f->names[i] = p;
		p = nul + 1;
	}
	return 0;
}

int rec_parse(const char *path, const char *buf, size_t len, struct rec_file *f)
{
	int r;

	memset(f, 0, sizeof(*f));
	f->buf = buf;
	f->len = len;
	if (len < sizeof(f->h))
		return err_set(HCLOCK_EINVAL, "%s: %zu bytes, shorter than the header of a raw trace "
		               "(%zu bytes); not a file of hclock trace", path, len, sizeof(f->h));
	memcpy(&f->h, buf, sizeof(f->h));
	if (memcmp(f->h.magic, REC_MAGIC, 8))
		return err_set(HCLOCK_EINVAL, "%s: not a raw trace of hclock trace (it does not start "
		               "with %s)", path, REC_MAGIC);
	if (f->h.size < 1 || f->h.size >= MAX_SIZE || f->h.rank < 0 || f->h.rank >= f->h.size)
		return err_set(HCLOCK_EINVAL, "%s: the header says rank %d of %d processes; a corrupt "
		               "file", path, (int)f->h.rank, (int)f->h.size);
	if (f->h.nfuncs > MAX_FUNCS || f->h.names_bytes > MAX_NAMES_BYTES ||
	    f->h.names_bytes > len - sizeof(f->h))
		return err_set(HCLOCK_EINVAL, "%s: the header announces %u function names in %u bytes, "
		               "the file has %zu after it; a corrupt or cut file", path, f->h.nfuncs,
		               f->h.names_bytes, len - sizeof(f->h));
	if ((r = parse_names(path, f)))
		return r;
	f->first = sizeof(f->h) + f->h.names_bytes;
	f->end = REC_END_EOF;
	for (size_t off = f->first; off < len; off += sizeof(struct rec)) {
		const unsigned char *r = (const unsigned char *)buf + off;
		if (len - off < sizeof(struct rec)) {
			f->end = REC_END_CUT;
			break;
		}
		if (!memcmp(r, REC_TRAILER_MAGIC, 8)) {
			_Static_assert(sizeof(struct rec_trailer) == sizeof(struct rec),
			               "trailer and record are the same size");
			memcpy(&f->tr, r, sizeof(f->tr));
			f->end = REC_END_TRAILER;
			break;
		}
		if (r[0] < REC_CALL || r[0] > REC_KIND_MAX) {
			f->end = REC_END_BAD;
			break;
		}
		f->nrec++;
	}
	return 0;
}

void rec_file_free(struct rec_file *f)
{
	free(f->names);
	f->names = NULL;
}

struct rec rec_get(const struct rec_file *f, size_t i)
{
	struct rec r;

	memcpy(&r, f->buf + f->first + i * sizeof(r), sizeof(r));
	return r;
}

int rec_read_header(const char *path, struct rec_header *h)
{
	FILE *f = fopen(path, "rb");
	int ok = f && fread(h, sizeof(*h), 1, f) == 1 && !memcmp(h->magic, REC_MAGIC, 8) &&
	         h->size > 0 && h->size < MAX_SIZE;
	if (f)
		fclose(f);
	return ok ? 0 : -1;
}

/* code c >= 1 stands for ceil(2^((c - 1) / 8)) ns: 2^e times 2^(k/8) (k < 8) in 16-bit fixed
 * point, rounded up */
static const uint64_t octave[8] = {65536, 71468, 77936, 84990, 92682, 101071, 110218, 120194};

int64_t rec_hw_ns(uint8_t code)
{
	if (code == REC_HW_NONE)
		return -1;
	if (code == 0)
		return 0;
	unsigned e = (code - 1u) / 8, k = (code - 1u) % 8;
	return (int64_t)(((uint64_t)1 << e) * octave[k] + 0xFFFF) >> 16;
}

uint8_t rec_hw_code(int64_t ns)
{
	if (ns < 0 || ns > rec_hw_ns(REC_HW_NONE - 1))
		return REC_HW_NONE;
	unsigned lo = 0, hi = REC_HW_NONE - 1; /* the answer lies in [lo, hi] */
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (rec_hw_ns((uint8_t)mid) >= ns)
			hi = mid;
		else
			lo = mid + 1;
	}
	return (uint8_t)lo;
}
