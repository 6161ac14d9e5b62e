/* model_part.c -- the mesh, its sub model parts, properties and nodal variables. */
#include "edgeflow/ef_model_part.h"
#include "edgeflow/ef_error.h"
#include "mesh_io/renumber_private.h"
#include "core_parallel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The public struct plus a cache for id -> index lookups.  Every model part is
 * made by ef_model_part_create, so the cast from the public handle is safe. */
typedef struct {
  struct ef_model_part_s pub;
  int64_t lookup_n;        /* number of entries in the cache (0: not built) */
  int64_t *lookup_ids;     /* node ids sorted ascending */
  ef_index *lookup_index;  /* node index of each sorted id */
  int n_values;            /* model-wide scalars (ef_model_part_set_value) */
  char **value_names;
  double *values;
  int n_aliases;           /* names of the whole model part (ef_model_part_add_root_alias) */
  char **aliases;
} ef_model_part_private;

/* The private struct around a public handle. */
static ef_model_part_private *ef_priv(ef_model_part mp) { return (ef_model_part_private *)mp; }

/* Drop the id -> index table (it is rebuilt on demand). */
static void ef_lookup_clear(ef_model_part mp) {
  ef_model_part_private *p = ef_priv(mp);
  free(p->lookup_ids);
  free(p->lookup_index);
  p->lookup_ids = NULL;
  p->lookup_index = NULL;
  p->lookup_n = 0;
}

