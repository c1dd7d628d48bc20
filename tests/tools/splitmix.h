/* splitmix.h — the deterministic random source of the benchmark generator
 * (bench/bigtrace) and the tests that need large random inputs: splitmix64
 * (Steele, Lea, Flood 2014), uniform in (0, 1), standard normal
 * (Box-Muller).  Header-only; the state is the caller's. */
#ifndef SPLITMIX_H
#define SPLITMIX_H
#include <math.h>
#include <stdint.h>

static inline uint64_t sm_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline double sm_unif(uint64_t *s)
{
	return ((double)(sm_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static inline double sm_normal(uint64_t *s)
{
	double u = sm_unif(s), v = sm_unif(s);
	return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}
#endif
