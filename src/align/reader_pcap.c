/*
 * reader_pcap.c - pcap and pcapng captures as traces: one capture per host, TCP segments
 * matched across captures (Poirier, Roy, Dagenais, Section 3.2: a segment is recognised on
 * both hosts by its TCP/IP header bytes).
 *
 * Node: one capture; its name is the file name without directory and extension.
 *
 * Segment key: IP version, source and destination address, IPv4 identification (IPv6: flow
 * label), TCP payload length from the IP header, and the whole TCP header with its options,
 * except the checksum (checksum offload leaves it unset on the sending host). This is a
 * superset of the 31 bytes of the paper (addresses, ports, sequence and acknowledgement
 * numbers, data offset, flags, lengths).
 *
 * Matching: a key seen in exactly two captures is one message; the first copy in each
 * capture is used (the earliest send precedes every receipt of the same bytes, so the pair
 * is a valid constraint even when the first transmission was lost), later copies are
 * carried as TRACE_OTHER. A key seen in three or more captures is ambiguous and dropped.
 *
 * Which capture is which host: both captures of a conversation see both addresses, in both
 * directions, so addresses alone cannot tell. The time between a segment going one way and
 * a segment of the same conversation going back is longer on the host that sent the first
 * one, by the two flight times (t_recv2 - t_send1 on the sender = gap on the receiver +
 * latency1 + latency2), whatever the clock offset. Each such pair of consecutive matched
 * segments votes for the owner of the first segment's source address; an address belongs to
 * the capture with the most votes. A message is sent by the capture that owns its source
 * address.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include "align/format.h"
#include "align/outset.h"
#include "align/trace.h"

extern const struct trace_format trace_format_pcap; /* defined at the end */

#define KEY_MAX 104 /* 1 version + 32 addresses + 3 id/flow + 2 length + 60 TCP header */
#define NS_PER_S 1000000000LL

struct pcap_node {
	int dlt; /* link type of the capture */
};

struct seg {
	uint64_t hash;
	uint32_t node;
	uint32_t klen;
	size_t ev;
	uint8_t key[KEY_MAX];
};

struct addr {
	uint8_t v;     /* 4 or 6 */
	uint8_t a[16]; /* IPv4 in the first 4 bytes */
};

/* a key seen in exactly two captures */
struct cand {
	uint32_t node[2];
	size_t ev[2];
	uint32_t src, dst; /* indices into the address table */
	int drop;
};

struct ctx {
	struct trace_set *set;
	struct seg *segs;
	size_t nsegs, capsegs;
};

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Find the IP header behind the link layer. Returns 0 and sets *ip and *len, or -1. */
static int link_payload(int dlt, const uint8_t *p, size_t n, const uint8_t **ip, size_t *len)
{
	size_t off;
	unsigned type;

	switch (dlt) {
	case DLT_EN10MB:
		if (n < 14)
			return -1;
		off = 14;
		type = rd16(p + 12);
		for (int vlan = 0; vlan < 2 && (type == 0x8100 || type == 0x88a8); vlan++) {
			if (n < off + 4)
				return -1;
			type = rd16(p + off + 2);
			off += 4;
		}
		if (type != 0x0800 && type != 0x86dd)
			return -1;
		break;
	case DLT_LINUX_SLL:
		if (n < 16)
			return -1;
		off = 16;
		type = rd16(p + 14);
		if (type != 0x0800 && type != 0x86dd)
			return -1;
		break;
#ifdef DLT_LINUX_SLL2
	case DLT_LINUX_SLL2:
		if (n < 20)
			return -1;
		off = 20;
		type = rd16(p);
		if (type != 0x0800 && type != 0x86dd)
			return -1;
		break;
#endif
	case DLT_NULL:
	case DLT_LOOP:
		off = 4;
		break;
	case DLT_RAW:
#ifdef DLT_IPV4
	case DLT_IPV4:
	case DLT_IPV6:
#endif
		off = 0;
		break;
	default:
		return -1;
	}
	if (n <= off)
		return -1;
	*ip = p + off;
	*len = n - off;
	return 0;
}

/*
 * Build the matching key of a TCP segment from its IP header on. Returns the key length,
 * or 0 if the packet is not a whole-header, unfragmented TCP segment.
 */
