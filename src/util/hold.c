/* hold.c - disk room held ahead of a file's end (hold.h). */
#define _GNU_SOURCE /* fallocate's FALLOC_FL_KEEP_SIZE */
#include <fcntl.h>

#include "util/hold.h"

int hold_ahead(int fd, uint64_t at, uint64_t n)
{
	return fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)at, (off_t)n);
}

uint64_t hold_start(uint64_t end, uint64_t n)
{
	return end >= n ? end - n : 0;
}
