/* parameters.c -- JSON parameters on cJSON, with paths and defaults. */
#include "edgeflow/ef_parameters.h"
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_util.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A document owns the cJSON tree and every view made of it. */
typedef struct ef_document {
  cJSON *root;
  char *origin;
  struct ef_parameters_s **views;
  size_t n_views, cap_views;
} ef_document;

struct ef_parameters_s {
  ef_document *doc;
  cJSON *node;
  char *path;
  int is_root;
};

/* Allocate a view of `node` in `doc` at `path`. */
static int ef_view_new(ef_document *doc, cJSON *node, const char *path, int is_root,
                       ef_parameters *out) {
  struct ef_parameters_s *v = calloc(1, sizeof *v);
  EF_CHECK(v, EF_ERR_MEMORY, "out of memory creating a parameters view");
  v->doc = doc;
  v->node = node;
  v->is_root = is_root;
  v->path = ef_strdup(path);
  if (!v->path) {
    free(v);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory creating a parameters view");
  }
  if (doc->n_views == doc->cap_views) {
    size_t cap = doc->cap_views ? 2 * doc->cap_views : 16;
    void *grown = realloc(doc->views, cap * sizeof *doc->views);
    if (!grown) {
      free(v->path);
      free(v);
      return EF_ERROR(EF_ERR_MEMORY, "out of memory creating a parameters view");
    }
    doc->views = grown;
    doc->cap_views = cap;
  }
  doc->views[doc->n_views++] = v;
  *out = v;
  return EF_SUCCESS;
}

/* Line and column (1-based) of byte offset `at` in text. */
static void ef_line_col(const char *text, const char *at, int *line, int *col) {
  *line = 1;
  *col = 1;
  for (const char *c = text; c < at && *c; c++) {
    if (*c == '\n') {
      (*line)++;
      *col = 1;
    } else {
      (*col)++;
    }
  }
}

/* ---------------------------------------------------------------------------
 * Checks cJSON does not make: a key given twice in one object (cJSON keeps both and answers
 * with the first; Python and Kratos keep the last, so the file means different things to
 * different readers) and numbers that overflow to infinity (1e999). */

/* Line of every object key of valid JSON text, in text order (= cJSON's pre-order). */
static int ef_key_lines(const char *text, long **lines, size_t *n_lines) {
  size_t n = 0, cap = 0;
  long *out = NULL, line = 1;
  for (const char *c = text; *c; ++c) {
    if (*c == '\n') {
      line++;
    } else if (*c == '"') {
      long start = line;
      for (++c; *c && *c != '"'; ++c) {
        if (*c == '\\' && c[1]) ++c;
        else if (*c == '\n') line++;
      }
      if (!*c) break;
      const char *after = c + 1;
      while (*after == ' ' || *after == '\t' || *after == '\r' || *after == '\n') after++;
      if (*after != ':') continue;
      if (n == cap) {
        size_t grown_cap = cap ? 2 * cap : 64;
        long *grown = realloc(out, grown_cap * sizeof *out);
        if (!grown) {
          free(out);
          return EF_ERROR(EF_ERR_MEMORY, "out of memory checking JSON keys");
        }
        out = grown;
        cap = grown_cap;
      }
      out[n++] = start;
    }
  }
  *lines = out;
  *n_lines = n;
  return EF_SUCCESS;
}

typedef struct {
  const char *origin;
  const long *lines;
  size_t n_lines, next; /* the next key's position in text order */
} ef_json_scan;

/* Line of the key with text-order position k (0 when the scan lost track). */
static long ef_scan_line(const ef_json_scan *s, size_t k) { return k < s->n_lines ? s->lines[k] : 0; }

/* One member of an object: its key, line and position among its siblings. */
typedef struct {
  const char *key;
  long line;
  size_t order;
} ef_member_key;

static int ef_member_key_cmp(const void *a, const void *b) {
  const ef_member_key *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  /* ties in text order, so the pair reported is the first two occurrences */
  return c ? c : (x->order > y->order) - (x->order < y->order);
}

