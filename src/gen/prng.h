/*-------------------------------------------------------------------------
 *
 * prng.h
 *	  The seeded generator behind festival's data and query generators.
 *
 * splitmix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number
 * generators", OOPSLA 2014; constants as in Vigna's public reference):
 * 64-bit integer arithmetic only, so a seed gives the same sequence on every
 * platform.  Doubles are built from the top 53 bits, and the distributions
 * use only additions, multiplications and divisions (no libm), so generated
 * coordinates are bit-identical everywhere IEEE 754 doubles are.
 *
 * IDENTIFICATION
 *	  src/gen/prng.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FEST_PRNG_H
#define FEST_PRNG_H

#include "festival.h"

typedef struct Prng
{
	uint64		state;
} Prng;

/* Streams: one seed drives independent sequences for each generator. */
#define PRNG_STREAM_POINTS		UINT64CONST(0x243F6A8885A308D3)
#define PRNG_STREAM_WINDOWS		UINT64CONST(0x13198A2E03707344)
#define PRNG_STREAM_KNN			UINT64CONST(0xA4093822299F31D0)

static inline void
prng_init(Prng *p, int32 seed, uint64 stream)
{
	p->state = ((uint64) (uint32) seed) ^ stream;
}

static inline uint64
prng_next(Prng *p)
{
	uint64		z = (p->state += UINT64CONST(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* Uniform in [0, 1), exactly representable. */
static inline double
prng_uniform(Prng *p)
{
	return (double) (prng_next(p) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [0, n), n > 0 (multiply-shift; bias below 2^-32). */
static inline uint32
prng_below(Prng *p, uint32 n)
{
	return (uint32) (((prng_next(p) >> 32) * (uint64) n) >> 32);
}

/*
 * Standard normal, approximated by the Irwin-Hall sum of 12 uniforms minus
 * 6 (mean 0, variance 1, bounded by +-6): additions only, hence
 * platform-exact, unlike Box-Muller's log and cos.
 */
static inline double
prng_normal(Prng *p)
{
	double		sum = 0;

	for (int i = 0; i < 12; i++)
		sum += prng_uniform(p);
	return sum - 6.0;
}

#endif							/* FEST_PRNG_H */
