/*
 * fuzz_input.h - what several fuzz targets do with their input: write bytes to a file, and
 * split an input in two at a length given by its first two bytes (little-endian).
 */
#ifndef HCLOCK_FUZZ_INPUT_H
#define HCLOCK_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* d[0..n) to path (created or truncated); 0, or -1 when it could not be written */
static inline int fuzz_put(const char *path, const uint8_t *d, size_t n)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(d, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* the input's first two bytes give the first part's length (cut to what follows them); *data
 * and *size are advanced past them; the first part's length, or -1 when size < 2 */
static inline long fuzz_split(const uint8_t **data, size_t *size)
{
	size_t split;

	if (*size < 2)
		return -1;
	split = (size_t)((*data)[0] | (*data)[1] << 8);
	*data += 2;
	*size -= 2;
	return (long)(split > *size ? *size : split);
}

#endif