/* Pre-order walk: duplicate keys of each object, non-finite numbers; path names the place. */
static int ef_check_node(ef_json_scan *s, const cJSON *node, const char *path, long line) {
  if (cJSON_IsNumber(node) && !isfinite(node->valuedouble))
    return EF_ERROR(EF_ERR_PARSE, "%s:%ld: '%s' is not a finite number (it overflows a double); give a value "
                    "below 1.8e308", s->origin, line, path[0] ? path : "(root)");
  if (!cJSON_IsObject(node) && !cJSON_IsArray(node)) return EF_SUCCESS;
  int is_object = cJSON_IsObject(node);
  size_t n = 0;
  for (const cJSON *c = node->child; c; c = c->next) n++;
  ef_member_key *keys = NULL;
  if (is_object && n > 1) {
    keys = malloc(n * sizeof *keys);
    EF_CHECK(keys, EF_ERR_MEMORY, "out of memory checking JSON keys");
  }
  char child_path[1024];
  size_t k = 0;
  int err = EF_SUCCESS;
  for (const cJSON *c = node->child; c && !err; c = c->next, ++k) {
    long child_line = line;
    if (is_object) {
      child_line = ef_scan_line(s, s->next++);
      snprintf(child_path, sizeof child_path, "%s%s%s", path, path[0] ? "." : "", c->string ? c->string : "");
      if (keys) keys[k] = (ef_member_key){c->string ? c->string : "", child_line, k};
    } else {
      snprintf(child_path, sizeof child_path, "%s[%zu]", path, k);
    }
    err = ef_check_node(s, c, child_path, child_line);
  }
  if (!err && keys) {
    qsort(keys, n, sizeof *keys, ef_member_key_cmp);
    for (size_t i = 1; i < n && !err; ++i)
      if (!strcmp(keys[i - 1].key, keys[i].key))
        err = EF_ERROR(EF_ERR_PARSE,
                       "%s: key '%s' appears twice in %s, at lines %ld and %ld; JSON readers disagree on "
                       "which one counts (this one took the first, Python and Kratos the last): keep one",
                       s->origin, keys[i].key, path[0] ? path : "the top-level object", keys[i - 1].line,
                       keys[i].line);
  }
  free(keys);
  return err;
}

/* Duplicate keys and non-finite numbers of a parsed text, with line numbers. */
static int ef_check_document(const char *text, const char *origin, const cJSON *root) {
  ef_json_scan s = {origin, NULL, 0, 0};
  long *lines = NULL;
  EF_CALL(ef_key_lines(text, &lines, &s.n_lines));
  s.lines = lines;
  int err = ef_check_node(&s, root, "", 1);
  free(lines);
  return err;
}

int ef_parameters_parse(const char *text, const char *origin, ef_parameters *p) {
  *p = NULL;
  EF_CHECK(text, EF_ERR_PARAMETER, "%s: no JSON text", origin);
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithOpts(text, &end, 1);
  if (!root) {
    int line, col;
    const char *at = end ? end : cJSON_GetErrorPtr();
    if (!at) at = text;
    ef_line_col(text, at, &line, &col);
    char snippet[32];
    size_t k = 0;
    for (; k < sizeof snippet - 1 && at[k] && at[k] != '\n'; k++) snippet[k] = at[k];
    snippet[k] = '\0';
    return EF_ERROR(EF_ERR_PARSE,
                    "%s:%d:%d: invalid JSON: expected a JSON value, ',' or a closing bracket near '%s'",
                    origin, line, col, snippet);
  }
  int bad = ef_check_document(text, origin, root);
  if (bad) {
    cJSON_Delete(root);
    return bad;
  }
  ef_document *doc = calloc(1, sizeof *doc);
  if (!doc || !(doc->origin = ef_strdup(origin))) {
    free(doc);
    cJSON_Delete(root);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory parsing %s", origin);
  }
  doc->root = root;
  int err = ef_view_new(doc, root, "", 1, p);
  if (err) {
    cJSON_Delete(root);
    free(doc->origin);
    free(doc);
  }
  return err;
}

