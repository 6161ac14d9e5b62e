/* mdpa_reader.c -- Kratos .mdpa files into a model part.
 *
 * One pass collects everything with the line it came from; references (element
 * nodes, nodal data, sub model part lists) are resolved at the end, so blocks may
 * come in any order and every error can still name its line. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_io.h"
#include "edgeflow/ef_model_part.h"
#include "mesh_source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MDPA_MAX_TOKENS 32
#define MDPA_MAX_DEPTH 64 /* nested SubModelPart / skipped blocks; bounds recursion on hostile input */

typedef struct {
  int64_t n, cap;
  int per;          /* nodes per cell: 0 until the first block */
  int dim;          /* 2 or 3 */
  long type_line;   /* header line of the first block, for mismatch messages */
  const char *type_name;
  int64_t *ids, *props, *nodes; /* nodes: raw file ids, per per cell */
  long *lines;
} mdpa_cells;

typedef struct {
  int64_t node_id;
  int var;
  int comp;       /* component index, or -1 for all components of a vector */
  uint8_t fixed;
  double value[3];
  long line;
} mdpa_nodal;

typedef struct {
  char *name;
  int n_components;
  long line;
} mdpa_var;

enum { REF_NODE, REF_ELEMENT, REF_CONDITION };
typedef struct {
  ef_sub_model_part *smp;
  int kind;
  int64_t id;
  long line;
} mdpa_ref;

typedef struct {
  ef_mesh_source src;
  ef_model_part mp;
  /* the current line */
  char *tok[MDPA_MAX_TOKENS];
  int ntok;
  long line;
  long last_line;
  /* nodes in file order */
  int64_t n_nodes, cap_nodes;
  int64_t *node_ids;
  double *xyz;
  long *node_lines;
  mdpa_cells el, co;
  int64_t n_nodal, cap_nodal;
  mdpa_nodal *nodal;
  int64_t n_vars, cap_vars;
  mdpa_var *vars;
  int64_t n_refs, cap_refs;
  mdpa_ref *refs;
} mdpa_reader;

/* Next non-blank line with "//" comments cut off, split into r->tok; 0 at end of file. */
static int mdpa_next_line(mdpa_reader *r) {
  char *b, *e;
  long line;
  while (ef_mesh_source_next_line(&r->src, &b, &e, &line)) {
    r->last_line = line;
    for (char *p = b; p + 1 < e; ++p)
      if (p[0] == '/' && p[1] == '/') {
        e = p;
        break;
      }
    int n = ef_mesh_split(b, e, r->tok, MDPA_MAX_TOKENS);
    if (n == 0) continue;
    r->ntok = n;
    r->line = line;
    return 1;
  }
  return 0;
}

/* Undo the split from token `from` on, so it reads as the rest of the line. */
static void mdpa_glue(mdpa_reader *r, int from) {
  int last = (r->ntok < MDPA_MAX_TOKENS ? r->ntok : MDPA_MAX_TOKENS) - 1;
  if (from >= last) return;
  char *end = r->tok[last] + strlen(r->tok[last]);
  for (char *q = r->tok[from]; q < end; ++q)
    if (*q == '\0') *q = ' ';
}

/* Token i of the current line equals word. */
static int mdpa_is(const mdpa_reader *r, int i, const char *word) {
  return r->ntok > i && strcmp(r->tok[i], word) == 0;
}

/* Move to the next line of block `block` (opened on open_line).  *has_line is 0
 * when its End line was reached.  A nested Begin is returned to the caller. */
static int mdpa_next_body(mdpa_reader *r, const char *block, long open_line, int *has_line) {
  if (!mdpa_next_line(r))
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->last_line,
                        "unterminated block '%s' opened on line %ld: expected 'End %s' before the end of the file",
                        block, open_line, block);
  if (mdpa_is(r, 0, "End")) {
    if (mdpa_is(r, 1, block)) {
      *has_line = 0;
      return EF_SUCCESS;
    }
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                        "expected 'End %s' (block opened on line %ld), got 'End %s'", block, open_line,
                        r->ntok > 1 ? r->tok[1] : "");
  }
  *has_line = 1;
  return EF_SUCCESS;
}

/* Error for a Begin line inside a block that holds no nested blocks. */
static int mdpa_nested_begin_error(mdpa_reader *r, const char *block, long open_line) {
  return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                      "expected 'End %s' (block opened on line %ld) before 'Begin %s'", block,
                      open_line, r->ntok > 1 ? r->tok[1] : "");
}

