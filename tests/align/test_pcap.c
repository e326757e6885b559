/*
 * test_pcap.c - the pcap reader and writer on synthetic captures of known clocks.
 *
 * Two hosts exchange TCP segments (data one way, acks back, some retransmissions and losses,
 * UDP noise); host A's capture is Ethernet, host B's Linux cooked (SLL) with a clock that is
 * shifted by a known offset and skew. The reader must pair exactly the segments seen on both
 * sides, as sends on the right host; the writer must rewrite every timestamp through the
 * conversion and nothing else. Garbage and truncated captures must fail with a message
 * naming the file, never crash. A write that fails part-way (a file size limit, as a full
 * disk) leaves the output directory as it was.
 *
 * usage: test_pcap [seed]
 */
#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "align/format.h"
#include "align/trace.h"

#define PCAP (trace_format_find("pcap")) /* the format under test, from the table */

#define NS 1000000000LL

#include "test.h"

static uint64_t rng = 88172645463325252ULL;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* host B's clock: b = true + OFF + SKEW_PPB * (true - T0) / 1e9 */
static const int64_t T0 = 1700000000LL * NS + 123456789;
static const int64_t OFF = 3 * NS + 250000017;
static const int64_t SKEW_PPB = 40000; /* 40 ppm */

static int64_t clock_b(int64_t t)
{
	return t + OFF + (int64_t)((__int128)(t - T0) * SKEW_PPB / NS);
}

struct out {
	pcap_t *dead;
	pcap_dumper_t *d;
	int dlt;
};

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

/* a TCP (proto 6) or UDP (17) packet from address a to b, at local time t */
static void emit(struct out *o, int64_t t, int proto, uint32_t a, uint32_t b, uint16_t sp,
                 uint16_t dp, uint32_t seq, uint32_t ack, uint8_t flags, unsigned payload,
                 uint16_t ipid)
{
	uint8_t pkt[1600];
	size_t l2 = o->dlt == DLT_EN10MB ? 14 : 16, n;
	uint8_t *ip = pkt + l2, *tcp = ip + 20;
	unsigned thl = proto == 6 ? 32 : 8;
	struct pcap_pkthdr h;

	memset(pkt, 0, sizeof(pkt));
	if (o->dlt == DLT_EN10MB) {
		memcpy(pkt, "\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01", 12);
		put16(pkt + 12, 0x0800);
	} else {
		put16(pkt, 0); /* SLL packet type */
		put16(pkt + 2, 1);
		put16(pkt + 4, 6);
		put16(pkt + 14, 0x0800);
	}
	ip[0] = 0x45;
	put16(ip + 2, 20 + thl + payload);
	put16(ip + 4, ipid);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = (uint8_t)proto;
	put16(ip + 10, (unsigned)rnd()); /* checksums are not part of the key */
	put32(ip + 12, a);
	put32(ip + 16, b);
	put16(tcp, sp);
	put16(tcp + 2, dp);
	if (proto == 6) {
		put32(tcp + 4, seq);
		put32(tcp + 8, ack);
		tcp[12] = (uint8_t)((thl / 4) << 4);
		tcp[13] = flags;
		put16(tcp + 14, 501);
		put16(tcp + 16, (unsigned)rnd());
		tcp[20] = 1; /* NOP NOP timestamps */
		tcp[21] = 1;
		tcp[22] = 8;
		tcp[23] = 10;
		put32(tcp + 24, seq * 7u + ipid); /* TSval: the sender's, same on both sides */
	} else {
		put16(tcp + 4, 8 + payload);
	}
	n = l2 + 20 + thl + payload;
	h.ts.tv_sec = (time_t)(t / NS);
	h.ts.tv_usec = (suseconds_t)(t % NS);
	h.caplen = h.len = (bpf_u_int32)n;
	pcap_dump((u_char *)o->d, &h, pkt);
}

static int open_out(struct out *o, const char *path, int dlt)
{
	o->dlt = dlt;
	o->dead = pcap_open_dead_with_tstamp_precision(dlt, 65535, PCAP_TSTAMP_PRECISION_NANO);
	o->d = o->dead ? pcap_dump_open(o->dead, path) : NULL;
	return o->d ? 0 : -1;
}

