/*
 * reader_ctf.c - LTTng kernel traces (CTF) read through libbabeltrace2: a directory holding
 * a trace (metadata and stream files), or an LTTng output directory with one trace per host.
 * A host is a trace's "hostname" (trace environment), whatever its number of streams. The
 * hosts are written back corrected by writer_ctf.c; the state both share is struct ctf_set
 * (ctf_set.h).
 *
 * Messages are TCP segments, matched as the paper does (Section 3.2: header fields identify
 * a segment), from either of LTTng's layouts:
 *  (a) lttng-modules >= 2.9: net_dev_queue (send) and netif_receive_skb (receive), with the
 *      network header (IPv4 or IPv6: saddr, daddr) and the transport header (TCP: source_port,
 *      dest_port, seq, ack_seq, flags); the key is all of them, and a packet's other side is
 *      the host that sent (or received) that address;
 *  (b) the older network add-ons: inet_sock_local_out (send) and inet_sock_local_in (receive)
 *      with sk, seq, ack_seq and flags: no addresses; the key is (seq, ack_seq, flags), as in
 *      Trace Compass, plus the connection (saddr, daddr, sport, dport of the socket's
 *      inet_connect or inet_accept event) when every such event's socket has one.
 * A key seen n times (retransmissions) pairs its k-th receive with its k-th send: a receive
 * paired with an earlier copy than its own only loosens its constraint, never breaks it.
 * Segments over the loopback device, of other protocols, or whose other side is not among
 * the traces are not messages; one-sided segments go to the engine's count. What the reader
 * found (each host's clock and counts, what the segments were matched on, the packets that are
 * no messages) goes out as information lines (trace_note), not as warnings.
 *
 * Every stream is read in its own order, without a global sort (events of old LTTng versions
 * overlap across packets of one stream; a muxer would refuse them): one sink per stream. Only
 * the network events are kept, so memory is linear in packets, not in events. Timestamps are
 * ns from the clock's origin (offset_s, offset, frequency), as libbabeltrace2 computes them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <babeltrace2/babeltrace.h>

/* AddressSanitizer builds (HCLOCK_SANITIZE, the fuzzers): see read_isolated */
#if defined(__SANITIZE_ADDRESS__)
#define CTF_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CTF_ASAN 1
#endif
#endif
#ifdef CTF_ASAN
#include <sanitizer/common_interface_defs.h>
#include <sanitizer/lsan_interface.h>
#endif

#include "align/ctf_set.h"
#include "align/format.h"
#include "align/trace.h"

enum net_kind { NK_NONE, NK_SEND, NK_RECV, NK_OUT, NK_IN, NK_CONN, NK_OTHER_TCP };

/* one network event as read */
struct pkt {
	int64_t t;           /* ns from the clock's origin */
	uint32_t node;
	uint8_t send;        /* 1 send, 0 receive */
	uint8_t layout;      /* 'a' net_dev_queue/netif_receive_skb, 'b' inet_sock_local_* */
	uint8_t lo;          /* loopback or same source and destination: not a message */
	uint8_t hasaddr;     /* saddr, daddr known: (a), or (b) with the socket's connection */
	uint8_t saddr[16], daddr[16]; /* (a): IPv4 in the first 4 bytes */
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint16_t flags;
	uint64_t sk;         /* (b) */
	uint64_t key;        /* hash of the fields that identify the segment */
	uint32_t seqno;      /* position in the host's packets (stream order), for stable sorts */
	int64_t peer;        /* node of the other side, -1 if none */
	uint64_t msg;
	int kind;            /* enum trace_kind */
};

struct conn {
	uint32_t node;
	uint64_t sk;
	uint32_t saddr, daddr;
	uint16_t sport, dport;
};

struct ctf_read {
	struct trace_set *set;
	size_t cap;          /* nodes allocated */
	struct ctf_node *cn; /* per node */
	struct pkt *p;
	size_t np, pcap;
	struct conn *c;
	size_t nc, ccap;
	int err;             /* HCLOCK_E* set inside a sink */
	const char *input;   /* for messages */
	const char *dir;     /* the trace directory of the stream being started */
	/* event class -> kind, open addressing on the class pointer */
	struct { const bt_event_class *ec; int kind; } cls[1024];
};

struct ctf_sink {
	struct ctf_read *rd;
	const char *input;   /* the input path the stream was found under */
	const char *dir;     /* its trace directory */
	int64_t node;        /* -1 before the stream beginning */
	int timed;           /* the stream's events have a default clock */
	const bt_stream *stream;
};

/* ---- probe ----------------------------------------------------------------------------- */

/* a CTF metadata file: packetized (magic 0x75d11d57) or plain text starting "/\* CTF" */
static int is_metadata(const char *path)
{
	unsigned char b[6] = {0};
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return 0;
	n = fread(b, 1, sizeof(b), f);
	fclose(f);
	return n >= 4 && ((b[0] == 0x57 && b[1] == 0x1d && b[2] == 0xd1 && b[3] == 0x75) ||
	                  (b[0] == 0x75 && b[1] == 0xd1 && b[2] == 0x1d && b[3] == 0x57) ||
	                  (n == 6 && !memcmp(b, "/* CTF", 6)));
}

/* the trace directories at or below dir (up to depth levels): appended to the array value
 * v, or with v NULL only found (the walk stops at the first); returns how many were found,
 * or -1 out of memory */
