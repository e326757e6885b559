/*
 * record.h - the tracer's raw per-process file: what libhclock_trace writes while
 * the program runs, `hclock trace` turns into OTF2 and Perfetto afterwards and `hclock align`
 * reads as its format "raw" (align/reader_raw.c). Its vocabulary is rec_* and REC_*: a
 * record, its kind, the header and trailer of the file; `struct rec_file` is one file located
 * in memory (record.c). In util, below both the tracer and align, which read it.
 *
 * DIR/raw/rank.R: a header, the function names, then records of 64 bytes in the order they
 * were made, written whole buffers at a time (a program that calls MPI_Abort or is ended by a
 * signal it can catch has its last buffer written too; one killed by SIGKILL loses at most
 * the buffer being filled; everything before is on disk and readable); at MPI_Finalize a trailer:
 * the communicators (id, members as world ranks) and the summary. A reader takes what is
 * complete: records up to the last whole one, the trailer only when its magic is there.
 *
 * Times are integer ns: t_g on the global clock (hclock's sync), t_l on the process's own
 * base clock (the raw local time, for the --raw Gantt chart). Host byte order (the files are
 * read on the machine that wrote them, or one like it).
 */
#ifndef HCLOCK_UTIL_RECORD_H
#define HCLOCK_UTIL_RECORD_H

#include <stddef.h>
#include <stdint.h>

#define REC_MAGIC "HCLKTRC1"
#define REC_TRAILER_MAGIC "HCLKEND1"

struct rec_header {
	char magic[8];       /* REC_MAGIC */
	int32_t rank, size;  /* MPI_COMM_WORLD rank and size */
	uint32_t nfuncs;     /* function names that follow: nfuncs NUL-terminated strings,
	                        padded with NULs to a multiple of 8 bytes (names_bytes) */
	uint32_t names_bytes;
	char sync[192];      /* the sync spec the global clock came from */
	char clock[32];      /* the base clock's description */
	char host[32];       /* the host the process ran on (gethostname, cut to 31 bytes); files
	                        from before it: "" */
	int64_t sync_ns;     /* time the sync at MPI_Init took (global clock), ns */
	int64_t t0_g;        /* the job's origin for relative times: the least global clock
	                        reading over the processes right after the sync, ns (0: none) */
	uint32_t when_full;  /* enum rec_when_full: what the tracer did with both buffers full
	                        (files from before it: 0, drop) */
	uint32_t waits;      /* REC_FULL_WAIT*: the appends that waited for the writer (written
	                        at MPI_Finalize: 0 in the file of a program that died) */
	int64_t waited_ns;   /* ... the time they waited, summed over the threads, ns */
	int64_t reserved[1];
};

_Static_assert(sizeof(struct rec_header) == 320, "the header keeps its size");

/* the header's when_full */
enum rec_when_full {
	REC_FULL_DROP = 0,   /* new records dropped and counted (--when-full drop) */
	REC_FULL_WAIT = 1,   /* the program's threads waited for the writer (--when-full wait) */
	REC_FULL_GAVE_UP = 2,/* ... until a wait reached its deadline: dropped from then on */
};

