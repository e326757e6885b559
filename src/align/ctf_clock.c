/* ctf_clock.c - a CTF trace copied with its clock's parameters replaced (ctf_clock.h). */
#define _GNU_SOURCE /* copy_file_range */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hclock_api.h"
#include "align/ctf_clock.h"
#include "util/err.h"

#define NS_PER_S 1000000000LL
#define PKT_HEADER 37 /* magic, uuid[16], checksum, content_size, packet_size, 5 bytes */

static uint32_t u32_at(const unsigned char *b, int le)
{
	return le ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	            (uint32_t)b[3] << 24
	          : (uint32_t)b[3] | (uint32_t)b[2] << 8 | (uint32_t)b[1] << 16 |
	            (uint32_t)b[0] << 24;
}

/* the whole file at path, malloc'd with a NUL after it */
static int slurp_file(const char *path, unsigned char **buf, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *b = NULL, *nb;
	size_t n = 0, cap = 0, got;

	if (!f)
		return err_set(HCLOCK_EIO, "%s: cannot open: %s", path, strerror(errno));
	do {
		if (n + 65536 + 1 > cap) {
			cap = (n + 65536 + 1) * 2;
			if (!(nb = realloc(b, cap))) {
				free(b);
				fclose(f);
				return err_set(HCLOCK_ENOMEM, "out of memory");
			}
			b = nb;
		}
		got = fread(b + n, 1, cap - n - 1, f);
		n += got;
	} while (got);
	if (ferror(f)) {
		free(b);
		fclose(f);
		return err_set(HCLOCK_EIO, "%s: read error", path);
	}
	fclose(f);
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

int ctf_metadata_read(const char *path, char **text, size_t *len)
{
	unsigned char *b = NULL;
	size_t n = 0, at = 0, out = 0;
	int le, r = slurp_file(path, &b, &n);

	if (r)
		return r;
	if (n < 4 || !((le = (u32_at(b, 1) == 0x75d11d57u)) || u32_at(b, 0) == 0x75d11d57u)) {
		*text = (char *)b; /* plain text */
		*len = n;
		return 0;
	}
	/* packetized: the text of each packet moved down over the headers, in place */
	while (at < n) {
		uint32_t content, packet;
		if (n - at < PKT_HEADER || u32_at(b + at, le) != 0x75d11d57u) {
			r = err_set(HCLOCK_EINVAL, "%s: metadata packet at byte %zu: bad header; expected "
			            "the magic 0x75d11d57 and 37 bytes of header", path, at);
			break;
		}
		content = u32_at(b + at + 24, le);
		packet = u32_at(b + at + 28, le);
		if (content % 8 || packet % 8 || content / 8 < PKT_HEADER || packet < content ||
		    packet / 8 > n - at) {
			r = err_set(HCLOCK_EINVAL, "%s: metadata packet at byte %zu: content size %" PRIu32
			            " and packet size %" PRIu32 " bits do not fit the file", path, at,
			            content, packet);
			break;
		}
		if (b[at + 32] || b[at + 33]) {
			r = err_set(HCLOCK_EINVAL, "%s: compressed or encrypted metadata; expected plain "
			            "CTF 1.8 metadata packets", path);
			break;
		}
		memmove(b + out, b + at + PKT_HEADER, content / 8 - PKT_HEADER);
		out += content / 8 - PKT_HEADER;
		at += packet / 8;
	}
	if (r) {
		free(b);
		return r;
	}
	b[out] = 0;
	*text = (char *)b;
	*len = out;
	return 0;
}

/* ---- the clock block ------------------------------------------------------------------- */

/* p past blanks and comments */
static const char *skip_blank(const char *p)
{
	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
			p++;
		if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			p = e ? e + 2 : p + strlen(p);
		} else if (p[0] == '/' && p[1] == '/') {
			p += strcspn(p, "\n");
		} else {
			return p;
		}
	}
}

/* p past a string or character literal starting at p */
static const char *skip_literal(const char *p)
{
	char q = *p++;

	while (*p && *p != q)
		p += p[0] == '\\' && p[1] ? 2 : 1;
	return *p ? p + 1 : p;
}

static int is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

struct attr {
	const char *name;
	const char *v, *ve; /* the value's text, NULL if the block does not set it */
	const char *s, *e;  /* the whole statement: from the name to past its ';' */
};