/* Consume a block without interpreting it (nested Begin/End pairs included). */
static int mdpa_skip_block(mdpa_reader *r, const char *block, long open_line, int depth) {
  EF_CHECK(depth < MDPA_MAX_DEPTH, EF_ERR_PARSE, "%s:%ld: blocks nested deeper than %d",
           r->src.path, open_line, MDPA_MAX_DEPTH);
  for (;;) {
    int has = 0;
    EF_CALL(mdpa_next_body(r, block, open_line, &has));
    if (!has) return EF_SUCCESS;
    if (mdpa_is(r, 0, "Begin")) {
      if (r->ntok < 2)
        return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected a block name after 'Begin'");
      EF_CALL(mdpa_skip_block(r, r->tok[1], r->line, depth + 1));
    }
  }
}

/* Parse an integer id >= min, or fail naming what was expected. */
static int mdpa_parse_id(mdpa_reader *r, const char *token, const char *what, int64_t min, int64_t *id) {
  if (ef_mesh_parse_i64(token, id) || *id < min)
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected %s (an integer >= %lld), got '%s'",
                        what, (long long)min, token);
  return EF_SUCCESS;
}

/* Parse a finite number, or fail naming what was expected. */
static int mdpa_parse_number(mdpa_reader *r, const char *token, const char *what, double *v) {
  if (ef_mesh_parse_f64(token, v))
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected a finite number for %s, got '%s'",
                        what, token);
  return EF_SUCCESS;
}

/* Parse "[n] (v1, v2, ...)" (vectors) or "[n,m] ((..),(..))" (matrices).  Values are
 * stored when n_out > 0 and there are exactly n_out of them. */
static int mdpa_parse_array(mdpa_reader *r, const char *text, const char *what, double *out, int n_out) {
  const char *p = text;
  const char *close = strchr(p, ']');
  const char *open = strchr(p, '(');
  if (*p != '[' || !close || !open || open < close)
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                        "expected a vector value '[n] (v1, ..., vn)' for %s, got '%s'", what, text);
  int depth = 0, count = 0;
  const char *q = open;
  for (; *q; ++q) {
    if (*q == '(') {
      ++depth;
    } else if (*q == ')') {
      if (--depth == 0) break;
    } else if (*q != ',' && *q != ' ' && *q != '\t') {
      char *end = NULL;
      double v = strtod(q, &end);
      if (end == q || !isfinite(v) || (*end && !strchr(",) \t", *end)))
        return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                            "expected finite numbers inside '(...)' for %s, got '%s'", what, text);
      if (count < n_out) out[count] = v;
      ++count;
      q = end - 1;
    }
  }
  if (depth != 0 || q[0] != ')' || q[1] != '\0')
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                        "expected balanced parentheses in the value of %s, got '%s'", what, text);
  if (n_out > 0) {
    int64_t declared = 0;
    char dim[32] = "";
    size_t len = (size_t)(close - p - 1);
    if (len < sizeof dim) memcpy(dim, p + 1, len);
    if (ef_mesh_parse_i64(dim, &declared) || declared != n_out || count != n_out)
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                          "expected a %d-component vector '[%d] (...)' for %s, got '%s'", n_out,
                          n_out, what, text);
  }
  return EF_SUCCESS;
}

/* "NAME value" lines of ModelPartData and Properties: numbers are stored when
 * prop_id >= 0; strings are skipped; vectors/matrices are checked and skipped. */
static int mdpa_parse_value_block(mdpa_reader *r, const char *block, long open_line, int64_t prop_id,
                                  int depth) {
  for (;;) {
    int has = 0;
    EF_CALL(mdpa_next_body(r, block, open_line, &has));
    if (!has) return EF_SUCCESS;
    if (mdpa_is(r, 0, "Begin")) {
      /* Properties may hold tables (Begin Table X Y ... End Table). */
      if (r->ntok < 2) return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected a block name after 'Begin'");
      EF_CALL(mdpa_skip_block(r, r->tok[1], r->line, depth + 1));
      continue;
    }
    if (r->ntok < 2)
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected 'NAME value' in block '%s', got '%s'",
                          block, r->tok[0]);
    const char *name = r->tok[0];
    char *value = r->tok[1];
    mdpa_glue(r, 1); /* a vector or matrix value spans several tokens */
    if (value[0] == '[') {
      EF_CALL(mdpa_parse_array(r, value, name, NULL, 0));
      continue;
    }
    char *end = NULL;
    double v = strtod(value, &end);
    int looks_numeric = (value[0] >= '0' && value[0] <= '9') || value[0] == '-' || value[0] == '+' || value[0] == '.';
    if (end != value && *end == '\0') {
      if (!isfinite(v))
        return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected a finite number for %s, got '%s'",
                            name, value);
      if (prop_id >= 0) EF_CALL(ef_model_part_set_property(r->mp, prop_id, name, v));
    } else if (looks_numeric) {
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected a number for %s, got '%s'", name, value);
    }
    /* anything else is a string value (a constitutive law name, ...): not ours to interpret */
  }
}