/* Heap copy of s, or NULL for NULL or when out of memory. */
static char *ef_strdup_or_null(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Checked n * m * size as size_t: 0 on overflow or negative input. */
static size_t ef_bytes(int64_t n, int64_t m, size_t size) {
  if (n < 0 || m < 0) return 0;
  if (n == 0 || m == 0) return 0;
  if ((uint64_t)n > SIZE_MAX / (uint64_t)m) return 0;
  size_t nm = (size_t)n * (size_t)m;
  if (nm > SIZE_MAX / size) return 0;
  return nm * size;
}

/* --------------------------------------------------------------------------
 * Creation and destruction. */

/* Allocate an empty model part named `name` of dimension dim. */
int ef_model_part_create(const char *name, int dim, ef_model_part *mp) {
  EF_CHECK(mp, EF_ERR_PARAMETER, "ef_model_part_create: NULL output handle");
  *mp = NULL;
  EF_CHECK(dim == 2 || dim == 3, EF_ERR_PARAMETER, "model part dimension must be 2 or 3, got %d", dim);
  const char *use = (name && name[0]) ? name : EF_DEFAULT_MODEL_PART_NAME;
  EF_CHECK(!strchr(use, '.'), EF_ERR_PARAMETER, "model part name '%s' must not contain '.'", use);
  ef_model_part_private *p = calloc(1, sizeof *p);
  EF_CHECK(p, EF_ERR_MEMORY, "out of memory creating model part '%s'", use);
  p->pub.name = ef_strdup_or_null(use);
  if (!p->pub.name) {
    free(p);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory creating model part '%s'", use);
  }
  p->pub.dim = dim;
  *mp = &p->pub;
  return EF_SUCCESS;
}

/* Free a sub model part and its subtree. */
static void ef_sub_model_part_free(ef_sub_model_part *smp) {
  if (!smp) return;
  for (int i = 0; i < smp->n_children; ++i) ef_sub_model_part_free(smp->children[i]);
  free(smp->children);
  free(smp->name);
  free(smp->nodes);
  free(smp->elements);
  free(smp->conditions);
  free(smp);
}

/* Release the model part and everything it owns; *mp becomes NULL. */
void ef_model_part_destroy(ef_model_part *mp) {
  if (!mp || !*mp) return;
  ef_model_part m = *mp;
  ef_lookup_clear(m);
  free(m->name);
  free(m->source_file);
  free(m->coords);
  free(m->node_ids);
  free(m->elements);
  free(m->element_ids);
  free(m->element_properties);
  free(m->conditions);
  free(m->condition_ids);
  free(m->condition_properties);
  for (int i = 0; i < m->n_properties; ++i) {
    for (int j = 0; j < m->properties[i].n_values; ++j) free(m->properties[i].names[j]);
    free(m->properties[i].names);
    free(m->properties[i].values);
  }
  free(m->properties);
  for (int i = 0; i < m->n_children; ++i) ef_sub_model_part_free(m->children[i]);
  free(m->children);
  for (int i = 0; i < m->n_variables; ++i) {
    free(m->variables[i].name);
    free(m->variables[i].values);
    free(m->variables[i].fixed);
  }
  free(m->variables);
  ef_model_part_private *p = ef_priv(m);
  for (int i = 0; i < p->n_values; ++i) free(p->value_names[i]);
  free(p->value_names);
  free(p->values);
  for (int i = 0; i < p->n_aliases; ++i) free(p->aliases[i]);
  free(p->aliases);
  free(p);
  *mp = NULL;
}

/* Append a heap copy of s to the list *items of *n strings. */
static int ef_push_name(char ***items, int *n, const char *s) {
  char *copy = ef_strdup_or_null(s);
  char **grown = copy ? realloc(*items, (size_t)(*n + 1) * sizeof *grown) : NULL;
  if (!grown) {
    free(copy);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory");
  }
  grown[(*n)++] = copy;
  *items = grown;
  return EF_SUCCESS;
}

int ef_model_part_set_value(ef_model_part mp, const char *name, double value) {
  EF_CHECK(mp && name && name[0], EF_ERR_PARAMETER, "ef_model_part_set_value: bad argument");
  ef_model_part_private *p = ef_priv(mp);
  for (int i = 0; i < p->n_values; ++i)
    if (!strcmp(p->value_names[i], name)) {
      p->values[i] = value;
      return EF_SUCCESS;
    }
  double *grown = realloc(p->values, (size_t)(p->n_values + 1) * sizeof *grown);
  EF_CHECK(grown, EF_ERR_MEMORY, "out of memory");
  p->values = grown;
  int n = p->n_values;
  EF_CALL(ef_push_name(&p->value_names, &n, name));
  p->values[p->n_values++] = value;
  return EF_SUCCESS;
}

int ef_model_part_get_value(ef_model_part mp, const char *name, double *value) {
  if (!mp || !name) return 0;
  ef_model_part_private *p = ef_priv(mp);
  for (int i = 0; i < p->n_values; ++i)
    if (!strcmp(p->value_names[i], name)) {
      *value = p->values[i];
      return 1;
    }
  return 0;
}

int ef_model_part_add_root_alias(ef_model_part mp, const char *name) {
  EF_CHECK(mp && name && name[0] && !strchr(name, '.'), EF_ERR_PARAMETER, "invalid model part alias '%s'",
           name ? name : "(null)");
  ef_model_part_private *p = ef_priv(mp);
  for (int i = 0; i < p->n_aliases; ++i)
    if (!strcmp(p->aliases[i], name)) return EF_SUCCESS;
  return ef_push_name(&p->aliases, &p->n_aliases, name);
}

int ef_model_part_is_root_alias(ef_model_part mp, const char *path) {
  if (!mp || !path) return 0;
  size_t n = strlen(mp->name);
  if (strncmp(path, mp->name, n) || path[n] != '.') return 0;
  ef_model_part_private *p = ef_priv(mp);
  for (int i = 0; i < p->n_aliases; ++i)
    if (!strcmp(p->aliases[i], path + n + 1)) return 1;
  return 0;
}

/* --------------------------------------------------------------------------
 * Geometry arrays. */

/* Resize every nodal variable to n_nodes entries, values and fixity zeroed. */
static int ef_variables_resize(ef_model_part mp, int64_t n_nodes) {
  for (int i = 0; i < mp->n_variables; ++i) {
    ef_variable *v = &mp->variables[i];
    double *values = NULL;
    uint8_t *fixed = NULL;
    if (n_nodes > 0) {
      size_t nv = ef_bytes(n_nodes, v->n_components, sizeof(double));
      size_t nf = ef_bytes(n_nodes, v->n_components, sizeof(uint8_t));
      EF_CHECK(nv && nf, EF_ERR_MEMORY, "variable %s: size overflow for %lld nodes", v->name,
               (long long)n_nodes);
      values = calloc(1, nv);
      fixed = calloc(1, nf);
      if (!values || !fixed) {
        free(values);
        free(fixed);
        return EF_ERROR(EF_ERR_MEMORY, "out of memory resizing variable %s", v->name);
      }
    }
    free(v->values);
    free(v->fixed);
    v->values = values;
    v->fixed = fixed;
    v->host_modified = 1;
  }
  return EF_SUCCESS;
}

/* Allocate coords (3 per node, zeroed) and node ids (1..n by default). */
int ef_model_part_alloc_nodes(ef_model_part mp, int64_t n_nodes) {
  EF_CHECK(mp, EF_ERR_PARAMETER, "NULL model part");
  EF_CHECK(n_nodes >= 0 && n_nodes <= INT32_MAX, EF_ERR_PARAMETER,
           "node count %lld out of range [0, %d]", (long long)n_nodes, INT32_MAX);
  double *coords = NULL;
  int64_t *ids = NULL;
  if (n_nodes > 0) {
    coords = calloc((size_t)n_nodes * 3, sizeof *coords);
    ids = malloc((size_t)n_nodes * sizeof *ids);
    if (!coords || !ids) {
      free(coords);
      free(ids);
      return EF_ERROR(EF_ERR_MEMORY, "out of memory allocating %lld nodes", (long long)n_nodes);
    }
    for (int64_t i = 0; i < n_nodes; ++i) ids[i] = i + 1;
  }
  EF_CALL(ef_variables_resize(mp, n_nodes));
  free(mp->coords);
  free(mp->node_ids);
  mp->coords = coords;
  mp->node_ids = ids;
  mp->n_nodes = n_nodes;
  mp->n_owned_nodes = n_nodes;
  ef_lookup_clear(mp);
  return EF_SUCCESS;
}

/* Shared body of alloc_elements / alloc_conditions. */
static int ef_alloc_cells(const char *what, int64_t n, int per, ef_index **conn, int64_t **ids,
                          int64_t **props) {
  EF_CHECK(n >= 0 && n <= INT32_MAX, EF_ERR_PARAMETER, "%s count %lld out of range [0, %d]", what,
           (long long)n, INT32_MAX);
  ef_index *c = NULL;
  int64_t *i_ = NULL, *p_ = NULL;
  if (n > 0) {
    size_t bytes = ef_bytes(n, per, sizeof(ef_index));
    EF_CHECK(bytes, EF_ERR_MEMORY, "%s array size overflow (%lld x %d)", what, (long long)n, per);
    c = calloc(1, bytes);
    i_ = malloc((size_t)n * sizeof *i_);
    p_ = calloc((size_t)n, sizeof *p_);
    if (!c || !i_ || !p_) {
      free(c);
      free(i_);
      free(p_);
      return EF_ERROR(EF_ERR_MEMORY, "out of memory allocating %lld %ss", (long long)n, what);
    }
    for (int64_t k = 0; k < n; ++k) i_[k] = k + 1;
  }
  free(*conn);
  free(*ids);
  free(*props);
  *conn = c;
  *ids = i_;
  *props = p_;
  return EF_SUCCESS;
}

/* Allocate element connectivity (zeroed), ids (1..n) and property ids (0). */
int ef_model_part_alloc_elements(ef_model_part mp, int64_t n_elements, int nodes_per_element) {
  EF_CHECK(mp, EF_ERR_PARAMETER, "NULL model part");
  EF_CHECK(nodes_per_element == 3 || nodes_per_element == 4, EF_ERR_PARAMETER,
           "elements must have 3 (triangle) or 4 (tetrahedron) nodes, got %d", nodes_per_element);
  EF_CALL(ef_alloc_cells("element", n_elements, nodes_per_element, &mp->elements, &mp->element_ids,
                         &mp->element_properties));
  mp->n_elements = n_elements;
  mp->nodes_per_element = nodes_per_element;
  return EF_SUCCESS;
}

/* Allocate condition connectivity (zeroed), ids (1..n) and property ids (0). */
int ef_model_part_alloc_conditions(ef_model_part mp, int64_t n_conditions, int nodes_per_condition) {
  EF_CHECK(mp, EF_ERR_PARAMETER, "NULL model part");
  EF_CHECK(nodes_per_condition == 2 || nodes_per_condition == 3, EF_ERR_PARAMETER,
           "conditions must have 2 (line) or 3 (triangle) nodes, got %d", nodes_per_condition);
  EF_CALL(ef_alloc_cells("condition", n_conditions, nodes_per_condition, &mp->conditions,
                         &mp->condition_ids, &mp->condition_properties));
  mp->n_conditions = n_conditions;
  mp->nodes_per_condition = nodes_per_condition;
  return EF_SUCCESS;
}

/* --------------------------------------------------------------------------
 * Sub model parts. */

/* Skip "RootName." (or a bare "RootName") at the start of a path. */
static const char *ef_strip_root(ef_model_part mp, const char *path) {
  size_t n = strlen(mp->name);
  if (strncmp(path, mp->name, n) == 0) {
    if (path[n] == '.') return path + n + 1;
    if (path[n] == '\0') return path + n;
  }
  return path;
}

/* The child whose name is the first len characters of name, or NULL. */
static ef_sub_model_part *ef_child_named(ef_sub_model_part **children, int n, const char *name,
                                         size_t len) {
  for (int i = 0; i < n; ++i)
    if (strlen(children[i]->name) == len && strncmp(children[i]->name, name, len) == 0)
      return children[i];
  return NULL;
}

/* Create child `name` (len chars) of parent (NULL: the root). */
static int ef_smp_new_child(ef_model_part mp, ef_sub_model_part *parent, const char *name,
                            size_t len, ef_sub_model_part **out) {
  ef_sub_model_part ***children = parent ? &parent->children : &mp->children;
  int *n_children = parent ? &parent->n_children : &mp->n_children;
  ef_sub_model_part *smp = calloc(1, sizeof *smp);
  EF_CHECK(smp, EF_ERR_MEMORY, "out of memory creating sub model part");
  smp->name = malloc(len + 1);
  ef_sub_model_part **grown = realloc(*children, (size_t)(*n_children + 1) * sizeof *grown);
  if (!smp->name || !grown) {
    free(smp->name);
    free(smp);
    if (grown) *children = grown;
    return EF_ERROR(EF_ERR_MEMORY, "out of memory creating sub model part");
  }
  memcpy(smp->name, name, len);
  smp->name[len] = '\0';
  smp->parent = parent;
  *children = grown;
  grown[(*n_children)++] = smp;
  *out = smp;
  return EF_SUCCESS;
}

/* Get or create the sub model part at dotted `name` below parent (NULL: root).
 * Intermediate levels are created as needed; an existing one is returned. */
int ef_model_part_add_sub_model_part(ef_model_part mp, ef_sub_model_part *parent, const char *name,
                                     ef_sub_model_part **smp) {
  EF_CHECK(mp && name && smp, EF_ERR_PARAMETER, "ef_model_part_add_sub_model_part: NULL argument");
  *smp = NULL;
  const char *rest = parent ? name : ef_strip_root(mp, name);
  EF_CHECK(rest[0], EF_ERR_PARAMETER, "empty sub model part name '%s'", name);
  ef_sub_model_part *cur = parent;
  while (*rest) {
    const char *dot = strchr(rest, '.');
    size_t len = dot ? (size_t)(dot - rest) : strlen(rest);
    EF_CHECK(len > 0 && (!dot || dot[1]), EF_ERR_PARAMETER,
             "sub model part name '%s' has an empty component", name);
    ef_sub_model_part *next = cur ? ef_child_named(cur->children, cur->n_children, rest, len)
                                  : ef_child_named(mp->children, mp->n_children, rest, len);
    if (!next) EF_CALL(ef_smp_new_child(mp, cur, rest, len, &next));
    cur = next;
    rest = dot ? dot + 1 : rest + len;
  }
  *smp = cur;
  return EF_SUCCESS;
}

/* Follow a dotted path from the root; NULL when any component is missing. */
ef_sub_model_part *ef_model_part_find_sub_model_part(ef_model_part mp, const char *path) {
  if (!mp || !path) return NULL;
  const char *rest = ef_strip_root(mp, path);
  if (!rest[0]) return NULL;
  ef_sub_model_part *cur = NULL;
  while (*rest) {
    const char *dot = strchr(rest, '.');
    size_t len = dot ? (size_t)(dot - rest) : strlen(rest);
    if (len == 0) return NULL;
    cur = cur ? ef_child_named(cur->children, cur->n_children, rest, len)
              : ef_child_named(mp->children, mp->n_children, rest, len);
    if (!cur) return NULL;
    rest = dot ? dot + 1 : rest + len;
  }
  return cur;
}

typedef struct {
  char *buf;
  size_t size, used;
  int truncated;
} ef_path_list;

/* Visitor: append path to a comma-separated list, truncating with "...". */
static int ef_collect_path(ef_sub_model_part *smp, const char *path, void *user) {
  (void)smp;
  ef_path_list *l = user;
  if (l->truncated) return 0;
  size_t need = strlen(path) + (l->used ? 2 : 0);
  if (l->used + need + 4 >= l->size) {
    snprintf(l->buf + l->used, l->size - l->used, "...");
    l->truncated = 1;
    return 0;
  }
  l->used += (size_t)snprintf(l->buf + l->used, l->size - l->used, "%s%s", l->used ? ", " : "", path);
  return 0;
}

/* Like find, but an absent path is an error listing every existing path. */
int ef_model_part_get_sub_model_part(ef_model_part mp, const char *path, ef_sub_model_part **smp) {
  EF_CHECK(mp && path && smp, EF_ERR_PARAMETER, "ef_model_part_get_sub_model_part: NULL argument");
  *smp = ef_model_part_find_sub_model_part(mp, path);
  if (*smp) return EF_SUCCESS;
  char buf[2048] = "";
  ef_path_list l = {buf, sizeof buf, 0, 0};
  ef_model_part_visit_sub_model_parts(mp, ef_collect_path, &l);
  return EF_ERROR(EF_ERR_NOT_FOUND, "model part '%s' has no sub model part '%s'; existing: %s",
                  mp->name, path, buf[0] ? buf : "(none)");
}

/* qsort order for ef_index. */
static int ef_index_cmp(const void *a, const void *b) {
  ef_index x = *(const ef_index *)a, y = *(const ef_index *)b;
  return (x > y) - (x < y);
}

/* Sort ascending and drop repeats; returns the new length. */
static int64_t ef_sort_unique(ef_index *v, int64_t n) {
  if (n <= 1) return n;
  int64_t i = 1;
  while (i < n && v[i - 1] < v[i]) ++i;
  if (i == n) return n; /* readers and refinement usually hand over sorted lists: skip the sort */
  qsort(v, (size_t)n, sizeof *v, ef_index_cmp);
  int64_t m = 1;
  for (int64_t i = 1; i < n; ++i)
    if (v[i] != v[m - 1]) v[m++] = v[i];
  return m;
}

/* Sort and deduplicate the lists of smp and its subtree. */
static void ef_smp_finalize(ef_sub_model_part *smp) {
  smp->n_nodes = ef_sort_unique(smp->nodes, smp->n_nodes);
  smp->n_elements = ef_sort_unique(smp->elements, smp->n_elements);
  smp->n_conditions = ef_sort_unique(smp->conditions, smp->n_conditions);
  for (int i = 0; i < smp->n_children; ++i) ef_smp_finalize(smp->children[i]);
}

/* Sort and deduplicate every sub model part's lists (whole tree). */
int ef_model_part_finalize_sub_model_parts(ef_model_part mp) {
  EF_CHECK(mp, EF_ERR_PARAMETER, "NULL model part");
  for (int i = 0; i < mp->n_children; ++i) ef_smp_finalize(mp->children[i]);
  return EF_SUCCESS;
}

/* Depth-first visit of smp with its dotted path built in path[0..cap). */
static int ef_visit_rec(ef_sub_model_part *smp, char *path, size_t len, size_t cap,
                        ef_sub_model_part_visitor visit, void *user) {
  size_t n = strlen(smp->name);
  size_t add = n + (len ? 1 : 0);
  EF_CHECK(len + add < cap, EF_ERR_PARAMETER, "sub model part path longer than %zu characters", cap);
  if (len) path[len] = '.';
  memcpy(path + len + (len ? 1 : 0), smp->name, n + 1);
  int err = visit(smp, path, user);
  if (err) return err;
  for (int i = 0; i < smp->n_children; ++i) {
    err = ef_visit_rec(smp->children[i], path, len + add, cap, visit, user);
    if (err) return err;
  }
  path[len] = '\0';
  return EF_SUCCESS;
}

/* Depth-first visit (parent before children); a non-zero visitor return stops it. */
int ef_model_part_visit_sub_model_parts(ef_model_part mp, ef_sub_model_part_visitor visit, void *user) {
  EF_CHECK(mp && visit, EF_ERR_PARAMETER, "ef_model_part_visit_sub_model_parts: NULL argument");
  char path[1024];
  for (int i = 0; i < mp->n_children; ++i) {
    path[0] = '\0';
    EF_CALL(ef_visit_rec(mp->children[i], path, 0, sizeof path, visit, user));
  }
  return EF_SUCCESS;
}

/* Append n entries to a sub model part list (unsorted until finalize). */
static int ef_smp_append(ef_index **list, int64_t *count, const ef_index *add, int64_t n) {
  EF_CHECK(n >= 0 && (n == 0 || add), EF_ERR_PARAMETER, "bad list to append (n = %lld)", (long long)n);
  if (n == 0) return EF_SUCCESS;
  EF_CHECK(*count <= INT64_MAX - n, EF_ERR_PARAMETER, "sub model part list overflow");
  size_t bytes = ef_bytes(*count + n, 1, sizeof(ef_index));
  EF_CHECK(bytes, EF_ERR_MEMORY, "sub model part list size overflow");
  ef_index *grown = realloc(*list, bytes);
  EF_CHECK(grown, EF_ERR_MEMORY, "out of memory growing a sub model part list to %lld entries",
           (long long)(*count + n));
  memcpy(grown + *count, add, (size_t)n * sizeof *add);
  *list = grown;
  *count += n;
  return EF_SUCCESS;
}

/* Append node indices to a sub model part. */
int ef_sub_model_part_add_nodes(ef_sub_model_part *smp, const ef_index *nodes, int64_t n) {
  EF_CHECK(smp, EF_ERR_PARAMETER, "NULL sub model part");
  return ef_smp_append(&smp->nodes, &smp->n_nodes, nodes, n);
}

/* Append element indices to a sub model part. */
int ef_sub_model_part_add_elements(ef_sub_model_part *smp, const ef_index *elements, int64_t n) {
  EF_CHECK(smp, EF_ERR_PARAMETER, "NULL sub model part");
  return ef_smp_append(&smp->elements, &smp->n_elements, elements, n);
}

/* Append condition indices to a sub model part. */
int ef_sub_model_part_add_conditions(ef_sub_model_part *smp, const ef_index *conditions, int64_t n) {
  EF_CHECK(smp, EF_ERR_PARAMETER, "NULL sub model part");
  return ef_smp_append(&smp->conditions, &smp->n_conditions, conditions, n);
}

/* --------------------------------------------------------------------------
 * Properties. */

/* Property block `id`, or NULL. */
static ef_properties *ef_find_properties(ef_model_part mp, int64_t id) {
  for (int i = 0; i < mp->n_properties; ++i)
    if (mp->properties[i].id == id) return &mp->properties[i];
  return NULL;
}

/* Set (or overwrite) scalar `name` of property block `id`, creating the block. */
int ef_model_part_set_property(ef_model_part mp, int64_t id, const char *name, double value) {
  EF_CHECK(mp && name && name[0], EF_ERR_PARAMETER, "ef_model_part_set_property: NULL or empty argument");
  ef_properties *p = ef_find_properties(mp, id);
  if (!p) {
    ef_properties *grown = realloc(mp->properties, (size_t)(mp->n_properties + 1) * sizeof *grown);
    EF_CHECK(grown, EF_ERR_MEMORY, "out of memory adding property block %lld", (long long)id);
    mp->properties = grown;
    p = &grown[mp->n_properties++];
    memset(p, 0, sizeof *p);
    p->id = id;
  }
  for (int j = 0; j < p->n_values; ++j)
    if (strcmp(p->names[j], name) == 0) {
      p->values[j] = value;
      return EF_SUCCESS;
    }
  char *copy = ef_strdup_or_null(name);
  EF_CHECK(copy, EF_ERR_MEMORY, "out of memory adding property %s", name);
  char **names = realloc(p->names, (size_t)(p->n_values + 1) * sizeof *names);
  if (!names) {
    free(copy);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory adding property %s", name);
  }
  p->names = names;
  double *values = realloc(p->values, (size_t)(p->n_values + 1) * sizeof *values);
  if (!values) {
    free(copy);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory adding property %s", name);
  }
  p->values = values;
  names[p->n_values] = copy;
  values[p->n_values] = value;
  p->n_values++;
  return EF_SUCCESS;
}

/* 1 and *value when block `id` defines `name`; 0 otherwise. */
int ef_model_part_get_property(ef_model_part mp, int64_t id, const char *name, double *value) {
  if (!mp || !name) return 0;
  ef_properties *p = ef_find_properties(mp, id);
  if (!p) return 0;
  for (int j = 0; j < p->n_values; ++j)
    if (strcmp(p->names[j], name) == 0) {
      if (value) *value = p->values[j];
      return 1;
    }
  return 0;
}

/* --------------------------------------------------------------------------
 * Nodal variables. */

/* Add variable `name` with n_components per node (values and fixity 0). */
int ef_model_part_add_variable(ef_model_part mp, const char *name, int n_components) {
  EF_CHECK(mp && name && name[0], EF_ERR_PARAMETER, "ef_model_part_add_variable: NULL or empty argument");
  EF_CHECK(n_components == 1 || n_components == 3, EF_ERR_PARAMETER,
           "variable %s: %d components (1 or 3 expected)", name, n_components);
  ef_variable *old = ef_model_part_find_variable(mp, name);
  if (old) {
    EF_CHECK(old->n_components == n_components, EF_ERR_PARAMETER,
             "variable %s exists with %d components, requested %d", name, old->n_components,
             n_components);
    return EF_SUCCESS;
  }
  ef_variable v = {0};
  v.n_components = n_components;
  v.host_modified = 1;
  v.name = ef_strdup_or_null(name);
  EF_CHECK(v.name, EF_ERR_MEMORY, "out of memory adding variable %s", name);
  if (mp->n_nodes > 0) {
    v.values = calloc((size_t)mp->n_nodes * (size_t)n_components, sizeof *v.values);
    v.fixed = calloc((size_t)mp->n_nodes * (size_t)n_components, sizeof *v.fixed);
  }
  ef_variable *grown = NULL;
  if (mp->n_nodes == 0 || (v.values && v.fixed))
    grown = realloc(mp->variables, (size_t)(mp->n_variables + 1) * sizeof *grown);
  if (!grown) {
    free(v.name);
    free(v.values);
    free(v.fixed);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory adding variable %s", name);
  }
  mp->variables = grown;
  grown[mp->n_variables++] = v;
  return EF_SUCCESS;
}

/* The variable called `name`, or NULL (pointers stay valid until the next add). */
ef_variable *ef_model_part_find_variable(ef_model_part mp, const char *name) {
  if (!mp || !name) return NULL;
  for (int i = 0; i < mp->n_variables; ++i)
    if (strcmp(mp->variables[i].name, name) == 0) return &mp->variables[i];
  return NULL;
}

/* Like find, but absence is an error listing the existing variables. */
int ef_model_part_get_variable(ef_model_part mp, const char *name, ef_variable **var) {
  EF_CHECK(mp && name && var, EF_ERR_PARAMETER, "ef_model_part_get_variable: NULL argument");
  *var = ef_model_part_find_variable(mp, name);
  if (*var) return EF_SUCCESS;
  char list[1024] = "";
  size_t used = 0;
  for (int i = 0; i < mp->n_variables && used + 8 < sizeof list; ++i) {
    int n = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", mp->variables[i].name);
    if (n < 0 || (size_t)n >= sizeof list - used) break;
    used += (size_t)n;
  }
  return EF_ERROR(EF_ERR_NOT_FOUND, "model part '%s' has no variable %s; existing: %s", mp->name,
                  name, list[0] ? list : "(none)");
}

/* --------------------------------------------------------------------------
 * Host / device coherence. */

/* Bring device values to the host when the device copy is newer. */
int ef_model_part_sync_to_host(ef_model_part mp) {
  EF_CHECK(mp, EF_ERR_PARAMETER, "NULL model part");
  if (!mp->device_newer) return EF_SUCCESS;
  EF_CHECK(mp->device.sync_to_host, EF_ERR_INTERNAL,
           "model part '%s': device holds newer values but no sync_to_host hook is set", mp->name);
  EF_CALL(mp->device.sync_to_host(mp->device.context, mp));
  mp->device_newer = 0;
  return EF_SUCCESS;
}

/* Flag a variable (all of them when name is NULL) as changed on the host. */
int ef_model_part_mark_modified(ef_model_part mp, const char *variable_name) {
  EF_CHECK(mp, EF_ERR_PARAMETER, "NULL model part");
  if (!variable_name) {
    for (int i = 0; i < mp->n_variables; ++i) mp->variables[i].host_modified = 1;
    return EF_SUCCESS;
  }
  ef_variable *v = NULL;
  EF_CALL(ef_model_part_get_variable(mp, variable_name, &v));
  v->host_modified = 1;
  return EF_SUCCESS;
}

/* 1 when the variable was flagged modified (the flag is cleared); 0 otherwise or if absent. */
int ef_model_part_take_modified(ef_model_part mp, const char *variable_name) {
  ef_variable *v = ef_model_part_find_variable(mp, variable_name);
  if (!v) return 0;
  int was = v->host_modified;
  v->host_modified = 0;
  return was ? 1 : 0;
}

/* --------------------------------------------------------------------------
 * Renumbering. */

/* Map the node lists of smp and its subtree through perm, re-sorted (ef_index_list_remap; flags: n_nodes
 * bytes, all 0). */
static void ef_smp_permute(ef_sub_model_part *smp, const ef_index *perm, int64_t n_nodes, uint8_t *flags) {
  smp->n_nodes = ef_index_list_remap(smp->nodes, smp->n_nodes, perm, n_nodes, flags);
  for (int i = 0; i < smp->n_children; ++i) ef_smp_permute(smp->children[i], perm, n_nodes, flags);
}

/* Every node index in smp and its subtree lies in [0, n_nodes). */
static int ef_smp_check_nodes(ef_sub_model_part *smp, int64_t n_nodes) {
  for (int64_t i = 0; i < smp->n_nodes; ++i)
    EF_CHECK(smp->nodes[i] >= 0 && smp->nodes[i] < n_nodes, EF_ERR_MESH,
             "sub model part '%s' refers to node index %d outside [0, %lld)", smp->name,
             (int)smp->nodes[i], (long long)n_nodes);
  for (int i = 0; i < smp->n_children; ++i) EF_CALL(ef_smp_check_nodes(smp->children[i], n_nodes));
  return EF_SUCCESS;
}

/* Renumber nodes: old node i becomes perm[i] everywhere it appears. */
int ef_model_part_permute_nodes(ef_model_part mp, const ef_index *perm) {
  EF_CHECK(mp && (perm || mp->n_nodes == 0), EF_ERR_PARAMETER, "ef_model_part_permute_nodes: NULL argument");
  int64_t n = mp->n_nodes;
  if (n == 0) return EF_SUCCESS;
  for (int i = 0; i < mp->n_children; ++i) EF_CALL(ef_smp_check_nodes(mp->children[i], n));
  const int64_t n_entries = mp->n_elements * mp->nodes_per_element;
  const int64_t n_centries = mp->n_conditions * mp->nodes_per_condition;
  /* the first entry out of range (min is exact in any order), reported as the serial scan would */
  int64_t bad = n_entries, cbad = n_centries;
  EF_CORE_FOR(ef_core_parallel(n_entries), "omp parallel for schedule(static) reduction(min : bad)",
              for (int64_t k = 0; k < n_entries; ++k) {
                if ((mp->elements[k] < 0 || mp->elements[k] >= n) && k < bad) bad = k;
              });
  EF_CHECK(bad == n_entries, EF_ERR_MESH, "element %lld refers to node index %d outside [0, %lld)",
           (long long)mp->element_ids[bad / mp->nodes_per_element], (int)mp->elements[bad], (long long)n);
  EF_CORE_FOR(ef_core_parallel(n_centries), "omp parallel for schedule(static) reduction(min : cbad)",
              for (int64_t k = 0; k < n_centries; ++k) {
                if ((mp->conditions[k] < 0 || mp->conditions[k] >= n) && k < cbad) cbad = k;
              });
  EF_CHECK(cbad == n_centries, EF_ERR_MESH, "condition %lld refers to node index %d outside [0, %lld)",
           (long long)mp->condition_ids[cbad / mp->nodes_per_condition], (int)mp->conditions[cbad], (long long)n);

  int err = EF_SUCCESS;
  uint8_t *seen = NULL;
  double *coords = NULL, *scratch = NULL;
  int64_t *ids = NULL;
  uint8_t *fscratch = NULL;
  EF_CALLOC(seen, n);
  /* A permutation marks n distinct entries in range; on several threads that is checked first, and only
   * a failure scans in order for the first bad entry. */
  int valid = 0;
  if (ef_core_parallel(n)) {
    int64_t marked = 0;
    int in_range = 1;
    EF_CORE_FOR(1, "omp parallel for schedule(static) reduction(&& : in_range)", for (int64_t i = 0; i < n; ++i) {
      if (perm[i] < 0 || perm[i] >= n)
        in_range = 0;
      else
        __atomic_store_n(&seen[perm[i]], 1, __ATOMIC_RELAXED);
    });
    EF_CORE_FOR(1, "omp parallel for schedule(static) reduction(+ : marked)",
                for (int64_t i = 0; i < n; ++i) marked += seen[i];);
    valid = in_range && marked == n;
    if (!valid) memset(seen, 0, (size_t)n);
  }
  for (int64_t i = 0; i < n && !valid; ++i) {
    EF_CHECK_GOTO(perm[i] >= 0 && perm[i] < n && !seen[perm[i]], EF_ERR_PARAMETER, done,
                  "perm is not a permutation of 0..%lld: entry %lld = %d", (long long)(n - 1),
                  (long long)i, (int)perm[i]);
    seen[perm[i]] = 1;
  }
  coords = malloc((size_t)n * 3 * sizeof *coords);
  ids = malloc((size_t)n * sizeof *ids);
  scratch = malloc((size_t)n * 3 * sizeof *scratch);
  fscratch = malloc((size_t)n * 3 * sizeof *fscratch);
  EF_CHECK_GOTO(coords && ids && scratch && fscratch, EF_ERR_MEMORY, done,
                "out of memory permuting %lld nodes", (long long)n);

  /* perm is a permutation (checked above): the scatters below write disjoint entries */
  EF_CORE_FOR(
      ef_core_parallel(n), "omp parallel for schedule(static)", for (int64_t i = 0; i < n; ++i) {
        for (int c = 0; c < 3; ++c) coords[3 * perm[i] + c] = mp->coords[3 * i + c];
        ids[perm[i]] = mp->node_ids[i];
      });
  for (int v = 0; v < mp->n_variables; ++v) {
    ef_variable *var = &mp->variables[v];
    int nc = var->n_components;
    EF_CORE_FOR(ef_core_parallel(n), "omp parallel for schedule(static)", for (int64_t i = 0; i < n; ++i) {
      for (int c = 0; c < nc; ++c) {
        scratch[(int64_t)nc * perm[i] + c] = var->values[(int64_t)nc * i + c];
        fscratch[(int64_t)nc * perm[i] + c] = var->fixed[(int64_t)nc * i + c];
      }
    });
    /* copied back (the array keeps its address: processes may hold it) */
    const int64_t nv = n * nc;
    EF_CORE_FOR(
        ef_core_parallel(n), "omp parallel for schedule(static)", for (int64_t k = 0; k < nv; ++k) {
          var->values[k] = scratch[k];
          var->fixed[k] = fscratch[k];
        });
    var->host_modified = 1;
  }
  EF_CORE_FOR(ef_core_parallel(n_entries), "omp parallel for schedule(static)",
              for (int64_t k = 0; k < n_entries; ++k) mp->elements[k] = perm[mp->elements[k]];);
  EF_CORE_FOR(ef_core_parallel(n_centries), "omp parallel for schedule(static)",
              for (int64_t k = 0; k < n_centries; ++k) mp->conditions[k] = perm[mp->conditions[k]];);
  memset(seen, 0, (size_t)n); /* the flags of ef_smp_permute */
  for (int i = 0; i < mp->n_children; ++i) ef_smp_permute(mp->children[i], perm, n, seen);

  free(mp->coords);
  free(mp->node_ids);
  mp->coords = coords;
  mp->node_ids = ids;
  coords = NULL;
  ids = NULL;
  ef_lookup_clear(mp);
done:
  free(seen);
  free(coords);
  free(ids);
  free(scratch);
  free(fscratch);
  return err;
}

/* --------------------------------------------------------------------------
 * Lookup and geometry. */

/* qsort order for (id, index) pairs by id. */
static int ef_pair_cmp(const void *a, const void *b) {
  const int64_t *x = a, *y = b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Build the sorted (id, index) table; 0 on success. */
static int ef_lookup_build(ef_model_part mp) {
  ef_lookup_clear(mp);
  int64_t n = mp->n_nodes;
  if (n <= 0) return 0;
  int64_t *pairs = malloc((size_t)n * 2 * sizeof *pairs);
  int64_t *ids = malloc((size_t)n * sizeof *ids);
  ef_index *idx = malloc((size_t)n * sizeof *idx);
  if (!pairs || !ids || !idx) {
    free(pairs);
    free(ids);
    free(idx);
    return -1;
  }
  for (int64_t i = 0; i < n; ++i) {
    pairs[2 * i] = mp->node_ids[i];
    pairs[2 * i + 1] = i;
  }
  qsort(pairs, (size_t)n, 2 * sizeof *pairs, ef_pair_cmp);
  for (int64_t i = 0; i < n; ++i) {
    ids[i] = pairs[2 * i];
    idx[i] = (ef_index)pairs[2 * i + 1];
  }
  free(pairs);
  ef_model_part_private *p = ef_priv(mp);
  p->lookup_ids = ids;
  p->lookup_index = idx;
  p->lookup_n = n;
  return 0;
}

/* Binary search of the sorted id table; -1 when absent. */
static ef_index ef_lookup_search(ef_model_part mp, int64_t id) {
  ef_model_part_private *p = ef_priv(mp);
  int64_t lo = 0, hi = p->lookup_n - 1;
  while (lo <= hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (p->lookup_ids[mid] < id)
      lo = mid + 1;
    else if (p->lookup_ids[mid] > id)
      hi = mid - 1;
    else
      return p->lookup_index[mid];
  }
  return -1;
}

/* Index of the node whose file id is `id`, or -1.  The sorted table is
 * rebuilt when the node arrays were changed behind our back: a hit is
 * verified against node_ids, a miss is confirmed by a linear scan. */
ef_index ef_model_part_node_index(ef_model_part mp, int64_t id) {
  if (!mp || mp->n_nodes <= 0 || !mp->node_ids) return -1;
  ef_model_part_private *p = ef_priv(mp);
  if (p->lookup_n != mp->n_nodes && ef_lookup_build(mp)) goto linear;
  ef_index i = ef_lookup_search(mp, id);
  if (i >= 0 && i < mp->n_nodes && mp->node_ids[i] == id) return i;
linear:
  for (int64_t k = 0; k < mp->n_nodes; ++k)
    if (mp->node_ids[k] == id) {
      ef_lookup_build(mp); /* stale table: refresh it for the next call */
      return (ef_index)k;
    }
  return -1;
}

/* Signed area (triangle, z ignored) or signed volume (tetrahedron) of element e:
 * A = ((x1-x0) x (x2-x0))_z / 2,  V = (x1-x0) . ((x2-x0) x (x3-x0)) / 6. */
double ef_model_part_element_measure(ef_model_part mp, int64_t e) {
  if (!mp || e < 0 || e >= mp->n_elements) return 0.0;
  const ef_index *c = mp->elements + e * mp->nodes_per_element;
  for (int k = 0; k < mp->nodes_per_element; ++k)
    if (c[k] < 0 || c[k] >= mp->n_nodes) return 0.0;
  const double *x0 = mp->coords + 3 * (int64_t)c[0];
  const double *x1 = mp->coords + 3 * (int64_t)c[1];
  const double *x2 = mp->coords + 3 * (int64_t)c[2];
  double a[3] = {x1[0] - x0[0], x1[1] - x0[1], x1[2] - x0[2]};
  double b[3] = {x2[0] - x0[0], x2[1] - x0[1], x2[2] - x0[2]};
  if (mp->nodes_per_element == 3) return 0.5 * (a[0] * b[1] - a[1] * b[0]);
  const double *x3 = mp->coords + 3 * (int64_t)c[3];
  double d[3] = {x3[0] - x0[0], x3[1] - x0[1], x3[2] - x0[2]};
  return (a[0] * (b[1] * d[2] - b[2] * d[1]) - a[1] * (b[0] * d[2] - b[2] * d[0]) +
          a[2] * (b[0] * d[1] - b[1] * d[0])) /
         6.0;
}

/* qsort order for int64_t. */
static int ef_i64_cmp(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* First repeated value among ids[0..n), or 0 with *found = 0. */
static int ef_find_duplicate(const int64_t *ids, int64_t n, int64_t *dup, int *found) {
  *found = 0;
  if (n <= 1) return EF_SUCCESS;
  int64_t i = 1;
  while (i < n && ids[i - 1] < ids[i]) ++i;
  if (i == n) return EF_SUCCESS; /* ascending ids, the usual case, cannot repeat */
  int64_t lo = ids[0], hi = ids[0];
  for (int64_t k = 1; k < n; ++k) {
    if (ids[k] < lo) lo = ids[k];
    if (ids[k] > hi) hi = ids[k];
  }
  if ((uint64_t)hi - (uint64_t)lo < (uint64_t)n * 64) {
    /* ids in a range of at most 64 n (renumbered nodes, a file's ids): a bit per value, and the
     * smallest value met twice, as the sort below reports it */
    const uint64_t range = (uint64_t)hi - (uint64_t)lo + 1;
    uint64_t *bits = NULL;
    EF_CALLOC(bits, (range + 63) / 64);
    for (int64_t k = 0; k < n; ++k) {
      const uint64_t v = (uint64_t)ids[k] - (uint64_t)lo, bit = (uint64_t)1 << (v % 64);
      if (bits[v / 64] & bit) {
        if (!*found || ids[k] < *dup) *dup = ids[k];
        *found = 1;
      }
      bits[v / 64] |= bit;
    }
    free(bits);
    return EF_SUCCESS;
  }
  int64_t *s = NULL;
  EF_MALLOC(s, n);
  memcpy(s, ids, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, ef_i64_cmp);
  for (int64_t i = 1; i < n; ++i)
    if (s[i] == s[i - 1]) {
      *dup = s[i];
      *found = 1;
      break;
    }
  free(s);
  return EF_SUCCESS;
}

/* Every node/element/condition index in smp and its subtree is in range. */
static int ef_smp_check_refs(ef_model_part mp, ef_sub_model_part *smp) {
  for (int64_t i = 0; i < smp->n_nodes; ++i)
    EF_CHECK(smp->nodes[i] >= 0 && smp->nodes[i] < mp->n_nodes, EF_ERR_MESH,
             "sub model part '%s' refers to node index %d, the mesh has %lld nodes", smp->name,
             (int)smp->nodes[i], (long long)mp->n_nodes);
  for (int64_t i = 0; i < smp->n_elements; ++i)
    EF_CHECK(smp->elements[i] >= 0 && smp->elements[i] < mp->n_elements, EF_ERR_MESH,
             "sub model part '%s' refers to element index %d, the mesh has %lld elements",
             smp->name, (int)smp->elements[i], (long long)mp->n_elements);
  for (int64_t i = 0; i < smp->n_conditions; ++i)
    EF_CHECK(smp->conditions[i] >= 0 && smp->conditions[i] < mp->n_conditions, EF_ERR_MESH,
             "sub model part '%s' refers to condition index %d, the mesh has %lld conditions",
             smp->name, (int)smp->conditions[i], (long long)mp->n_conditions);
  for (int i = 0; i < smp->n_children; ++i) EF_CALL(ef_smp_check_refs(mp, smp->children[i]));
  return EF_SUCCESS;
}

/* Validate the mesh and re-orient inverted elements to positive measure. */
int ef_model_part_check_mesh(ef_model_part mp, int64_t *n_reoriented) {
  EF_CHECK(mp, EF_ERR_PARAMETER, "NULL model part");
  if (n_reoriented) *n_reoriented = 0;
  const char *src = mp->source_file ? mp->source_file : mp->name;
  EF_CHECK(mp->dim == 2 || mp->dim == 3, EF_ERR_MESH, "%s: dimension %d (2 or 3 expected)", src, mp->dim);
  EF_CHECK(mp->n_elements > 0, EF_ERR_MESH, "%s: the mesh has no elements", src);
  EF_CHECK(mp->nodes_per_element == mp->dim + 1, EF_ERR_MESH,
           "%s: %d-node elements in a %dD model part (%d expected)", src, mp->nodes_per_element,
           mp->dim, mp->dim + 1);
  EF_CHECK(mp->n_conditions == 0 || mp->nodes_per_condition == mp->dim, EF_ERR_MESH,
           "%s: %d-node conditions in a %dD model part (%d expected)", src, mp->nodes_per_condition,
           mp->dim, mp->dim);

  for (int64_t i = 0; i < mp->n_nodes; ++i)
    for (int c = 0; c < 3; ++c)
      EF_CHECK(isfinite(mp->coords[3 * i + c]), EF_ERR_MESH,
               "%s: node %lld has a non-finite coordinate (%g, %g, %g)", src,
               (long long)mp->node_ids[i], mp->coords[3 * i], mp->coords[3 * i + 1],
               mp->coords[3 * i + 2]);

  int64_t dup = 0;
  int found = 0;
  EF_CALL(ef_find_duplicate(mp->node_ids, mp->n_nodes, &dup, &found));
  EF_CHECK(!found, EF_ERR_MESH, "%s: duplicate node id %lld", src, (long long)dup);
  EF_CALL(ef_find_duplicate(mp->element_ids, mp->n_elements, &dup, &found));
  EF_CHECK(!found, EF_ERR_MESH, "%s: duplicate element id %lld", src, (long long)dup);
  EF_CALL(ef_find_duplicate(mp->condition_ids, mp->n_conditions, &dup, &found));
  EF_CHECK(!found, EF_ERR_MESH, "%s: duplicate condition id %lld", src, (long long)dup);

  int npe = mp->nodes_per_element, npc = mp->nodes_per_condition;
  for (int64_t e = 0; e < mp->n_elements; ++e)
    for (int k = 0; k < npe; ++k) {
      ef_index v = mp->elements[e * npe + k];
      EF_CHECK(v >= 0 && v < mp->n_nodes, EF_ERR_MESH,
               "%s: element %lld refers to a missing node (index %d of %lld)", src,
               (long long)mp->element_ids[e], (int)v, (long long)mp->n_nodes);
    }
  for (int64_t e = 0; e < mp->n_conditions; ++e)
    for (int k = 0; k < npc; ++k) {
      ef_index v = mp->conditions[e * npc + k];
      EF_CHECK(v >= 0 && v < mp->n_nodes, EF_ERR_MESH,
               "%s: condition %lld refers to a missing node (index %d of %lld)", src,
               (long long)mp->condition_ids[e], (int)v, (long long)mp->n_nodes);
    }
  for (int i = 0; i < mp->n_children; ++i) EF_CALL(ef_smp_check_refs(mp, mp->children[i]));

  /* Nodes no element uses carry no equation: the pressure matrix would be singular. */
  uint8_t *used = NULL;
  EF_CALLOC(used, mp->n_nodes);
  for (int64_t k = 0; k < mp->n_elements * npe; ++k) used[mp->elements[k]] = 1;
  int64_t n_orphans = 0, first_orphans[5];
  for (int64_t i = 0; i < mp->n_nodes; ++i)
    if (!used[i]) {
      if (n_orphans < 5) first_orphans[n_orphans] = mp->node_ids[i];
      n_orphans++;
    }
  free(used);
  if (n_orphans) {
    char list[160] = "";
    size_t u = 0;
    for (int64_t k = 0; k < n_orphans && k < 5; ++k)
      u += (size_t)snprintf(list + u, sizeof list - u, "%s%lld", k ? ", " : "", (long long)first_orphans[k]);
    return EF_ERROR(EF_ERR_MESH, "%s: %lld node(s) used by no element: id %s%s", src,
                    (long long)n_orphans, list, n_orphans > 5 ? ", ..." : "");
  }

  double *measure = NULL;
  EF_MALLOC(measure, mp->n_elements);
  double sum = 0.0;
  for (int64_t e = 0; e < mp->n_elements; ++e) {
    measure[e] = ef_model_part_element_measure(mp, e);
    if (!isfinite(measure[e])) {
      /* finite coordinates whose products overflow (|x| ~ 1e200): no geometry to solve on */
      double m = measure[e];
      free(measure);
      return EF_ERROR(EF_ERR_MESH, "%s: element %lld has a non-finite %s (%g): coordinates too large", src,
                      (long long)mp->element_ids[e], mp->dim == 2 ? "area" : "volume", m);
    }
    sum += fabs(measure[e]);
  }
  double mean = sum / (double)mp->n_elements;
  /* 1e-12 of the mean: far below any element a mesher makes on purpose, far above round-off on a
   * genuinely flat one. */
  double tiny = 1e-12 * mean;
  for (int64_t e = 0; e < mp->n_elements; ++e) {
    double m = measure[e];
    if (m == 0.0 || fabs(m) < tiny) {
      free(measure);
      return EF_ERROR(EF_ERR_MESH, "%s: element %lld is degenerate (%s %.3g, mean %.3g)", src,
                      (long long)mp->element_ids[e], mp->dim == 2 ? "area" : "volume", m, mean);
    }
  }
  int64_t flipped = 0;
  for (int64_t e = 0; e < mp->n_elements; ++e)
    if (measure[e] < 0.0) {
      ef_index *c = mp->elements + e * npe;
      ef_index t = c[0];
      c[0] = c[1];
      c[1] = t;
      flipped++;
    }
  free(measure);
  if (n_reoriented) *n_reoriented = flipped;
  return EF_SUCCESS;
}

/* --------------------------------------------------------------------------
 * Summary. */

/* Visitor: one summary line per sub model part. */
static int ef_print_smp(ef_sub_model_part *smp, const char *path, void *user) {
  fprintf((FILE *)user, "    %-48s %8lld nodes %8lld elements %8lld conditions\n", path,
          (long long)smp->n_nodes, (long long)smp->n_elements, (long long)smp->n_conditions);
  return 0;
}

/* Print counts, sub model parts, variables and properties to file (stdout if NULL). */
void ef_model_part_print_summary(ef_model_part mp, void *file) {
  FILE *f = file ? (FILE *)file : stdout;
  if (!mp) {
    fprintf(f, "(null model part)\n");
    return;
  }
  fprintf(f, "Model part '%s' (%dD)%s%s\n", mp->name, mp->dim, mp->source_file ? " from " : "",
          mp->source_file ? mp->source_file : "");
  fprintf(f, "  nodes:      %lld (%lld owned)\n", (long long)mp->n_nodes, (long long)mp->n_owned_nodes);
  fprintf(f, "  elements:   %lld (%d nodes each)\n", (long long)mp->n_elements, mp->nodes_per_element);
  fprintf(f, "  conditions: %lld (%d nodes each)\n", (long long)mp->n_conditions, mp->nodes_per_condition);
  fprintf(f, "  sub model parts:%s\n", mp->n_children ? "" : " none");
  ef_model_part_visit_sub_model_parts(mp, ef_print_smp, f);
  fprintf(f, "  variables:%s", mp->n_variables ? "" : " none");
  for (int i = 0; i < mp->n_variables; ++i)
    fprintf(f, "%s %s[%d]", i ? "," : "", mp->variables[i].name, mp->variables[i].n_components);
  fprintf(f, "\n  properties:%s\n", mp->n_properties ? "" : " none");
  for (int i = 0; i < mp->n_properties; ++i) {
    fprintf(f, "    %lld:", (long long)mp->properties[i].id);
    for (int j = 0; j < mp->properties[i].n_values; ++j)
      fprintf(f, " %s=%g", mp->properties[i].names[j], mp->properties[i].values[j]);
    fprintf(f, "%s\n", mp->properties[i].n_values ? "" : " (empty)");
  }
}

/* --------------------------------------------------------------------------
 * Snapshots (ef_model_part.h).  Ownership: `values`, `covered` and the view's variable array are
 * the snapshot's; the view's mesh, ids, sub model parts, aliases and variable names are the model
 * part's, read-only while a view is read.  Between _take and _wait the device hook writes `values`
 * (its copy in flight); after _wait only the thread that waited reads them. */
struct ef_model_part_snapshot_s {
  ef_model_part mp;
  int n;
  ef_variable *vars;      /* n: names from mp, values below, fixity NULL */
  double **values;        /* n arrays of n_nodes * n_components */
  int *covered;           /* 1: filled by the device hook */
  ef_device_hooks hooks;  /* the hooks of the copy in flight */
  long ticket;
  int in_flight;
  ef_model_part_private view; /* a shallow copy of mp's private struct: mesh shared, variables ours */
};

int ef_model_part_has_async_snapshot(ef_model_part mp) {
  return mp && mp->device.snapshot_begin && mp->device.snapshot_wait;
}

/* Snapshot of `variables` (each a variable of mp). */
int ef_model_part_snapshot_create(ef_model_part mp, int n, const char *const *variables, ef_model_part_snapshot *s) {
  EF_CHECK(mp && s && n >= 0 && (n == 0 || variables), EF_ERR_PARAMETER, "ef_model_part_snapshot_create: bad argument");
  *s = NULL;
  ef_model_part_snapshot q = calloc(1, sizeof *q);
  EF_CHECK(q, EF_ERR_MEMORY, "out of memory");
  q->mp = mp;
  q->n = n;
  int err = EF_SUCCESS;
  q->vars = calloc((size_t)n + 1, sizeof *q->vars);
  q->values = calloc((size_t)n + 1, sizeof *q->values);
  q->covered = calloc((size_t)n + 1, sizeof *q->covered);
  EF_CHECK_GOTO(q->vars && q->values && q->covered, EF_ERR_MEMORY, fail, "out of memory");
  for (int i = 0; i < n; i++) {
    ef_variable *v;
    EF_CALL_GOTO(ef_model_part_get_variable(mp, variables[i], &v), fail);
    size_t bytes = ef_bytes(mp->n_nodes, v->n_components, sizeof(double));
    q->values[i] = malloc(bytes ? bytes : 1);
    EF_CHECK_GOTO(q->values[i], EF_ERR_MEMORY, fail, "out of memory for a snapshot of %s", v->name);
    q->vars[i].name = v->name;
    q->vars[i].n_components = v->n_components;
    q->vars[i].values = q->values[i];
  }
  *s = q;
  return EF_SUCCESS;
fail:
  ef_model_part_snapshot_destroy(&q);
  return err;
}

/* Start the copy: the device hook's for the variables it covers, a host copy of the others. */
int ef_model_part_snapshot_take(ef_model_part_snapshot s, int *asynchronous) {
  EF_CHECK(s && !s->in_flight, EF_ERR_PARAMETER, "ef_model_part_snapshot_take: %s",
           s ? "a copy is still in flight" : "NULL snapshot");
  ef_model_part mp = s->mp;
  const char **names = NULL;
  if (asynchronous) *asynchronous = 0;
  memset(s->covered, 0, (size_t)(s->n + 1) * sizeof *s->covered);
  if (ef_model_part_has_async_snapshot(mp) && mp->device_newer) {
    names = calloc((size_t)s->n + 1, sizeof *names);
    EF_CHECK(names, EF_ERR_MEMORY, "out of memory");
    for (int i = 0; i < s->n; i++) names[i] = s->vars[i].name;
    s->hooks = mp->device;
    int err = mp->device.snapshot_begin(mp->device.context, mp, s->n, names, s->values, s->covered, &s->ticket);
    free(names);
    EF_CALL(err);
    s->in_flight = 1;
    if (asynchronous) *asynchronous = 1;
  } else {
    EF_CALL(ef_model_part_sync_to_host(mp));
  }
  /* Variables the hook does not hold are current on the host (the hook's contract). */
  for (int i = 0; i < s->n; i++) {
    if (s->covered[i]) continue;
    ef_variable *v = ef_model_part_find_variable(mp, s->vars[i].name);
    EF_CHECK(v, EF_ERR_INTERNAL, "snapshot: variable %s disappeared", s->vars[i].name);
    memcpy(s->values[i], v->values, ef_bytes(mp->n_nodes, v->n_components, sizeof(double)));
  }
  s->view = *ef_priv(mp);
  s->view.pub.n_variables = s->n;
  s->view.pub.variables = s->vars;
  memset(&s->view.pub.device, 0, sizeof s->view.pub.device);
  s->view.pub.device_newer = 0;
  return EF_SUCCESS;
}

int ef_model_part_snapshot_wait(ef_model_part_snapshot s, ef_model_part *view) {
  EF_CHECK(s, EF_ERR_PARAMETER, "ef_model_part_snapshot_wait: NULL snapshot");
  if (view) *view = NULL;
  if (s->in_flight) {
    s->in_flight = 0;
    EF_CALL(s->hooks.snapshot_wait(s->hooks.context, s->ticket));
  }
  if (view) *view = &s->view.pub;
  return EF_SUCCESS;
}

void ef_model_part_snapshot_destroy(ef_model_part_snapshot *s) {
  if (!s || !*s) return;
  ef_model_part_snapshot q = *s;
  if (q->in_flight && ef_model_part_snapshot_wait(q, NULL)) ef_error_clear();
  for (int i = 0; q->values && i < q->n; i++) free(q->values[i]);
  free(q->values);
  free(q->vars);
  free(q->covered);
  free(q);
  *s = NULL;
}

/* --------------------------------------------------------------------------
 * Extracting a piece (a rank's part of a partitioned mesh, ef_partition.h). */

/* Map a sorted index list through map (-1: not in the piece); the survivors, in map order. */
static int ef_smp_map_list(const ef_index *list, int64_t n, const ef_index *map, ef_index **out, int64_t *n_out) {
  *out = NULL;
  *n_out = 0;
  int64_t kept = 0;
  for (int64_t k = 0; k < n; ++k) kept += map[list[k]] >= 0;
  if (!kept) return EF_SUCCESS;
  ef_index *v = malloc((size_t)kept * sizeof *v);
  EF_CHECK(v, EF_ERR_MEMORY, "out of memory restricting a sub model part (%lld entries)", (long long)kept);
  kept = 0;
  for (int64_t k = 0; k < n; ++k)
    if (map[list[k]] >= 0) v[kept++] = map[list[k]];
  *out = v;
  *n_out = ef_sort_unique(v, kept);
  return EF_SUCCESS;
}

/* Copy the subtree of src under parent (NULL: the root) of q, lists mapped to the piece. */
static int ef_smp_extract(ef_model_part q, ef_sub_model_part *parent, const ef_sub_model_part *src,
                          const ef_index *node_map, const ef_index *element_map, const ef_index *condition_map) {
  ef_sub_model_part *d = NULL;
  EF_CALL(ef_smp_new_child(q, parent, src->name, strlen(src->name), &d));
  EF_CALL(ef_smp_map_list(src->nodes, src->n_nodes, node_map, &d->nodes, &d->n_nodes));
  EF_CALL(ef_smp_map_list(src->elements, src->n_elements, element_map, &d->elements, &d->n_elements));
  EF_CALL(ef_smp_map_list(src->conditions, src->n_conditions, condition_map, &d->conditions, &d->n_conditions));
  for (int i = 0; i < src->n_children; ++i)
    EF_CALL(ef_smp_extract(q, d, src->children[i], node_map, element_map, condition_map));
  return EF_SUCCESS;
}

static int ef_extract_into(ef_model_part mp, int64_t n_nodes, int64_t n_owned, const int64_t *node_map,
                           int64_t n_elements, const int64_t *element_map, ef_model_part q, ef_index *local,
                           ef_index *element_local, ef_index *condition_local) {
  const int npe = mp->nodes_per_element, npc = mp->nodes_per_condition;
  for (int64_t i = 0; i < mp->n_nodes; ++i) local[i] = -1;
  for (int64_t i = 0; i < n_nodes; ++i) {
    EF_CHECK(node_map[i] >= 0 && node_map[i] < mp->n_nodes && local[node_map[i]] < 0, EF_ERR_PARAMETER,
             "model part extract: local node %lld maps to node %lld (of %lld, or twice)", (long long)i,
             (long long)node_map[i], (long long)mp->n_nodes);
    local[node_map[i]] = (ef_index)i;
  }
  for (int64_t e = 0; e < mp->n_elements; ++e) element_local[e] = -1;
  for (int64_t c = 0; c < mp->n_conditions; ++c) condition_local[c] = -1;

  EF_CALL(ef_model_part_alloc_nodes(q, n_nodes));
  q->n_owned_nodes = n_owned;
  for (int64_t i = 0; i < n_nodes; ++i) {
    memcpy(q->coords + 3 * i, mp->coords + 3 * node_map[i], 3 * sizeof(double));
    q->node_ids[i] = mp->node_ids[node_map[i]];
  }
  if (mp->source_file) {
    q->source_file = ef_strdup_or_null(mp->source_file);
    EF_CHECK(q->source_file, EF_ERR_MEMORY, "out of memory");
  }

  EF_CALL(ef_model_part_alloc_elements(q, n_elements, npe));
  for (int64_t e = 0; e < n_elements; ++e) {
    const int64_t g = element_map[e];
    EF_CHECK(g >= 0 && g < mp->n_elements && element_local[g] < 0, EF_ERR_PARAMETER,
             "model part extract: local element %lld maps to element %lld (of %lld, or twice)", (long long)e,
             (long long)g, (long long)mp->n_elements);
    element_local[g] = (ef_index)e;
    for (int k = 0; k < npe; ++k) {
      const ef_index v = local[mp->elements[g * npe + k]];
      EF_CHECK(v >= 0, EF_ERR_MESH, "model part extract: element %lld has node %lld outside the piece",
               (long long)mp->element_ids[g], (long long)mp->node_ids[mp->elements[g * npe + k]]);
      q->elements[e * npe + k] = v;
    }
    q->element_ids[e] = mp->element_ids[g];
    q->element_properties[e] = mp->element_properties[g];
  }

  /* Conditions with an owned node; a face of an element around that node, so all its nodes are here. */
  int64_t nc = 0;
  for (int64_t c = 0; c < mp->n_conditions; ++c) {
    int owned = 0, outside = -1;
    for (int k = 0; k < npc; ++k) {
      const ef_index v = local[mp->conditions[c * npc + k]];
      if (v >= 0 && v < n_owned) owned = 1;
      if (v < 0) outside = k;
    }
    if (!owned) continue;
    EF_CHECK(outside < 0, EF_ERR_MESH,
             "model part extract: condition %lld has an owned node but its node %lld belongs to no element with "
             "an owned node (a condition must be a face of an element)",
             (long long)mp->condition_ids[c], (long long)mp->node_ids[mp->conditions[c * npc + outside]]);
    condition_local[c] = (ef_index)nc++;
  }
  if (npc) {
    EF_CALL(ef_model_part_alloc_conditions(q, nc, npc));
    for (int64_t c = 0; c < mp->n_conditions; ++c) {
      const ef_index l = condition_local[c];
      if (l < 0) continue;
      for (int k = 0; k < npc; ++k) q->conditions[l * npc + k] = local[mp->conditions[c * npc + k]];
      q->condition_ids[l] = mp->condition_ids[c];
      q->condition_properties[l] = mp->condition_properties[c];
    }
  }

  for (int i = 0; i < mp->n_properties; ++i) {
    const ef_properties *pr = &mp->properties[i];
    if (!pr->n_values) {
      /* A property block without values: keep it (summaries count it). */
      ef_properties *grown = realloc(q->properties, (size_t)(q->n_properties + 1) * sizeof *grown);
      EF_CHECK(grown, EF_ERR_MEMORY, "out of memory copying properties");
      q->properties = grown;
      grown[q->n_properties++] = (ef_properties){pr->id, 0, NULL, NULL};
    }
    for (int j = 0; j < pr->n_values; ++j) EF_CALL(ef_model_part_set_property(q, pr->id, pr->names[j], pr->values[j]));
  }
  const ef_model_part_private *src = ef_priv(mp);
  for (int i = 0; i < src->n_values; ++i) EF_CALL(ef_model_part_set_value(q, src->value_names[i], src->values[i]));
  for (int i = 0; i < src->n_aliases; ++i) EF_CALL(ef_model_part_add_root_alias(q, src->aliases[i]));
  for (int i = 0; i < mp->n_children; ++i)
    EF_CALL(ef_smp_extract(q, NULL, mp->children[i], local, element_local, condition_local));

  for (int i = 0; i < mp->n_variables; ++i) {
    const ef_variable *v = &mp->variables[i];
    EF_CALL(ef_model_part_add_variable(q, v->name, v->n_components));
    ef_variable *w = ef_model_part_find_variable(q, v->name);
    const int m = v->n_components;
    for (int64_t l = 0; l < n_nodes; ++l) {
      memcpy(w->values + l * m, v->values + node_map[l] * m, (size_t)m * sizeof(double));
      memcpy(w->fixed + l * m, v->fixed + node_map[l] * m, (size_t)m);
    }
    w->host_modified = v->host_modified;
  }
  return EF_SUCCESS;
}

int ef_model_part_extract(ef_model_part mp, int64_t n_nodes, int64_t n_owned, const int64_t *node_map,
                          int64_t n_elements, const int64_t *element_map, ef_model_part *piece) {
  EF_CHECK(piece, EF_ERR_PARAMETER, "model part extract: NULL result");
  *piece = NULL;
  EF_CHECK(mp && (node_map || !n_nodes) && (element_map || !n_elements), EF_ERR_PARAMETER,
           "model part extract: NULL model part or maps");
  EF_CHECK(n_nodes >= 0 && n_owned >= 0 && n_owned <= n_nodes && n_nodes <= mp->n_nodes && n_elements >= 0 &&
               n_elements <= mp->n_elements,
           EF_ERR_PARAMETER, "model part extract: %lld nodes (%lld owned) and %lld elements of a model part of %lld and %lld",
           (long long)n_nodes, (long long)n_owned, (long long)n_elements, (long long)mp->n_nodes,
           (long long)mp->n_elements);
  int err = EF_SUCCESS;
  ef_model_part q = NULL;
  ef_index *local = malloc((size_t)(mp->n_nodes + 1) * sizeof *local);
  ef_index *element_local = malloc((size_t)(mp->n_elements + 1) * sizeof *element_local);
  ef_index *condition_local = malloc((size_t)(mp->n_conditions + 1) * sizeof *condition_local);
  EF_CHECK_GOTO(local && element_local && condition_local, EF_ERR_MEMORY, done,
                "model part extract: out of memory (%lld nodes)", (long long)mp->n_nodes);
  EF_CALL_GOTO(ef_model_part_create(mp->name, mp->dim, &q), done);
  EF_CALL_GOTO(ef_extract_into(mp, n_nodes, n_owned, node_map, n_elements, element_map, q, local, element_local,
                               condition_local),
               done);
  *piece = q;
  q = NULL;
done:
  ef_model_part_destroy(&q);
  free(local);
  free(element_local);
  free(condition_local);
  return err;
}