static int list_traces(const char *dir, int depth, bt_value *v)
{
	char p[4096];
	DIR *d;
	struct dirent *de;
	int found = 0;

	snprintf(p, sizeof(p), "%s/metadata", dir);
	if (is_metadata(p))
		return v && bt_value_array_append_string_element(v, dir) ? -1 : 1;
	if (depth <= 0 || !(d = opendir(dir)))
		return 0;
	while ((found >= 0 && (v || !found)) && (de = readdir(d))) {
		struct stat st;
		int n;
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (!stat(p, &st) && S_ISDIR(st.st_mode)) {
			n = list_traces(p, depth - 1, v);
			found = n < 0 ? n : found + n;
		}
	}
	closedir(d);
	return found;
}

static int ctf_probe(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode) && list_traces(path, 4, NULL) > 0;
}

/* ---- fields ---------------------------------------------------------------------------- */

static const bt_field *member(const bt_field *s, const char *name)
{
	if (!s || !(bt_field_get_class_type(s) & BT_FIELD_CLASS_TYPE_STRUCTURE))
		return NULL;
	return bt_field_structure_borrow_member_field_by_name_const(s, name);
}

/* an integer field's value (signed ones as their bits); 0 and *ok = 0 if not an integer */
static uint64_t uint_of(const bt_field *f, int *ok)
{
	bt_field_class_type t;

	if (!f) {
		*ok = 0;
		return 0;
	}
	t = bt_field_get_class_type(f);
	if ((t & BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER) == BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER)
		return bt_field_integer_unsigned_get_value(f);
	if ((t & BT_FIELD_CLASS_TYPE_SIGNED_INTEGER) == BT_FIELD_CLASS_TYPE_SIGNED_INTEGER)
		return (uint64_t)bt_field_integer_signed_get_value(f);
	*ok = 0;
	return 0;
}

/* a variant's selected option (LTTng's tagged network and transport headers) */
static const bt_field *selected(const bt_field *v)
{
	if (!v || !(bt_field_get_class_type(v) & BT_FIELD_CLASS_TYPE_VARIANT))
		return NULL;
	return bt_field_variant_borrow_selected_option_field_const(v);
}

/* an address array: 4 bytes (IPv4), 16 bytes or 8 16-bit words (IPv6), into out[16];
 * returns its length in bytes, 0 if none of these */
static int addr_of(const bt_field *a, uint8_t out[16])
{
	uint64_t n;
	int ok = 1;

	if (!a || !(bt_field_get_class_type(a) & BT_FIELD_CLASS_TYPE_ARRAY))
		return 0;
	n = bt_field_array_get_length(a);
	memset(out, 0, 16);
	if (n == 4 || n == 16) {
		for (uint64_t i = 0; i < n; i++)
			out[i] = (uint8_t)uint_of(bt_field_array_borrow_element_field_by_index_const(a, i),
			                          &ok);
	} else if (n == 8) {
		for (uint64_t i = 0; i < n; i++) {
			uint64_t w = uint_of(bt_field_array_borrow_element_field_by_index_const(a, i), &ok);
			out[2 * i] = (uint8_t)(w >> 8);
			out[2 * i + 1] = (uint8_t)w;
		}
		n = 16;
	} else {
		return 0;
	}
	return ok ? (int)n : 0;
}

/* the kind of an event class, by name, cached by class */
static int class_kind(struct ctf_read *rd, const bt_event_class *ec)
{
	size_t h = ((uintptr_t)ec >> 4) * 0x9e3779b97f4a7c15u >> 54; /* 10 bits */
	const char *name;
	int kind;

	for (size_t i = 0; i < 1024; i++, h = (h + 1) & 1023) {
		if (rd->cls[h].ec == ec)
			return rd->cls[h].kind;
		if (!rd->cls[h].ec)
			break;
	}
	name = bt_event_class_get_name(ec);
	kind = !name ? NK_NONE :
	       !strcmp(name, "net_dev_queue") ? NK_SEND :
	       !strcmp(name, "netif_receive_skb") ? NK_RECV :
	       !strcmp(name, "inet_sock_local_out") ? NK_OUT :
	       !strcmp(name, "inet_sock_local_in") ? NK_IN :
	       !strcmp(name, "inet_connect") || !strcmp(name, "inet_accept") ? NK_CONN : NK_NONE;
	if (!rd->cls[h].ec) {
		rd->cls[h].ec = ec;
		rd->cls[h].kind = kind;
	}
	return kind;
}

/* ---- reading --------------------------------------------------------------------------- */

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	void *nv;
	size_t nc;

	if (need <= *cap)
		return 0;
	nc = *cap ? 2 * *cap : 256;
	while (nc < need)
		nc *= 2;
	if (!(nv = realloc(*v, nc * size)))
		return HCLOCK_ENOMEM;
	memset((char *)nv + *cap * size, 0, (nc - *cap) * size);
	*v = nv;
	*cap = nc;
	return 0;
}

/* dir added to c's trace directories if new; -1 out of memory */
static int add_dir(struct ctf_node *c, const char *dir)
{
	size_t n = strlen(dir) + 1;
	char *nd;

	for (size_t at = 0; at < c->dirs_len; at += strlen(c->dirs + at) + 1)
		if (!strcmp(c->dirs + at, dir))
			return 0;
	if (!(nd = realloc(c->dirs, c->dirs_len + n)))
		return -1;
	memcpy(nd + c->dirs_len, dir, n);
	c->dirs = nd;
	c->dirs_len += n;
	return 0;
}