/* the attributes of the clock block whose '{' is at p (depth 1 only); returns past its '}' */
static const char *scan_block(const char *p, struct attr *at, size_t nat)
{
	int depth = 0;

	while (*p) {
		p = skip_blank(p);
		if (*p == '"' || *p == '\'') {
			p = skip_literal(p);
		} else if (*p == '{') {
			depth++;
			p++;
		} else if (*p == '}') {
			p++;
			if (--depth == 0)
				return p;
		} else if (is_ident(*p)) {
			const char *s = p, *q;
			while (is_ident(*p))
				p++;
			if (depth != 1)
				continue;
			q = skip_blank(p);
			if (*q != '=')
				continue;
			for (size_t i = 0; i < nat; i++)
				if ((size_t)(p - s) == strlen(at[i].name) &&
				    !memcmp(s, at[i].name, (size_t)(p - s))) {
					at[i].s = s;
					at[i].v = skip_blank(q + 1);
					at[i].e = at[i].v + strcspn(at[i].v, ";}");
					at[i].ve = at[i].e;
					while (at[i].ve > at[i].v && strchr(" \t\r\n", at[i].ve[-1]))
						at[i].ve--;
					at[i].e += *at[i].e == ';';
				}
			p = q + 1;
		} else if (*p) {
			p++;
		}
	}
	return p;
}

/* an integer literal of TSDL (decimal, 0x hex, 0 octal, u/l suffixes, optional '-') */
static int int_of(const char *v, const char *ve, int sign_ok, long double *out)
{
	char buf[64], *e;
	size_t n = (size_t)(ve - v);
	int neg = 0;
	unsigned long long u;

	if (!n || n >= sizeof(buf))
		return -1;
	memcpy(buf, v, n);
	buf[n] = 0;
	while (n && strchr("uUlL", buf[n - 1]))
		buf[--n] = 0;
	v = buf;
	if (*v == '-' && sign_ok) {
		neg = 1;
		v++;
	}
	if (!(*v >= '0' && *v <= '9'))
		return -1;
	errno = 0;
	u = strtoull(v, &e, 0);
	if (errno || *e)
		return -1;
	*out = neg ? -(long double)u : (long double)u;
	return 0;
}

int ctf_metadata_clock(const char *text, struct ctf_clock *old, const struct ctf_clock *nw,
                       char **out)
{
	const char *p = text, *blk = NULL, *blk_end = NULL;
	struct attr at[3] = {{"freq", NULL, NULL, NULL, NULL}, {"offset_s", NULL, NULL, NULL, NULL},
	                     {"offset", NULL, NULL, NULL, NULL}};
	int nclock = 0;
	long double v[3] = {1e9L, 0, 0};

	while (*p) {
		p = skip_blank(p);
		if (*p == '"' || *p == '\'') {
			p = skip_literal(p);
		} else if (is_ident(*p)) {
			const char *s = p, *q;
			while (is_ident(*p))
				p++;
			q = skip_blank(p);
			if (p - s == 5 && !memcmp(s, "clock", 5) && *q == '{') {
				nclock++;
				blk = q;
				for (size_t i = 0; i < 3; i++)
					at[i].v = at[i].ve = NULL;
				p = blk_end = scan_block(q, at, 3);
			}
		} else if (*p == '{') {
			/* another top-level block: skipped whole, clocks are top-level */
			p = scan_block(p, NULL, 0);
		} else if (*p) {
			p++;
		}
	}
	if (nclock != 1)
		return err_set(HCLOCK_EINVAL, "%s clock blocks in the metadata; a corrected CTF "
		               "trace needs exactly one", nclock ? "several" : "no");
	for (size_t i = 0; i < 3; i++)
		if (at[i].v && int_of(at[i].v, at[i].ve, i == 1, &v[i]))
			return err_set(HCLOCK_EINVAL, "the clock's %s = %.*s is no integer literal",
			               at[i].name, (int)(at[i].ve - at[i].v > 40 ? 40 :
			                                 at[i].ve - at[i].v), at[i].v);
	if (!(v[0] >= 1 && v[0] < 1.8e19L) || !(v[2] >= 0 && v[2] < 1.8e19L) ||
	    !(fabsl(v[1]) < 9.2e18L))
		return err_set(HCLOCK_EINVAL, "the clock's freq, offset_s or offset is out of range");
	old->freq_hz = (uint64_t)v[0];
	old->offset_s = (int64_t)v[1];
	old->offset_cycles = (uint64_t)v[2];
	if (!nw)
		return 0;
	{
		/* text up to the block's '{', the new values, then the block without the old ones */
		size_t n = strlen(text) + 128;
		char *o = malloc(n), *w = o;
		const char *c = blk + 1;
		int sep = 1; /* a blank between the new values and what follows, unless there is one */
		if (!o)
			return err_set(HCLOCK_ENOMEM, "out of memory");
		memcpy(w, text, (size_t)(c - text));
		w += c - text;
		w += sprintf(w, " freq = %" PRIu64 "; offset_s = %" PRId64 "; offset = %" PRIu64 ";",
		             nw->freq_hz, nw->offset_s, nw->offset_cycles);
		c += strspn(c, " \t");
		while (c < blk_end) {
			int hit = 0;
			for (size_t i = 0; i < 3 && !hit; i++)
				if (at[i].v && c == at[i].s) {
					c = at[i].e;
					c += strspn(c, " \t");
					hit = 1;
				}
			if (hit)
				continue;
			if (sep && !strchr(" \t\r\n", *c))
				*w++ = ' ';
			sep = 0;
			*w++ = *c++;
		}
		strcpy(w, blk_end);
		*out = o;
	}
	return 0;
}