static size_t tcp_key(const uint8_t *ip, size_t n, uint8_t *key)
{
	const uint8_t *tcp;
	size_t k = 0, avail, thl;
	long payload;

	if (n < 1)
		return 0;
	if ((ip[0] >> 4) == 4) {
		size_t ihl = (size_t)(ip[0] & 15) * 4;
		unsigned tot;

		if (ihl < 20 || n < ihl || ip[9] != 6)
			return 0;
		if (rd16(ip + 6) & 0x3fff) /* MF or fragment offset: not a whole segment */
			return 0;
		tot = rd16(ip + 2);
		if (tot < ihl) /* 0 with TSO: the on-wire segments differ */
			return 0;
		key[k++] = 4;
		memcpy(key + k, ip + 12, 8); /* source, destination */
		k += 8;
		memcpy(key + k, ip + 4, 2); /* identification */
		k += 2;
		key[k++] = 0;
		tcp = ip + ihl;
		avail = n - ihl;
		payload = (long)tot - (long)ihl;
	} else if ((ip[0] >> 4) == 6) {
		size_t off = 40;
		unsigned nh, plen;

		if (n < 40)
			return 0;
		plen = rd16(ip + 4);
		nh = ip[6];
		/* hop-by-hop, routing, destination options; a fragment header ends the search */
		while (nh == 0 || nh == 43 || nh == 60) {
			size_t el;

			if (n < off + 8)
				return 0;
			el = ((size_t)ip[off + 1] + 1) * 8;
			nh = ip[off];
			off += el;
		}
		if (nh != 6 || n < off || off - 40 > plen)
			return 0;
		key[k++] = 6;
		memcpy(key + k, ip + 8, 32);
		k += 32;
		key[k++] = ip[1] & 15; /* flow label */
		key[k++] = ip[2];
		key[k++] = ip[3];
		tcp = ip + off;
		avail = n - off;
		payload = (long)plen - (long)(off - 40);
	} else {
		return 0;
	}
	if (avail < 20)
		return 0;
	thl = (size_t)(tcp[12] >> 4) * 4;
	if (thl < 20 || avail < thl || payload < (long)thl)
		return 0;
	payload -= (long)thl;
	key[k++] = (uint8_t)(payload >> 8);
	key[k++] = (uint8_t)payload;
	memcpy(key + k, tcp, 16); /* ports, seq, ack, offset, flags, window */
	k += 16;
	memcpy(key + k, tcp + 18, thl - 18); /* urgent pointer, options */
	k += thl - 18;
	return k;
}

static int add_event(struct trace_node *nd, size_t *cap, int64_t t, size_t rec)
{
	struct trace_event *e;

	if (nd->nev == *cap) {
		size_t nc = *cap ? *cap * 2 : 1024;
		void *p = realloc(nd->ev, nc * sizeof(*nd->ev));

		if (!p)
			return -1;
		nd->ev = p;
		*cap = nc;
	}
	e = &nd->ev[nd->nev++];
	e->time_ns = t;
	e->kind = TRACE_OTHER;
	e->msg = 0;
	e->peer = -1;
	e->record = rec;
	e->line = rec + 1 > UINT32_MAX ? UINT32_MAX : (uint32_t)(rec + 1);
	return 0;
}

static int add_seg(struct ctx *c, uint32_t node, size_t ev, const uint8_t *key, size_t klen)
{
	struct seg *s;

	if (c->nsegs == c->capsegs) {
		size_t nc = c->capsegs ? c->capsegs * 2 : 1024;
		void *p = realloc(c->segs, nc * sizeof(*c->segs));

		if (!p)
			return -1;
		c->segs = p;
		c->capsegs = nc;
	}
	s = &c->segs[c->nsegs++];
	s->hash = fnv1a(key, klen);
	s->node = node;
	s->klen = (uint32_t)klen;
	s->ev = ev;
	memcpy(s->key, key, klen);
	return 0;
}

static char *node_name(const char *path)
{
	const char *b = strrchr(path, '/');
	const char *dot;
	char *name;
	size_t n;

	b = b ? b + 1 : path;
	dot = strrchr(b, '.');
	n = dot && dot != b ? (size_t)(dot - b) : strlen(b);
	name = malloc(n + 1);
	if (name) {
		memcpy(name, b, n);
		name[n] = 0;
	}
	return name;
}

static pcap_t *open_capture(const char *path)
{
	char perr[PCAP_ERRBUF_SIZE] = "";
	pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO,
	                                                    perr);

	if (!p)
		err_set(HCLOCK_EINVAL, "%s: cannot read as pcap or pcapng (libpcap: %s); "
		        "give a capture written by tcpdump -w or dumpcap", path, perr);
	return p;
}

