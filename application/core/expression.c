/* expression.c -- values given as numbers or as formulas of x, y, z, t, and Kratos intervals.
 *
 * Formulas are parsed by libmatheval.  Kratos users write Python, so the text
 * is first translated: "**" becomes "^", "math." prefixes are dropped and the
 * initial-configuration coordinates X, Y, Z mean x, y, z (nothing moves the
 * mesh here).  Constants keep no evaluator at all, so evaluating them is free.
 */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_process.h"

#include <ctype.h>
#include <math.h>
#include <matheval.h>
#include <stdlib.h>
#include <string.h>

struct ef_expression_s {
  void *evaluator; /* NULL for a constant */
  double constant;
  int uses_space;  /* depends on x, y or z */
  int uses_time;   /* depends on t */
  char text[160];  /* as given, for messages (cut when longer) */
};

/* The formula as the user gave it (a number is printed with %.17g). */
const char *ef_expression_text(ef_expression e) { return e ? e->text : ""; }

/* ---------------------------------------------------------------------------
 * Python-to-libmatheval translation.
 *
 * A small recursive-descent parser with Python's precedence re-emits the
 * formula fully parenthesised, because libmatheval's '^' groups to the left
 * (2^3^2 = 64) while Python's '**' groups to the right (2**3**2 = 512), and
 * because libmatheval leaks memory on text it cannot parse: only text that
 * parsed here reaches it.  Grammar:
 *   sum     := product (('+' | '-') product)*
 *   product := unary (('*' | '/') unary)*
 *   unary   := ('+' | '-') unary | power
 *   power   := primary [('**' | '^') unary]
 *   primary := number | name | name '(' sum [',' sum] ')' | '(' sum ')'
 */

typedef struct {
  const char *text;
  size_t pos;
  char *out;
  size_t used, cap;
  char message[256];  /* first syntax error */
  char unknown[256];  /* unknown names, ", "-separated */
  int n_unknown;
  int out_of_memory;
} ef_xlat;

static void ef_xlat_emit(ef_xlat *x, const char *s, size_t n) {
  if (x->out_of_memory) return;
  if (x->used + n + 1 > x->cap) {
    size_t cap = x->cap ? 2 * x->cap : 256;
    while (cap < x->used + n + 1) cap *= 2;
    char *grown = realloc(x->out, cap);
    if (!grown) {
      x->out_of_memory = 1;
      return;
    }
    x->out = grown;
    x->cap = cap;
  }
  memcpy(x->out + x->used, s, n);
  x->used += n;
  x->out[x->used] = '\0';
}

static void ef_xlat_puts(ef_xlat *x, const char *s) { ef_xlat_emit(x, s, strlen(s)); }

static int ef_xlat_fail(ef_xlat *x, const char *what) {
  if (!x->message[0]) {
    if (x->text[x->pos])
      snprintf(x->message, sizeof x->message, "%s at character %zu ('%.12s')", what, x->pos + 1, x->text + x->pos);
    else
      snprintf(x->message, sizeof x->message, "%s at the end", what);
  }
  return 1;
}

static void ef_xlat_space(ef_xlat *x) {
  while (isspace((unsigned char)x->text[x->pos])) x->pos++;
}

/* Consume `op` if it comes next (and "*" only when it is not "**"). */
static int ef_xlat_accept(ef_xlat *x, const char *op) {
  ef_xlat_space(x);
  size_t n = strlen(op);
  if (strncmp(x->text + x->pos, op, n)) return 0;
  if (!strcmp(op, "*") && x->text[x->pos + 1] == '*') return 0;
  x->pos += n;
  return 1;
}

static int ef_xlat_sum(ef_xlat *x);
static int ef_xlat_unary(ef_xlat *x);