/* ---- the corrected clock --------------------------------------------------------------- */

/* babeltrace2's cycles-to-ns of a value below freq or of a raw value: 1e9 * c / freq in
 * double, truncated (exact at 1 GHz) */
static long double bt_ns(uint64_t c, uint64_t freq)
{
	if (freq == (uint64_t)NS_PER_S)
		return (long double)c;
	return (long double)(uint64_t)(1e9 * (double)c / (double)freq);
}

int ctf_clock_correct(const struct ctf_clock *old, const struct trace_line *l, int64_t lmin_ns,
                      int64_t lmax_ns, struct ctf_clock *nw, double *err_ns)
{
	long double fo = (long double)old->freq_hz, fn, cmin, cmax, cmid, d, e, worst = 0;
	int64_t base, bn, lmid;
	uint64_t oc;

	if (!(l->slope > 0.5L && l->slope < 2.0L))
		return err_set(HCLOCK_EINVAL, "the conversion's slope %.17Lg is no clock rate",
		               l->slope);
	fn = roundl(fo / l->slope);
	if (!(fn >= 1 && fn < 1.8e19L))
		return err_set(HCLOCK_EINVAL, "the corrected clock's frequency %.0Lf Hz is out of "
		               "range", fn);
	nw->freq_hz = (uint64_t)fn;
	fn = (long double)nw->freq_hz;
	/* old's origin as babeltrace2 computes it; the raw values of the range's ends */
	base = old->offset_s * NS_PER_S + (int64_t)bt_ns(old->offset_cycles % old->freq_hz,
	                                                   old->freq_hz) +
	       (int64_t)(old->offset_cycles / old->freq_hz) * NS_PER_S;
	if (lmax_ns < lmin_ns)
		lmax_ns = lmin_ns;
	cmin = (long double)(lmin_ns - base) * fo / 1e9L;
	cmax = (long double)(lmax_ns - base) * fo / 1e9L;
	cmid = (cmin + cmax) / 2;
	lmid = base + (int64_t)floorl(cmid * 1e9L / fo);
	/* the new origin: corrected(local at cmid) - cmid's ns at the new rate, plus 1/2 ns for
	 * babeltrace2's truncation of the value's ns */
	d = l->y0_frac + l->slope * ((long double)(lmid - l->x0_ns) +
	                             (cmid * 1e9L / fo - (long double)(lmid - base))) -
	    cmid * 1e9L / fn + 0.5L;
	bn = l->y0_ns + (int64_t)floorl(d);
	d -= floorl(d);
	nw->offset_s = bn >= 0 ? bn / NS_PER_S : -((-bn + NS_PER_S - 1) / NS_PER_S);
	oc = (uint64_t)llroundl(((long double)(bn - nw->offset_s * NS_PER_S) + d) * fn / 1e9L);
	if (oc >= nw->freq_hz) {
		oc -= nw->freq_hz;
		nw->offset_s++;
	}
	nw->offset_cycles = oc;
	/* the realized origin, then the distance to the line at both ends (it is affine in c) */
	bn = nw->offset_s * NS_PER_S + (int64_t)bt_ns(oc, nw->freq_hz);
	for (int end = 0; end < 2; end++) {
		long double c = end ? cmax : cmin;
		long double lnow = (long double)(base - l->x0_ns) + c * 1e9L / fo;
		e = (long double)(bn - l->y0_ns) + c * 1e9L / fn - 0.5L -
		    (l->y0_frac + l->slope * lnow);
		if (fabsl(e) > worst)
			worst = fabsl(e);
	}
	/* + 1/2 ns babeltrace2's truncation around its mean, + 1 ns the old clock's own (the
	 * local times aligned were truncated) unless 1 GHz, + the double's rounding of c * 1e9 /
	 * freq */
	worst += 0.5L + (old->freq_hz == (uint64_t)NS_PER_S ? 0 : 1) +
	         fabsl(cmax) * 1e9L / fn * 4.5e-16L;
	*err_ns = (double)ceill(worst * 1000) / 1000;
	return 0;
}