/* the packet's time in ns since 1970, or -1 if its header holds no valid time */
static int64_t packet_ns(const struct pcap_pkthdr *h)
{
	if (h->ts.tv_sec < 0 || h->ts.tv_sec > INT64_MAX / NS_PER_S - 1 ||
	    h->ts.tv_usec < 0 || h->ts.tv_usec >= NS_PER_S)
		return -1;
	return (int64_t)h->ts.tv_sec * NS_PER_S + h->ts.tv_usec;
}

static int read_capture(struct ctx *c, uint32_t idx)
{
	struct trace_node *nd = &c->set->nodes[idx];
	struct pcap_node *pn = nd->priv;
	struct pcap_pkthdr *h;
	const u_char *data;
	uint8_t key[KEY_MAX];
	size_t cap = 0, rec = 0;
	pcap_t *p;
	int r, ret = 0;

	p = open_capture(nd->path);
	if (!p)
		return HCLOCK_EINVAL;
	pn->dlt = pcap_datalink(p);
	while (!ret && (r = pcap_next_ex(p, &h, &data)) == 1) {
		const uint8_t *ip;
		size_t iplen, klen;
		int64_t t = packet_ns(h);

		if (t < 0)
			ret = err_set(HCLOCK_EINVAL, "%s:packet %zu: timestamp "
			              "%lld.%09ld out of range; expected seconds since 1970 and "
			              "nanoseconds below 1e9", nd->path, rec + 1,
			              (long long)h->ts.tv_sec, (long)h->ts.tv_usec);
		else if (add_event(nd, &cap, t, rec) ||
		         (link_payload(pn->dlt, data, h->caplen, &ip, &iplen) == 0 &&
		          (klen = tcp_key(ip, iplen, key)) > 0 &&
		          add_seg(c, idx, nd->nev - 1, key, klen)))
			ret = err_set(HCLOCK_ENOMEM, "%s: out of memory after %zu "
			              "packets", nd->path, rec);
		rec++;
	}
	if (!ret && r != PCAP_ERROR_BREAK)
		ret = err_set(HCLOCK_EINVAL, "%s:packet %zu: truncated or corrupt "
		              "capture (libpcap: %s); give a complete capture (stop tcpdump "
		              "cleanly, or cut it with editcap)", nd->path, rec + 1, pcap_geterr(p));
	pcap_close(p);
	return ret;
}

static int seg_cmp(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;
	int r;

	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	if (x->klen != y->klen)
		return x->klen < y->klen ? -1 : 1;
	r = memcmp(x->key, y->key, x->klen);
	if (r)
		return r;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

static int seg_same_key(const struct seg *x, const struct seg *y)
{
	return x->hash == y->hash && x->klen == y->klen && !memcmp(x->key, y->key, x->klen);
}

static int addr_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct addr));
}

static void seg_addrs(const struct seg *s, struct addr *src, struct addr *dst)
{
	size_t al = s->key[0] == 4 ? 4 : 16;

	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	src->v = dst->v = s->key[0];
	memcpy(src->a, s->key + 1, al);
	memcpy(dst->a, s->key + 1 + al, al);
}

static uint32_t addr_index(const struct addr *tab, size_t n, const struct addr *a)
{
	const struct addr *f = bsearch(a, tab, n, sizeof(*tab), addr_cmp);

	return (uint32_t)(f - tab);
}

/* event index -> candidate, per node, in file order */
struct ref {
	size_t ev;
	size_t cand;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;

	return x->ev < y->ev ? -1 : x->ev > y->ev;
}

/* the matching's working state: candidates, their addresses, and the votes on who owns them */
struct matching {
	struct cand *cand;   /* keys seen in exactly two captures */
	size_t ncand;
	struct addr *addrs;  /* every address of a candidate, sorted, unique */
	size_t naddr;
	struct ref *refs;    /* per node, its candidate events in file order: */
	size_t *refstart;    /* node n's are refs[refstart[n] .. refstart[n + 1]) */
	long *votes;         /* [address * nnodes + node]: round trips saying node owns address */
	long *owner;         /* per address: the owning node, or -1 */
};

/* the keys seen in exactly two captures: the first copy in each is a candidate message. The
 * segments are sorted by key on the way; cand[].src holds a segment index until
 * address_table replaces it. */