/* A name: "math." is dropped, X/Y/Z are x/y/z.  Writes it into name. */
static int ef_xlat_name(ef_xlat *x, char *name, size_t size) {
  for (;;) {
    size_t j = x->pos;
    while (isalnum((unsigned char)x->text[j]) || x->text[j] == '_') j++;
    size_t len = j - x->pos;
    if (len == 4 && !strncmp(x->text + x->pos, "math", 4) && x->text[j] == '.') {
      x->pos = j + 1;
      if (!isalpha((unsigned char)x->text[x->pos]) && x->text[x->pos] != '_')
        return ef_xlat_fail(x, "a name must follow 'math.'");
      continue;
    }
    if (len >= size) return ef_xlat_fail(x, "name too long");
    memcpy(name, x->text + x->pos, len);
    name[len] = '\0';
    x->pos = j;
    if (len == 1 && (name[0] == 'X' || name[0] == 'Y' || name[0] == 'Z')) name[0] = (char)tolower((unsigned char)name[0]);
    return 0;
  }
}

/* libmatheval's one-argument functions. */
static int ef_xlat_is_function(const char *name) {
  static const char *const known[] = {"exp",   "log",   "sqrt",  "sin",   "cos",   "tan",   "cot",   "sec",
                                      "csc",   "asin",  "acos",  "atan",  "acot",  "asec",  "acsc",  "sinh",
                                      "cosh",  "tanh",  "coth",  "sech",  "csch",  "asinh", "acosh", "atanh",
                                      "acoth", "asech", "acsch", "abs",   "step",  "delta", "nandelta", "erf"};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
    if (!strcmp(known[i], name)) return 1;
  return 0;
}

/* A call name(args): one argument, or Python's two-argument log and pow. */
static int ef_xlat_call(ef_xlat *x, const char *name) {
  const char *fn = !strcmp(name, "fabs") ? "abs" : name;
  int two = !strcmp(name, "pow"), log_base = !strcmp(name, "log"), log10 = !strcmp(name, "log10");
  if (!two && !log10 && !ef_xlat_is_function(fn)) {
    char what[128];
    snprintf(what, sizeof what, "unknown function '%s'", name);
    return ef_xlat_fail(x, what);
  }
  /* Arguments are translated into separate pieces, then arranged. */
  char *args[2] = {NULL, NULL};
  int n = 0, err = 0;
  do {
    size_t mark = x->used;
    if (ef_xlat_sum(x)) {
      err = 1;
      break;
    }
    args[n] = malloc(x->used - mark + 1);
    if (!args[n]) {
      x->out_of_memory = 1;
      err = 1;
      break;
    }
    memcpy(args[n], x->out ? x->out + mark : "", x->used - mark);
    args[n][x->used - mark] = '\0';
    x->used = mark;
    n++;
  } while (n < 2 && ef_xlat_accept(x, ","));
  if (!err && !ef_xlat_accept(x, ")")) err = ef_xlat_fail(x, "expected ')'");
  if (!err && (two ? n != 2 : (n != 1 && !(log_base && n == 2)))) {
    char what[128];
    snprintf(what, sizeof what, "'%s' takes %s", name, two ? "2 arguments" : log_base ? "1 or 2 arguments" : "1 argument");
    err = ef_xlat_fail(x, what);
  }
  if (!err) {
    if (two) {
      ef_xlat_puts(x, "((");
      ef_xlat_puts(x, args[0]);
      ef_xlat_puts(x, ")^(");
      ef_xlat_puts(x, args[1]);
      ef_xlat_puts(x, "))");
    } else if (log10 || (log_base && n == 2)) {
      ef_xlat_puts(x, "(log(");
      ef_xlat_puts(x, args[0]);
      ef_xlat_puts(x, ")/log(");
      ef_xlat_puts(x, log10 ? "10" : args[1]);
      ef_xlat_puts(x, "))");
    } else {
      ef_xlat_puts(x, fn);
      ef_xlat_puts(x, "(");
      ef_xlat_puts(x, args[0]);
      ef_xlat_puts(x, ")");
    }
  }
  free(args[0]);
  free(args[1]);
  return err;
}

