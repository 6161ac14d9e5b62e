/* ef_parameters.h -- JSON parameters with published defaults (Kratos' Parameters).
 *
 * A parameters handle is a view of one JSON value inside a document, with its
 * JSON path ("solver_settings.time_stepping.CFL_number") and the file it came
 * from, so every error can say where.  Components publish their defaults as
 * a JSON text; ef_parameters_validate_defaults() fills missing keys from it and
 * rejects unknown keys (listing the valid ones) and values of the wrong type.
 *
 * Views returned by getters belong to the document and live until the root
 * handle is destroyed.
 */
#ifndef EF_PARAMETERS_H
#define EF_PARAMETERS_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ef_parameters_s *ef_parameters;

typedef enum {
  EF_JSON_NULL,
  EF_JSON_BOOL,
  EF_JSON_NUMBER,
  EF_JSON_STRING,
  EF_JSON_ARRAY,
  EF_JSON_OBJECT
} ef_json_type;

/* Parse a JSON file; syntax errors name the file, line and column. */
int ef_parameters_load_file(const char *path, ef_parameters *p);
/* Parse JSON text; `origin` names it in messages ("<defaults of X>"). */
int ef_parameters_parse(const char *text, const char *origin, ef_parameters *p);
/* A deep, independent copy of a view (a new root). */
int ef_parameters_clone(ef_parameters p, ef_parameters *copy);
/* Destroy a root (views of it become invalid); NULL-safe; views are ignored. */
void ef_parameters_destroy(ef_parameters *p);

/* Fill missing keys from `defaults` (JSON text of an object) and reject unknown
 * keys and wrong types.  Nested objects are validated recursively when the
 * default object is non-empty; an empty default object or a null default
 * accepts anything.  A number default accepts numbers only, an integer-valued
 * default still accepts non-integers (use ef_parameters_get_int to require it). */
int ef_parameters_validate_defaults(ef_parameters p, const char *defaults);
/* Like validate, but unknown keys named in `tolerated` (NULL-terminated) are
 * accepted and appended to *n_tolerated/tolerated_found for one warning. */
int ef_parameters_validate_defaults_tolerant(ef_parameters p, const char *defaults,
                                             const char *const *tolerated, char *found,
                                             size_t found_size);

const char *ef_parameters_path(ef_parameters p);   /* "" for the root */
const char *ef_parameters_origin(ef_parameters p); /* file name or origin */
ef_json_type ef_parameters_type(ef_parameters p);
const char *ef_json_type_name(ef_json_type t);

int ef_parameters_has(ef_parameters p, const char *key);
/* Child view of an object member; error naming the path when missing. */
int ef_parameters_get(ef_parameters p, const char *key, ef_parameters *child);
/* Array size (0 for non-arrays) and element view. */
int ef_parameters_size(ef_parameters p);
int ef_parameters_at(ef_parameters p, int index, ef_parameters *child);
/* Object member iteration: key name of the i-th member (NULL past the end). */
const char *ef_parameters_key_at(ef_parameters p, int index);

/* Typed getters on object members; a wrong type is an error naming the path. */
int ef_parameters_get_double(ef_parameters p, const char *key, double *value);
int ef_parameters_get_int(ef_parameters p, const char *key, long *value);
int ef_parameters_get_bool(ef_parameters p, const char *key, int *value);
/* The string stays valid while the document lives. */
int ef_parameters_get_string(ef_parameters p, const char *key, const char **value);
/* Fixed-size numeric array member (e.g. [0, 0, -9.81]). */
int ef_parameters_get_vector(ef_parameters p, const char *key, int n, double *values);
/* Typed getters on the view itself. */
int ef_parameters_as_double(ef_parameters p, double *value);
int ef_parameters_as_string(ef_parameters p, const char **value);

/* Setters (create or replace object members). */
int ef_parameters_set_double(ef_parameters p, const char *key, double value);
int ef_parameters_set_string(ef_parameters p, const char *key, const char *value);
int ef_parameters_set_bool(ef_parameters p, const char *key, int value);
/* Replace or add a member with a parsed JSON text. */
int ef_parameters_set_json(ef_parameters p, const char *key, const char *json);
int ef_parameters_remove(ef_parameters p, const char *key);

/* Serialise a view (caller frees with free()). */
char *ef_parameters_to_string(ef_parameters p, int pretty);
/* Write a whole JSON text to path atomically (temp file + rename). */
int ef_write_text_file_atomic(const char *path, const char *text);

#ifdef __cplusplus
}
#endif
#endif