static int find_candidates(struct ctx *c, struct matching *m)
{
	if (c->nsegs)
		qsort(c->segs, c->nsegs, sizeof(*c->segs), seg_cmp);
	m->cand = malloc((c->nsegs / 2 + 1) * sizeof(*m->cand));
	if (!m->cand)
		return HCLOCK_ENOMEM;
	for (size_t i = 0, j; i < c->nsegs; i = j) {
		size_t nodes = 1, second = 0;
		struct cand *k = &m->cand[m->ncand];

		for (j = i + 1; j < c->nsegs && seg_same_key(&c->segs[j], &c->segs[i]); j++)
			if (c->segs[j].node != c->segs[j - 1].node && nodes++ == 1)
				second = j;
		if (nodes != 2)
			continue;
		k->node[0] = c->segs[i].node;
		k->ev[0] = c->segs[i].ev;
		k->node[1] = c->segs[second].node;
		k->ev[1] = c->segs[second].ev;
		k->drop = 0;
		k->src = (uint32_t)i;
		m->ncand++;
	}
	return 0;
}

/* the table of addresses, and every candidate's source and destination as indices into it */
static int address_table(const struct ctx *c, struct matching *m)
{
	size_t n = 0;

	m->addrs = malloc((2 * m->ncand + 1) * sizeof(*m->addrs));
	if (!m->addrs)
		return HCLOCK_ENOMEM;
	for (size_t k = 0; k < m->ncand; k++, n += 2)
		seg_addrs(&c->segs[m->cand[k].src], &m->addrs[n], &m->addrs[n + 1]);
	qsort(m->addrs, n, sizeof(*m->addrs), addr_cmp);
	for (size_t i = 0; i < n; i++)
		if (m->naddr == 0 || addr_cmp(&m->addrs[m->naddr - 1], &m->addrs[i]))
			m->addrs[m->naddr++] = m->addrs[i];
	for (size_t k = 0; k < m->ncand; k++) {
		struct addr s, d;

		seg_addrs(&c->segs[m->cand[k].src], &s, &d);
		m->cand[k].src = addr_index(m->addrs, m->naddr, &s);
		m->cand[k].dst = addr_index(m->addrs, m->naddr, &d);
	}
	return 0;
}

/* per-node lists of candidate events in file order */
static int node_refs(struct matching *m, size_t nn)
{
	size_t *fill = calloc(nn + 1, sizeof(*fill));

	m->refs = malloc((2 * m->ncand + 1) * sizeof(*m->refs));
	m->refstart = calloc(nn + 1, sizeof(*m->refstart));
	if (!fill || !m->refs || !m->refstart) {
		free(fill);
		return HCLOCK_ENOMEM;
	}
	for (size_t k = 0; k < m->ncand; k++)
		for (int s = 0; s < 2; s++)
			m->refstart[m->cand[k].node[s] + 1]++;
	for (size_t n = 0; n < nn; n++)
		m->refstart[n + 1] += m->refstart[n];
	for (size_t k = 0; k < m->ncand; k++)
		for (int s = 0; s < 2; s++) {
			uint32_t n = m->cand[k].node[s];
			struct ref *r = &m->refs[m->refstart[n] + fill[n]++];

			r->ev = m->cand[k].ev[s];
			r->cand = k;
		}
	free(fill);
	for (size_t n = 0; n < nn; n++)
		qsort(m->refs + m->refstart[n], m->refstart[n + 1] - m->refstart[n], sizeof(*m->refs),
		      ref_cmp);
	return 0;
}

/* round-trip votes of node n (see the comment at the top of the file): each candidate and
 * the previous one exchanged with the same peer, if it went the other way */