enum rec_kind {
	REC_CALL = 1, /* an MPI call: func, t_g/t_l at enter, t2_g/t2_l at leave */
	REC_SEND = 2, /* a message sent: at the send's start (t_g/t_l; a persistent send's
	                 MPI_Start/Startall, func that call), to peer, tag, bytes; t2_g the
	                 latest the reference's time could have been then (t_g plus the upper
	                 half-width of the last REC_BOUND sample), 0: not known; t2_l 0 */
	REC_RECV = 3, /* a message received: at its completion (t_g/t_l), from peer, ...; t2_g
	                 the earliest the reference's time could have been then (t_g minus the
	                 lower half-width of the last sample), 0: not known */
	REC_COLL = 4, /* a collective: func, root (peer, -1 none), bytes sent by this process
	                 (count x type size), at the call's enter and leave (REC_F_NB: a
	                 nonblocking one, from its start to its completion) */
	REC_DROP = 5, /* records were dropped (both buffers full) before this point: bytes
	                 holds how many since the previous REC_DROP, t_g/t_l when recording
	                 resumed. Lets a reader count them without the trailer (a program that
	                 died); the loader counts them and passes no REC_DROP on. With REC_F_STOP:
	                 recording stopped here for good (tag: enum rec_stop, peer: the errno of
	                 a failed write, else 0; bytes 0; t_g/t_l, tid: of the last record kept):
	                 the records lost after it are counted in the trailer only */
	REC_BOUND = 6, /* the global clock's strict bounds (hclock_read), sampled: t_g the
	                  clock's reading, t_l the base clock's; the reference's time then lay in
	                  [t2_g, t2_l] (ns on the global clock; both 0: not known); tag the enum
	                  hclock_bounds_status. No event: not in the records count, never counted
	                  as dropped (a sample that finds no room is skipped) */
};
#define REC_KIND_MAX REC_BOUND

/* why recording stopped before the program ended (the trailer's stopped, a stop marker's tag) */
enum rec_stop {
	REC_STOP_NONE = 0,
	REC_STOP_SIZE = 1, /* the raw file reached --max-size */
	REC_STOP_DISK = 2, /* a write failed (ENOSPC: the disk is full; EIO, EDQUOT, EFBIG, ...) */
};

/* flags */
enum {
	REC_F_NB = 1,  /* REC_COLL of a nonblocking collective (MPI_Iallreduce, ...): t_g/t_l
	                  the enter of the call that started it, t2_g/t2_l the leave of the Wait
	                  or Test call that completed it (each call has its own REC_CALL);
	                  made when it completed. Files without the flag: blocking ones only */
	REC_F_CUT = 2, /* REC_CALL of a call that had not returned when the program was
	                  ended (a signal, MPI_Abort elsewhere): t2_g/t2_l when it was ended */
	REC_F_STOP = 4, /* REC_DROP that marks where recording stopped (enum rec_stop) */
	REC_F_TID = 8, /* REC_COLL with REC_F_NB: tag holds the tid of the thread that started
	                  it (tid is the completing one's; files without the flag: unknown) */
	REC_F_HW = 16, /* REC_CALL, and REC_COLL without REC_F_NB: tag holds the clock's strict
	                  bounds at the enter (t_g) and at the leave (t2_g), four half-widths of
	                  8 bits (rec_hw_ns): the enter's below (bits 0-7) and above (8-15), the
	                  leave's below (16-23) and above (24-31); the reference's time at t_g
	                  lay in [t_g - below, t_g + above]. Files without the flag: not known */
};

/* A half-width, ns, as 8 bits: the smallest code whose value is >= ns (so a bound stays
 * strict; at most 9 % wider: 8 codes an octave), REC_HW_NONE above 3.3 s or when not known
 * (ns < 0). */
#define REC_HW_NONE 255
uint8_t rec_hw_code(int64_t ns);
/* The value of a code, ns (-1: REC_HW_NONE). */
int64_t rec_hw_ns(uint8_t code);
/* The four codes of REC_F_HW's tag. */
static inline uint32_t rec_hw_pack(uint8_t enter_below, uint8_t enter_above,
                                   uint8_t leave_below, uint8_t leave_above)
{
	return (uint32_t)enter_below | (uint32_t)enter_above << 8 | (uint32_t)leave_below << 16 |
	       (uint32_t)leave_above << 24;
}
/* code i (0 enter below, 1 enter above, 2 leave below, 3 leave above) of a REC_F_HW tag */
static inline uint8_t rec_hw_get(int32_t tag, int i)
{
	return (uint8_t)((uint32_t)tag >> (8 * i));
}