/* the node of a stream: its trace's host name (else the trace's name), added if new */
static int64_t stream_node(struct ctf_read *rd, const bt_stream *s)
{
	const bt_trace *tr = bt_stream_borrow_trace_const(s);
	const bt_value *hv = bt_trace_borrow_environment_entry_value_by_name_const(tr, "hostname");
	const bt_clock_class *cc =
		bt_stream_class_borrow_default_clock_class_const(bt_stream_borrow_class_const(s));
	const char *host = hv && bt_value_get_type(hv) == BT_VALUE_TYPE_STRING ?
	                   bt_value_string_get(hv) : bt_trace_get_name(tr);
	struct trace_set *set = rd->set;
	size_t v;

	if (!host || !*host)
		host = rd->input;
	for (v = 0; v < set->nnodes; v++)
		if (!strcmp(set->nodes[v].name, host))
			break;
	if (v == set->nnodes) {
		size_t cap = rd->cap;
		if (grow((void **)&set->nodes, &rd->cap, v + 1, sizeof(*set->nodes)) ||
		    grow((void **)&rd->cn, &cap, v + 1, sizeof(*rd->cn)))
			return -1;
		set->nnodes++;
		if (!(set->nodes[v].name = strdup(host)) ||
		    !(set->nodes[v].path = strdup(rd->input)))
			return -1;
		rd->cn[v].tmin_ns = INT64_MAX;
		rd->cn[v].tmax_ns = INT64_MIN;
	}
	rd->cn[v].streams++;
	if (add_dir(&rd->cn[v], rd->dir))
		return -1;
	if (cc && !rd->cn[v].clock_name) {
		bt_uuid u = bt_clock_class_get_uuid(cc);
		const char *n = bt_clock_class_get_name(cc);
		if (!(rd->cn[v].clock_name = strdup(n ? n : "")))
			return -1;
		if (u)
			snprintf(rd->cn[v].clock_uuid, sizeof(rd->cn[v].clock_uuid),
			         "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			         u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10],
			         u[11], u[12], u[13], u[14], u[15]);
	}
	return (int64_t)v;
}

/* layout (a): IP and TCP header fields; 0 if the packet is no TCP over IP */
static int parse_dev(const bt_field *pl, struct pkt *p)
{
	const bt_field *nh = selected(member(pl, "network_header")), *th, *dev;
	int ok = 1, la, lb;

	if (!nh)
		return 0;
	la = addr_of(member(nh, "saddr"), p->saddr);
	lb = addr_of(member(nh, "daddr"), p->daddr);
	th = selected(member(nh, "transport_header"));
	if (!la || la != lb || !th || !member(th, "seq"))
		return 0;
	p->sport = (uint16_t)uint_of(member(th, "source_port"), &ok);
	p->dport = (uint16_t)uint_of(member(th, "dest_port"), &ok);
	p->seq = (uint32_t)uint_of(member(th, "seq"), &ok);
	p->ack = (uint32_t)uint_of(member(th, "ack_seq"), &ok);
	p->flags = (uint16_t)uint_of(member(th, "flags"), &ok);
	dev = member(pl, "name");
	p->lo = !memcmp(p->saddr, p->daddr, 16) ||
	        (dev && bt_field_get_class_type(dev) == BT_FIELD_CLASS_TYPE_STRING &&
	         !strcmp(bt_field_string_get_value(dev), "lo"));
	p->layout = 'a';
	p->hasaddr = 1;
	return ok;
}