/* Body of Begin Nodes: "id x y z" lines. */
static int mdpa_parse_nodes(mdpa_reader *r, long open_line) {
  for (;;) {
    int has = 0;
    EF_CALL(mdpa_next_body(r, "Nodes", open_line, &has));
    if (!has) return EF_SUCCESS;
    if (mdpa_is(r, 0, "Begin")) return mdpa_nested_begin_error(r, "Nodes", open_line);
    if (r->ntok != 4)
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected 'id x y z' (4 fields) in block 'Nodes', got %d fields",
                          r->ntok);
    int64_t id;
    double x[3];
    EF_CALL(mdpa_parse_id(r, r->tok[0], "a node id", 1, &id));
    static const char *axis[3] = {"the x coordinate", "the y coordinate", "the z coordinate"};
    for (int c = 0; c < 3; ++c) EF_CALL(mdpa_parse_number(r, r->tok[1 + c], axis[c], &x[c]));
    if (r->n_nodes >= INT32_MAX)
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "more than %d nodes", INT32_MAX);
    int64_t need = r->n_nodes + 1, cap = r->cap_nodes;
    EF_CALL(ef_mesh_grow((void **)&r->node_ids, &cap, need, sizeof *r->node_ids));
    cap = r->cap_nodes;
    EF_CALL(ef_mesh_grow((void **)&r->xyz, &cap, need, 3 * sizeof *r->xyz));
    cap = r->cap_nodes;
    EF_CALL(ef_mesh_grow((void **)&r->node_lines, &cap, need, sizeof *r->node_lines));
    r->cap_nodes = cap;
    r->node_ids[r->n_nodes] = id;
    memcpy(r->xyz + 3 * r->n_nodes, x, sizeof x);
    r->node_lines[r->n_nodes] = r->line;
    r->n_nodes++;
  }
}

/* Geometry from the Kratos name suffix "<d>D<n>N": elements take 2D3N/3D4N, conditions 2D2N/3D3N. */
static int mdpa_geometry(const char *name, int is_element, int *dim, int *per) {
  size_t len = strlen(name);
  if (len < 4 || name[len - 1] != 'N') return -1;
  size_t i = len - 1;
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  if (i == len - 1 || i < 2 || name[i - 1] != 'D') return -1;
  char d = name[i - 2];
  if (i >= 3 && name[i - 3] >= '0' && name[i - 3] <= '9') return -1; /* "12D3N" is not a dimension */
  long n = strtol(name + i, NULL, 10);
  if (is_element && d == '2' && n == 3) *dim = 2, *per = 3;
  else if (is_element && d == '3' && n == 4) *dim = 3, *per = 4;
  else if (!is_element && d == '2' && n == 2) *dim = 2, *per = 2;
  else if (!is_element && d == '3' && n == 3) *dim = 3, *per = 3;
  else return -1;
  return 0;
}

/* Room for need cells in the parallel arrays of c. */
static int mdpa_cells_reserve(mdpa_cells *c, int64_t need) {
  if (need <= c->cap) return EF_SUCCESS;
  int64_t cap;
  cap = c->cap;
  EF_CALL(ef_mesh_grow((void **)&c->ids, &cap, need, sizeof *c->ids));
  cap = c->cap;
  EF_CALL(ef_mesh_grow((void **)&c->props, &cap, need, sizeof *c->props));
  cap = c->cap;
  EF_CALL(ef_mesh_grow((void **)&c->nodes, &cap, need, (size_t)c->per * sizeof *c->nodes));
  cap = c->cap;
  EF_CALL(ef_mesh_grow((void **)&c->lines, &cap, need, sizeof *c->lines));
  c->cap = cap;
  return EF_SUCCESS;
}