static void vote(const struct trace_set *set, struct matching *m, size_t n, size_t *last)
{
	const struct trace_event *ev = set->nodes[n].ev;
	size_t nn = set->nnodes;

	for (size_t d = 0; d < nn; d++)
		last[d] = SIZE_MAX;
	for (size_t r = m->refstart[n]; r < m->refstart[n + 1]; r++) {
		const struct cand *e = &m->cand[m->refs[r].cand], *l;
		int side = e->node[0] == n ? 0 : 1, lside;
		uint32_t d = e->node[!side];
		int64_t gn, gd;

		if (last[d] != SIZE_MAX) {
			l = &m->cand[last[d]];
			lside = l->node[0] == n ? 0 : 1;
			if (l->src == e->dst && l->dst == e->src) {
				gn = ev[e->ev[side]].time_ns - ev[l->ev[lside]].time_ns;
				gd = set->nodes[d].ev[e->ev[!side]].time_ns -
				     set->nodes[d].ev[l->ev[!lside]].time_ns;
				if (gn > gd) {
					m->votes[(size_t)l->src * nn + n]++;
					m->votes[(size_t)l->dst * nn + d]++;
				} else if (gn < gd) {
					m->votes[(size_t)l->src * nn + d]++;
					m->votes[(size_t)l->dst * nn + n]++;
				}
			}
		}
		last[d] = m->refs[r].cand;
	}
}

/* an address belongs to the node with the most votes; a tie leaves it unowned */
static void elect_owners(struct matching *m, size_t nn)
{
	for (size_t a = 0; a < m->naddr; a++) {
		long best = 0, second = 0;

		m->owner[a] = -1;
		for (size_t n = 0; n < nn; n++) {
			long v = m->votes[a * nn + n];

			if (v > best) {
				second = best;
				best = v;
				m->owner[a] = (long)n;
			} else if (v > second) {
				second = v;
			}
		}
		if (best == second)
			m->owner[a] = -1;
	}
}

/* a candidate is a send on the capture owning its source address; returns the messages */
static uint64_t mark_messages(struct trace_set *set, const struct matching *m)
{
	uint64_t nmsg = 0;

	for (size_t k = 0; k < m->ncand; k++) {
		const struct cand *e = &m->cand[k];
		long os = m->owner[e->src], od = m->owner[e->dst];
		int s;
		struct trace_event *se, *re;

		if (os == (long)e->node[0] || os == (long)e->node[1])
			s = os == (long)e->node[0] ? 0 : 1;
		else if (os < 0 && (od == (long)e->node[0] || od == (long)e->node[1]))
			s = od == (long)e->node[0] ? 1 : 0;
		else
			continue;
		if (od >= 0 && od != (long)e->node[!s])
			continue;
		se = &set->nodes[e->node[s]].ev[e->ev[s]];
		re = &set->nodes[e->node[!s]].ev[e->ev[!s]];
		nmsg++;
		se->kind = TRACE_SEND;
		se->msg = nmsg;
		se->peer = (int)e->node[!s];
		re->kind = TRACE_RECV;
		re->msg = nmsg;
		re->peer = (int)e->node[s];
	}
	return nmsg;
}

/* the votes of every node for the owners of the addresses */
static int count_votes(const struct trace_set *set, struct matching *m)
{
	size_t nn = set->nnodes, *last = malloc((nn + 1) * sizeof(*last));

	m->votes = calloc(m->naddr * nn + 1, sizeof(*m->votes));
	m->owner = malloc((m->naddr + 1) * sizeof(*m->owner));
	if (!last || !m->votes || !m->owner) {
		free(last);
		return HCLOCK_ENOMEM;
	}
	for (size_t n = 0; n < nn; n++)
		vote(set, m, n, last);
	free(last);
	elect_owners(m, nn);
	return 0;
}

/* Pair the segments, find which capture owns which address, mark sends and receives. */
static int match(struct ctx *c)
{
	struct trace_set *set = c->set;
	struct matching m = {0};
	int ret;

	if (find_candidates(c, &m) || address_table(c, &m) || node_refs(&m, set->nnodes) ||
	    count_votes(set, &m))
		ret = err_set(HCLOCK_ENOMEM, "%s: out of memory matching %zu TCP "
		              "segments", set->nnodes ? set->nodes[0].path : "pcap", c->nsegs);
	else if (mark_messages(set, &m))
		ret = 0;
	else if (m.ncand == 0)
		ret = err_set(HCLOCK_EINVAL, "%s: no TCP segment appears in two of "
		              "the %zu captures; give one capture per host of hosts that exchange "
		              "TCP traffic, taken on the interfaces that carry it",
		              set->nodes[0].path, set->nnodes);
	else
		ret = err_set(HCLOCK_EINVAL, "%s: %zu TCP segments appear in two "
		              "captures, but no segment and reply tell which capture was taken on "
		              "which host; capture both directions of the traffic",
		              set->nodes[0].path, m.ncand);
	free(m.cand);
	free(m.addrs);
	free(m.refs);
	free(m.refstart);
	free(m.votes);
	free(m.owner);
	return ret;
}