int ef_parameters_load_file(const char *path, ef_parameters *p) {
  *p = NULL;
  FILE *f = fopen(path, "rb");
  EF_CHECK(f, EF_ERR_IO, "cannot open parameters file '%s': %s", path, strerror(errno));
  char *text = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size + 4096 + 1 > cap) {
      cap = cap ? 2 * cap : 8192;
      char *grown = realloc(text, cap);
      if (!grown) {
        free(text);
        fclose(f);
        return EF_ERROR(EF_ERR_MEMORY, "out of memory reading '%s'", path);
      }
      text = grown;
    }
    size_t got = fread(text + size, 1, 4096, f);
    size += got;
    if (got < 4096) break;
  }
  int read_error = ferror(f);
  fclose(f);
  if (read_error) {
    free(text);
    return EF_ERROR(EF_ERR_IO, "error reading '%s'", path);
  }
  text[size] = '\0';
  size_t nul = strlen(text);
  if (nul != size) {
    free(text); /* leaked before fuzz_parameters found it */
    return EF_ERROR(EF_ERR_PARSE, "%s: contains a NUL byte at byte %zu: not a JSON text file", path, nul);
  }
  int err = ef_parameters_parse(text, path, p);
  free(text);
  return err;
}

int ef_parameters_clone(ef_parameters p, ef_parameters *copy) {
  *copy = NULL;
  char *text = cJSON_PrintUnformatted(p->node);
  EF_CHECK(text, EF_ERR_MEMORY, "out of memory copying parameters");
  char origin[512];
  snprintf(origin, sizeof origin, "%s%s%s", p->doc->origin, p->path[0] ? ":" : "", p->path);
  int err = ef_parameters_parse(text, origin, copy);
  free(text);
  return err;
}

void ef_parameters_destroy(ef_parameters *p) {
  if (!p || !*p) return;
  if ((*p)->is_root) {
    ef_document *doc = (*p)->doc;
    for (size_t i = 0; i < doc->n_views; i++) {
      free(doc->views[i]->path);
      free(doc->views[i]);
    }
    free(doc->views);
    cJSON_Delete(doc->root);
    free(doc->origin);
    free(doc);
  }
  *p = NULL;
}

const char *ef_parameters_path(ef_parameters p) { return p->path; }
const char *ef_parameters_origin(ef_parameters p) { return p->doc->origin; }

static ef_json_type ef_type_of(const cJSON *n) {
  if (cJSON_IsBool(n)) return EF_JSON_BOOL;
  if (cJSON_IsNumber(n)) return EF_JSON_NUMBER;
  if (cJSON_IsString(n)) return EF_JSON_STRING;
  if (cJSON_IsArray(n)) return EF_JSON_ARRAY;
  if (cJSON_IsObject(n)) return EF_JSON_OBJECT;
  return EF_JSON_NULL;
}

ef_json_type ef_parameters_type(ef_parameters p) { return ef_type_of(p->node); }

const char *ef_json_type_name(ef_json_type t) {
  switch (t) {
    case EF_JSON_BOOL: return "a boolean";
    case EF_JSON_NUMBER: return "a number";
    case EF_JSON_STRING: return "a string";
    case EF_JSON_ARRAY: return "an array";
    case EF_JSON_OBJECT: return "an object";
    default: return "null";
  }
}

/* "a.b" + "c" -> "a.b.c"; array index -> "a.b[3]". */
static void ef_join_path(char *out, size_t size, const char *base, const char *key, int index) {
  if (key)
    snprintf(out, size, "%s%s%s", base, base[0] ? "." : "", key);
  else
    snprintf(out, size, "%s[%d]", base, index);
}

int ef_parameters_has(ef_parameters p, const char *key) {
  return cJSON_IsObject(p->node) && cJSON_GetObjectItemCaseSensitive(p->node, key) != NULL;
}

/* List the member names of an object into buf, comma separated. */
static void ef_list_keys(const cJSON *obj, char *buf, size_t size) {
  buf[0] = '\0';
  size_t used = 0;
  const cJSON *c;
  cJSON_ArrayForEach(c, obj) {
    int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", c->string);
    if (n < 0 || (size_t)n >= size - used) break;
    used += (size_t)n;
  }
}