/* Begin Elements/Conditions <Name>: geometry from the name, then "id prop n1 .. nk" lines. */
static int mdpa_parse_cells(mdpa_reader *r, int is_element, long open_line) {
  const char *block = is_element ? "Elements" : "Conditions";
  const char *what = is_element ? "element" : "condition";
  mdpa_cells *c = is_element ? &r->el : &r->co;
  if (r->ntok < 3)
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected a%s name after 'Begin %s'",
                        is_element ? "n element" : " condition", block);
  const char *name = r->tok[2];
  int dim = 0, per = 0;
  if (mdpa_geometry(name, is_element, &dim, &per))
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                        "unsupported %s '%s': expected a Kratos name ending in %s", what, name,
                        is_element ? "2D3N (triangle) or 3D4N (tetrahedron)" : "2D2N (line) or 3D3N (triangle)");
  if (c->per == 0) {
    c->per = per;
    c->dim = dim;
    c->type_line = open_line;
    c->type_name = name;
  } else if (c->dim != dim) {
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                        "mixed %s types: '%s' (%dD) after '%s' (%dD) on line %ld; expected one kind per mesh",
                        what, name, dim, c->type_name, c->dim, c->type_line);
  }
  for (;;) {
    int has = 0;
    EF_CALL(mdpa_next_body(r, block, open_line, &has));
    if (!has) return EF_SUCCESS;
    if (mdpa_is(r, 0, "Begin")) return mdpa_nested_begin_error(r, block, open_line);
    if (r->ntok != 2 + per)
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                          "expected 'id property %s' (%d fields) for %s '%s', got %d fields",
                          per == 2 ? "n1 n2" : per == 3 ? "n1 n2 n3" : "n1 n2 n3 n4", 2 + per, what,
                          name, r->ntok);
    if (c->n >= INT32_MAX)
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "more than %d %ss", INT32_MAX, what);
    EF_CALL(mdpa_cells_reserve(c, c->n + 1));
    EF_CALL(mdpa_parse_id(r, r->tok[0], is_element ? "an element id" : "a condition id", 1, &c->ids[c->n]));
    EF_CALL(mdpa_parse_id(r, r->tok[1], "a property id", 0, &c->props[c->n]));
    for (int k = 0; k < per; ++k)
      EF_CALL(mdpa_parse_id(r, r->tok[2 + k], "a node id", 1, &c->nodes[c->n * per + k]));
    c->lines[c->n] = r->line;
    c->n++;
  }
}

/* Register variable `name` with n components, or check an earlier registration agrees. */
static int mdpa_variable(mdpa_reader *r, const char *name, size_t len, int n_components, int *index) {
  for (int64_t i = 0; i < r->n_vars; ++i)
    if (strlen(r->vars[i].name) == len && strncmp(r->vars[i].name, name, len) == 0) {
      if (r->vars[i].n_components != n_components)
        return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                            "variable %s used with %d components here but %d on line %ld",
                            r->vars[i].name, n_components, r->vars[i].n_components, r->vars[i].line);
      *index = (int)i;
      return EF_SUCCESS;
    }
  EF_CALL(ef_mesh_grow((void **)&r->vars, &r->cap_vars, r->n_vars + 1, sizeof *r->vars));
  mdpa_var *v = &r->vars[r->n_vars];
  v->name = malloc(len + 1);
  EF_CHECK(v->name, EF_ERR_MEMORY, "out of memory");
  memcpy(v->name, name, len);
  v->name[len] = '\0';
  v->n_components = n_components;
  v->line = r->line;
  *index = (int)r->n_vars++;
  return EF_SUCCESS;
}

/* Kratos vector variables whose full values we accept as "[3] (x, y, z)". */
static int mdpa_is_vector_name(const char *name) {
  static const char *vectors[] = {"VELOCITY", "DISPLACEMENT", "ACCELERATION", "MESH_VELOCITY",
                                  "BODY_FORCE", "VORTICITY", "REACTION", "NORMAL", "FRACT_VEL",
                                  "PRESS_PROJ", "CONV_PROJ", "MESH_DISPLACEMENT", "EXTERNAL_FORCE"};
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; ++i)
    if (strcmp(name, vectors[i]) == 0) return 1;
  return 0;
}

/* Begin NodalData VAR: "id is_fixed value" lines (VAR_X: one component of VAR). */
static int mdpa_parse_nodal_data(mdpa_reader *r, long open_line) {
  if (r->ntok < 3)
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected a variable name after 'Begin NodalData'");
  const char *name = r->tok[2];
  size_t len = strlen(name);
  int comp = -1, ncomp = 1, var = 0;
  if (len > 2 && name[len - 2] == '_' && (name[len - 1] == 'X' || name[len - 1] == 'Y' || name[len - 1] == 'Z')) {
    comp = name[len - 1] - 'X';
    ncomp = 3;
    len -= 2;
  } else if (mdpa_is_vector_name(name)) {
    ncomp = 3;
  }
  EF_CALL(mdpa_variable(r, name, len, ncomp, &var));
  for (;;) {
    int has = 0;
    EF_CALL(mdpa_next_body(r, "NodalData", open_line, &has));
    if (!has) return EF_SUCCESS;
    if (mdpa_is(r, 0, "Begin")) return mdpa_nested_begin_error(r, "NodalData", open_line);
    if (r->ntok < 3 || (r->ntok > 3 && r->tok[2][0] != '['))
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                          "expected 'node_id is_fixed value' (3 fields) in NodalData %s, got %d fields",
                          name, r->ntok);
    EF_CALL(ef_mesh_grow((void **)&r->nodal, &r->cap_nodal, r->n_nodal + 1, sizeof *r->nodal));
    mdpa_nodal *d = &r->nodal[r->n_nodal];
    memset(d, 0, sizeof *d);
    int64_t fixed = 0;
    EF_CALL(mdpa_parse_id(r, r->tok[0], "a node id", 1, &d->node_id));
    if (ef_mesh_parse_i64(r->tok[1], &fixed) || (fixed != 0 && fixed != 1))
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected is_fixed to be 0 or 1, got '%s'", r->tok[1]);
    mdpa_glue(r, 2);
    if (ncomp == 3 && comp < 0) {
      EF_CALL(mdpa_parse_array(r, r->tok[2], name, d->value, 3));
    } else {
      EF_CALL(mdpa_parse_number(r, r->tok[2], name, &d->value[0]));
    }
    d->var = var;
    d->comp = ncomp == 3 ? comp : 0;
    d->fixed = (uint8_t)fixed;
    d->line = r->line;
    r->n_nodal++;
  }
}