static void pcap_release(struct trace_set *set)
{
	for (size_t i = 0; i < set->nnodes; i++) {
		free(set->nodes[i].name);
		free(set->nodes[i].path);
		free(set->nodes[i].ev);
		free(set->nodes[i].priv);
	}
	free(set->nodes);
	set->nodes = NULL;
	set->nnodes = 0;
	set->priv = NULL;
}

/* the nodes, named after their captures, before any is read */
static int make_nodes(const char *const *paths, size_t npaths, struct trace_set *set)
{
	set->nodes = calloc(npaths, sizeof(*set->nodes));
	if (!set->nodes)
		return err_set(HCLOCK_ENOMEM, "%s: out of memory", paths[0]);
	set->nnodes = npaths;
	for (size_t i = 0; i < npaths; i++) {
		struct trace_node *nd = &set->nodes[i];

		nd->path = strdup(paths[i]);
		nd->name = node_name(paths[i]);
		nd->priv = calloc(1, sizeof(struct pcap_node));
		if (!nd->path || !nd->name || !nd->priv)
			return err_set(HCLOCK_ENOMEM, "%s: out of memory", paths[i]);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(set->nodes[j].name, nd->name))
				return err_set(HCLOCK_EINVAL, "%s: host name '%s' is also "
				               "that of %s; the host is the file name without "
				               "extension, rename one capture", paths[i], nd->name,
				               paths[j]);
	}
	return 0;
}

static int pcap_read(const char *const *paths, size_t npaths, struct trace_set *set)
{
	struct ctx c = { .set = set };
	int r;

	set->fmt = &trace_format_pcap;
	if (npaths == 0)
		return err_set(HCLOCK_EINVAL, "pcap: no capture given; give one capture "
		               "per host");
	if (npaths > UINT32_MAX)
		return err_set(HCLOCK_EINVAL, "pcap: too many captures");
	r = make_nodes(paths, npaths, set);
	for (size_t i = 0; !r && i < npaths; i++)
		r = read_capture(&c, (uint32_t)i);
	if (!r)
		r = match(&c);
	free(c.segs);
	if (r)
		pcap_release(set);
	return r;
}