struct rec {
	uint8_t kind;      /* enum rec_kind */
	uint8_t flags;     /* REC_F_* */
	uint16_t func;     /* index into the names */
	int32_t peer;      /* world rank of the partner (send: destination, receive: source,
	                      collective: root), -1 none, -2 not resolvable (intercommunicator) */
	int32_t tag;
	uint32_t tid;      /* the recording thread: 0 the one that called MPI_Init, 1, 2, ...
	                      the others in the order of their first record */
	uint64_t comm;     /* the communicator's id (same on every member, see trailer) */
	int64_t t_g, t_l;  /* ns: global, local */
	int64_t t2_g, t2_l;/* ns: leave (CALL, COLL); bounds (SEND, RECV, BOUND: above); else 0 */
	uint64_t bytes;
};
_Static_assert(sizeof(struct rec) == 64, "a record is 64 bytes");

/* the trailer: magic, then ncomms of (struct rec_comm + size int32 world ranks, padded to
 * 8 bytes), then the summary */
struct rec_trailer {
	char magic[8];         /* REC_TRAILER_MAGIC */
	uint64_t records;      /* records written */
	uint64_t dropped;      /* records lost because both buffers were full (the REC_DROP
	                          records say when) or after recording stopped (stopped) */
	int64_t overhead_ns;   /* time the tracer took from the program: sync, finalize, and
	                          records x their measured cost, ns */
	int32_t rec_cost_ns;   /* measured cost of one record (two clock reads included), ns */
	float drift_unc_ns;    /* the drift check's uncertainty: the largest over the processes
	                          of half their fastest round trip (NAN: not measured), ns */
	double drift_max_ns;   /* at MPI_Finalize: largest |offset| rank 0 measured to any
	                          process on the global clock (NAN: not measured), ns */
	double drift_true_ns;  /* ... and the largest true error (emulation), NAN without, ns */
	uint32_t ncomms;
	uint16_t stopped;      /* enum rec_stop: why recording stopped early (0: it did not) */
	uint16_t stop_errno;   /* REC_STOP_DISK: the failed write's errno */
};

struct rec_comm {
	uint64_t id;
	int32_t size;          /* members; their world ranks follow (-1: not resolvable) */
	int32_t inter;         /* 1: an intercommunicator (peers not resolved) */
};

/* What ended the records of a file. */
enum rec_end {
	REC_END_EOF,     /* the end of the file, on a record boundary */
	REC_END_TRAILER, /* the trailer (the program finished MPI_Finalize) */
	REC_END_CUT,     /* a partial record at the end (the program was killed while writing) */
	REC_END_BAD,     /* a record whose kind is no enum rec_kind (garbage) */
};

/* One raw file held in memory, located by rec_parse: the buffer stays the caller's. */
struct rec_file {
	const char *buf;       /* the file's bytes */
	size_t len;
	struct rec_header h;
	const char **names;    /* h.nfuncs names pointing into buf (malloc'd array) */
	size_t first;          /* byte offset of the first record */
	size_t nrec;           /* whole records before the end (REC_DROP ones included); record i
	                          is at first + 64 i (not necessarily aligned: memcpy it) */
	enum rec_end end;      /* what came after them */
	struct rec_trailer tr; /* end == REC_END_TRAILER: the trailer, else zero */
};

/*
 * Check the header and the function names of the raw file buf (len bytes) read from path,
 * and find its records and trailer (a file cut anywhere after its names is valid: its
 * records up to the last whole one). Returns 0, or HCLOCK_EINVAL (not a raw file: too short,
 * no magic, a rank outside its size, names past the end) or HCLOCK_ENOMEM with the line
 * "PATH: what is wrong" in hclock_last_error(). On success free f->names with rec_file_free.
 */
int rec_parse(const char *path, const char *buf, size_t len, struct rec_file *f);
void rec_file_free(struct rec_file *f);

/* The header of the raw file at path into *h. Returns 0 when it is one (the magic, a size
 * below 2^24), else -1. */
int rec_read_header(const char *path, struct rec_header *h);

/* Record i of f (i < f->nrec). */
struct rec rec_get(const struct rec_file *f, size_t i);

#endif
