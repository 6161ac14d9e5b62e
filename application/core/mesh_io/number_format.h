/* number_format.h -- decimal text of doubles (p significant digits) and integers without a printf
 * call per value: what the ascii .vtu writer puts in every DataArray (ef_vtu_write_options.precision).
 *
 * ef_number_format_double writes the text printf's "%.*g" writes for the same digits: the value
 * correctly rounded to p significant digits (ties to even, as glibc), trailing zeros removed,
 * fixed notation for decimal exponents -4..p-1, else d.ddde+XX; "-0", "nan", "-nan", "inf", "-inf"
 * as printf.  For p <= EF_NUMBER_FORMAT_FAST_DIGITS it scales by powers of ten in double
 * arithmetic and rounds the integer mantissa; where the scaled value lies within its rounding
 * error of a half (a near-tie: the digit printf would choose cannot be known from it), and for
 * larger p, it calls snprintf.  Private to the core (tests include it from application/core).
 */
#ifndef EF_NUMBER_FORMAT_H
#define EF_NUMBER_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* Bytes the output buffer must have: the longest text ("-1.2345678901234567e-308", 24) plus
 * room for the NUL that the snprintf path writes after it. */
#define EF_NUMBER_FORMAT_MAX 32

/* Largest digit count formatted without snprintf: the mantissa (< 10^15 < 2^50) then keeps at
 * least 3 fraction bits in a double, so a near-tie is rare (and detected). */
#define EF_NUMBER_FORMAT_FAST_DIGITS 15

/* v with digits (1..17; clamped) significant digits, as "%.*g"; returns the length (no NUL
 * counted; one may be written after the text). */
size_t ef_number_format_double(char *out, double v, int digits);

/* v in decimal, as "%" PRId64 / "%" PRIu64; returns the length. */
size_t ef_number_format_int64(char *out, int64_t v);
size_t ef_number_format_uint64(char *out, uint64_t v);

#endif