/* ---- copying --------------------------------------------------------------------------- */

static int copy_file(const char *src, const char *dst)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, r = 0;
	char *buf = NULL;
	ssize_t n;

	if (in < 0)
		return err_set(HCLOCK_EIO, "%s: cannot open: %s", src, strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (out < 0) {
		r = err_set(HCLOCK_EIO, "%s: cannot create: %s", dst, strerror(errno));
		goto done;
	}
	/* the kernel's copy first (reflinks where the file system can), else through a buffer */
	while ((n = copy_file_range(in, NULL, out, NULL, (size_t)1 << 30, 0)) > 0)
		;
	if (n < 0 && errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP) {
		r = err_set(HCLOCK_EIO, "%s: write error: %s", dst, strerror(errno));
		goto done;
	}
	if (n < 0) {
		if (!(buf = malloc(1 << 20))) {
			r = err_set(HCLOCK_ENOMEM, "out of memory");
			goto done;
		}
		while ((n = read(in, buf, 1 << 20)) > 0)
			for (ssize_t w = 0, k; w < n; w += k)
				if ((k = write(out, buf + w, (size_t)(n - w))) <= 0) {
					r = err_set(HCLOCK_EIO, "%s: write error: %s", dst, strerror(errno));
					goto done;
				}
		if (n < 0)
			r = err_set(HCLOCK_EIO, "%s: read error: %s", src, strerror(errno));
	}
done:
	free(buf);
	if (out >= 0 && close(out) && !r)
		r = err_set(HCLOCK_EIO, "%s: write error: %s", dst, strerror(errno));
	close(in);
	return r;
}

/* the regular files of src into dst, but metadata; sub "index" folders too (depth 1) */
static int copy_dir(const char *src, const char *dst, int top)
{
	DIR *d = opendir(src);
	struct dirent *de;
	int r = 0;

	if (!d)
		return err_set(HCLOCK_EIO, "%s: cannot open: %s", src, strerror(errno));
	while (!r && (de = readdir(d))) {
		char s[4096], t[4096];
		struct stat st;
		if (de->d_name[0] == '.' || (top && !strcmp(de->d_name, "metadata")))
			continue;
		if ((size_t)snprintf(s, sizeof(s), "%s/%s", src, de->d_name) >= sizeof(s) ||
		    (size_t)snprintf(t, sizeof(t), "%s/%s", dst, de->d_name) >= sizeof(t)) {
			r = err_set(HCLOCK_EIO, "%s/%s: path too long", src, de->d_name);
			break;
		}
		if (stat(s, &st))
			continue;
		if (S_ISREG(st.st_mode))
			r = copy_file(s, t);
		else if (S_ISDIR(st.st_mode) && top && !strcmp(de->d_name, "index")) {
			if (mkdir(t, 0777))
				r = err_set(HCLOCK_EIO, "%s: cannot create: %s", t, strerror(errno));
			else
				r = copy_dir(s, t, 0);
		}
	}
	closedir(d);
	return r;
}

int ctf_copy_trace(const char *src, const char *dst, const char *text, size_t len)
{
	char p[4096];
	FILE *f;
	int r = copy_dir(src, dst, 1);

	if (r)
		return r;
	if ((size_t)snprintf(p, sizeof(p), "%s/metadata", dst) >= sizeof(p))
		return err_set(HCLOCK_EIO, "%s: path too long", dst);
	if (!(f = fopen(p, "w")))
		return err_set(HCLOCK_EIO, "%s: cannot create: %s", p, strerror(errno));
	r = fwrite(text, 1, len, f) != len;
	if (fclose(f) || r)
		return err_set(HCLOCK_EIO, "%s: write error", p);
	return 0;
}