/* one event message */
static int on_event(struct ctf_sink *k, const bt_message *m)
{
	struct ctf_read *rd = k->rd;
	const bt_event *ev = bt_message_event_borrow_event_const(m);
	int kind = class_kind(rd, bt_event_borrow_class_const(ev)), ok = 1;
	const bt_field *pl;
	struct pkt p = {0};
	int64_t t;

	rd->cn[k->node].events++;
	if (k->timed && !bt_clock_snapshot_get_ns_from_origin(
	            bt_message_event_borrow_default_clock_snapshot_const(m), &t)) {
		struct ctf_node *c = &rd->cn[k->node];
		if (t < c->tmin_ns)
			c->tmin_ns = t;
		if (t > c->tmax_ns)
			c->tmax_ns = t;
	}
	if (kind == NK_NONE)
		return 0;
	if (bt_clock_snapshot_get_ns_from_origin(
	            bt_message_event_borrow_default_clock_snapshot_const(m), &t))
		return err_set(HCLOCK_EINVAL, "%s: event time out of range (more than 2^63 ns from "
		               "the clock's origin)", rd->set->nodes[k->node].path);
	pl = bt_event_borrow_payload_field_const(ev);
	p.t = t;
	p.node = (uint32_t)k->node;
	p.peer = -1;
	if (kind == NK_CONN) {
		struct conn c = {(uint32_t)k->node, uint_of(member(pl, "sk"), &ok),
		                 (uint32_t)uint_of(member(pl, "saddr"), &ok),
		                 (uint32_t)uint_of(member(pl, "daddr"), &ok),
		                 (uint16_t)uint_of(member(pl, "sport"), &ok),
		                 (uint16_t)uint_of(member(pl, "dport"), &ok)};
		if (!ok)
			return 0;
		if (grow((void **)&rd->c, &rd->ccap, rd->nc + 1, sizeof(*rd->c)))
			return HCLOCK_ENOMEM;
		rd->c[rd->nc++] = c;
		return 0;
	}
	if (kind == NK_SEND || kind == NK_RECV) {
		if (!parse_dev(pl, &p))
			return 0; /* no TCP over IP: another protocol */
		p.send = kind == NK_SEND;
	} else {
		p.sk = uint_of(member(pl, "sk"), &ok);
		p.seq = (uint32_t)uint_of(member(pl, "seq"), &ok);
		p.ack = (uint32_t)uint_of(member(pl, "ack_seq"), &ok);
		p.flags = (uint16_t)uint_of(member(pl, "flags"), &ok);
		if (!ok)
			return 0;
		p.send = kind == NK_OUT;
		p.layout = 'b';
	}
	if (grow((void **)&rd->p, &rd->pcap, rd->np + 1, sizeof(*rd->p)))
		return HCLOCK_ENOMEM;
	p.seqno = (uint32_t)rd->np;
	rd->p[rd->np++] = p;
	return 0;
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it,
                                                                   void *data)
{
	struct ctf_sink *k = data;
	bt_message_array_const msgs;
	uint64_t n;
	int r = 0;

	switch (bt_message_iterator_next(it, &msgs, &n)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		break;
	default:
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	for (uint64_t i = 0; i < n; i++) {
		const bt_message *m = msgs[i];
		if (!r && bt_message_get_type(m) == BT_MESSAGE_TYPE_STREAM_BEGINNING) {
			const bt_stream *st = bt_message_stream_beginning_borrow_stream_const(m);
			k->rd->input = k->input;
			k->rd->dir = k->dir;
			k->timed = bt_stream_class_borrow_default_clock_class_const(
			               bt_stream_borrow_class_const(st)) != NULL;
			k->node = stream_node(k->rd, st);
			if (k->node < 0)
				r = HCLOCK_ENOMEM;
		} else if (!r && bt_message_get_type(m) == BT_MESSAGE_TYPE_EVENT && k->node >= 0) {
			r = on_event(k, m);
		}
		bt_message_put_ref(m);
	}
	if (r) {
		if (!k->rd->err)
			k->rd->err = r == HCLOCK_ENOMEM ? err_set(r, "out of memory") : r;
		return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
	}
	return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* libbabeltrace2's error as one line: the deepest cause, first line */
static int bt_fail(const char *input, const char *what)
{
	const bt_error *e = bt_current_thread_take_error();
	char why[512] = "no detail";

	if (e) {
		uint64_t n = bt_error_get_cause_count(e);
		/* cause 0 is the first appended: the most specific */
		for (uint64_t i = 0; i < n && !strcmp(why, "no detail"); i++) {
			const char *msg = bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, i));
			if (msg && *msg)
				snprintf(why, sizeof(why), "%.*s", (int)strcspn(msg, "\n"), msg);
		}
		bt_error_release(e);
	}
	return err_set(HCLOCK_EINVAL, "%s: %s: %s; expected an LTTng trace (CTF 1.8: metadata and "
	               "stream files)", input, what, why);
}

struct source {
	const bt_component_source *c;
	const char *input; /* the input it was found under */
	char *dir;         /* its trace directory (owned) */
};

/* a source.ctf.fs reading the trace in directory dir */
static int add_source(bt_graph *g, const bt_component_class_source *cls, const char *dir,
                      const char *input, size_t i, struct source *s)
{
	bt_value *params = bt_value_map_create(), *inputs = bt_value_array_create();
	char name[32];
	int r = 0;

	s->input = input;
	snprintf(name, sizeof(name), "src%zu", i);
	if (!params || !inputs || !(s->dir = strdup(dir)) ||
	    bt_value_array_append_string_element(inputs, dir) ||
	    bt_value_map_insert_entry(params, "inputs", inputs))
		r = err_set(HCLOCK_ENOMEM, "out of memory");
	else if (bt_graph_add_source_component(g, cls, name, params, BT_LOGGING_LEVEL_NONE, &s->c))
		r = bt_fail(dir, "cannot open the trace");
	bt_value_put_ref(inputs);
	bt_value_put_ref(params);
	return r;
}

/* babeltrace2's ctf plugin, loaded once and kept for the life of the process (loading is
 * costly, and a plugin unloaded after a failed read leaves its leaks unattributable) */
static const bt_plugin *ctf_plugin;
static pthread_once_t ctf_once = PTHREAD_ONCE_INIT;

static void load_plugin(void)
{
	bt_logging_set_global_level(BT_LOGGING_LEVEL_NONE);
	if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf_plugin) !=
	    BT_PLUGIN_FIND_STATUS_OK)
		ctf_plugin = NULL;
}

