/* hold.h - disk room held ahead of a file's end: taken with fallocate(FALLOC_FL_KEEP_SIZE)
 * after each write, while the disk has room, so that a write that later finds the disk full
 * has at least that room, over which the file's last bytes (a stop mark) can still go, and no
 * other writer can take it. The tracer's raw file holds one record ahead, the protobuf part
 * of its outputs 4 KiB. */
#ifndef HCLOCK_UTIL_HOLD_H
#define HCLOCK_UTIL_HOLD_H

#include <stdint.h>

/* Takes n bytes of the disk for fd from byte offset at on (beyond the file's end: its size
 * stays). Returns 0, or -1 with errno where it could not: the disk is full, or the file
 * system cannot allocate without writing (the room is then simply not held; callers go on). */
int hold_ahead(int fd, uint64_t at, uint64_t n);

/* Where held room of n bytes starts when the file has end bytes for sure (written, or held
 * ahead): end - n, or 0 where end < n. The cut after a failed write goes at or before it. */
uint64_t hold_start(uint64_t end, uint64_t n);

#endif
