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

/* code c stands for hw_ns[c] ns: 0, then ceil(2^((c - 1) / 8)) (2^e times 2^(k/8), k < 8, in
 * 16-bit fixed point, rounded up), up to 3.3 s */
static const uint32_t hw_ns[REC_HW_NONE] = {
	0u, 1u, 2u, 2u, 2u, 2u, 2u, 2u,
	2u, 2u, 3u, 3u, 3u, 3u, 4u, 4u,
	4u, 4u, 5u, 5u, 6u, 6u, 7u, 7u,
	8u, 8u, 9u, 10u, 11u, 12u, 13u, 14u,
	15u, 16u, 18u, 20u, 21u, 23u, 25u, 27u,
	30u, 32u, 35u, 39u, 42u, 46u, 50u, 54u,
	59u, 64u, 70u, 77u, 83u, 91u, 99u, 108u,
	118u, 128u, 140u, 153u, 166u, 182u, 198u, 216u,
	235u, 256u, 280u, 305u, 332u, 363u, 395u, 431u,
	470u, 512u, 559u, 609u, 664u, 725u, 790u, 862u,
	940u, 1024u, 1117u, 1218u, 1328u, 1449u, 1580u, 1723u,
	1879u, 2048u, 2234u, 2436u, 2656u, 2897u, 3159u, 3445u,
	3757u, 4096u, 4467u, 4871u, 5312u, 5793u, 6317u, 6889u,
	7513u, 8192u, 8934u, 9742u, 10624u, 11586u, 12634u, 13778u,
	15025u, 16384u, 17867u, 19484u, 21248u, 23171u, 25268u, 27555u,
	30049u, 32768u, 35734u, 38968u, 42495u, 46341u, 50536u, 55109u,
	60097u, 65536u, 71468u, 77936u, 84990u, 92682u, 101071u, 110218u,
	120194u, 131072u, 142936u, 155872u, 169980u, 185364u, 202142u, 220436u,
	240388u, 262144u, 285872u, 311744u, 339960u, 370728u, 404284u, 440872u,
	480776u, 524288u, 571744u, 623488u, 679920u, 741456u, 808568u, 881744u,
	961552u, 1048576u, 1143488u, 1246976u, 1359840u, 1482912u, 1617136u, 1763488u,
	1923104u, 2097152u, 2286976u, 2493952u, 2719680u, 2965824u, 3234272u, 3526976u,
	3846208u, 4194304u, 4573952u, 4987904u, 5439360u, 5931648u, 6468544u, 7053952u,
	7692416u, 8388608u, 9147904u, 9975808u, 10878720u, 11863296u, 12937088u, 14107904u,
	15384832u, 16777216u, 18295808u, 19951616u, 21757440u, 23726592u, 25874176u, 28215808u,
	30769664u, 33554432u, 36591616u, 39903232u, 43514880u, 47453184u, 51748352u, 56431616u,
	61539328u, 67108864u, 73183232u, 79806464u, 87029760u, 94906368u, 103496704u, 112863232u,
	123078656u, 134217728u, 146366464u, 159612928u, 174059520u, 189812736u, 206993408u, 225726464u,
	246157312u, 268435456u, 292732928u, 319225856u, 348119040u, 379625472u, 413986816u, 451452928u,
	492314624u, 536870912u, 585465856u, 638451712u, 696238080u, 759250944u, 827973632u, 902905856u,
	984629248u, 1073741824u, 1170931712u, 1276903424u, 1392476160u, 1518501888u, 1655947264u, 1805811712u,
	1969258496u, 2147483648u, 2341863424u, 2553806848u, 2784952320u, 3037003776u, 3311894528u,
};

int64_t rec_hw_ns(uint8_t code)
{
	return code == REC_HW_NONE ? -1 : (int64_t)hw_ns[code];
}

uint8_t rec_hw_code(int64_t ns)
{
	if (ns <= 0)
		return ns < 0 ? REC_HW_NONE : 0;
	if (ns > (int64_t)hw_ns[REC_HW_NONE - 1])
		return REC_HW_NONE;
	/* the octave from the highest bit, then at most 9 steps up within it */
	unsigned e = 63u - (unsigned)__builtin_clzll((unsigned long long)ns);
	unsigned c = e ? 8 * (e - 1) + 1 : 1;
	while (hw_ns[c] < (uint64_t)ns)
		c++;
	return (uint8_t)c;
}