int ef_parameters_get(ef_parameters p, const char *key, ef_parameters *child) {
  *child = NULL;
  char path[1024];
  ef_join_path(path, sizeof path, p->path, key, 0);
  EF_CHECK(cJSON_IsObject(p->node), EF_ERR_PARAMETER, "%s: '%s' is %s, expected an object with key '%s'",
           p->doc->origin, p->path[0] ? p->path : "<root>", ef_json_type_name(ef_type_of(p->node)), key);
  cJSON *n = cJSON_GetObjectItemCaseSensitive(p->node, key);
  if (!n) {
    char keys[2048];
    ef_list_keys(p->node, keys, sizeof keys);
    return EF_ERROR(EF_ERR_PARAMETER, "%s: missing key '%s' (present keys: %s)", p->doc->origin, path,
                    keys[0] ? keys : "none");
  }
  return ef_view_new(p->doc, n, path, 0, child);
}

int ef_parameters_size(ef_parameters p) {
  return cJSON_IsArray(p->node) || cJSON_IsObject(p->node) ? cJSON_GetArraySize(p->node) : 0;
}

int ef_parameters_at(ef_parameters p, int index, ef_parameters *child) {
  *child = NULL;
  EF_CHECK(cJSON_IsArray(p->node) || cJSON_IsObject(p->node), EF_ERR_PARAMETER,
           "%s: '%s' is %s, expected an array", p->doc->origin, p->path,
           ef_json_type_name(ef_type_of(p->node)));
  cJSON *n = cJSON_GetArrayItem(p->node, index);
  EF_CHECK(n, EF_ERR_PARAMETER, "%s: '%s' has no element %d", p->doc->origin, p->path, index);
  char path[1024];
  if (cJSON_IsObject(p->node))
    ef_join_path(path, sizeof path, p->path, n->string, 0);
  else
    ef_join_path(path, sizeof path, p->path, NULL, index);
  return ef_view_new(p->doc, n, path, 0, child);
}

const char *ef_parameters_key_at(ef_parameters p, int index) {
  if (!cJSON_IsObject(p->node)) return NULL;
  cJSON *n = cJSON_GetArrayItem(p->node, index);
  return n ? n->string : NULL;
}

/* Member `key` of object p with the expected type, or an error naming the path. */
static int ef_member(ef_parameters p, const char *key, ef_json_type want, cJSON **out) {
  char path[1024];
  ef_join_path(path, sizeof path, p->path, key, 0);
  EF_CHECK(cJSON_IsObject(p->node), EF_ERR_PARAMETER, "%s: '%s' is %s, expected an object",
           p->doc->origin, p->path[0] ? p->path : "<root>", ef_json_type_name(ef_type_of(p->node)));
  cJSON *n = cJSON_GetObjectItemCaseSensitive(p->node, key);
  if (!n) {
    char keys[2048];
    ef_list_keys(p->node, keys, sizeof keys);
    return EF_ERROR(EF_ERR_PARAMETER, "%s: missing key '%s' (present keys: %s)", p->doc->origin, path,
                    keys[0] ? keys : "none");
  }
  EF_CHECK(ef_type_of(n) == want, EF_ERR_PARAMETER, "%s: '%s' is %s, expected %s", p->doc->origin, path,
           ef_json_type_name(ef_type_of(n)), ef_json_type_name(want));
  *out = n;
  return EF_SUCCESS;
}

int ef_parameters_get_double(ef_parameters p, const char *key, double *value) {
  cJSON *n;
  EF_CALL(ef_member(p, key, EF_JSON_NUMBER, &n));
  *value = n->valuedouble;
  return EF_SUCCESS;
}

int ef_parameters_get_int(ef_parameters p, const char *key, long *value) {
  cJSON *n;
  EF_CALL(ef_member(p, key, EF_JSON_NUMBER, &n));
  double v = n->valuedouble;
  EF_CHECK(v == floor(v) && fabs(v) < 9.0e15, EF_ERR_PARAMETER, "%s: '%s%s%s' is %g, expected an integer",
           p->doc->origin, p->path, p->path[0] ? "." : "", key, v);
  *value = (long)v;
  return EF_SUCCESS;
}

int ef_parameters_get_bool(ef_parameters p, const char *key, int *value) {
  cJSON *n;
  EF_CALL(ef_member(p, key, EF_JSON_BOOL, &n));
  *value = cJSON_IsTrue(n);
  return EF_SUCCESS;
}

