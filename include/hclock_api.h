/*
 * hclock_api.h - HCLOCK_API marks the functions libhclock exports. The library is built
 * with hidden visibility (-fvisibility=hidden): everything not marked stays internal, so
 * an application that loads hclock (or a tracer preloaded into it) sees only the
 * documented hclock_* entry points.
 */
#ifndef HCLOCK_API_H
#define HCLOCK_API_H

#if defined(__GNUC__) || defined(__clang__)
#define HCLOCK_API __attribute__((visibility("default")))
#else
#define HCLOCK_API
#endif

#endif
