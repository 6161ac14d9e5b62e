/* test_number_format.c -- the ascii .vtu formatter (application/core/mesh_io/number_format.h)
 * against the C library: for digits 1..17, 2.45 million doubles (random bit patterns over every
 * exponent, subnormals included; short decimals and exact decimal ties; neighbours of powers of
 * ten and of the largest and smallest doubles; the special values) must
 *   - read back (strtod) within half a unit in the last written digit of the value (plus half an
 *     ulp of the double read, the reader's own rounding), and
 *   - be snprintf's "%.*g" text, character for character: near-ties, where the double scaling
 *     cannot tell the rounding, go to snprintf, so none may differ (the count is printed on
 *     failure, beside those whose number differs as well).
 * Integers (Int64, Int32, UInt8 as the writer passes them) must be snprintf's text exactly. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ef_test.h"
#include "mesh_io/number_format.h"

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* splitmix64: a reproducible stream of 64-bit words. */
static uint64_t rng_next(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static double from_bits(uint64_t b) {
  double v;
  memcpy(&v, &b, 8);
  return v;
}

static long n_checked, n_text_differs, n_value_differs;

/* One value at digits: bound on the read-back value, then snprintf's text. */
static void check_double(double v, int digits) {
  char ours[EF_NUMBER_FORMAT_MAX + 8], ref[64];
  memset(ours, 'X', sizeof ours);
  size_t n = ef_number_format_double(ours, v, digits);
  ++n_checked;
  if (n == 0 || n >= EF_NUMBER_FORMAT_MAX) {
    EXPECT(0, "%.17g at %d digits: length %zu", v, digits, n);
    return;
  }
  ours[n] = '\0';
  int rn = snprintf(ref, sizeof ref, "%.*g", digits, v);
  if ((size_t)rn != n || memcmp(ours, ref, n) != 0) {
    ++n_text_differs;
    if (n_text_differs <= 10) fprintf(stderr, "%.17g at %d digits: '%s', snprintf '%s'\n", v, digits, ours, ref);
  }
  char *end;
  double back = strtod(ours, &end);
  EXPECT(end == ours + n, "%.17g at %d digits: '%s' does not parse whole", v, digits, ours);
  if (isnan(v)) {
    EXPECT(isnan(back) && !!signbit(back) == !!signbit(v), "nan at %d digits: '%s'", digits, ours);
    return;
  }
  if (isinf(v) || v == 0.0) {
    EXPECT(back == v && !!signbit(back) == !!signbit(v), "%g at %d digits: '%s'", v, digits, ours);
    return;
  }
  if (back != strtod(ref, NULL)) ++n_value_differs;
  /* Half a unit in the digits-th significant digit of the rounded value (its decimal exponent
   * from %e), plus half an ulp of the double strtod returns; the bound itself in long double. */
  char e_text[64];
  snprintf(e_text, sizeof e_text, "%.*e", digits - 1, v);
  int x = atoi(strchr(e_text, 'e') + 1);
  long double half_unit = 0.5L * powl(10.0L, (long double)(x - digits + 1));
  long double err = fabsl((long double)back - (long double)v);
  long double reader = 0.5L * (long double)(nextafter(fabs(back), INFINITY) - fabs(back));
  if (isinf(back)) { /* a value past the largest double rounded up to a power of ten */
    EXPECT(fabsl((long double)v) + half_unit > (long double)DBL_MAX, "%.17g at %d digits: '%s'", v, digits, ours);
    return;
  }
  EXPECT(err <= half_unit * (1.0L + 1e-15L) + reader, "%.17g at %d digits: '%s' reads %.17g, off by %Lg > %Lg", v,
         digits, ours, back, err, half_unit);
}

/* Every digit count for v. */
static void check_all_digits(double v) {
  for (int p = 1; p <= 17; ++p) check_double(v, p);
}

/* An integer as the writer formats each integer type. */
static void check_int64(int64_t v) {
  char ours[EF_NUMBER_FORMAT_MAX], ref[32];
  size_t n = ef_number_format_int64(ours, v);
  int rn = snprintf(ref, sizeof ref, "%" PRId64, v);
  EXPECT((size_t)rn == n && memcmp(ours, ref, n) == 0, "%s: got '%.*s'", ref, (int)n, ours);
  uint64_t u = (uint64_t)v;
  n = ef_number_format_uint64(ours, u);
  rn = snprintf(ref, sizeof ref, "%" PRIu64, u);
  EXPECT((size_t)rn == n && memcmp(ours, ref, n) == 0, "%s: got '%.*s'", ref, (int)n, ours);
}

int main(void) {
  /* Special values, at every digit count. */
  const double special[] = {0.0, -0.0, NAN, -NAN, INFINITY, -INFINITY, DBL_MAX, -DBL_MAX, DBL_MIN,
                            DBL_TRUE_MIN, -DBL_TRUE_MIN, nextafter(DBL_MIN, 0.0), 2 * DBL_TRUE_MIN,
                            DBL_EPSILON, 1.0, -1.0, 0.1, 0.5, 1.5, 2.5, 0.125, 9.5, 99.5, 1e-5, 1e-4,
                            9.9999e-5, 1e15, 1e16, 1e17, 1e22, 1e23, 123456789012345678.0,
                            0.30000000000000004, 1.0 / 3.0, 2.0 / 3.0, 3.141592653589793, 1e-300,
                            1e300, 4.9406564584124654e-324, 2.2250738585072009e-308};
  for (size_t i = 0; i < sizeof special / sizeof special[0]; ++i) check_all_digits(special[i]);

  /* Random bit patterns: every exponent and sign, subnormals included (NaN/Inf patterns too). */
  for (int i = 0; i < 40000; ++i) check_all_digits(from_bits(rng_next()));

  /* Random doubles in [1, 10) scaled over every decimal exponent a double has. */
  for (int i = 0; i < 20000; ++i) {
    double m = 1.0 + 9.0 * (double)(rng_next() >> 11) * 0x1.0p-53;
    int e = (int)(rng_next() % 632) - 324;
    double v = m * pow(10.0, e);
    if (isfinite(v)) check_all_digits(rng_next() & 1 ? -v : v);
  }

  /* Values a solver writes: O(1e-20)..O(1e8), the common case of the writer's digits 7. */
  for (int i = 0; i < 250000; ++i) {
    double v = ((double)(rng_next() >> 11) * 0x1.0p-53 - 0.5) * pow(10.0, (int)(rng_next() % 29) - 20);
    check_double(v, 7);
    check_double(v, 1 + (int)(rng_next() % 15));
  }

  /* Short decimals and exact ties: n * 2^-k has a finite decimal expansion, so at some digit
   * count it lies exactly half-way (0.125 at 2 digits, 2.5 at 1); integers ending in 5 too. */
  for (int i = 0; i < 10000; ++i) {
    double v = ldexp((double)(rng_next() % 2000001), -(int)(rng_next() % 30));
    check_all_digits(v);
    uint64_t k = rng_next() % 100000000000000000ull;
    check_all_digits((double)(k - k % 10 + 5));
  }

  /* Neighbours of powers of ten (and of the roundings up to them: 9.5, 99.95, ...). */
  for (int e = -323; e <= 308; ++e) {
    char text[32];
    snprintf(text, sizeof text, "1e%d", e);
    double t = strtod(text, NULL);
    double v = t;
    for (int s = 0; s < 3; ++s) v = nextafter(v, 0.0);
    for (int s = 0; s < 7; ++s, v = nextafter(v, INFINITY)) check_all_digits(v);
    for (int p = 1; p <= 16; ++p) {
      double tie = t * (1.0 - 0.5 * pow(10.0, -p)); /* near 9.99..95 x 10^(e-1) */
      if (isfinite(tie) && tie > 0) {
        check_all_digits(tie);
        check_all_digits(nextafter(tie, 0.0));
        check_all_digits(nextafter(tie, INFINITY));
      }
    }
  }

  /* Integers: edges and random values of each width the writer formats. */
  const int64_t edges[] = {0, 1, -1, 9, 10, 99, 100, 101, 999, 1000, 255, INT32_MAX, INT32_MIN,
                           (int64_t)INT32_MAX + 1, INT64_MAX, INT64_MIN, INT64_MIN + 1, 9999999999999999999ull / 10,
                           1000000000000000000ll, -1000000000000000000ll};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; ++i) check_int64(edges[i]);
  for (uint64_t q = 1, k = 0; k < 19; ++k, q *= 10) { /* q reaches 1e19 after the last pass: unsigned */
    const int64_t p = (int64_t)q;
    check_int64(p);
    check_int64(p - 1);
    check_int64(-p);
    check_int64(1 - p);
  }
  for (int i = 0; i < 200000; ++i) {
    uint64_t r = rng_next();
    check_int64((int64_t)r);
    check_int64((int32_t)r);
    check_int64((int64_t)(r >> (r % 64)));
    check_int64((uint8_t)r);
  }

  EXPECT(n_text_differs == 0, "%ld of %ld formatted doubles differ from snprintf's text (%ld as numbers)",
         n_text_differs, n_checked, n_value_differs);
  EXPECT(n_checked > 2000000, "only %ld doubles checked", n_checked);
  return failures ? 1 : 0;
}