int ef_parameters_get_string(ef_parameters p, const char *key, const char **value) {
  cJSON *n;
  EF_CALL(ef_member(p, key, EF_JSON_STRING, &n));
  *value = n->valuestring;
  return EF_SUCCESS;
}

int ef_parameters_get_vector(ef_parameters p, const char *key, int count, double *values) {
  cJSON *n;
  EF_CALL(ef_member(p, key, EF_JSON_ARRAY, &n));
  EF_CHECK(cJSON_GetArraySize(n) == count, EF_ERR_PARAMETER, "%s: '%s%s%s' has %d entries, expected %d numbers",
           p->doc->origin, p->path, p->path[0] ? "." : "", key, cJSON_GetArraySize(n), count);
  for (int i = 0; i < count; i++) {
    cJSON *e = cJSON_GetArrayItem(n, i);
    EF_CHECK(cJSON_IsNumber(e), EF_ERR_PARAMETER, "%s: '%s%s%s[%d]' is %s, expected a number", p->doc->origin,
             p->path, p->path[0] ? "." : "", key, i, ef_json_type_name(ef_type_of(e)));
    values[i] = e->valuedouble;
  }
  return EF_SUCCESS;
}

int ef_parameters_as_double(ef_parameters p, double *value) {
  EF_CHECK(cJSON_IsNumber(p->node), EF_ERR_PARAMETER, "%s: '%s' is %s, expected a number", p->doc->origin,
           p->path, ef_json_type_name(ef_type_of(p->node)));
  *value = p->node->valuedouble;
  return EF_SUCCESS;
}

int ef_parameters_as_string(ef_parameters p, const char **value) {
  EF_CHECK(cJSON_IsString(p->node), EF_ERR_PARAMETER, "%s: '%s' is %s, expected a string", p->doc->origin,
           p->path, ef_json_type_name(ef_type_of(p->node)));
  *value = p->node->valuestring;
  return EF_SUCCESS;
}

/* Replace member `key` of object p by `item` (takes ownership). */
static int ef_replace(ef_parameters p, const char *key, cJSON *item) {
  if (!item) return EF_ERROR(EF_ERR_MEMORY, "out of memory setting '%s'", key);
  if (!cJSON_IsObject(p->node)) {
    cJSON_Delete(item);
    return EF_ERROR(EF_ERR_PARAMETER, "%s: '%s' is not an object: cannot set '%s'", p->doc->origin, p->path,
                    key);
  }
  if (cJSON_GetObjectItemCaseSensitive(p->node, key)) {
    /* Views of the old member would dangle: only allowed for scalars in practice. */
    cJSON_ReplaceItemInObjectCaseSensitive(p->node, key, item);
  } else {
    cJSON_AddItemToObject(p->node, key, item);
  }
  return EF_SUCCESS;
}

int ef_parameters_set_double(ef_parameters p, const char *key, double value) {
  return ef_replace(p, key, cJSON_CreateNumber(value));
}
int ef_parameters_set_string(ef_parameters p, const char *key, const char *value) {
  return ef_replace(p, key, cJSON_CreateString(value));
}
int ef_parameters_set_bool(ef_parameters p, const char *key, int value) {
  return ef_replace(p, key, cJSON_CreateBool(value));
}
int ef_parameters_set_json(ef_parameters p, const char *key, const char *json) {
  cJSON *item = cJSON_Parse(json);
  EF_CHECK(item, EF_ERR_PARAMETER, "invalid JSON given for '%s': %s", key, json);
  return ef_replace(p, key, item);
}
int ef_parameters_remove(ef_parameters p, const char *key) {
  if (cJSON_IsObject(p->node)) cJSON_DeleteItemFromObjectCaseSensitive(p->node, key);
  return EF_SUCCESS;
}

char *ef_parameters_to_string(ef_parameters p, int pretty) {
  return pretty ? cJSON_Print(p->node) : cJSON_PrintUnformatted(p->node);
}

/* Is key in the NULL-terminated list? */
static int ef_in_list(const char *key, const char *const *list) {
  for (; list && *list; list++)
    if (!strcmp(*list, key)) return 1;
  return 0;
}