/* SubModelPartNodes/Elements/Conditions: ids, any number per line. */
static int mdpa_parse_id_list(mdpa_reader *r, ef_sub_model_part *smp, int kind, const char *block,
                              long open_line) {
  static const char *what[] = {"a node id", "an element id", "a condition id"};
  for (;;) {
    int has = 0;
    EF_CALL(mdpa_next_body(r, block, open_line, &has));
    if (!has) return EF_SUCCESS;
    if (mdpa_is(r, 0, "Begin")) return mdpa_nested_begin_error(r, block, open_line);
    /* Any number of ids per line: a line longer than the token table is split again. */
    int total = r->ntok;
    for (;;) {
      int whole = total <= MDPA_MAX_TOKENS ? total : MDPA_MAX_TOKENS - 1;
      EF_CALL(ef_mesh_grow((void **)&r->refs, &r->cap_refs, r->n_refs + whole, sizeof *r->refs));
      for (int i = 0; i < whole; ++i) {
        mdpa_ref *ref = &r->refs[r->n_refs];
        EF_CALL(mdpa_parse_id(r, r->tok[i], what[kind], 1, &ref->id));
        ref->smp = smp;
        ref->kind = kind;
        ref->line = r->line;
        r->n_refs++;
      }
      if (whole == total) break;
      char *rest = r->tok[MDPA_MAX_TOKENS - 1];
      total = ef_mesh_split(rest, rest + strlen(rest), r->tok, MDPA_MAX_TOKENS);
    }
  }
}

/* Begin SubModelPart name: its lists, skipped data blocks and nested parts. */
static int mdpa_parse_sub_model_part(mdpa_reader *r, ef_sub_model_part *parent, long open_line, int depth) {
  if (r->ntok < 3)
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected a name after 'Begin SubModelPart'");
  if (depth >= MDPA_MAX_DEPTH)
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "sub model parts nested deeper than %d", MDPA_MAX_DEPTH);
  const char *name = r->tok[2];
  if (strchr(name, '.'))
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                        "expected a sub model part name without '.', got '%s'", name);
  if (!parent && strcmp(name, r->mp->name) == 0)
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                        "expected a sub model part name different from the model part's own ('%s')", name);
  ef_sub_model_part *smp = NULL;
  EF_CALL(ef_model_part_add_sub_model_part(r->mp, parent, name, &smp));
  for (;;) {
    int has = 0;
    EF_CALL(mdpa_next_body(r, "SubModelPart", open_line, &has));
    if (!has) return EF_SUCCESS;
    if (!mdpa_is(r, 0, "Begin") || r->ntok < 2)
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                          "expected 'Begin SubModelPartNodes|Elements|Conditions|Data|Tables', a nested "
                          "'Begin SubModelPart' or 'End SubModelPart' (sub model part '%s' opened on line %ld), got '%s'",
                          name, open_line, r->tok[0]);
    const char *block = r->tok[1];
    long line = r->line;
    if (strcmp(block, "SubModelPartNodes") == 0)
      EF_CALL(mdpa_parse_id_list(r, smp, REF_NODE, block, line));
    else if (strcmp(block, "SubModelPartElements") == 0)
      EF_CALL(mdpa_parse_id_list(r, smp, REF_ELEMENT, block, line));
    else if (strcmp(block, "SubModelPartConditions") == 0)
      EF_CALL(mdpa_parse_id_list(r, smp, REF_CONDITION, block, line));
    else if (strcmp(block, "SubModelPart") == 0)
      EF_CALL(mdpa_parse_sub_model_part(r, smp, line, depth + 1));
    else if (strcmp(block, "SubModelPartData") == 0 || strcmp(block, "SubModelPartTables") == 0 ||
             strcmp(block, "SubModelPartProperties") == 0 || strcmp(block, "SubModelPartGeometries") == 0 ||
             strcmp(block, "SubModelPartConstraints") == 0)
      EF_CALL(mdpa_skip_block(r, block, line, depth + 1));
    else
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                          "unknown block '%s' in sub model part '%s': expected SubModelPartNodes, "
                          "SubModelPartElements, SubModelPartConditions, SubModelPartData, "
                          "SubModelPartTables or SubModelPart", block, name);
  }
}