/* one source.ctf.fs per trace directory, one simple sink per output port (stream) */
static int read_graph(struct ctf_read *rd, const char *const *paths, size_t npaths)
{
	const bt_component_class_source *cls;
	struct source *src = NULL;
	size_t nsrc = 0, srccap = 0;
	bt_graph *g = bt_graph_create(0);
	struct ctf_sink *sinks = NULL;
	uint64_t nports = 0, ns = 0;
	int r = 0;

	pthread_once(&ctf_once, load_plugin);
	if (!g) {
		r = err_set(HCLOCK_ENOMEM, "out of memory");
		goto out;
	}
	if (!ctf_plugin ||
	    !(cls = bt_plugin_borrow_source_component_class_by_name_const(ctf_plugin, "fs"))) {
		r = err_set(HCLOCK_EINVAL, "%s: babeltrace2's ctf plugin not found; install "
		            "libbabeltrace2-0 (Debian) or set BABELTRACE_PLUGIN_PATH", paths[0]);
		goto out;
	}
	/* one source per trace directory (source.ctf.fs merges only traces of one UUID) */
	for (size_t i = 0; !r && i < npaths; i++) {
		bt_value *dirs = bt_value_array_create();
		if (!dirs || list_traces(paths[i], 4, dirs) < 0) {
			r = err_set(HCLOCK_ENOMEM, "out of memory");
		} else {
			for (uint64_t j = 0; !r && j < bt_value_array_get_length(dirs); j++) {
				const char *dir = bt_value_string_get(
					bt_value_array_borrow_element_by_index_const(dirs, j));
				if (nsrc == srccap && grow((void **)&src, &srccap, nsrc + 1, sizeof(*src)))
					r = err_set(HCLOCK_ENOMEM, "out of memory");
				else
					r = add_source(g, cls, dir, paths[i], nsrc, &src[nsrc]);
				nsrc += !r || src[nsrc].dir;
				if (!r)
					nports += bt_component_source_get_output_port_count(src[nsrc - 1].c);
			}
		}
		bt_value_put_ref(dirs);
	}
	if (r)
		goto out;
	if (!(sinks = calloc(nports ? nports : 1, sizeof(*sinks)))) {
		r = err_set(HCLOCK_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nsrc; i++)
		for (uint64_t p = 0; p < bt_component_source_get_output_port_count(src[i].c); p++) {
			const bt_component_sink *sink;
			char name[48];
			sinks[ns] = (struct ctf_sink){rd, src[i].input, src[i].dir, -1, 0, NULL};
			snprintf(name, sizeof(name), "sink%" PRIu64, ns);
			if (bt_graph_add_simple_sink_component(g, name, NULL, consume, NULL, &sinks[ns],
			                                       &sink) ||
			    bt_graph_connect_ports(g,
			        bt_component_source_borrow_output_port_by_index_const(src[i].c, p),
			        bt_component_sink_borrow_input_port_by_index_const(sink, 0), NULL)) {
				r = bt_fail(src[i].input, "cannot read the trace");
				goto out;
			}
			ns++;
		}
	for (;;) {
		bt_graph_run_status st = bt_graph_run(g);
		if (st == BT_GRAPH_RUN_STATUS_OK)
			break;
		if (st == BT_GRAPH_RUN_STATUS_AGAIN)
			continue;
		if (rd->err) {
			bt_current_thread_clear_error();
			r = rd->err;
		} else {
			r = st == BT_GRAPH_RUN_STATUS_MEMORY_ERROR ? err_set(HCLOCK_ENOMEM,
			    "out of memory") : bt_fail(npaths == 1 ? paths[0] : "the inputs",
			                               "corrupt or truncated trace");
		}
		break;
	}
out:
	bt_graph_put_ref(g);
	for (size_t i = 0; i < nsrc; i++)
		free(src[i].dir);
	free(src);
	free(sinks);
	return r;
}

/*
 * libbabeltrace2 2.0 aborts on some corrupt traces (assertions in its CTF decoder, found by
 * fuzz_ctf): the graph runs in a child process, which hands its results (or its error line)
 * over through an anonymous temporary file; a child that dies is one error line. fork() in a
 * library: the child only reads and writes that file before _exit.
 */
static int put(FILE *f, const void *p, size_t n)
{
	return fwrite(&n, sizeof(n), 1, f) == 1 && (!n || fwrite(p, 1, n, f) == n) ? 0 : -1;
}

static void *get(FILE *f, size_t *n)
{
	char *p;

	if (fread(n, sizeof(*n), 1, f) != 1 || *n > (size_t)1 << 40 || !(p = malloc(*n + 1)))
		return NULL;
	if (*n && fread(p, 1, *n, f) != *n) {
		free(p);
		return NULL;
	}
	p[*n] = 0;
	return p;
}

#define CHILD_SANITIZER 86 /* the child's exit status after a sanitizer's report */

#ifdef CTF_ASAN
static void child_died(void)
{
	_exit(CHILD_SANITIZER);
}
#endif

static void child(FILE *f, struct ctf_read *rd, const char *const *paths, size_t npaths)
{
	int r = read_graph(rd, paths, npaths), bad = 0;
	const char *line = r ? hclock_last_error() : "";

	bad |= fwrite(&r, sizeof(r), 1, f) != 1 || put(f, line, strlen(line));
	bad |= put(f, &rd->set->nnodes, sizeof(rd->set->nnodes));
	for (size_t v = 0; !r && v < rd->set->nnodes; v++) {
		const struct ctf_node *c = &rd->cn[v];
		const char *cl = c->clock_name ? c->clock_name : "";
		bad |= put(f, rd->set->nodes[v].name, strlen(rd->set->nodes[v].name)) ||
		       put(f, rd->set->nodes[v].path, strlen(rd->set->nodes[v].path)) ||
		       put(f, cl, strlen(cl)) || put(f, c->dirs, c->dirs_len) ||
		       put(f, c, sizeof(*c));
	}
	bad |= put(f, rd->p, r ? 0 : rd->np * sizeof(*rd->p)) ||
	       put(f, rd->c, r ? 0 : rd->nc * sizeof(*rd->c));
#ifdef CTF_ASAN
	/* _exit skips LeakSanitizer's check at exit: the child's leaks, checked here (those of
	 * libbabeltrace2's ctf plugin and of GLib are suppressed, tests/align/lsan_libs.supp) */
	if (__lsan_do_recoverable_leak_check())
		_exit(CHILD_SANITIZER);
#endif
	_exit(bad || fflush(f) ? 1 : 0);
}

#define LOST 1 /* adopt: the file ended early or is inconsistent */

static int adopt(FILE *f, struct ctf_read *rd)
{
	struct trace_set *set = rd->set;
	size_t n, nn;
	int r;
	char *line, *p;

	if (fread(&r, sizeof(r), 1, f) != 1 || !(line = get(f, &n)))
		return LOST;
	if (r) {
		err_set(r, "%s", line);
		free(line);
		return r;
	}
	free(line);
	if (!(p = get(f, &n)) || n != sizeof(nn)) {
		free(p);
		return LOST;
	}
	memcpy(&nn, p, sizeof(nn));
	free(p);
	if (nn > (size_t)1 << 20 || !(set->nodes = calloc(nn ? nn : 1, sizeof(*set->nodes))) ||
	    !(rd->cn = calloc(nn ? nn : 1, sizeof(*rd->cn))))
		return HCLOCK_ENOMEM;
	for (size_t v = 0; v < nn; v++) {
		struct ctf_node c;
		set->nnodes = v + 1;
		if (!(set->nodes[v].name = get(f, &n)) || !(set->nodes[v].path = get(f, &n)) ||
		    !(rd->cn[v].clock_name = get(f, &n)) || !(rd->cn[v].dirs = get(f, &n)))
			return LOST;
		rd->cn[v].dirs_len = n;
		if (!(p = get(f, &n)))
			return LOST;
		if (n != sizeof(c)) {
			free(p);
			return LOST;
		}
		memcpy(&c, p, sizeof(c));
		free(p);
		memcpy(rd->cn[v].clock_uuid, c.clock_uuid, sizeof(c.clock_uuid));
		rd->cn[v].clock_uuid[sizeof(c.clock_uuid) - 1] = 0;
		rd->cn[v].events = c.events;
		rd->cn[v].streams = c.streams;
		rd->cn[v].tmin_ns = c.tmin_ns;
		rd->cn[v].tmax_ns = c.tmax_ns;
	}
	if (!(rd->p = get(f, &n)) || n % sizeof(*rd->p))
		return LOST;
	rd->np = n / sizeof(*rd->p);
	if (!(rd->c = get(f, &n)) || n % sizeof(*rd->c))
		return LOST;
	rd->nc = n / sizeof(*rd->c);
	for (size_t i = 0; i < rd->np; i++)
		if (rd->p[i].node >= nn)
			return LOST;
	return 0;
}

static int read_isolated(struct ctf_read *rd, const char *const *paths, size_t npaths)
{
	const char *what = npaths == 1 ? paths[0] : "the inputs";
	FILE *f = tmpfile();
	pid_t pid;
	int st = 0, r;

	if (!f)
		return err_set(HCLOCK_EIO, "%s: cannot create a temporary file: %s", what,
		               strerror(errno));
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		/* die of the signal, not in a handler of the parent's (a fuzzer's, a sanitizer's);
		 * with AddressSanitizer, of libbabeltrace2's assertions only: a fault is the
		 * sanitizer's report, as are memory errors and leaks, on the parent's stderr, and
		 * the child's exit status CHILD_SANITIZER (a bug of hclock's until shown otherwise) */
#ifdef CTF_ASAN
		static const int sig[] = {SIGABRT};
		int rep = dup(2);
		if (rep >= 0)
			__sanitizer_set_report_fd((void *)(intptr_t)rep);
		__sanitizer_set_death_callback(child_died);
#else
		static const int sig[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
#endif
		int null = open("/dev/null", O_WRONLY);
		for (size_t i = 0; i < sizeof(sig) / sizeof(*sig); i++)
			signal(sig[i], SIG_DFL);
		if (null >= 0)
			dup2(null, 2); /* its assertion messages: the parent says what failed */
		child(f, rd, paths, npaths);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid) {
		fclose(f);
		return err_set(HCLOCK_EIO, "%s: cannot start the reader: %s", what, strerror(errno));
	}
#ifdef CTF_ASAN
	if (WIFEXITED(st) && WEXITSTATUS(st) == CHILD_SANITIZER)
		abort(); /* the report is above; the tests and the fuzzers must see it */
#endif
	if (WIFSIGNALED(st)) {
		fclose(f);
		return err_set(HCLOCK_EINVAL, "%s: libbabeltrace2 stopped (signal %d) while decoding "
		               "the trace: corrupt or truncated; expected an LTTng trace (CTF 1.8: "
		               "metadata and stream files)", what, WTERMSIG(st));
	}
	rewind(f);
	r = WIFEXITED(st) && !WEXITSTATUS(st) ? adopt(f, rd) : LOST;
	fclose(f);
	if (r == LOST)
		r = err_set(HCLOCK_EIO, "%s: the reader's results were lost (temporary file)", what);
	else if (r == HCLOCK_ENOMEM)
		r = err_set(r, "out of memory");
	return r;
}

/* ---- matching -------------------------------------------------------------------------- */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15u + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdu;
}