/* Recursive default validation of object `node` (at `path`) against `defaults`. */
static int ef_validate_node(ef_document *doc, cJSON *node, const char *path, const cJSON *defaults,
                            const char *const *tolerated, char *found, size_t found_size) {
  char child_path[1024];
  cJSON *c;
  /* Unknown keys and wrong types. */
  cJSON_ArrayForEach(c, node) {
    ef_join_path(child_path, sizeof child_path, path, c->string, 0);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(defaults, c->string);
    if (!d) {
      if (ef_in_list(c->string, tolerated)) {
        if (found) {
          size_t used = strlen(found);
          snprintf(found + used, found_size - used, "%s%s", used ? ", " : "", c->string);
        }
        continue;
      }
      char keys[2048];
      ef_list_keys(defaults, keys, sizeof keys);
      return EF_ERROR(EF_ERR_PARAMETER, "%s: unknown key '%s'; valid keys here are: %s", doc->origin,
                      child_path, keys[0] ? keys : "none");
    }
    ef_json_type want = ef_type_of(d), have = ef_type_of(c);
    if (want == EF_JSON_NULL) continue; /* any type */
    EF_CHECK(want == have, EF_ERR_PARAMETER, "%s: '%s' is %s, expected %s", doc->origin, child_path,
             ef_json_type_name(have), ef_json_type_name(want));
    if (want == EF_JSON_OBJECT && cJSON_GetArraySize(d) > 0)
      EF_CALL(ef_validate_node(doc, c, child_path, d, NULL, NULL, 0));
  }
  /* Missing keys take their defaults. */
  cJSON_ArrayForEach(c, (cJSON *)defaults) {
    cJSON *have = cJSON_GetObjectItemCaseSensitive(node, c->string);
    if (!have) {
      cJSON *copy = cJSON_Duplicate(c, 1);
      EF_CHECK(copy, EF_ERR_MEMORY, "out of memory filling defaults");
      cJSON_AddItemToObject(node, c->string, copy);
    } else if (cJSON_IsObject(c) && cJSON_IsObject(have) && cJSON_GetArraySize(c) > 0) {
      /* already validated above, which also filled nested defaults */
    }
  }
  return EF_SUCCESS;
}

int ef_parameters_validate_defaults_tolerant(ef_parameters p, const char *defaults,
                                             const char *const *tolerated, char *found,
                                             size_t found_size) {
  cJSON *d = cJSON_Parse(defaults);
  EF_CHECK(d && cJSON_IsObject(d), EF_ERR_INTERNAL, "invalid defaults JSON for '%s'", p->path);
  if (found && found_size) found[0] = '\0';
  int err;
  if (!cJSON_IsObject(p->node)) {
    err = EF_ERROR(EF_ERR_PARAMETER, "%s: '%s' is %s, expected an object", p->doc->origin,
                   p->path[0] ? p->path : "<root>", ef_json_type_name(ef_type_of(p->node)));
  } else {
    err = ef_validate_node(p->doc, p->node, p->path, d, tolerated, found, found_size);
  }
  cJSON_Delete(d);
  return err;
}

int ef_parameters_validate_defaults(ef_parameters p, const char *defaults) {
  return ef_parameters_validate_defaults_tolerant(p, defaults, NULL, NULL, 0);
}

int ef_write_text_file_atomic(const char *path, const char *text) {
  char tmp[4096];
  const char *slash = strrchr(path, '/');
  if (slash)
    snprintf(tmp, sizeof tmp, "%.*s/.%s.tmp.%ld", (int)(slash - path), path, slash + 1, (long)getpid());
  else
    snprintf(tmp, sizeof tmp, ".%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  EF_CHECK(f, EF_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
  size_t n = strlen(text);
  int ok = fwrite(text, 1, n, f) == n;
  ok = (fflush(f) == 0) && ok;
  ok = (fsync(fileno(f)) == 0) && ok;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) {
    int e = errno;
    remove(tmp);
    return EF_ERROR(EF_ERR_IO, "cannot write '%s': %s", path, strerror(e));
  }
  return EF_SUCCESS;
}