/* Top level: a sequence of Begin ... End blocks. */
static int mdpa_parse(mdpa_reader *r) {
  while (mdpa_next_line(r)) {
    if (!mdpa_is(r, 0, "Begin"))
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected 'Begin <block>', got '%s'", r->tok[0]);
    if (r->ntok < 2)
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected a block name after 'Begin'");
    const char *block = r->tok[1];
    long line = r->line;
    if (strcmp(block, "ModelPartData") == 0) {
      EF_CALL(mdpa_parse_value_block(r, block, line, -1, 0));
    } else if (strcmp(block, "Properties") == 0) {
      int64_t id = 0;
      if (r->ntok < 3)
        return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line, "expected a property id after 'Begin Properties'");
      EF_CALL(mdpa_parse_id(r, r->tok[2], "a property id", 0, &id));
      EF_CALL(mdpa_parse_value_block(r, block, line, id, 0));
    } else if (strcmp(block, "Nodes") == 0) {
      EF_CALL(mdpa_parse_nodes(r, line));
    } else if (strcmp(block, "Elements") == 0) {
      EF_CALL(mdpa_parse_cells(r, 1, line));
    } else if (strcmp(block, "Conditions") == 0) {
      EF_CALL(mdpa_parse_cells(r, 0, line));
    } else if (strcmp(block, "NodalData") == 0) {
      EF_CALL(mdpa_parse_nodal_data(r, line));
    } else if (strcmp(block, "SubModelPart") == 0) {
      EF_CALL(mdpa_parse_sub_model_part(r, NULL, line, 0));
    } else if (strcmp(block, "ElementalData") == 0 || strcmp(block, "ConditionalData") == 0 ||
               strcmp(block, "Table") == 0 || strcmp(block, "Geometries") == 0 ||
               strcmp(block, "MasterSlaveConstraints") == 0 || strcmp(block, "Constraints") == 0 ||
               strcmp(block, "Mesh") == 0) {
      EF_CALL(mdpa_skip_block(r, block, line, 0));
    } else {
      return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->line,
                          "unknown block 'Begin %s': expected ModelPartData, Properties, Nodes, "
                          "Elements, Conditions, NodalData, ElementalData, ConditionalData, Table, "
                          "Geometries, MasterSlaveConstraints or SubModelPart", block);
    }
  }
  return EF_SUCCESS;
}

/* --------------------------------------------------------------------------
 * Resolution: file ids to indices, duplicates, variables, sub model parts. */

/* Map file ids to positions; a repeated id is an error at its second line. */
static int mdpa_id_map(mdpa_reader *r, const int64_t *ids, const long *lines, int64_t n, const char *what,
                       ef_mesh_id_map *map) {
  int64_t first = -1, second = -1;
  EF_CALL(ef_mesh_id_map_build(map, ids, n, &first, &second));
  if (second >= 0)
    return EF_SRC_ERROR(&r->src, EF_ERR_MESH, lines[second], "duplicate %s id %lld (first defined on line %ld)",
                        what, (long long)ids[second], lines[first]);
  return EF_SUCCESS;
}

/* Copy cells into the model part, file node ids turned into indices. */
static int mdpa_fill_cells(mdpa_reader *r, const ef_mesh_id_map *nodes, mdpa_cells *c, int is_element,
                           ef_index *conn, int64_t *ids, int64_t *props) {
  for (int64_t e = 0; e < c->n; ++e) {
    ids[e] = c->ids[e];
    props[e] = c->props[e];
    for (int k = 0; k < c->per; ++k) {
      int64_t nid = c->nodes[e * c->per + k];
      int64_t v = ef_mesh_id_map_find(nodes, nid);
      if (v < 0)
        return EF_SRC_ERROR(&r->src, EF_ERR_MESH, c->lines[e],
                            "%s %lld refers to node %lld, which is not defined in any 'Begin Nodes' block",
                            is_element ? "element" : "condition", (long long)c->ids[e], (long long)nid);
      conn[e * c->per + k] = (ef_index)v;
      for (int q = 0; q < k; ++q)
        if (conn[e * c->per + q] == v)
          return EF_SRC_ERROR(&r->src, EF_ERR_MESH, c->lines[e], "%s %lld is degenerate: it lists node %lld twice",
                              is_element ? "element" : "condition", (long long)c->ids[e], (long long)nid);
    }
  }
  return EF_SUCCESS;
}