static int ef_xlat_primary(ef_xlat *x) {
  ef_xlat_space(x);
  const char *s = x->text + x->pos;
  if (isdigit((unsigned char)*s) || (*s == '.' && isdigit((unsigned char)s[1]))) {
    char *end;
    double v = strtod(s, &end);
    if (!isfinite(v)) return ef_xlat_fail(x, "number out of range");
    x->pos += (size_t)(end - s);
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", v);
    ef_xlat_puts(x, buf);
    return 0;
  }
  if (isalpha((unsigned char)*s) || *s == '_') {
    char name[64];
    if (ef_xlat_name(x, name, sizeof name)) return 1;
    if (ef_xlat_accept(x, "(")) return ef_xlat_call(x, name);
    int known = !strcmp(name, "x") || !strcmp(name, "y") || !strcmp(name, "z") || !strcmp(name, "t") ||
                !strcmp(name, "pi") || !strcmp(name, "e");
    if (!known) {
      size_t used = strlen(x->unknown);
      if (used + strlen(name) + 5 < sizeof x->unknown && !strstr(x->unknown, name))
        snprintf(x->unknown + used, sizeof x->unknown - used, "%s'%s'", used ? ", " : "", name);
      x->n_unknown++;
    }
    ef_xlat_puts(x, name);
    return 0;
  }
  if (ef_xlat_accept(x, "(")) {
    ef_xlat_puts(x, "(");
    if (ef_xlat_sum(x)) return 1;
    if (!ef_xlat_accept(x, ")")) return ef_xlat_fail(x, "expected ')'");
    ef_xlat_puts(x, ")");
    return 0;
  }
  return ef_xlat_fail(x, *s ? "expected a number, a name or '('" : "the formula is incomplete");
}

static int ef_xlat_power(ef_xlat *x) {
  ef_xlat_puts(x, "(");
  if (ef_xlat_primary(x)) return 1;
  if (ef_xlat_accept(x, "**") || ef_xlat_accept(x, "^")) {
    ef_xlat_puts(x, ")^(");
    if (ef_xlat_unary(x)) return 1;
  }
  ef_xlat_puts(x, ")");
  return 0;
}

static int ef_xlat_unary(ef_xlat *x) {
  if (ef_xlat_accept(x, "-")) {
    ef_xlat_puts(x, "(-");
    if (ef_xlat_unary(x)) return 1;
    ef_xlat_puts(x, ")");
    return 0;
  }
  if (ef_xlat_accept(x, "+")) return ef_xlat_unary(x);
  return ef_xlat_power(x);
}

static int ef_xlat_product(ef_xlat *x) {
  ef_xlat_puts(x, "(");
  if (ef_xlat_unary(x)) return 1;
  for (;;) {
    const char *op = ef_xlat_accept(x, "*") ? "*" : ef_xlat_accept(x, "/") ? "/" : NULL;
    if (!op) break;
    ef_xlat_puts(x, op);
    if (ef_xlat_unary(x)) return 1;
  }
  ef_xlat_puts(x, ")");
  return 0;
}

static int ef_xlat_sum(ef_xlat *x) {
  ef_xlat_puts(x, "(");
  if (ef_xlat_product(x)) return 1;
  for (;;) {
    const char *op = ef_xlat_accept(x, "+") ? "+" : ef_xlat_accept(x, "-") ? "-" : NULL;
    if (!op) break;
    ef_xlat_puts(x, op);
    if (ef_xlat_product(x)) return 1;
  }
  ef_xlat_puts(x, ")");
  return 0;
}