static const struct conn *find_conn(const struct ctf_read *rd, uint32_t node, uint64_t sk)
{
	for (size_t i = rd->nc; i-- > 0;) /* the latest connection of that socket */
		if (rd->c[i].node == node && rd->c[i].sk == sk)
			return &rd->c[i];
	return NULL;
}

/* what the keys were made of, for the line that says it */
struct keyinfo {
	size_t na, nb;       /* packets of layout (a), (b) */
	int conn;            /* (b) keyed with the connection */
	int64_t miss_node;   /* the first (b) packet whose socket has no connection: its node */
	uint64_t miss_sk;    /* and its socket */
};

/* the key of every packet; layout (b) with the connection only if all have one */
static void keys(struct ctf_read *rd, struct keyinfo *ki)
{
	int all = rd->nc > 0;

	*ki = (struct keyinfo){0, 0, 0, -1, 0};
	for (size_t i = 0; i < rd->np; i++) {
		const struct pkt *p = &rd->p[i];
		ki->na += p->layout == 'a';
		ki->nb += p->layout == 'b';
		if (all && p->layout == 'b' && !find_conn(rd, p->node, p->sk)) {
			all = 0;
			ki->miss_node = p->node;
			ki->miss_sk = p->sk;
		}
	}
	ki->conn = all;
	for (size_t i = 0; i < rd->np; i++) {
		struct pkt *p = &rd->p[i];
		uint64_t h = mix(mix(mix(p->layout, p->seq), p->ack), p->flags);
		if (p->layout == 'a') {
			for (int b = 0; b < 16; b++)
				h = mix(h, (uint64_t)p->saddr[b] << 8 | p->daddr[b]);
			h = mix(h, (uint64_t)p->sport << 16 | p->dport);
		} else if (all) {
			const struct conn *c = find_conn(rd, p->node, p->sk);
			uint32_t sa = p->send ? c->saddr : c->daddr, da = p->send ? c->daddr : c->saddr;
			for (int b = 0; b < 4; b++) {
				p->saddr[b] = (uint8_t)(sa >> (24 - 8 * b));
				p->daddr[b] = (uint8_t)(da >> (24 - 8 * b));
			}
			p->hasaddr = 1;
			/* the sender's (local, remote) is the receiver's (remote, local) */
			h = p->send ? mix(mix(h, (uint64_t)c->saddr << 32 | c->daddr),
			                  (uint64_t)c->sport << 16 | c->dport) :
			              mix(mix(h, (uint64_t)c->daddr << 32 | c->saddr),
			                  (uint64_t)c->dport << 16 | c->sport);
		}
		p->key = h;
	}
}

