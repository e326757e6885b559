/*
 * trace.h - the in-memory form of a set of per-node traces, and the interface every trace
 * format (native CSV, pcap, OTF2) implements to read it and to write it back corrected.
 *
 * This is the contract between the readers (src/align/reader_*.c) and the alignment engine
 * (src/align/align.c). Readers know nothing of hulls; the engine knows nothing of formats.
 * Fields may be added; existing fields keep their meaning.
 */
#ifndef HCLOCK_ALIGN_TRACE_H
#define HCLOCK_ALIGN_TRACE_H

#include <stddef.h>
#include <stdint.h>

enum trace_kind {
	TRACE_SEND,  /* a message left this node */
	TRACE_RECV,  /* a message arrived at this node */
	TRACE_BCAST, /* an event seen by every node at once (evaluation only, never fitted) */
	TRACE_OTHER, /* anything else: carried through and converted */
};

struct trace_event {
	int64_t time_ns;     /* node-local timestamp, ns (may be realtime-sized, ~1.7e18) */
	enum trace_kind kind;
	uint64_t msg;        /* message key: equal on the send and the recv of one message, and on
	                        every node's copy of one broadcast; unused for TRACE_OTHER */
	int peer;            /* index into trace_set.nodes of the other side (send/recv), else -1 */
	size_t record;       /* format-specific index of the source record, for the writer */
	uint32_t line;       /* source line (CSV) or record number, for error messages; 0 if none */
};

struct trace_node {
	char *name;               /* node name (CSV: file name without .csv; pcap: host) */
	char *path;               /* the file it was read from */
	struct trace_event *ev;   /* events in source order (time-sorted for well-formed input) */
	size_t nev;
	void *priv;               /* the format's own per-node state for writing; owned by reader */
};

/* A conversion that is one line: corrected = y0_ns + y0_frac + slope * (local - x0_ns), in ns
 * of the node's clock (local) and of the reference (corrected). */
struct trace_line {
	int64_t x0_ns;       /* local time the line is anchored at, ns */
	int64_t y0_ns;       /* corrected time there, whole ns ... */
	long double y0_frac; /* ... plus this fraction, ns */
	long double slope;   /* d corrected / d local (dimensionless, ~1) */
};

struct trace_set {
	const struct trace_format *fmt; /* who read it, who writes it */
	struct trace_node *nodes;
	size_t nnodes;
	void *priv;                     /* the format's own whole-set state */
	int partial_ok;                 /* unused: the engine skips and counts one-sided messages
	                                   of every format (hclock_align_opts.unmatched_fail makes
	                                   them fatal) */
	/* where a format's warnings (trace_warn in format.h) and information lines (trace_note)
	 * go, both with warn_ctx: set by the engine before read; NULL drops them. A format never
	 * prints. */
	void (*warn)(void *ctx, const char *line);
	void (*note)(void *ctx, const char *line);
	void *warn_ctx;
	/* a node's conversion as one line (trace_line_fn below), with line_ctx: set by the engine
	 * before write, for writers that rewrite a clock's parameters instead of each time */
	int (*line)(void *ctx, size_t node, int64_t x0_ns, int64_t x1_ns, struct trace_line *l);
	void *line_ctx;
};

/*
 * Conversion of one node's local timestamps to the reference timeline, supplied by the
 * engine to the writers. Must be monotonic non-decreasing in t for a valid alignment. After
 * a repair of message order, an event's local time gives its repaired time (events of one
 * local time share it), and a time between events never precedes the event before it.
 */
typedef int64_t (*trace_convert_fn)(void *ctx, size_t node, int64_t local_ns);

/*
 * set->line(set->line_ctx, node, x0_ns, x1_ns, &l): node's conversion as one line anchored at
 * x0_ns (the slope measured over [x0_ns, x1_ns], the range of times the writer cares about);
 * 0, or -1 when it is no line (piecewise segments, no fit, or events of the node moved one
 * by one by the repair of message order). Exact to long double precision:
 * the rounded conversion (trace_convert_fn) differs from it by at most 1/2 ns.
 */

/*
 * Errors: readers and writers return 0, or a negative HCLOCK_E* code (hclock_api.h) with one
 * line "FILE:LINE: what is wrong; what is right" set by err_set (util/err.h) for
 * hclock_last_error(): HCLOCK_EINVAL for input that is not a valid trace of the format,
 * HCLOCK_ENOMEM, HCLOCK_EIO for a file or directory that could not be opened, read, created,
 * written or renamed, or that changed while it was read.
 */
struct trace_format {
	const char *name;  /* "csv", "pcap", "otf2": as the user names it */
	const char *usage; /* one line for --help: what an input of this format is */
	/* nonzero if this format recognises the file or directory at path (required) */
	int (*probe)(const char *path);
	/* read all inputs (one per node, or one archive) into set; set is zeroed by the caller
	 * but for warn/note/warn_ctx, which the reader keeps */
	int (*read)(const char *const *paths, size_t npaths, struct trace_set *set);
	/* write the corrected traces into outdir, an existing directory, atomically (temporary
	 * files, then renamed); NULL if the format cannot be written */
	int (*write)(const struct trace_set *set, trace_convert_fn conv, void *ctx,
	             const char *outdir);
	/* free everything read() allocated, including nodes[] and priv */
	void (*release)(struct trace_set *set);
};

/* Every format defines one "const struct trace_format trace_format_NAME" in its own
 * reader_NAME.c and is listed by one line in align/types.def, the table of format.c. */

#endif