/* Parse text (a formula of x, y, z, t); `where` names it in errors ("file: path"). */
int ef_expression_create(const char *text, const char *where, ef_expression *e) {
  EF_CHECK(e, EF_ERR_PARAMETER, "ef_expression_create: NULL output handle");
  *e = NULL;
  if (!where) where = "expression";
  EF_CHECK(text, EF_ERR_PARAMETER, "%s: no expression text", where);
  const char *s = text;
  while (isspace((unsigned char)*s)) s++;
  EF_CHECK(*s, EF_ERR_PARAMETER, "%s: the expression is empty", where);
  ef_xlat xl;
  memset(&xl, 0, sizeof xl);
  xl.text = text;
  int bad = ef_xlat_sum(&xl);
  ef_xlat_space(&xl);
  if (!bad && xl.text[xl.pos]) bad = ef_xlat_fail(&xl, "unexpected text");
  if (xl.out_of_memory) {
    free(xl.out);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory translating expression '%s'", text);
  }
  if (bad) {
    free(xl.out);
    return EF_ERROR(EF_ERR_PARAMETER,
                    "%s: cannot parse expression '%s': %s (a formula of x, y, z, t with + - * / and ** or ^, "
                    "functions such as sin, cos, exp, log, sqrt, abs, pow and constants pi, e)",
                    where, text, xl.message);
  }
  if (xl.n_unknown) {
    free(xl.out);
    return EF_ERROR(EF_ERR_PARAMETER, "%s: expression '%s' uses unknown variable%s %s; only x, y, z and t exist",
                    where, text, strchr(xl.unknown, ',') ? "s" : "", xl.unknown);
  }
  void *ev = evaluator_create(xl.out);
  free(xl.out);
  EF_CHECK(ev, EF_ERR_PARAMETER, "%s: libmatheval cannot parse expression '%s'", where, text);
  char **names = NULL;
  int count = 0;
  evaluator_get_variables(ev, &names, &count);
  int space = 0, time = 0;
  for (int i = 0; i < count; i++) {
    if (!strcmp(names[i], "x") || !strcmp(names[i], "y") || !strcmp(names[i], "z")) {
      space = 1;
    } else if (!strcmp(names[i], "t")) {
      time = 1;
    } else {
      char unknown[64];
      snprintf(unknown, sizeof unknown, "%s", names[i]);
      evaluator_destroy(ev);
      return EF_ERROR(EF_ERR_PARAMETER, "%s: expression '%s' uses unknown variable '%s'; only x, y, z and t exist",
                      where, text, unknown);
    }
  }
  struct ef_expression_s *x = calloc(1, sizeof *x);
  if (!x) {
    evaluator_destroy(ev);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory creating expression '%s'", text);
  }
  x->uses_space = space;
  x->uses_time = time;
  snprintf(x->text, sizeof x->text, "%s", text);
  if (!space && !time) {
    /* Fold constants once: "2*pi" costs nothing later. */
    x->constant = evaluator_evaluate(ev, 0, NULL, NULL);
    evaluator_destroy(ev);
    if (!isfinite(x->constant)) {
      free(x);
      return EF_ERROR(EF_ERR_PARAMETER, "%s: expression '%s' is not a finite number", where, text);
    }
  } else {
    x->evaluator = ev;
  }
  *e = x;
  return EF_SUCCESS;
}

/* A number, or a formula string, at p[key] (p itself when key is NULL). */
int ef_expression_from_parameters(ef_parameters p, const char *key, ef_expression *e) {
  EF_CHECK(e, EF_ERR_PARAMETER, "ef_expression_from_parameters: NULL output handle");
  *e = NULL;
  ef_parameters v = p;
  if (key) EF_CALL(ef_parameters_get(p, key, &v));
  char where[1024];
  snprintf(where, sizeof where, "%s: '%s'", ef_parameters_origin(v), ef_parameters_path(v));
  ef_json_type type = ef_parameters_type(v);
  if (type == EF_JSON_NUMBER) {
    double value;
    EF_CALL(ef_parameters_as_double(v, &value));
    struct ef_expression_s *x = calloc(1, sizeof *x);
    EF_CHECK(x, EF_ERR_MEMORY, "out of memory creating expression at %s", where);
    x->constant = value;
    snprintf(x->text, sizeof x->text, "%.17g", value);
    *e = x;
    return EF_SUCCESS;
  }
  EF_CHECK(type == EF_JSON_STRING, EF_ERR_PARAMETER, "%s is %s, expected a number or an expression string",
           where, ef_json_type_name(type));
  const char *text;
  EF_CALL(ef_parameters_as_string(v, &text));
  return ef_expression_create(text, where, e);
}