static int cmp_key(const void *a, const void *b)
{
	const struct pkt *x = *(struct pkt *const *)a, *y = *(struct pkt *const *)b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->send != y->send)
		return x->send ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seqno < y->seqno ? -1 : x->seqno > y->seqno;
}

/* the host owning an address: the sender of a segment from it, the receiver of one to it */
static int64_t owner(struct pkt *const *v, size_t n, const uint8_t *addr)
{
	for (size_t i = 0; i < n; i++) {
		const struct pkt *p = v[i];
		if (p->hasaddr && !p->lo && !memcmp(p->send ? p->saddr : p->daddr, addr, 16))
			return p->node;
	}
	return -1;
}

/* pair the k-th receive of a key with its k-th send; the other side of one-sided segments
 * from their addresses where known. Returns 0 or HCLOCK_ENOMEM. */
static int match(struct ctf_read *rd, size_t *other)
{
	struct pkt **v = malloc((rd->np ? rd->np : 1) * sizeof(*v));
	uint64_t id = 0;

	if (!v)
		return HCLOCK_ENOMEM;
	for (size_t i = 0; i < rd->np; i++)
		v[i] = &rd->p[i];
	qsort(v, rd->np, sizeof(*v), cmp_key);
	for (size_t i = 0; i < rd->np;) {
		size_t j = i, s, ns, nr;
		while (j < rd->np && v[j]->key == v[i]->key)
			j++;
		for (s = i; s < j && v[s]->send; s++)
			;
		ns = s - i;
		nr = j - s;
		for (size_t k = 0; k < ns && k < nr; k++) {
			struct pkt *a = v[i + k], *b = v[s + k];
			if (a->node == b->node || a->lo)
				continue;
			a->peer = b->node;
			b->peer = a->node;
			a->msg = b->msg = ++id;
		}
		i = j;
	}
	/* one-sided: their other side by address (layout a), a fresh id the engine won't pair */
	for (size_t i = 0; i < rd->np; i++) {
		struct pkt *p = &rd->p[i];
		p->kind = TRACE_OTHER;
		if (p->peer < 0 && p->hasaddr && !p->lo) {
			int64_t o = owner(v, rd->np, p->send ? p->daddr : p->saddr);
			if (o >= 0 && o != p->node) {
				p->peer = o;
				p->msg = (UINT64_C(1) << 62) | i;
			}
		}
		if (p->peer >= 0)
			p->kind = p->send ? TRACE_SEND : TRACE_RECV;
		else
			(*other)++;
	}
	free(v);
	return 0;
}

