/*
 * ctf_clock.h - a CTF trace copied with its clock's parameters replaced: the corrected CTF
 * output of hclock align.
 *
 * A CTF 1.8 clock maps a raw value c (cycles) to ns from the origin as babeltrace2 does:
 * offset_s * 1e9 + trunc(offset * 1e9 / freq) + trunc(c * 1e9 / freq). A node's conversion
 * to the reference timeline is one line (hull or fallback quality, every hop one segment), so
 * a new freq, offset_s and offset put every event of the trace, network or not, on the
 * reference timeline without touching a stream file: the streams are copied byte for byte and
 * only the metadata is rewritten (as plain text). freq is an integer, so the new clock
 * approximates the line; ctf_clock_correct says by how much at most over the trace.
 *
 * Nothing here knows of hulls or of babeltrace2's API; the metadata is read as bytes.
 */
#ifndef HCLOCK_ALIGN_CTF_CLOCK_H
#define HCLOCK_ALIGN_CTF_CLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "align/trace.h"

struct ctf_clock {
	uint64_t freq_hz;       /* cycles per second (CTF default 1e9) */
	int64_t offset_s;       /* origin offset, whole seconds */
	uint64_t offset_cycles; /* origin offset, cycles on top of offset_s */
};

/*
 * The metadata of a CTF trace at path (a file): packetized (the packets' headers dropped,
 * their text joined) or plain text. *text is malloc'd and NUL-terminated, *len its length.
 * Returns 0, HCLOCK_EIO (cannot read), HCLOCK_EINVAL (corrupt packet header; compressed,
 * encrypted) or HCLOCK_ENOMEM, with the line in hclock_last_error().
 */
int ctf_metadata_read(const char *path, char **text, size_t *len);

/*
 * The one clock block of metadata text: its parameters in *old (CTF defaults for those it
 * does not set) and, if nw is not NULL, the text with them replaced by *nw in *out
 * (malloc'd; attributes the block lacks are added). Returns 0, or HCLOCK_EINVAL when the text
 * has no clock block, several, or a value that is no integer (line names which), or
 * HCLOCK_ENOMEM.
 */
int ctf_metadata_clock(const char *text, struct ctf_clock *old, const struct ctf_clock *nw,
                       char **out);

/*
 * The clock that maps the raw values of a trace read with clock old to the reference
 * timeline of line l (corrected = l->y0_ns + l->y0_frac + l->slope * (local - l->x0_ns), local
 * being old's ns from origin), for events whose local times lie in [lmin_ns, lmax_ns]. *err_ns:
 * the largest distance between a time babeltrace2 reads through the new clock and the
 * corrected time, over that range (ns, rounding of freq and offset and babeltrace2's
 * truncations included). Returns 0, or HCLOCK_EINVAL when no valid clock exists (slope not
 * positive, frequency out of range).
 */
int ctf_clock_correct(const struct ctf_clock *old, const struct trace_line *l, int64_t lmin_ns,
                      int64_t lmax_ns, struct ctf_clock *nw, double *err_ns);

/*
 * Copy the trace directory src into dst (an existing empty directory): every regular file but
 * metadata, and the index/ folder, byte for byte; then metadata from text (len bytes). Files
 * get the modes open(O_CREAT, 0666) and mkdir(0777) give under the umask. Returns 0,
 * HCLOCK_EIO (naming the file) or HCLOCK_ENOMEM.
 */
int ctf_copy_trace(const char *src, const char *dst, const char *text, size_t len);

#endif