static void close_out(struct out *o)
{
	pcap_dump_close(o->d);
	pcap_close(o->dead);
}

/* the truth of each generated packet in each capture, by packet index */
struct truth {
	int kind;     /* -1 other, TRACE_SEND, TRACE_RECV */
	int pair;     /* index of the generated segment */
	int64_t true_t;
};

static struct truth ta[20000], tb[20000];
static size_t na, nb;

static const uint32_t ADDR_A = 0x0ae70001, ADDR_B = 0x0ae70002;

/* Generate the two captures; returns the number of segments that both must see once. */
static size_t generate(const char *pa, const char *pb)
{
	struct out oa, ob;
	int64_t t = T0;
	uint32_t seqa = 1000, seqb = 90000;
	uint16_t ida = 1, idb = 1;
	size_t nseg = 0;

	if (open_out(&oa, pa, DLT_EN10MB) || open_out(&ob, pb, DLT_LINUX_SLL)) {
		fprintf(stderr, "cannot create test captures\n");
		exit(1);
	}
	na = nb = 0;
	for (int i = 0; i < 2000; i++) {
		int64_t lat = 20000 + (int64_t)(rnd() % 60000);
		int dir = (int)(rnd() % 2); /* 0: A->B data, 1: B->A data */
		unsigned len = 1 + (unsigned)(rnd() % 1400);
		int lost = rnd() % 50 == 0, dup = rnd() % 40 == 0;
		struct out *so = dir ? &ob : &oa, *ro = dir ? &oa : &ob;
		struct truth *st = dir ? tb : ta, *rt = dir ? ta : tb;
		size_t *sn = dir ? &nb : &na, *rn = dir ? &na : &nb;
		uint32_t src = dir ? ADDR_B : ADDR_A, dst = dir ? ADDR_A : ADDR_B;
		uint16_t sp = dir ? 5001 : 40000, dp = dir ? 40000 : 5001;
		uint32_t *seq = dir ? &seqb : &seqa, *ack = dir ? &seqa : &seqb;
		uint16_t *id = dir ? &idb : &ida;
		int64_t ts = t, tr = t + lat;

		/* the data segment, possibly lost, possibly sent twice with the same header */
		emit(so, dir ? clock_b(ts) : ts, 6, src, dst, sp, dp, *seq, *ack, 0x18, len, *id);
		if (!lost) {
			st[*sn] = (struct truth){ TRACE_SEND, (int)nseg, ts };
			rt[*rn] = (struct truth){ TRACE_RECV, (int)nseg, tr };
			emit(ro, dir ? tr : clock_b(tr), 6, src, dst, sp, dp, *seq, *ack, 0x18, len, *id);
			(*rn)++;
			nseg++;
		} else {
			st[*sn] = (struct truth){ -1, -1, ts };
		}
		(*sn)++;
		if (dup && !lost) {
			emit(so, dir ? clock_b(ts + 5000) : ts + 5000, 6, src, dst, sp, dp, *seq, *ack,
			     0x18, len, *id);
			st[(*sn)++] = (struct truth){ -1, -1, ts + 5000 };
		}
		(*id)++;
		*seq += len;
		t = tr + 10000 + (int64_t)(rnd() % 200000);
		/* the ack going back, from the receiver */
		{
			int64_t ta2 = t, tr2 = t + 20000 + (int64_t)(rnd() % 60000);
			uint16_t *rid = dir ? &ida : &idb;

			emit(ro, dir ? ta2 : clock_b(ta2), 6, dst, src, dp, sp, *ack, *seq, 0x10, 0, *rid);
			rt[(*rn)++] = (struct truth){ TRACE_SEND, (int)nseg, ta2 };
			emit(so, dir ? clock_b(tr2) : tr2, 6, dst, src, dp, sp, *ack, *seq, 0x10, 0, *rid);
			st[(*sn)++] = (struct truth){ TRACE_RECV, (int)nseg, tr2 };
			nseg++;
			(*rid)++;
			t = tr2 + 1000 + (int64_t)(rnd() % 100000);
		}
		if (rnd() % 10 == 0) { /* UDP noise seen on both sides: never a message */
			emit(&oa, t, 17, ADDR_A, ADDR_B, 53, 53, 0, 0, 0, 20, 0);
			ta[na++] = (struct truth){ -1, -1, t };
			emit(&ob, clock_b(t + 30000), 17, ADDR_A, ADDR_B, 53, 53, 0, 0, 0, 20, 0);
			tb[nb++] = (struct truth){ -1, -1, t + 30000 };
			t += 40000;
		}
	}
	close_out(&oa);
	close_out(&ob);
	return nseg;
}