static int cmp_time(const void *a, const void *b)
{
	const struct pkt *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seqno < y->seqno ? -1 : x->seqno > y->seqno;
}

/* the packets of every node as its events, in time order (streams merged) */
static int fill_nodes(struct ctf_read *rd)
{
	struct trace_set *set = rd->set;
	size_t i = 0;

	qsort(rd->p, rd->np, sizeof(*rd->p), cmp_time);
	for (size_t v = 0; v < set->nnodes; v++) {
		struct trace_node *n = &set->nodes[v];
		size_t j = i;
		while (j < rd->np && rd->p[j].node == v)
			j++;
		n->nev = j - i;
		n->ev = calloc(n->nev ? n->nev : 1, sizeof(*n->ev));
		if (!n->ev)
			return HCLOCK_ENOMEM;
		for (size_t k = 0; k < n->nev; k++) {
			const struct pkt *p = &rd->p[i + k];
			n->ev[k] = (struct trace_event){p->t, (enum trace_kind)p->kind, p->msg,
			                                (int)p->peer, i + k, (uint32_t)(k + 1)};
		}
		i = j;
	}
	return 0;
}

static void ctf_release(struct trace_set *set)
{
	struct ctf_set *cs = set->priv;

	for (size_t i = 0; i < set->nnodes; i++) {
		free(set->nodes[i].name);
		free(set->nodes[i].path);
		free(set->nodes[i].ev);
		if (cs) {
			free(cs->cn[i].clock_name);
			free(cs->cn[i].dirs);
		}
	}
	if (cs) {
		free(cs->p);
		free(cs->cn);
		free(cs);
	}
	free(set->nodes);
	set->nodes = NULL;
	set->nnodes = 0;
	set->priv = NULL;
}

/* the information lines: every host's clock and counts, what the segments were matched on,
 * the packets that are no messages */
static void summary(const struct trace_set *set, const struct ctf_node *cn,
                    const struct keyinfo *ki, size_t other)
{
	for (size_t v = 0; v < set->nnodes; v++)
		trace_note(set, "%s: clock %s (uuid %s), %" PRIu64 " events in %" PRIu64 " streams, "
		           "%zu TCP packets", set->nodes[v].name,
		           cn[v].clock_name && *cn[v].clock_name ? cn[v].clock_name : "?",
		           cn[v].clock_uuid[0] ? cn[v].clock_uuid : "none", cn[v].events,
		           cn[v].streams, set->nodes[v].nev);
	if (ki->na)
		trace_note(set, "%zu TCP packets of net_dev_queue/netif_receive_skb: segments matched "
		           "on addresses, ports, seq, ack_seq and flags", ki->na);
	if (ki->nb && ki->conn)
		trace_note(set, "%zu TCP packets of inet_sock_local_out/in: segments matched on seq, "
		           "ack_seq, flags and the connection (inet_connect/inet_accept)", ki->nb);
	else if (ki->nb && ki->miss_node < 0)
		trace_note(set, "%zu TCP packets of inet_sock_local_out/in: segments matched on seq, "
		           "ack_seq and flags only (no inet_connect/inet_accept events)", ki->nb);
	else if (ki->nb)
		trace_note(set, "%zu TCP packets of inet_sock_local_out/in: segments matched on seq, "
		           "ack_seq and flags only (%s's socket 0x%" PRIx64 " has no inet_connect/"
		           "inet_accept event)", ki->nb, set->nodes[ki->miss_node].name, ki->miss_sk);
	if (other)
		trace_note(set, "%zu TCP packets are no messages between the traced hosts (loopback, "
		           "or the other side not traced or not seen): not used", other);
}

static int ctf_read(const char *const *paths, size_t npaths, struct trace_set *set)
{
	struct ctf_read *rd = calloc(1, sizeof(*rd));
	struct ctf_set *cs = calloc(1, sizeof(*cs));
	struct keyinfo ki;
	size_t other = 0;
	int r;

	set->fmt = &trace_format_ctf;
	if (!rd || !cs) {
		free(rd);
		free(cs);
		return err_set(HCLOCK_ENOMEM, "out of memory");
	}
	rd->set = set;
	r = read_isolated(rd, paths, npaths);
	cs->cn = rd->cn;
	set->priv = cs;
	if (!r && !set->nnodes)
		r = err_set(HCLOCK_EINVAL, "%s: no events in this trace; expected an LTTng kernel "
		            "trace with network events", paths[0]);
	if (!r) {
		keys(rd, &ki);
		r = match(rd, &other) ? err_set(HCLOCK_ENOMEM, "out of memory") : 0;
	}
	if (!r)
		r = fill_nodes(rd) ? err_set(HCLOCK_ENOMEM, "out of memory") : 0;
	if (!r)
		summary(set, rd->cn, &ki, other);
	cs->p = rd->p;
	cs->np = rd->np;
	free(rd->c);
	free(rd);
	if (r)
		ctf_release(set);
	return r;
}

const struct trace_format trace_format_ctf = {
	.name = "ctf",
	.usage = "LTTng kernel trace directories (CTF), one trace per host; TCP packets of "
	         "net_dev_queue/netif_receive_skb or inet_sock_local_out/in",
	.probe = ctf_probe,
	.read = ctf_read,
	.write = ctf_write,
	.release = ctf_release,
};