static int pcap_probe(const char *path)
{
	uint8_t m[4];
	struct stat st;
	FILE *f;
	size_t n;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	f = fopen(path, "rb");
	if (!f)
		return 0;
	n = fread(m, 1, 4, f);
	fclose(f);
	if (n != 4)
		return 0;
	{
		uint32_t be = (uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 | (uint32_t)m[2] << 8 | m[3];

		return be == 0xa1b2c3d4 || be == 0xd4c3b2a1 || /* pcap, microseconds */
		       be == 0xa1b23c4d || be == 0x4d3cb2a1 || /* pcap, nanoseconds */
		       be == 0x0a0d0d0a;                      /* pcapng section header */
	}
}

/* Copy every packet of capture in to d with its time converted. */
static int copy_packets(const struct trace_set *set, size_t idx, trace_convert_fn conv,
                        void *ctx, pcap_t *in, pcap_dumper_t *d)
{
	const struct trace_node *nd = &set->nodes[idx];
	struct pcap_pkthdr *h;
	const u_char *data;
	size_t rec = 0;
	int r;

	while ((r = pcap_next_ex(in, &h, &data)) == 1) {
		struct pcap_pkthdr o = *h;
		int64_t t = packet_ns(h), u;

		if (t < 0)
			return err_set(HCLOCK_EINVAL, "%s:packet %zu: timestamp out of "
			               "range", nd->path, rec + 1);
		u = conv(ctx, idx, t);
		if (u < 0 || u / NS_PER_S > UINT32_MAX)
			return err_set(HCLOCK_EINVAL, "%s:packet %zu: corrected time %"
			               PRId64 " ns is outside what pcap can store (0 to 2^32 s since "
			               "1970); choose another reference", nd->path, rec + 1, u);
		o.ts.tv_sec = (time_t)(u / NS_PER_S);
		o.ts.tv_usec = (suseconds_t)(u % NS_PER_S);
		pcap_dump((u_char *)d, &o, data);
		rec++;
	}
	if (r != PCAP_ERROR_BREAK)
		return err_set(HCLOCK_EINVAL, "%s:packet %zu: truncated or corrupt "
		               "capture (libpcap: %s); give a complete capture", nd->path, rec + 1,
		               pcap_geterr(in));
	return 0;
}

/* Write one capture with converted timestamps into the open temporary file f (closed here). */
static int write_capture(const struct trace_set *set, size_t idx, trace_convert_fn conv,
                         void *ctx, FILE *f, const char *tmp)
{
	pcap_t *in, *dead = NULL;
	pcap_dumper_t *d = NULL;
	int ret;

	in = open_capture(set->nodes[idx].path);
	if (in)
		dead = pcap_open_dead_with_tstamp_precision(pcap_datalink(in), pcap_snapshot(in),
		                                            PCAP_TSTAMP_PRECISION_NANO);
	if (dead)
		d = pcap_dump_fopen(dead, f);
	if (!in)
		ret = HCLOCK_EINVAL;
	else if (!dead)
		ret = err_set(HCLOCK_ENOMEM, "%s: out of memory", tmp);
	else if (!d)
		ret = err_set(HCLOCK_EIO, "%s: cannot start the capture (libpcap: %s)",
		              tmp, pcap_geterr(dead));
	else if (!(ret = copy_packets(set, idx, conv, ctx, in, d)) &&
	         (pcap_dump_flush(d) || ferror(f) || fsync(fileno(f))))
		ret = err_set(HCLOCK_EIO, "%s: write failed: %s", tmp, strerror(errno));
	if (d)
		pcap_dump_close(d); /* closes f */
	else
		fclose(f);
	if (dead)
		pcap_close(dead);
	if (in)
		pcap_close(in);
	return ret;
}

/* o: dst OUTDIR/NAME.pcap, never an input capture; tmp a new temporary file next to
 * it (set only once the file exists), open as *f. outset_create's work, with a capture's own
 * check and error lines. */
static int open_output(const struct trace_node *nd, const char *outdir, struct outfile *o,
                       FILE **f)
{
	size_t n = strlen(outdir) + strlen(nd->name) + 32;
	char *t, *a, *d;
	int same, fd;

	o->dst = malloc(n);
	if (!o->dst)
		return err_set(HCLOCK_ENOMEM, "%s: out of memory", outdir);
	snprintf(o->dst, n, "%s/%s.pcap", outdir, nd->name);
	a = realpath(nd->path, NULL);
	d = realpath(o->dst, NULL);
	same = a && d && !strcmp(a, d);
	free(a);
	free(d);
	if (same)
		return err_set(HCLOCK_EINVAL, "%s: is an input capture; choose an "
		               "output directory other than %s", o->dst, outdir);
	t = malloc(n);
	if (!t)
		return err_set(HCLOCK_ENOMEM, "%s: out of memory", outdir);
	snprintf(t, n, "%s/.%s.pcap.XXXXXX", outdir, nd->name);
	fd = mkstemp(t);
	if (fd < 0) {
		int e = errno;
		free(t);
		return err_set(HCLOCK_EIO, "%s: cannot create a file in it: %s; give "
		               "a writable directory", outdir, strerror(e));
	}
	o->tmp = t;
	if (outset_mode(fd, t, 0)) {
		close(fd);
		return HCLOCK_EIO;
	}
	*f = fdopen(fd, "wb");
	if (!*f) {
		int e = errno;
		close(fd);
		return err_set(HCLOCK_EIO, "%s: %s", t, strerror(e));
	}
	return 0;
}

static int pcap_write(const struct trace_set *set, trace_convert_fn conv, void *ctx,
                      const char *outdir)
{
	struct outset o;
	int ret = 0;

	if (outset_init(&o, set->nnodes))
		ret = err_set(HCLOCK_ENOMEM, "%s: out of memory", outdir);
	/* every capture to a temporary file first, then all renamed: none or all appear */
	for (size_t i = 0; !ret && i < set->nnodes; i++) {
		FILE *f;

		ret = open_output(&set->nodes[i], outdir, &o.f[i], &f);
		if (!ret)
			ret = write_capture(set, i, conv, ctx, f, o.f[i].tmp);
	}
	if (!ret)
		ret = outset_commit(&o);
	outset_free(&o);
	return ret;
}

const struct trace_format trace_format_pcap = {
	.name = "pcap",
	.usage = "pcap/pcapng capture per host (tcpdump -w)",
	.probe = pcap_probe,
	.read = pcap_read,
	.write = pcap_write,
	.release = pcap_release,
};