static int64_t conv(void *ctx, size_t node, int64_t t)
{
	(void)ctx;
	/* an arbitrary monotonic map: A shifted by 1 s, B back by its offset */
	return node == 0 ? t + NS : t - OFF;
}

static int64_t file_times(const char *path, int64_t *out, size_t max, size_t *n)
{
	char e[PCAP_ERRBUF_SIZE];
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, e);
	struct pcap_pkthdr *h;
	const u_char *d;

	*n = 0;
	if (!p)
		return -1;
	while (pcap_next_ex(p, &h, &d) == 1 && *n < max)
		out[(*n)++] = (int64_t)h->ts.tv_sec * NS + h->ts.tv_usec;
	pcap_close(p);
	return 0;
}

/* entries in path other than . and .. (-1 if it cannot be read) */
static int count_entries(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* a write into out (holding the 2 captures of a write before) under a file size limit of half
 * the smaller capture: HCLOCK_EIO, and out as it was: those 2 files alone, A's with na packets */
static void write_past_limit(struct trace_set *set, const char *out, const char *oa,
                             const char *ob, size_t na)
{
	static int64_t t[20000];
	struct rlimit lim, full;
	struct stat sa, sb;
	size_t n;
	int r;

	if (stat(oa, &sa) || stat(ob, &sb)) {
		TEST_CHECK(0, "no captures from the first write in %s", out);
		return;
	}
	signal(SIGXFSZ, SIG_IGN);
	TEST_CHECK(!getrlimit(RLIMIT_FSIZE, &full), "getrlimit");
	lim = full;
	lim.rlim_cur = (rlim_t)(sa.st_size < sb.st_size ? sa.st_size : sb.st_size) / 2;
	TEST_CHECK(!setrlimit(RLIMIT_FSIZE, &lim), "setrlimit");
	r = PCAP->write(set, conv, NULL, out);
	TEST_CHECK(!setrlimit(RLIMIT_FSIZE, &full), "restore the file size limit");
	TEST_CHECK(r == HCLOCK_EIO && strstr(hclock_last_error(), "write failed"),
	           "write past a file size limit of %ld bytes: %d '%s', expected HCLOCK_EIO and "
	           "'write failed'", (long)lim.rlim_cur, r, hclock_last_error());
	r = count_entries(out);
	TEST_CHECK(r == 2, "after the failed write %s holds %d entries, expected its 2 captures",
	           out, r);
	file_times(oa, t, 20000, &n);
	TEST_CHECK(n == na, "%s: %zu packets after the failed write, expected %zu", oa, n, na);
}

static void test_roundtrip(const char *dir)
{
	char pa[512], pb[512], out[512], oa[600], ob[600];
	const char *paths[2] = { pa, pb };
	struct trace_set set;
	size_t nseg, nmsg[2] = { 0, 0 };
	static int64_t t1[20000], t2[20000];
	size_t n1, n2, n1o, n2o;

	snprintf(pa, sizeof(pa), "%s/hostA.pcap", dir);
	snprintf(pb, sizeof(pb), "%s/hostB.pcapng.pcap", dir);
	nseg = generate(pa, pb);
	TEST_CHECK(PCAP->probe(pa) && PCAP->probe(pb), "probe");
	TEST_CHECK(!PCAP->probe(dir), "probe of a directory");

	memset(&set, 0, sizeof(set));
	if (PCAP->read(paths, 2, &set)) {
		TEST_CHECK(0, "read: %s", hclock_last_error());
		return;
	}
	TEST_CHECK(set.nnodes == 2, "%zu nodes", set.nnodes);
	TEST_CHECK(!strcmp(set.nodes[0].name, "hostA") && !strcmp(set.nodes[1].name, "hostB.pcapng"),
	      "names %s %s", set.nodes[0].name, set.nodes[1].name);
	TEST_CHECK(set.nodes[0].nev == na && set.nodes[1].nev == nb, "events %zu/%zu, expected %zu/%zu",
	      set.nodes[0].nev, set.nodes[1].nev, na, nb);
	/* every expected send/recv is marked, with a partner of the same generated segment */
	{
		static uint64_t msg_of_seg[20000];
		static int seen[20000];
		struct truth *tr[2] = { ta, tb };

		memset(seen, 0, sizeof(seen));
		for (int n = 0; n < 2 && set.nodes[n].nev == (n ? nb : na); n++)
			for (size_t i = 0; i < set.nodes[n].nev; i++) {
				const struct trace_event *e = &set.nodes[n].ev[i];
				const struct truth *t = &tr[n][i];

				if (t->kind < 0) {
					TEST_CHECK(e->kind == TRACE_OTHER, "node %d packet %zu kind %d", n, i,
					      e->kind);
					continue;
				}
				TEST_CHECK((int)e->kind == t->kind && e->peer == !n, "node %d packet %zu: kind %d "
				      "peer %d, expected %d", n, i, e->kind, e->peer, t->kind);
				TEST_CHECK(e->record == i && e->line == i + 1, "record %zu", e->record);
				if (seen[t->pair]++)
					TEST_CHECK(msg_of_seg[t->pair] == e->msg, "segment %d msg", t->pair);
				else
					msg_of_seg[t->pair] = e->msg;
				nmsg[n]++;
			}
		for (size_t s = 0; s < nseg; s++)
			TEST_CHECK(seen[s] == 2, "segment %zu seen %d times", s, seen[s]);
	}
	TEST_CHECK(nmsg[0] == nseg && nmsg[1] == nseg, "%zu/%zu of %zu", nmsg[0], nmsg[1], nseg);
	/* timestamps kept to the nanosecond */
	TEST_CHECK(set.nodes[1].ev[1].time_ns == clock_b(tb[1].true_t), "ns precision: %" PRId64,
	      set.nodes[1].ev[1].time_ns);

	snprintf(out, sizeof(out), "%s/out", dir);
	mkdir(out, 0755);
	if (PCAP->write(&set, conv, NULL, out)) {
		TEST_CHECK(0, "write: %s", hclock_last_error());
	} else {
		snprintf(oa, sizeof(oa), "%s/hostA.pcap", out);
		snprintf(ob, sizeof(ob), "%s/hostB.pcapng.pcap", out);
		file_times(pa, t1, 20000, &n1);
		file_times(oa, t2, 20000, &n1o);
		TEST_CHECK(n1 == n1o && n1 == na, "A packets %zu -> %zu", n1, n1o);
		for (size_t i = 0; i < n1 && i < n1o; i++)
			if (t2[i] != t1[i] + NS) {
				TEST_CHECK(0, "A packet %zu: %" PRId64 " -> %" PRId64, i, t1[i], t2[i]);
				break;
			}
		file_times(pb, t1, 20000, &n2);
		file_times(ob, t2, 20000, &n2o);
		TEST_CHECK(n2 == n2o && n2 == nb, "B packets %zu -> %zu", n2, n2o);
		for (size_t i = 0; i < n2 && i < n2o; i++)
			if (t2[i] != t1[i] - OFF) {
				TEST_CHECK(0, "B packet %zu: %" PRId64 " -> %" PRId64, i, t1[i], t2[i]);
				break;
			}
	}
	write_past_limit(&set, out, oa, ob, na);
	/* the inputs' own directory: refused, inputs intact */
	TEST_CHECK(PCAP->write(&set, conv, NULL, dir) == HCLOCK_EINVAL &&
	      strstr(hclock_last_error(), "input"), "overwrite of an input: %s", hclock_last_error());
	file_times(pa, t1, 20000, &n1);
	TEST_CHECK(n1 == na, "input damaged");
	/* an unwritable directory fails cleanly and leaves nothing behind */
	TEST_CHECK(PCAP->write(&set, conv, NULL, "/nonexistent/dir") == HCLOCK_EIO &&
	      strstr(hclock_last_error(), "/nonexistent/dir"), "write to missing dir: %s",
	      hclock_last_error());
	PCAP->release(&set);
	unlink(oa);
	unlink(ob);
	rmdir(out);
}

/* does a cut at this length end on a pcap record boundary (little-endian file)? */
static int on_boundary(const uint8_t *b, long len, long cut)
{
	long off = 24;

	while (off < cut && off + 16 <= len)
		off += 16 + (long)(b[off + 8] | b[off + 9] << 8 | b[off + 10] << 16 |
		                   (uint32_t)b[off + 11] << 24);
	return off == cut;
}

/* truncated copies at every length in a range, garbage, empty: clear errors, no crash */
static void test_bad(const char *dir)
{
	char pa[512], pb[512], pt[512];
	const char *paths[2] = { pt, pb };
	struct trace_set set;
	FILE *f;
	uint8_t *buf;
	long len;

	snprintf(pa, sizeof(pa), "%s/hostA.pcap", dir);
	snprintf(pb, sizeof(pb), "%s/hostB.pcapng.pcap", dir);
	snprintf(pt, sizeof(pt), "%s/cut.pcap", dir);
	f = fopen(pa, "rb");
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc((size_t)len);
	if (fread(buf, 1, (size_t)len, f) != (size_t)len)
		len = 0;
	fclose(f);
	for (long cut = 0; cut < len; cut += cut < 200 ? 1 : 997) {
		int r;

		f = fopen(pt, "wb");
		fwrite(buf, 1, (size_t)cut, f);
		fclose(f);
		memset(&set, 0, sizeof(set));
		r = PCAP->read(paths, 2, &set);
		if (r < 0)
			TEST_CHECK(r == HCLOCK_EINVAL && strstr(hclock_last_error(), "cut.pcap") != NULL,
			           "cut at %ld: error %d '%s' names no file", cut, r, hclock_last_error());
		else
			PCAP->release(&set);
		if (cut > 24 && !on_boundary(buf, len, cut))
			TEST_CHECK(r < 0, "cut at %ld accepted", cut);
	}
	/* garbage after a valid header, and pure garbage */
	for (int round = 0; round < 200; round++) {
		long n = 24 + (long)(rnd() % 3000);

		f = fopen(pt, "wb");
		fwrite(buf, 1, 24, f);
		for (long i = 24; i < n; i++)
			fputc(round % 2 ? (int)(rnd() & 255) : (int)(rnd() & 3), f);
		fclose(f);
		memset(&set, 0, sizeof(set));
		if (PCAP->read(paths, 2, &set) == 0)
			PCAP->release(&set);
	}
	f = fopen(pt, "wb");
	fputs("event,id,peer,time_ns\nsend,1,b,5\n", f);
	fclose(f);
	TEST_CHECK(!PCAP->probe(pt), "probe of CSV");
	memset(&set, 0, sizeof(set));
	TEST_CHECK(PCAP->read(paths, 2, &set) == HCLOCK_EINVAL && strstr(hclock_last_error(), "cut.pcap"),
	      "CSV as pcap: %s", hclock_last_error());
	/* one capture alone: nothing to match */
	memset(&set, 0, sizeof(set));
	TEST_CHECK(PCAP->read(paths + 1, 1, &set) == HCLOCK_EINVAL, "one capture");
	/* the same host name twice */
	{
		const char *twice[2] = { pb, pb };

		memset(&set, 0, sizeof(set));
		TEST_CHECK(PCAP->read(twice, 2, &set) == HCLOCK_EINVAL &&
		      strstr(hclock_last_error(), "rename"), "same name: %s", hclock_last_error());
	}
	free(buf);
	unlink(pt);
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/hclock_test_pcap.XXXXXX";
	char pa[600], pb[600];

	if (argc > 1)
		rng = strtoull(argv[1], NULL, 0) | 1;
	printf("seed %" PRIu64 "\n", rng);
	if (!mkdtemp(dir))
		return 1;
	test_roundtrip(dir);
	test_bad(dir);
	snprintf(pa, sizeof(pa), "%s/hostA.pcap", dir);
	snprintf(pb, sizeof(pb), "%s/hostB.pcapng.pcap", dir);
	unlink(pa);
	unlink(pb);
	rmdir(dir);
	if (test_failures)
		fprintf(stderr, "%d test_failures (seed %s)\n", test_failures, argc > 1 ? argv[1] : "default");
	else
		printf("ok\n");
	return test_failures ? 1 : 0;
}
