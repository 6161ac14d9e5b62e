/* number_format.c -- doubles at p significant digits and integers as decimal text (see
 * number_format.h): snprintf took 300-400 ns a value, which made ascii output cost more than
 * the time steps between outputs. */
#include "number_format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* "00".."99": two digits per division by 100. */
static const char nf_pairs[201] =
    "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
    "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";

/* 10^0..10^22: exactly representable doubles (5^22 < 2^53). */
static const double nf_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The decimal digits of u written backwards, ending just before end; returns where they start. */
static char *nf_digits_back(char *end, uint64_t u) {
  while (u >= 100) {
    unsigned r = (unsigned)(u % 100);
    u /= 100;
    end -= 2;
    memcpy(end, nf_pairs + 2 * r, 2);
  }
  if (u >= 10) {
    end -= 2;
    memcpy(end, nf_pairs + 2 * u, 2);
  } else {
    *--end = (char)('0' + u);
  }
  return end;
}

/* u in decimal. */
size_t ef_number_format_uint64(char *out, uint64_t u) {
  char buf[24];
  char *end = buf + sizeof buf;
  char *s = nf_digits_back(end, u);
  size_t n = (size_t)(end - s);
  memcpy(out, s, n);
  return n;
}

/* v in decimal; INT64_MIN through its unsigned magnitude. */
size_t ef_number_format_int64(char *out, int64_t v) {
  if (v >= 0) return ef_number_format_uint64(out, (uint64_t)v);
  out[0] = '-';
  return 1 + ef_number_format_uint64(out + 1, 0 - (uint64_t)v);
}

/* a * 10^k, one correctly rounded operation per factor of at most 10^22 (each exact): the result
 * is within *roundings relative errors of 2^-53 of the exact product.  Products grow and
 * quotients shrink toward the mantissa range, so no intermediate overflows or underflows. */
static double nf_scale(double a, int k, int *roundings) {
  int r = 1;
  if (k >= 0) {
    for (; k > 22; k -= 22, ++r) a *= nf_pow10[22];
    a *= nf_pow10[k];
  } else {
    for (k = -k; k > 22; k -= 22, ++r) a /= nf_pow10[22];
    a /= nf_pow10[k];
  }
  *roundings = r;
  return a;
}

/* The unit in the last place of y >= 1 (a normal double). */
static double nf_ulp(double y) {
  uint64_t bits;
  memcpy(&bits, &y, 8);
  bits = ((bits >> 52) - 52) << 52; /* 2^(exponent - 52) */
  double u;
  memcpy(&u, &bits, 8);
  return u;
}

/* a > 0 finite rounded to p (1..15) significant digits: a ~ m * 10^(x - p + 1) with
 * 10^(p-1) <= m < 10^p and x the decimal exponent of the rounded value.  0 when the scaled
 * value is too close to a half to know the rounding (the caller asks snprintf). */
static int nf_round(double a, int p, uint64_t *m, int *x) {
  int e2;
  (void)frexp(a, &e2); /* a in [2^(e2-1), 2^e2) */
  /* floor(log10(a)) or one less; the loop below settles it. */
  int e10 = (int)floor((e2 - 1) * 0.30102999566398120);
  const double lo = nf_pow10[p - 1], hi = nf_pow10[p];
  double y = 0.0;
  int roundings = 0, tries = 0;
  for (;; ++tries) {
    if (tries == 3) return 0; /* the bounds flip-flop on a value at a power of ten: leave it to snprintf */
    y = nf_scale(a, p - 1 - e10, &roundings);
    if (y >= hi)
      ++e10;
    else if (y < lo)
      --e10;
    else
      break;
  }
  /* |y - a*10^k| < roundings * ulp(y): the integer nearest the exact value is y's unless y is
   * that close to a half (ties included: printf rounds them to even). */
  uint64_t whole = (uint64_t)y; /* y < 10^15 < 2^53: truncation is floor */
  double frac = y - (double)whole; /* exact */
  if (fabs(frac - 0.5) <= (double)(roundings + 1) * nf_ulp(y)) return 0;
  whole += frac > 0.5;
  if (whole == (uint64_t)hi) { /* 9.99..95 rounded up to the next power of ten */
    whole = (uint64_t)lo;
    ++e10;
  }
  *m = whole;
  *x = e10;
  return 1;
}

/* m's p digits, trailing zeros removed, with decimal exponent x, in printf's %g layout. */
static size_t nf_layout(char *out, uint64_t m, int p, int x) {
  char d[24];
  nf_digits_back(d + p, m); /* m has exactly p digits: d[0..p) */
  int nd = p;
  while (nd > 1 && d[nd - 1] == '0') --nd;
  size_t n = 0;
  if (x >= -4 && x < p) {
    if (x >= 0) {
      int whole = x + 1; /* digits before the point */
      if (nd <= whole) {
        memcpy(out, d, (size_t)nd);
        memset(out + nd, '0', (size_t)(whole - nd));
        return (size_t)whole;
      }
      memcpy(out, d, (size_t)whole);
      out[whole] = '.';
      memcpy(out + whole + 1, d + whole, (size_t)(nd - whole));
      return (size_t)nd + 1;
    }
    memcpy(out, "0.0000", (size_t)(1 - x)); /* "0." and -x-1 zeros */
    n = (size_t)(1 - x);
    memcpy(out + n, d, (size_t)nd);
    return n + (size_t)nd;
  }
  out[n++] = d[0];
  if (nd > 1) {
    out[n++] = '.';
    memcpy(out + n, d + 1, (size_t)(nd - 1));
    n += (size_t)(nd - 1);
  }
  out[n++] = 'e';
  out[n++] = x < 0 ? '-' : '+';
  unsigned ax = (unsigned)(x < 0 ? -x : x);
  if (ax < 10) out[n++] = '0'; /* at least two exponent digits */
  n += ef_number_format_uint64(out + n, ax);
  return n;
}

/* v at digits significant digits, as snprintf's "%.*g". */
size_t ef_number_format_double(char *out, double v, int digits) {
  int p = digits < 1 ? 1 : digits > 17 ? 17 : digits;
  if (isnan(v) || isinf(v) || p > EF_NUMBER_FORMAT_FAST_DIGITS)
    return (size_t)snprintf(out, EF_NUMBER_FORMAT_MAX, "%.*g", p, v);
  size_t n = 0;
  double a = v;
  if (signbit(v)) {
    out[n++] = '-';
    a = -v;
  }
  if (a == 0.0) {
    out[n++] = '0';
    return n;
  }
  uint64_t m;
  int x;
  if (!nf_round(a, p, &m, &x)) return (size_t)snprintf(out, EF_NUMBER_FORMAT_MAX, "%.*g", p, v);
  return n + nf_layout(out + n, m, p, x);
}