/* e(x, y, z, t). */
double ef_expression_eval(ef_expression e, double x, double y, double z, double t) {
  if (!e->evaluator) return e->constant;
  static char *names[4] = {"x", "y", "z", "t"};
  double values[4] = {x, y, z, t};
  return evaluator_evaluate(e->evaluator, 4, names, values);
}

int ef_expression_is_constant(ef_expression e) { return !e->uses_space && !e->uses_time; }

int ef_expression_depends_on_time(ef_expression e) { return e->uses_time; }

/* Free; accepts NULL and sets *e to NULL. */
void ef_expression_destroy(ef_expression *e) {
  if (!e || !*e) return;
  if ((*e)->evaluator) evaluator_destroy((*e)->evaluator);
  free(*e);
  *e = NULL;
}

/* --------------------------------------------------------------------------
 * Intervals. */

/* Kratos' [start, end] at p[key]: numbers, end may be "End" (+infinity, stored as 1e30 like Kratos). */
int ef_interval_from_parameters(ef_parameters p, const char *key, ef_interval *interval) {
  EF_CHECK(interval, EF_ERR_PARAMETER, "ef_interval_from_parameters: NULL output");
  ef_parameters v = p;
  if (key) EF_CALL(ef_parameters_get(p, key, &v));
  const char *origin = ef_parameters_origin(v), *path = ef_parameters_path(v);
  EF_CHECK(ef_parameters_type(v) == EF_JSON_ARRAY && ef_parameters_size(v) == 2, EF_ERR_PARAMETER,
           "%s: '%s' must be an interval [start, end] (end a number or \"End\"), got %s%s", origin, path,
           ef_json_type_name(ef_parameters_type(v)),
           ef_parameters_type(v) == EF_JSON_ARRAY ? " of the wrong length" : "");
  double bounds[2];
  for (int i = 0; i < 2; i++) {
    ef_parameters b;
    EF_CALL(ef_parameters_at(v, i, &b));
    ef_json_type type = ef_parameters_type(b);
    if (type == EF_JSON_NUMBER) {
      EF_CALL(ef_parameters_as_double(b, &bounds[i]));
      EF_CHECK(isfinite(bounds[i]), EF_ERR_PARAMETER, "%s: '%s' is not finite", origin, ef_parameters_path(b));
      continue;
    }
    const char *text = NULL;
    if (type == EF_JSON_STRING) EF_CALL(ef_parameters_as_string(b, &text));
    EF_CHECK(i == 1 && text && !strcmp(text, "End"), EF_ERR_PARAMETER,
             "%s: '%s' is %s%s%s%s, expected a number%s", origin, ef_parameters_path(b), ef_json_type_name(type),
             text ? " \"" : "", text ? text : "", text ? "\"" : "", i == 1 ? " or \"End\"" : "");
    bounds[i] = 1e30;
  }
  EF_CHECK(bounds[0] <= bounds[1], EF_ERR_PARAMETER, "%s: '%s' = [%g, %g] ends before it starts", origin, path,
           bounds[0], bounds[1]);
  interval->start = bounds[0];
  interval->end = bounds[1];
  return EF_SUCCESS;
}

/* 1 when start <= t <= end, with a relative slack of 1e-12 so that a time
 * summed from many steps (0.1 + 0.1 + ... = 1.0000000000000002) still counts. */
int ef_interval_contains(ef_interval interval, double t) {
  double lo = interval.start - 1e-12 * fmax(1.0, fabs(interval.start));
  double hi = interval.end + 1e-12 * fmax(1.0, fabs(interval.end));
  return t >= lo && t <= hi;
}