/* Nodes no element uses: reported here, where the line of the node is known. */
static int mdpa_check_orphans(mdpa_reader *r) {
  ef_model_part mp = r->mp;
  uint8_t *used = NULL;
  EF_CALLOC(used, mp->n_nodes);
  for (int64_t k = 0; k < mp->n_elements * mp->nodes_per_element; ++k) used[mp->elements[k]] = 1;
  int64_t orphan = -1;
  for (int64_t i = 0; i < mp->n_nodes && orphan < 0; ++i)
    if (!used[i]) orphan = i;
  free(used);
  if (orphan >= 0)
    return EF_SRC_ERROR(&r->src, EF_ERR_MESH, r->node_lines[orphan],
                        "node %lld is used by no element (expected every node to belong to an element)",
                        (long long)mp->node_ids[orphan]);
  return EF_SUCCESS;
}

/* Build the model part from what the parse collected, checking every reference. */
static int mdpa_resolve(mdpa_reader *r) {
  ef_model_part mp = r->mp;
  int err = EF_SUCCESS;
  ef_mesh_id_map nodes = {0}, els = {0}, conds = {0};
  ef_index *batch = NULL;

  if (r->n_nodes == 0)
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->last_line, "expected a 'Begin Nodes' block with at least one node");
  if (r->el.n == 0)
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->last_line,
                        "expected a 'Begin Elements <Name>2D3N|3D4N' block with at least one element");
  if (r->co.n > 0 && r->co.dim != r->el.dim)
    return EF_SRC_ERROR(&r->src, EF_ERR_PARSE, r->co.type_line,
                        "conditions '%s' are %dD but the elements '%s' (line %ld) are %dD",
                        r->co.type_name, r->co.dim, r->el.type_name, r->el.type_line, r->el.dim);

  /* Nodes keep file order, so a node's position in the file is its index. */
  EF_CALL_GOTO(mdpa_id_map(r, r->node_ids, r->node_lines, r->n_nodes, "node", &nodes), done);
  mp->dim = r->el.dim;
  EF_CALL_GOTO(ef_model_part_alloc_nodes(mp, r->n_nodes), done);
  memcpy(mp->node_ids, r->node_ids, (size_t)r->n_nodes * sizeof *mp->node_ids);
  memcpy(mp->coords, r->xyz, (size_t)r->n_nodes * 3 * sizeof *mp->coords);

  EF_CALL_GOTO(ef_model_part_alloc_elements(mp, r->el.n, r->el.per), done);
  EF_CALL_GOTO(mdpa_fill_cells(r, &nodes, &r->el, 1, mp->elements, mp->element_ids, mp->element_properties), done);
  EF_CALL_GOTO(mdpa_check_orphans(r), done);
  EF_CALL_GOTO(mdpa_id_map(r, r->el.ids, r->el.lines, r->el.n, "element", &els), done);
  if (r->co.n > 0) {
    EF_CALL_GOTO(ef_model_part_alloc_conditions(mp, r->co.n, r->co.per), done);
    EF_CALL_GOTO(mdpa_fill_cells(r, &nodes, &r->co, 0, mp->conditions, mp->condition_ids, mp->condition_properties),
                 done);
    EF_CALL_GOTO(mdpa_id_map(r, r->co.ids, r->co.lines, r->co.n, "condition", &conds), done);
  } else {
    mp->nodes_per_condition = r->el.dim; /* the kind conditions would have, for writers */
  }

  for (int64_t i = 0; i < r->n_vars; ++i)
    EF_CALL_GOTO(ef_model_part_add_variable(mp, r->vars[i].name, r->vars[i].n_components), done);
  for (int64_t i = 0; i < r->n_nodal; ++i) {
    mdpa_nodal *d = &r->nodal[i];
    int64_t v = ef_mesh_id_map_find(&nodes, d->node_id);
    if (v < 0) {
      err = EF_SRC_ERROR(&r->src, EF_ERR_MESH, d->line, "NodalData %s refers to node %lld, which is not defined",
                         r->vars[d->var].name, (long long)d->node_id);
      goto done;
    }
    ef_variable *var = ef_model_part_find_variable(mp, r->vars[d->var].name);
    EF_CHECK_GOTO(var, EF_ERR_INTERNAL, done, "variable %s vanished", r->vars[d->var].name);
    int nc = var->n_components;
    int c0 = d->comp < 0 ? 0 : d->comp, c1 = d->comp < 0 ? nc : d->comp + 1;
    for (int c = c0; c < c1; ++c) {
      var->values[v * nc + c] = d->comp < 0 ? d->value[c] : d->value[0];
      var->fixed[v * nc + c] = d->fixed;
    }
  }

  /* Sub model part lists: consecutive references share a block, so add them in runs. */
  batch = malloc((size_t)(r->n_refs > 0 ? r->n_refs : 1) * sizeof *batch);
  EF_CHECK_GOTO(batch, EF_ERR_MEMORY, done, "out of memory");
  for (int64_t i = 0; i < r->n_refs;) {
    int64_t j = i, n = 0;
    static const char *what[] = {"node", "element", "condition"};
    const ef_mesh_id_map *map = r->refs[i].kind == REF_NODE ? &nodes : r->refs[i].kind == REF_ELEMENT ? &els : &conds;
    while (j < r->n_refs && r->refs[j].smp == r->refs[i].smp && r->refs[j].kind == r->refs[i].kind) {
      mdpa_ref *ref = &r->refs[j];
      int64_t idx = ef_mesh_id_map_find(map, ref->id);
      if (idx < 0) {
        err = EF_SRC_ERROR(&r->src, EF_ERR_MESH, ref->line, "sub model part '%s' lists %s %lld, which is not defined",
                           ref->smp->name, what[ref->kind], (long long)ref->id);
        goto done;
      }
      batch[n++] = (ef_index)idx;
      ++j;
    }
    ef_sub_model_part *smp = r->refs[i].smp;
    if (r->refs[i].kind == REF_NODE) EF_CALL_GOTO(ef_sub_model_part_add_nodes(smp, batch, n), done);
    else if (r->refs[i].kind == REF_ELEMENT) EF_CALL_GOTO(ef_sub_model_part_add_elements(smp, batch, n), done);
    else EF_CALL_GOTO(ef_sub_model_part_add_conditions(smp, batch, n), done);
    i = j;
  }
  EF_CALL_GOTO(ef_model_part_finalize_sub_model_parts(mp), done);
  EF_CALL_GOTO(ef_model_part_check_mesh(mp, NULL), done);
done:
  ef_mesh_id_map_free(&nodes);
  ef_mesh_id_map_free(&els);
  ef_mesh_id_map_free(&conds);
  free(batch);
  return err;
}

/* Release the reader (not the model part). */
static void mdpa_free(mdpa_reader *r) {
  ef_mesh_source_close(&r->src);
  free(r->node_ids);
  free(r->xyz);
  free(r->node_lines);
  mdpa_cells *cs[2] = {&r->el, &r->co};
  for (int i = 0; i < 2; ++i) {
    free(cs[i]->ids);
    free(cs[i]->props);
    free(cs[i]->nodes);
    free(cs[i]->lines);
  }
  free(r->nodal);
  for (int64_t i = 0; i < r->n_vars; ++i) free(r->vars[i].name);
  free(r->vars);
  free(r->refs);
}

/* Parse the opened source into the empty model part mp; closes the source. */
static int mdpa_read_source(mdpa_reader *r, ef_model_part mp, const char *path) {
  r->mp = mp;
  r->last_line = 1; /* where "missing block" errors point in an empty file */
  if (!mp->source_file) {
    mp->source_file = malloc(strlen(path) + 1);
    if (mp->source_file) memcpy(mp->source_file, path, strlen(path) + 1);
  }
  int err = mdpa_parse(r);
  if (!err) err = mdpa_resolve(r);
  mdpa_free(r);
  return err;
}

/* Read a Kratos .mdpa file into the empty model part mp. */
int ef_read_mdpa(const char *path, ef_model_part mp) {
  EF_CHECK(path && mp, EF_ERR_PARAMETER, "ef_read_mdpa: NULL argument");
  EF_CHECK(mp->n_nodes == 0 && mp->n_elements == 0, EF_ERR_PARAMETER,
           "ef_read_mdpa: model part '%s' already holds a mesh", mp->name);
  mdpa_reader r;
  memset(&r, 0, sizeof r);
  int err = ef_mesh_source_open(&r.src, path);
  if (err) return err;
  return mdpa_read_source(&r, mp, path);
}

/* The same on the bytes of a file held in memory; name stands for its path. */
int ef_read_mdpa_memory(const char *name, const void *data, size_t size, ef_model_part mp) {
  EF_CHECK(name && mp, EF_ERR_PARAMETER, "ef_read_mdpa_memory: NULL argument");
  EF_CHECK(mp->n_nodes == 0 && mp->n_elements == 0, EF_ERR_PARAMETER,
           "ef_read_mdpa_memory: model part '%s' already holds a mesh", mp->name);
  mdpa_reader r;
  memset(&r, 0, sizeof r);
  int err = ef_mesh_source_open_memory(&r.src, name, data, size);
  if (err) return err;
  return mdpa_read_source(&r, mp, name);
}
