/* gmsh_reader.c -- Gmsh .msh 4.1 (ASCII, little-endian binary) and 2.2 (ASCII) into a model part.
 *
 * Parsing collects nodes and cells (points, lines, triangles, tetrahedra) with
 * the physical groups of each cell and the place it came from (line, or byte
 * offset in binary files); building the model part then picks elements and
 * conditions, drops unused nodes and makes sub model parts from physical
 * groups. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_io.h"
#include "edgeflow/ef_model_part.h"
#include "mesh_source.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int dim, tag;
  int n_phys;
  int64_t phys_off; /* into gm_reader.phys */
} gm_entity;

typedef struct {
  int type;
  int etag;          /* elementary entity tag */
  int64_t tag;       /* element tag */
  int n_phys;
  int64_t phys_off;  /* into gm_reader.phys */
  int64_t node_off;  /* into gm_reader.cell_nodes */
  long long where;   /* line or byte offset */
} gm_cell;

typedef struct {
  int dim, tag;
  char *name;
  long long where;
} gm_name;

typedef struct {
  ef_mesh_source src;
  ef_model_part mp;
  int version;      /* 41 or 22 */
  int dsize;        /* bytes of a size_t in binary files */
  int seen_partitioned;
  /* the current ASCII line */
  char *lp, *le;
  long long where;
  /* $PhysicalNames */
  int64_t n_names, cap_names;
  gm_name *names;
  /* $Entities */
  int have_entities;
  int64_t n_ent, cap_ent;
  gm_entity *ent;
  int64_t n_phys, cap_phys;
  int32_t *phys;
  /* $Nodes */
  int have_nodes;
  int64_t n_nodes;
  int64_t *node_tags;
  double *xyz;
  long long *node_where;
  /* $Elements */
  int have_elements;
  int64_t n_cells, cap_cells;
  gm_cell *cells;
  int64_t n_cell_nodes, cap_cell_nodes;
  int64_t *cell_nodes;
} gm_reader;

/* The cell types we take: Gmsh type number, nodes, dimension, name. */
static int gm_type_info(int type, int *n_nodes, int *dim, const char **name) {
  switch (type) {
    case 15: *n_nodes = 1, *dim = 0, *name = "point"; return 0;
    case 1: *n_nodes = 2, *dim = 1, *name = "line"; return 0;
    case 2: *n_nodes = 3, *dim = 2, *name = "triangle"; return 0;
    case 4: *n_nodes = 4, *dim = 3, *name = "tetrahedron"; return 0;
    default: return -1;
  }
}

static const char *gm_unsupported_name(int type) {
  switch (type) {
    case 3: return "4-node quadrangle";
    case 5: return "8-node hexahedron";
    case 6: return "6-node prism";
    case 7: return "5-node pyramid";
    case 8: return "3-node second-order line";
    case 9: return "6-node second-order triangle";
    case 10: return "9-node second-order quadrangle";
    case 11: return "10-node second-order tetrahedron";
    case 16: return "8-node second-order quadrangle";
    default: return "unsupported element";
  }
}

#define GM_ERROR(g, where, ...) EF_SRC_ERROR(&(g)->src, EF_ERR_PARSE, (where), __VA_ARGS__)
#define GM_TYPES "1 (line), 2 (triangle), 4 (tetrahedron) or 15 (point)"

/* Copy up to 24 characters of s for a message, with non-printables as '?'. */
static const char *gm_show(const char *s, const char *end, char *buf, size_t size) {
  size_t n = 0;
  for (; s < end && *s && n + 4 < size && n < 24; ++s) buf[n++] = (*s >= 32 && *s < 127) ? *s : '?';
  if (s < end && *s && n + 4 < size) buf[n++] = '.', buf[n++] = '.', buf[n++] = '.';
  buf[n] = '\0';
  return buf;
}

/* --------------------------------------------------------------------------
 * ASCII lines and tokens. */

/* Next non-blank line; 0 at end of file. */
static int gm_line(gm_reader *g) {
  char *b, *e;
  long line;
  for (;;) {
    size_t start = g->src.pos;
    if (!ef_mesh_source_next_line(&g->src, &b, &e, &line)) {
      g->where = g->src.binary ? (long long)g->src.size : g->src.line;
      return 0;
    }
    char *p = b;
    while (p < e && ef_mesh_is_blank(*p)) ++p;
    if (p == e) continue;
    g->lp = p;
    g->le = e;
    g->where = g->src.binary ? (long long)start + (p - b) : line;
    return 1;
  }
}

/* Next non-blank line, or an end-of-file error naming what was expected. */
static int gm_need_line(gm_reader *g, const char *what) {
  if (!gm_line(g)) return GM_ERROR(g, g->where, "unexpected end of file: expected %s", what);
  return EF_SUCCESS;
}

/* Next token of the current line, NUL-terminated in place; 0 at end of line. */
static int gm_next_tok(gm_reader *g, char **tok) {
  char *p = g->lp;
  while (p < g->le && ef_mesh_is_blank(*p)) ++p;
  if (p >= g->le) {
    g->lp = g->le;
    return 0;
  }
  char *q = p;
  while (q < g->le && !ef_mesh_is_blank(*q)) ++q;
  g->lp = q < g->le ? q + 1 : q;
  *q = '\0'; /* q is a blank of this line or its terminator, both ours to overwrite */
  *tok = p;
  return 1;
}

/* Next token as an integer in [min, max]. */
static int gm_int(gm_reader *g, const char *what, int64_t min, int64_t max, int64_t *v) {
  char *t = NULL;
  if (!gm_next_tok(g, &t)) return GM_ERROR(g, g->where, "expected %s, found the end of the line", what);
  if (ef_mesh_parse_i64(t, v) || *v < min || *v > max) {
    if (max == INT64_MAX)
      return GM_ERROR(g, g->where, "expected %s (an integer >= %lld), got '%s'", what, (long long)min, t);
    return GM_ERROR(g, g->where, "expected %s (an integer in [%lld, %lld]), got '%s'", what,
                    (long long)min, (long long)max, t);
  }
  return EF_SUCCESS;
}

/* Next token as a finite number. */
static int gm_dbl(gm_reader *g, const char *what, double *v) {
  char *t = NULL;
  if (!gm_next_tok(g, &t)) return GM_ERROR(g, g->where, "expected %s, found the end of the line", what);
  if (ef_mesh_parse_f64(t, v)) return GM_ERROR(g, g->where, "expected %s (a finite number), got '%s'", what, t);
  return EF_SUCCESS;
}

/* No token may follow on this line. */
static int gm_eol(gm_reader *g, const char *after) {
  char *t = NULL;
  if (gm_next_tok(g, &t)) return GM_ERROR(g, g->where, "expected the end of the line after %s, got '%s'", after, t);
  return EF_SUCCESS;
}

/* The next line must be "$End<section>". */
static int gm_expect_end(gm_reader *g, const char *section) {
  char want[64], shown[40];
  snprintf(want, sizeof want, "$End%s", section);
  if (!gm_line(g)) return GM_ERROR(g, g->where, "unexpected end of file: expected '%s'", want);
  char *start = g->lp;
  char *t = NULL;
  if (!gm_next_tok(g, &t) || strcmp(t, want) != 0)
    return GM_ERROR(g, g->where, "expected '%s' (wrong count or truncated data?), got '%s'", want,
                    gm_show(start, g->le, shown, sizeof shown));
  return EF_SUCCESS;
}

/* A count read from the file must fit the rest of it (min_bytes per item) and our index type. */
static int gm_check_count(gm_reader *g, long long where, uint64_t count, size_t min_bytes, const char *what) {
  size_t left = g->src.size > g->src.pos ? g->src.size - g->src.pos : 0;
  if (count > INT32_MAX)
    return GM_ERROR(g, where, "%s count %llu is larger than the %d supported", what,
                    (unsigned long long)count, INT32_MAX);
  if (count > left / min_bytes)
    return GM_ERROR(g, where, "%s count %llu exceeds what the remaining %zu bytes can hold (truncated file or wrong count)",
                    what, (unsigned long long)count, left);
  return EF_SUCCESS;
}

/* --------------------------------------------------------------------------
 * Binary fields. */

/* Binary size_t (data-size bytes) at the cursor. */
static int gm_bsize(gm_reader *g, const char *what, uint64_t *v) {
  long long at = (long long)g->src.pos;
  int bad;
  if (g->dsize == 8) {
    bad = ef_mesh_read_u64(&g->src, v);
  } else {
    int32_t w = 0;
    bad = ef_mesh_read_i32(&g->src, &w);
    *v = (uint32_t)w;
  }
  if (bad) return GM_ERROR(g, at, "unexpected end of file: expected %s", what);
  return EF_SUCCESS;
}

/* Binary 4-byte int at the cursor. */
static int gm_bint(gm_reader *g, const char *what, int32_t *v) {
  if (ef_mesh_read_i32(&g->src, v))
    return GM_ERROR(g, (long long)g->src.pos, "unexpected end of file: expected %s", what);
  return EF_SUCCESS;
}

/* Binary finite double at the cursor. */
static int gm_bdbl(gm_reader *g, const char *what, double *v) {
  long long at = (long long)g->src.pos;
  if (ef_mesh_read_f64(&g->src, v)) return GM_ERROR(g, at, "unexpected end of file: expected %s", what);
  if (!isfinite(*v)) return GM_ERROR(g, at, "expected %s (a finite number), got %g", what, *v);
  return EF_SUCCESS;
}

/* A binary size_t that is a tag or count we store as int64. */
static int gm_btag(gm_reader *g, const char *what, int64_t *v) {
  long long at = (long long)g->src.pos;
  uint64_t u = 0;
  EF_CALL(gm_bsize(g, what, &u));
  if (u == 0 || u > INT64_MAX) return GM_ERROR(g, at, "expected %s (a positive tag), got %llu", what, (unsigned long long)u);
  *v = (int64_t)u;
  return EF_SUCCESS;
}

/* --------------------------------------------------------------------------
 * Sections. */

/* $MeshFormat: version 4.1 or 2.2, ASCII or binary, and the endianness check. */
static int gm_parse_format(gm_reader *g) {
  EF_CALL(gm_need_line(g, "'version file-type data-size' after $MeshFormat"));
  char *ver = NULL;
  if (!gm_next_tok(g, &ver)) return GM_ERROR(g, g->where, "expected a version number");
  int64_t type = 0, dsize = 0;
  EF_CALL(gm_int(g, "the file type (0 ASCII, 1 binary)", 0, 1, &type));
  EF_CALL(gm_int(g, "the data size", 4, 8, &dsize));
  EF_CALL(gm_eol(g, "the data size"));
  if (strcmp(ver, "4.1") == 0) g->version = 41;
  else if (strcmp(ver, "2.2") == 0) g->version = 22;
  else return GM_ERROR(g, g->where, "unsupported MSH version '%s': expected 4.1 or 2.2", ver);
  if (g->version == 22 && type == 1)
    return GM_ERROR(g, g->where, "binary MSH 2.2 is not supported: expected ASCII (file-type 0) or MSH 4.1");
  if (dsize != 4 && dsize != 8) return GM_ERROR(g, g->where, "expected data size 4 or 8, got %lld", (long long)dsize);
  g->dsize = (int)dsize;
  if (type == 1) {
    g->src.binary = 1;
    long long at = (long long)g->src.pos;
    int32_t one = 0;
    if (ef_mesh_read_i32(&g->src, &one)) return GM_ERROR(g, at, "unexpected end of file: expected the binary integer 1");
    if (one != 1)
      return GM_ERROR(g, at, "expected the binary integer 1 (little-endian), got 0x%08x: big-endian files are not supported",
                      (unsigned)one);
  }
  return gm_expect_end(g, "MeshFormat");
}

/* $PhysicalNames: "dim tag \"name\"" lines. */
static int gm_parse_physical_names(gm_reader *g) {
  int64_t n = 0;
  EF_CALL(gm_need_line(g, "the number of physical names"));
  long long at = g->where;
  EF_CALL(gm_int(g, "the number of physical names", 0, INT32_MAX, &n));
  EF_CALL(gm_eol(g, "the number of physical names"));
  EF_CALL(gm_check_count(g, at, (uint64_t)n, 8, "physical name"));
  EF_CALL(ef_mesh_grow((void **)&g->names, &g->cap_names, g->n_names + n, sizeof *g->names));
  for (int64_t i = 0; i < n; ++i) {
    int64_t dim = 0, tag = 0;
    EF_CALL(gm_need_line(g, "'dim tag \"name\"'"));
    EF_CALL(gm_int(g, "a physical group dimension", 0, 3, &dim));
    EF_CALL(gm_int(g, "a physical tag", 1, INT32_MAX, &tag));
    char *p = g->lp;
    while (p < g->le && ef_mesh_is_blank(*p)) ++p;
    char *q = g->le;
    while (q > p && ef_mesh_is_blank(q[-1])) --q;
    if (q - p < 2 || *p != '"' || q[-1] != '"')
      return GM_ERROR(g, g->where, "expected a quoted physical name \"...\" after the tag");
    size_t len = (size_t)(q - p - 2);
    gm_name *nm = &g->names[g->n_names];
    nm->name = malloc(len + 1);
    EF_CHECK(nm->name, EF_ERR_MEMORY, "out of memory");
    memcpy(nm->name, p + 1, len);
    nm->name[len] = '\0';
    nm->dim = (int)dim;
    nm->tag = (int)tag;
    nm->where = g->where;
    g->n_names++;
    if (len == 0) return GM_ERROR(g, g->where, "expected a non-empty physical name");
  }
  return gm_expect_end(g, "PhysicalNames");
}

/* Entity (dim, tag), or NULL. */
static gm_entity *gm_find_entity(gm_reader *g, int dim, int tag) {
  for (int64_t i = 0; i < g->n_ent; ++i)
    if (g->ent[i].dim == dim && g->ent[i].tag == tag) return &g->ent[i];
  return NULL;
}

/* Append a physical tag to the shared tag array. */
static int gm_add_phys(gm_reader *g, int32_t tag) {
  EF_CALL(ef_mesh_grow((void **)&g->phys, &g->cap_phys, g->n_phys + 1, sizeof *g->phys));
  g->phys[g->n_phys++] = tag;
  return EF_SUCCESS;
}

/* One entity of dimension dim: tag, box or point, physical tags, bounding entities. */
static int gm_parse_entity(gm_reader *g, int dim) {
  int binary = g->src.binary;
  long long at = binary ? (long long)g->src.pos : 0;
  int64_t tag = 0, nphys = 0, nbound = 0;
  if (binary) {
    int32_t t;
    EF_CALL(gm_bint(g, "an entity tag", &t));
    tag = t;
    for (int k = 0; k < (dim == 0 ? 3 : 6); ++k) {
      double x;
      EF_CALL(gm_bdbl(g, "an entity coordinate", &x));
    }
    uint64_t u;
    long long at_n = (long long)g->src.pos;
    EF_CALL(gm_bsize(g, "the number of physical tags", &u));
    EF_CALL(gm_check_count(g, at_n, u, 4, "physical tag"));
    nphys = (int64_t)u;
  } else {
    EF_CALL(gm_need_line(g, "an entity line"));
    at = g->where;
    EF_CALL(gm_int(g, "an entity tag", INT32_MIN, INT32_MAX, &tag));
    for (int k = 0; k < (dim == 0 ? 3 : 6); ++k) {
      double x;
      EF_CALL(gm_dbl(g, dim == 0 ? "a point coordinate" : "a bounding box coordinate", &x));
    }
    EF_CALL(gm_int(g, "the number of physical tags", 0, INT32_MAX, &nphys));
  }
  if (gm_find_entity(g, dim, (int)tag))
    return GM_ERROR(g, at, "duplicate entity: dimension %d, tag %lld", dim, (long long)tag);
  EF_CALL(ef_mesh_grow((void **)&g->ent, &g->cap_ent, g->n_ent + 1, sizeof *g->ent));
  gm_entity *e = &g->ent[g->n_ent++];
  e->dim = dim;
  e->tag = (int)tag;
  e->n_phys = (int)nphys;
  e->phys_off = g->n_phys;
  for (int64_t k = 0; k < nphys; ++k) {
    int64_t p = 0;
    if (binary) {
      int32_t t;
      EF_CALL(gm_bint(g, "a physical tag", &t));
      p = t;
    } else {
      EF_CALL(gm_int(g, "a physical tag", INT32_MIN, INT32_MAX, &p));
    }
    /* A negative physical tag means reversed orientation; the group is the same. */
    EF_CALL(gm_add_phys(g, (int32_t)(p < 0 ? -p : p)));
  }
  if (dim > 0) {
    if (binary) {
      uint64_t u;
      long long at_n = (long long)g->src.pos;
      EF_CALL(gm_bsize(g, "the number of bounding entities", &u));
      EF_CALL(gm_check_count(g, at_n, u, 4, "bounding entity"));
      for (uint64_t k = 0; k < u; ++k) {
        int32_t t;
        EF_CALL(gm_bint(g, "a bounding entity tag", &t));
      }
    } else {
      EF_CALL(gm_int(g, "the number of bounding entities", 0, INT32_MAX, &nbound));
      for (int64_t k = 0; k < nbound; ++k) {
        int64_t t;
        EF_CALL(gm_int(g, "a bounding entity tag", INT32_MIN, INT32_MAX, &t));
      }
    }
  }
  if (!binary) EF_CALL(gm_eol(g, "the entity"));
  return EF_SUCCESS;
}

/* $Entities (4.1): counts, then points, curves, surfaces, volumes. */
static int gm_parse_entities(gm_reader *g) {
  uint64_t count[4] = {0, 0, 0, 0};
  if (g->src.binary) {
    for (int d = 0; d < 4; ++d) {
      long long at = (long long)g->src.pos;
      EF_CALL(gm_bsize(g, "an entity count", &count[d]));
      /* a point takes at least a tag, 3 doubles and a count */
      EF_CALL(gm_check_count(g, at, count[d], 4 + 24 + (size_t)g->dsize, "entity"));
    }
  } else {
    EF_CALL(gm_need_line(g, "'numPoints numCurves numSurfaces numVolumes'"));
    long long at = g->where;
    for (int d = 0; d < 4; ++d) {
      int64_t c = 0;
      EF_CALL(gm_int(g, "an entity count", 0, INT32_MAX, &c));
      count[d] = (uint64_t)c;
      EF_CALL(gm_check_count(g, at, count[d], 8, "entity"));
    }
    EF_CALL(gm_eol(g, "the entity counts"));
  }
  g->have_entities = 1;
  for (int d = 0; d < 4; ++d)
    for (uint64_t i = 0; i < count[d]; ++i) EF_CALL(gm_parse_entity(g, d));
  return gm_expect_end(g, "Entities");
}

/* Arrays for n nodes. */
static int gm_alloc_nodes(gm_reader *g, int64_t n) {
  EF_MALLOC(g->node_tags, n);
  EF_MALLOC(g->xyz, 3 * n);
  EF_MALLOC(g->node_where, n);
  return EF_SUCCESS;
}

/* $Nodes (4.1): entity blocks of tags then coordinates, ASCII or binary. */
static int gm_parse_nodes41(gm_reader *g) {
  int binary = g->src.binary;
  uint64_t nblocks = 0, nnodes = 0;
  long long at;
  if (binary) {
    at = (long long)g->src.pos;
    uint64_t mn, mx;
    EF_CALL(gm_bsize(g, "the number of node blocks", &nblocks));
    EF_CALL(gm_bsize(g, "the number of nodes", &nnodes));
    EF_CALL(gm_bsize(g, "the minimum node tag", &mn));
    EF_CALL(gm_bsize(g, "the maximum node tag", &mx));
    EF_CALL(gm_check_count(g, at, nblocks, 12 + (size_t)g->dsize, "node block"));
    EF_CALL(gm_check_count(g, at, nnodes, (size_t)g->dsize + 24, "node"));
  } else {
    EF_CALL(gm_need_line(g, "'numEntityBlocks numNodes minNodeTag maxNodeTag'"));
    at = g->where;
    int64_t b, n, mn, mx;
    EF_CALL(gm_int(g, "the number of node blocks", 0, INT32_MAX, &b));
    EF_CALL(gm_int(g, "the number of nodes", 0, INT32_MAX, &n));
    EF_CALL(gm_int(g, "the minimum node tag", 0, INT64_MAX, &mn));
    EF_CALL(gm_int(g, "the maximum node tag", 0, INT64_MAX, &mx));
    EF_CALL(gm_eol(g, "the node counts"));
    nblocks = (uint64_t)b;
    nnodes = (uint64_t)n;
    EF_CALL(gm_check_count(g, at, nblocks, 8, "node block"));
    EF_CALL(gm_check_count(g, at, nnodes, 8, "node"));
  }
  EF_CALL(gm_alloc_nodes(g, (int64_t)nnodes));
  int64_t done = 0;
  for (uint64_t b = 0; b < nblocks; ++b) {
    int64_t edim = 0, etag = 0, param = 0, n = 0;
    long long bat;
    if (binary) {
      bat = (long long)g->src.pos;
      int32_t d, t, p;
      uint64_t u;
      EF_CALL(gm_bint(g, "a node block's entity dimension", &d));
      EF_CALL(gm_bint(g, "a node block's entity tag", &t));
      EF_CALL(gm_bint(g, "a node block's parametric flag", &p));
      EF_CALL(gm_bsize(g, "the number of nodes in a block", &u));
      if (d < 0 || d > 3 || p < 0 || p > 1)
        return GM_ERROR(g, bat, "expected a node block header 'entityDim(0-3) entityTag parametric(0/1) numNodes', got %d %d %d",
                        d, t, p);
      if (u > nnodes - (uint64_t)done)
        return GM_ERROR(g, bat, "node blocks hold more than the %llu nodes the section header announced (wrong count)",
                        (unsigned long long)nnodes);
      edim = d, etag = t, param = p, n = (int64_t)u;
    } else {
      EF_CALL(gm_need_line(g, "a node block header 'entityDim entityTag parametric numNodes'"));
      bat = g->where;
      EF_CALL(gm_int(g, "a node block's entity dimension", 0, 3, &edim));
      EF_CALL(gm_int(g, "a node block's entity tag", INT32_MIN, INT32_MAX, &etag));
      EF_CALL(gm_int(g, "a node block's parametric flag", 0, 1, &param));
      EF_CALL(gm_int(g, "the number of nodes in a block", 0, INT32_MAX, &n));
      EF_CALL(gm_eol(g, "the node block header"));
      if (n > (int64_t)nnodes - done)
        return GM_ERROR(g, bat, "node blocks hold more than the %llu nodes the section header announced (wrong count)",
                        (unsigned long long)nnodes);
    }
    (void)etag;
    int ncoord = 3 + (param ? (int)edim : 0);
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = done + i;
      if (binary) {
        g->node_where[k] = (long long)g->src.pos;
        EF_CALL(gm_btag(g, "a node tag", &g->node_tags[k]));
      } else {
        EF_CALL(gm_need_line(g, "a node tag"));
        g->node_where[k] = g->where;
        EF_CALL(gm_int(g, "a node tag", 1, INT64_MAX, &g->node_tags[k]));
        EF_CALL(gm_eol(g, "the node tag"));
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t k = done + i;
      if (!binary) EF_CALL(gm_need_line(g, "node coordinates 'x y z'"));
      for (int c = 0; c < ncoord; ++c) {
        double x;
        static const char *what[6] = {"the node's x coordinate", "the node's y coordinate",
                                      "the node's z coordinate", "a parametric coordinate",
                                      "a parametric coordinate", "a parametric coordinate"};
        if (binary) EF_CALL(gm_bdbl(g, what[c], &x));
        else EF_CALL(gm_dbl(g, what[c], &x));
        if (c < 3) g->xyz[3 * k + c] = x;
      }
      if (!binary) EF_CALL(gm_eol(g, "the node coordinates"));
    }
    done += n;
  }
  if (done != (int64_t)nnodes)
    return GM_ERROR(g, at, "the section header announces %llu nodes but the blocks hold %lld (wrong count)",
                    (unsigned long long)nnodes, (long long)done);
  g->n_nodes = done;
  return gm_expect_end(g, "Nodes");
}

/* $Nodes (2.2): "tag x y z" lines. */
static int gm_parse_nodes22(gm_reader *g) {
  int64_t n = 0;
  EF_CALL(gm_need_line(g, "the number of nodes"));
  long long at = g->where;
  EF_CALL(gm_int(g, "the number of nodes", 0, INT32_MAX, &n));
  EF_CALL(gm_eol(g, "the number of nodes"));
  EF_CALL(gm_check_count(g, at, (uint64_t)n, 8, "node"));
  EF_CALL(gm_alloc_nodes(g, n));
  for (int64_t k = 0; k < n; ++k) {
    EF_CALL(gm_need_line(g, "a node line 'tag x y z'"));
    g->node_where[k] = g->where;
    EF_CALL(gm_int(g, "a node tag", 1, INT64_MAX, &g->node_tags[k]));
    EF_CALL(gm_dbl(g, "the node's x coordinate", &g->xyz[3 * k]));
    EF_CALL(gm_dbl(g, "the node's y coordinate", &g->xyz[3 * k + 1]));
    EF_CALL(gm_dbl(g, "the node's z coordinate", &g->xyz[3 * k + 2]));
    EF_CALL(gm_eol(g, "the node's coordinates"));
  }
  g->n_nodes = n;
  return gm_expect_end(g, "Nodes");
}

/* Check a cell type and return its node count. */
static int gm_check_type(gm_reader *g, long long where, int64_t type, int *n_nodes, int *dim) {
  const char *name = NULL;
  if (type < INT32_MIN || type > INT32_MAX || gm_type_info((int)type, n_nodes, dim, &name))
    return GM_ERROR(g, where, "element type %lld (%s) is not supported: expected " GM_TYPES, (long long)type,
                    gm_unsupported_name((int)type));
  return EF_SUCCESS;
}

/* Append a cell of type with room for its node tags. */
static int gm_new_cell(gm_reader *g, int type, int n_nodes, gm_cell **cell) {
  EF_CALL(ef_mesh_grow((void **)&g->cells, &g->cap_cells, g->n_cells + 1, sizeof *g->cells));
  EF_CALL(ef_mesh_grow((void **)&g->cell_nodes, &g->cap_cell_nodes, g->n_cell_nodes + n_nodes,
                       sizeof *g->cell_nodes));
  gm_cell *c = &g->cells[g->n_cells];
  memset(c, 0, sizeof *c);
  c->type = type;
  c->node_off = g->n_cell_nodes;
  *cell = c;
  return EF_SUCCESS;
}

/* $Elements (4.1): entity blocks of one type, physical groups from the entity. */
static int gm_parse_elements41(gm_reader *g) {
  int binary = g->src.binary;
  uint64_t nblocks = 0, ncells = 0;
  long long at;
  if (binary) {
    at = (long long)g->src.pos;
    uint64_t mn, mx;
    EF_CALL(gm_bsize(g, "the number of element blocks", &nblocks));
    EF_CALL(gm_bsize(g, "the number of elements", &ncells));
    EF_CALL(gm_bsize(g, "the minimum element tag", &mn));
    EF_CALL(gm_bsize(g, "the maximum element tag", &mx));
    EF_CALL(gm_check_count(g, at, nblocks, 12 + (size_t)g->dsize, "element block"));
    EF_CALL(gm_check_count(g, at, ncells, 2 * (size_t)g->dsize, "element"));
  } else {
    EF_CALL(gm_need_line(g, "'numEntityBlocks numElements minElementTag maxElementTag'"));
    at = g->where;
    int64_t b, n, mn, mx;
    EF_CALL(gm_int(g, "the number of element blocks", 0, INT32_MAX, &b));
    EF_CALL(gm_int(g, "the number of elements", 0, INT32_MAX, &n));
    EF_CALL(gm_int(g, "the minimum element tag", 0, INT64_MAX, &mn));
    EF_CALL(gm_int(g, "the maximum element tag", 0, INT64_MAX, &mx));
    EF_CALL(gm_eol(g, "the element counts"));
    nblocks = (uint64_t)b;
    ncells = (uint64_t)n;
    EF_CALL(gm_check_count(g, at, nblocks, 8, "element block"));
    EF_CALL(gm_check_count(g, at, ncells, 4, "element"));
  }
  int64_t done = 0;
  for (uint64_t b = 0; b < nblocks; ++b) {
    int64_t edim = 0, etag = 0, type = 0, n = 0;
    long long bat;
    if (binary) {
      bat = (long long)g->src.pos;
      int32_t d, t, ty;
      uint64_t u;
      EF_CALL(gm_bint(g, "an element block's entity dimension", &d));
      EF_CALL(gm_bint(g, "an element block's entity tag", &t));
      EF_CALL(gm_bint(g, "an element block's element type", &ty));
      EF_CALL(gm_bsize(g, "the number of elements in a block", &u));
      if (d < 0 || d > 3) return GM_ERROR(g, bat, "expected an entity dimension 0-3 in an element block header, got %d", d);
      if (u > ncells - (uint64_t)done)
        return GM_ERROR(g, bat, "element blocks hold more than the %llu elements the section header announced (wrong count)",
                        (unsigned long long)ncells);
      edim = d, etag = t, type = ty, n = (int64_t)u;
    } else {
      EF_CALL(gm_need_line(g, "an element block header 'entityDim entityTag elementType numElements'"));
      bat = g->where;
      EF_CALL(gm_int(g, "an element block's entity dimension", 0, 3, &edim));
      EF_CALL(gm_int(g, "an element block's entity tag", INT32_MIN, INT32_MAX, &etag));
      EF_CALL(gm_int(g, "an element block's element type", INT32_MIN, INT32_MAX, &type));
      EF_CALL(gm_int(g, "the number of elements in a block", 0, INT32_MAX, &n));
      EF_CALL(gm_eol(g, "the element block header"));
      if (n > (int64_t)ncells - done)
        return GM_ERROR(g, bat, "element blocks hold more than the %llu elements the section header announced (wrong count)",
                        (unsigned long long)ncells);
    }
    int nn = 0, tdim = 0;
    EF_CALL(gm_check_type(g, bat, type, &nn, &tdim));
    if (tdim != edim)
      return GM_ERROR(g, bat, "expected %dD cells in a block of entity dimension %lld, got element type %lld",
                      (int)edim, (long long)edim, (long long)type);
    int n_phys = 0;
    int64_t phys_off = 0;
    if (g->have_entities) {
      gm_entity *e = gm_find_entity(g, (int)edim, (int)etag);
      if (!e)
        return GM_ERROR(g, bat, "element block refers to entity (dimension %lld, tag %lld), which $Entities does not define%s",
                        (long long)edim, (long long)etag,
                        g->seen_partitioned ? " (partitioned meshes are not supported)" : "");
      n_phys = e->n_phys;
      phys_off = e->phys_off;
    }
    for (int64_t i = 0; i < n; ++i) {
      gm_cell *c = NULL;
      EF_CALL(gm_new_cell(g, (int)type, nn, &c));
      c->etag = (int)etag;
      c->n_phys = n_phys;
      c->phys_off = phys_off;
      int64_t *nodes = g->cell_nodes + c->node_off;
      if (binary) {
        c->where = (long long)g->src.pos;
        EF_CALL(gm_btag(g, "an element tag", &c->tag));
        for (int k = 0; k < nn; ++k) EF_CALL(gm_btag(g, "a node tag of an element", &nodes[k]));
      } else {
        EF_CALL(gm_need_line(g, "an element line 'tag node...'"));
        c->where = g->where;
        EF_CALL(gm_int(g, "an element tag", 1, INT64_MAX, &c->tag));
        for (int k = 0; k < nn; ++k) EF_CALL(gm_int(g, "a node tag of the element", 1, INT64_MAX, &nodes[k]));
        EF_CALL(gm_eol(g, "the element's nodes"));
      }
      g->n_cells++;
      g->n_cell_nodes += nn;
    }
    done += n;
  }
  if (done != (int64_t)ncells)
    return GM_ERROR(g, at, "the section header announces %llu elements but the blocks hold %lld (wrong count)",
                    (unsigned long long)ncells, (long long)done);
  return gm_expect_end(g, "Elements");
}

/* $Elements (2.2): "tag type ntags tags... nodes..." lines, the first tag physical. */
static int gm_parse_elements22(gm_reader *g) {
  int64_t n = 0;
  EF_CALL(gm_need_line(g, "the number of elements"));
  long long at = g->where;
  EF_CALL(gm_int(g, "the number of elements", 0, INT32_MAX, &n));
  EF_CALL(gm_eol(g, "the number of elements"));
  EF_CALL(gm_check_count(g, at, (uint64_t)n, 8, "element"));
  for (int64_t i = 0; i < n; ++i) {
    int64_t tag = 0, type = 0, ntags = 0, phys = 0, etag = 0;
    EF_CALL(gm_need_line(g, "an element line 'tag type numTags tags... nodes...'"));
    long long where = g->where;
    EF_CALL(gm_int(g, "an element tag", 1, INT64_MAX, &tag));
    EF_CALL(gm_int(g, "an element type", INT32_MIN, INT32_MAX, &type));
    int nn = 0, tdim = 0;
    EF_CALL(gm_check_type(g, where, type, &nn, &tdim));
    EF_CALL(gm_int(g, "the number of tags", 0, 64, &ntags));
    for (int64_t k = 0; k < ntags; ++k) {
      int64_t t = 0;
      EF_CALL(gm_int(g, k == 0 ? "a physical tag" : "an element tag", INT32_MIN, INT32_MAX, &t));
      if (k == 0) phys = t < 0 ? -t : t;
      if (k == 1) etag = t;
    }
    int64_t nodes[4];
    for (int k = 0; k < nn; ++k) EF_CALL(gm_int(g, "a node tag of the element", 1, INT64_MAX, &nodes[k]));
    EF_CALL(gm_eol(g, "the element's nodes"));
    /* MSH2 repeats a cell once per physical group it belongs to: merge the repeats. */
    if (g->n_cells > 0) {
      gm_cell *prev = &g->cells[g->n_cells - 1];
      if (prev->type == type && prev->etag == etag &&
          memcmp(g->cell_nodes + prev->node_off, nodes, (size_t)nn * sizeof *nodes) == 0 &&
          prev->phys_off + prev->n_phys == g->n_phys) {
        int known = 0;
        for (int k = 0; k < prev->n_phys; ++k) known |= g->phys[prev->phys_off + k] == phys;
        if (phys != 0 && !known) {
          EF_CALL(gm_add_phys(g, (int32_t)phys));
          prev->n_phys++;
        }
        continue;
      }
    }
    gm_cell *c = NULL;
    EF_CALL(gm_new_cell(g, (int)type, nn, &c));
    c->tag = tag;
    c->etag = (int)etag;
    c->where = where;
    c->phys_off = g->n_phys;
    if (phys != 0) {
      EF_CALL(gm_add_phys(g, (int32_t)phys));
      c->n_phys = 1;
    }
    memcpy(g->cell_nodes + c->node_off, nodes, (size_t)nn * sizeof *nodes);
    g->n_cells++;
    g->n_cell_nodes += nn;
  }
  return gm_expect_end(g, "Elements");
}

/* Skip a section we do not use, up to its "$End<name>" line. */
static int gm_skip_section(gm_reader *g, const char *name, long long opened) {
  char want[96];
  snprintf(want, sizeof want, "$End%s", name);
  size_t len = strlen(want);
  while (gm_line(g)) {
    if ((size_t)(g->le - g->lp) >= len && strncmp(g->lp, want, len) == 0 &&
        (g->lp + len == g->le || ef_mesh_is_blank(g->lp[len])))
      return EF_SUCCESS;
  }
  return GM_ERROR(g, g->where, "unexpected end of file: expected '%s' to close the section opened at %s %lld", want,
                  g->src.binary ? "byte" : "line", opened);
}

/* The file: $MeshFormat, then sections in any order. */
static int gm_parse(gm_reader *g) {
  char shown[40];
  char *first = NULL;
  if (!gm_line(g) || !gm_next_tok(g, &first) || strcmp(first, "$MeshFormat") != 0)
    return GM_ERROR(g, g->where, "expected '$MeshFormat' at the start of a Gmsh file");
  EF_CALL(gm_eol(g, "$MeshFormat"));
  EF_CALL(gm_parse_format(g));
  while (gm_line(g)) {
    long long at = g->where;
    char *start = g->lp;
    char *t = NULL;
    gm_next_tok(g, &t);
    if (t[0] != '$' || t[1] == '\0')
      return GM_ERROR(g, at, "expected a section header like '$Nodes', got '%s'", gm_show(start, g->le, shown, sizeof shown));
    const char *name = t + 1;
    int known = !strcmp(name, "PhysicalNames") || !strcmp(name, "Entities") || !strcmp(name, "Nodes") ||
                !strcmp(name, "Elements");
    if (known) EF_CALL(gm_eol(g, t));
    if (strcmp(name, "PhysicalNames") == 0) {
      EF_CALL(gm_parse_physical_names(g));
    } else if (strcmp(name, "Entities") == 0 && g->version == 41) {
      if (g->have_entities) return GM_ERROR(g, at, "expected one $Entities section, got a second");
      EF_CALL(gm_parse_entities(g));
    } else if (strcmp(name, "Nodes") == 0) {
      if (g->have_nodes) return GM_ERROR(g, at, "expected one $Nodes section, got a second");
      g->have_nodes = 1;
      EF_CALL(g->version == 41 ? gm_parse_nodes41(g) : gm_parse_nodes22(g));
    } else if (strcmp(name, "Elements") == 0) {
      if (g->have_elements) return GM_ERROR(g, at, "expected one $Elements section, got a second");
      /* Without $Entities a 4.1 file has no physical groups, which is fine unless it names some. */
      if (g->version == 41 && !g->have_entities && g->n_names > 0)
        return GM_ERROR(g, at, "expected an $Entities section before $Elements to map the groups of $PhysicalNames");
      g->have_elements = 1;
      EF_CALL(g->version == 41 ? gm_parse_elements41(g) : gm_parse_elements22(g));
    } else if (strncmp(name, "End", 3) == 0) {
      return GM_ERROR(g, at, "unexpected '%s' outside the section it closes", t);
    } else {
      if (strcmp(name, "PartitionedEntities") == 0) g->seen_partitioned = 1;
      EF_CALL(gm_skip_section(g, name, at));
    }
  }
  if (!g->have_nodes) return GM_ERROR(g, g->where, "expected a $Nodes section before the end of the file");
  if (!g->have_elements) return GM_ERROR(g, g->where, "expected an $Elements section before the end of the file");
  return EF_SUCCESS;
}

/* --------------------------------------------------------------------------
 * Building the model part. */

/* One (physical group, cell) membership, sorted to gather the cells of each group. */
typedef struct {
  int dim, tag;
  int kind;       /* 0 element, 1 condition, 2 nodes only */
  int64_t index;  /* element / condition index in the model part, or cell index */
} gm_member;

/* qsort order for memberships: group (dim, tag), then kind, then index. */
static int gm_member_cmp(const void *a, const void *b) {
  const gm_member *x = a, *y = b;
  if (x->dim != y->dim) return x->dim - y->dim;
  if (x->tag != y->tag) return (x->tag > y->tag) - (x->tag < y->tag);
  if (x->kind != y->kind) return x->kind - y->kind;
  return (x->index > y->index) - (x->index < y->index);
}

/* qsort order for ef_index. */
static int gm_index_cmp(const void *a, const void *b) {
  ef_index x = *(const ef_index *)a, y = *(const ef_index *)b;
  return (x > y) - (x < y);
}

/* Dimension of a supported cell type. */
static int gm_cell_dim(int type) { return type == 15 ? 0 : type == 1 ? 1 : type == 2 ? 2 : 3; }
/* Node count of a supported cell type. */
static int gm_cell_nodes(int type) { return type == 15 ? 1 : type == 1 ? 2 : type == 2 ? 3 : 4; }

/* Sub model part of physical group (dim, tag): its name, or Physical_<dim>_<tag>. */
static int gm_group_smp(gm_reader *g, int dim, int tag, ef_sub_model_part **smp) {
  char buf[64];
  const char *name = NULL;
  long long where = 0;
  for (int64_t i = 0; i < g->n_names; ++i)
    if (g->names[i].dim == dim && g->names[i].tag == tag) {
      name = g->names[i].name;
      where = g->names[i].where;
      break;
    }
  if (!name) {
    snprintf(buf, sizeof buf, "Physical_%d_%d", dim, tag);
    name = buf;
  }
  int err = ef_model_part_add_sub_model_part(g->mp, NULL, name, smp);
  if (err == EF_ERR_PARAMETER) /* the name itself is unusable ("", "a..b") */
    return EF_SRC_ERROR(&g->src, EF_ERR_PARSE, where, "physical name \"%s\" cannot be a sub model part name: %s",
                        name, ef_error_message());
  return err;
}

/* Elements: the highest-dimensional cells.  Conditions: the next dimension down, when in a
 * physical group.  Lower cells in a group only contribute nodes to it. */
static int gm_build(gm_reader *g) {
  ef_model_part mp = g->mp;
  int err = EF_SUCCESS;
  ef_mesh_id_map tags = {0};
  ef_index *newidx = NULL, *list = NULL, *nodes = NULL, *stamp = NULL;
  gm_member *members = NULL;
  int64_t n_members = 0;

  int dim = 0;
  for (int64_t i = 0; i < g->n_cells; ++i) {
    if (g->cells[i].type == 4) dim = 3;
    if (g->cells[i].type == 2 && dim < 2) dim = 2;
  }
  if (dim == 0) return GM_ERROR(g, g->where, "expected triangles (type 2) or tetrahedra (type 4) in $Elements, found none");
  int el_type = dim == 3 ? 4 : 2, co_type = dim == 3 ? 2 : 1;
  int npe = dim + 1, npc = dim;

  int64_t dup_first = -1, dup_second = -1;
  EF_CALL_GOTO(ef_mesh_id_map_build(&tags, g->node_tags, g->n_nodes, &dup_first, &dup_second), done);
  if (dup_second >= 0) {
    err = EF_SRC_ERROR(&g->src, EF_ERR_MESH, g->node_where[dup_second], "duplicate node tag %lld (first defined at %s %lld)",
                       (long long)g->node_tags[dup_second], g->src.binary ? "byte" : "line", g->node_where[dup_first]);
    goto done;
  }
  newidx = malloc((size_t)(g->n_nodes > 0 ? g->n_nodes : 1) * sizeof *newidx);
  EF_CHECK_GOTO(newidx, EF_ERR_MEMORY, done, "out of memory for %lld nodes", (long long)g->n_nodes);
  for (int64_t i = 0; i < g->n_nodes; ++i) newidx[i] = -1;

  /* Node tags of the cells we keep become file positions (once); elements mark the nodes that stay. */
  int64_t n_el = 0, n_co = 0, n_member_slots = 0;
  for (int64_t i = 0; i < g->n_cells; ++i) {
    gm_cell *c = &g->cells[i];
    if (c->type != el_type && c->n_phys == 0) continue;
    for (int k = 0; k < gm_cell_nodes(c->type); ++k) {
      int64_t *t = &g->cell_nodes[c->node_off + k];
      int64_t f = ef_mesh_id_map_find(&tags, *t);
      if (f < 0) {
        err = EF_SRC_ERROR(&g->src, EF_ERR_MESH, c->where, "%s %lld refers to node %lld, which $Nodes does not define",
                           c->type == el_type ? "element" : gm_cell_dim(c->type) == 0 ? "point" : "boundary cell",
                           (long long)c->tag, (long long)*t);
        goto done;
      }
      *t = f;
      if (c->type == el_type) newidx[f] = 0;
    }
    n_el += c->type == el_type;
    n_co += c->type == co_type && c->n_phys > 0;
    n_member_slots += c->n_phys;
  }
  int64_t n_used = 0;
  for (int64_t i = 0; i < g->n_nodes; ++i)
    if (newidx[i] == 0) newidx[i] = (ef_index)n_used++;

  mp->dim = dim;
  EF_CALL_GOTO(ef_model_part_alloc_nodes(mp, n_used), done);
  for (int64_t i = 0; i < g->n_nodes; ++i)
    if (newidx[i] >= 0) {
      mp->node_ids[newidx[i]] = g->node_tags[i];
      memcpy(mp->coords + 3 * (int64_t)newidx[i], g->xyz + 3 * i, 3 * sizeof(double));
    }
  EF_CALL_GOTO(ef_model_part_alloc_elements(mp, n_el, npe), done);
  if (n_co > 0) EF_CALL_GOTO(ef_model_part_alloc_conditions(mp, n_co, npc), done);
  else mp->nodes_per_condition = npc;

  /* Place the cells and note their physical memberships. */
  int64_t e = 0, cnd = 0;
  members = malloc((size_t)(n_member_slots > 0 ? n_member_slots : 1) * sizeof *members);
  EF_CHECK_GOTO(members, EF_ERR_MEMORY, done, "out of memory for %lld group memberships", (long long)n_member_slots);
  for (int64_t i = 0; i < g->n_cells; ++i) {
    gm_cell *c = &g->cells[i];
    int kind;
    int64_t index;
    ef_index *dest = NULL;
    if (c->type == el_type) {
      kind = 0, index = e;
      dest = mp->elements + e * npe;
      mp->element_ids[e++] = c->tag;
    } else if (c->n_phys == 0) {
      continue; /* a lower-dimensional cell in no physical group carries nothing we need */
    } else if (c->type == co_type) {
      kind = 1, index = cnd;
      dest = mp->conditions + cnd * npc;
      mp->condition_ids[cnd++] = c->tag;
    } else {
      kind = 2, index = i;
    }
    for (int k = 0; k < gm_cell_nodes(c->type); ++k) {
      int64_t f = g->cell_nodes[c->node_off + k];
      if (newidx[f] < 0) {
        err = EF_SRC_ERROR(&g->src, EF_ERR_MESH, c->where, "%s %lld refers to node %lld, which no element uses",
                           gm_cell_dim(c->type) == 0 ? "point" : "boundary cell", (long long)c->tag,
                           (long long)g->node_tags[f]);
        goto done;
      }
      if (!dest) continue;
      dest[k] = newidx[f];
      for (int q = 0; q < k; ++q)
        if (dest[q] == dest[k]) {
          err = EF_SRC_ERROR(&g->src, EF_ERR_MESH, c->where, "%s %lld is degenerate: it lists node %lld twice",
                             kind == 0 ? "element" : "boundary cell", (long long)c->tag, (long long)g->node_tags[f]);
          goto done;
        }
    }
    for (int p = 0; p < c->n_phys; ++p)
      members[n_members++] = (gm_member){gm_cell_dim(c->type), g->phys[c->phys_off + p], kind, index};
  }

  /* Named groups first, in file order, so that empty ones exist too. */
  for (int64_t i = 0; i < g->n_names; ++i) {
    ef_sub_model_part *smp = NULL;
    if (g->names[i].dim <= dim) EF_CALL_GOTO(gm_group_smp(g, g->names[i].dim, g->names[i].tag, &smp), done);
  }
  if (n_members > 1) qsort(members, (size_t)n_members, sizeof *members, gm_member_cmp);
  list = malloc((size_t)(n_members > 0 ? n_members : 1) * sizeof *list);
  nodes = malloc((size_t)(n_used > 0 ? n_used : 1) * sizeof *nodes);
  stamp = malloc((size_t)(n_used > 0 ? n_used : 1) * sizeof *stamp);
  EF_CHECK_GOTO(list && nodes && stamp, EF_ERR_MEMORY, done, "out of memory grouping %lld cells", (long long)n_members);
  for (int64_t k = 0; k < n_used; ++k) stamp[k] = -1;
  ef_index group = 0;
  for (int64_t i = 0; i < n_members; ++group) {
    int64_t j = i;
    while (j < n_members && members[j].dim == members[i].dim && members[j].tag == members[i].tag) ++j;
    ef_sub_model_part *smp = NULL;
    EF_CALL_GOTO(gm_group_smp(g, members[i].dim, members[i].tag, &smp), done);
    /* Each node once per group (stamp), so the list to sort is short. */
    int64_t n_nodes = 0;
    for (int kind = 0; kind < 3; ++kind) {
      int64_t n_list = 0;
      for (int64_t k = i; k < j; ++k) {
        if (members[k].kind != kind) continue;
        const ef_index *conn = NULL;
        int nn = 0;
        ef_index from_cell[2];
        if (kind == 0) {
          conn = mp->elements + members[k].index * npe, nn = npe;
        } else if (kind == 1) {
          conn = mp->conditions + members[k].index * npc, nn = npc;
        } else {
          gm_cell *c = &g->cells[members[k].index];
          nn = gm_cell_nodes(c->type);
          for (int q = 0; q < nn; ++q) from_cell[q] = newidx[g->cell_nodes[c->node_off + q]];
          conn = from_cell;
        }
        if (kind < 2) list[n_list++] = (ef_index)members[k].index;
        for (int q = 0; q < nn; ++q)
          if (stamp[conn[q]] != group) {
            stamp[conn[q]] = group;
            nodes[n_nodes++] = conn[q];
          }
      }
      if (kind == 0) EF_CALL_GOTO(ef_sub_model_part_add_elements(smp, list, n_list), done);
      if (kind == 1) EF_CALL_GOTO(ef_sub_model_part_add_conditions(smp, list, n_list), done);
    }
    if (n_nodes > 1) qsort(nodes, (size_t)n_nodes, sizeof *nodes, gm_index_cmp);
    EF_CALL_GOTO(ef_sub_model_part_add_nodes(smp, nodes, n_nodes), done);
    i = j;
  }
  EF_CALL_GOTO(ef_model_part_finalize_sub_model_parts(mp), done);
  EF_CALL_GOTO(ef_model_part_check_mesh(mp, NULL), done);
done:
  ef_mesh_id_map_free(&tags);
  free(newidx);
  free(list);
  free(nodes);
  free(stamp);
  free(members);
  return err;
}

/* Release the reader (not the model part). */
static void gm_free(gm_reader *g) {
  ef_mesh_source_close(&g->src);
  for (int64_t i = 0; i < g->n_names; ++i) free(g->names[i].name);
  free(g->names);
  free(g->ent);
  free(g->phys);
  free(g->node_tags);
  free(g->xyz);
  free(g->node_where);
  free(g->cells);
  free(g->cell_nodes);
}

/* Parse the opened source into the empty model part mp; frees the reader. */
static int gm_read_source(gm_reader *g, ef_model_part mp, const char *path) {
  g->mp = mp;
  if (!mp->source_file) {
    mp->source_file = malloc(strlen(path) + 1);
    if (mp->source_file) memcpy(mp->source_file, path, strlen(path) + 1);
  }
  int err = gm_parse(g);
  if (!err) err = gm_build(g);
  gm_free(g);
  return err;
}

/* Read a Gmsh .msh file into the empty model part mp. */
int ef_read_gmsh(const char *path, ef_model_part mp) {
  EF_CHECK(path && mp, EF_ERR_PARAMETER, "ef_read_gmsh: NULL argument");
  EF_CHECK(mp->n_nodes == 0 && mp->n_elements == 0, EF_ERR_PARAMETER,
           "ef_read_gmsh: model part '%s' already holds a mesh", mp->name);
  gm_reader g;
  memset(&g, 0, sizeof g);
  int err = ef_mesh_source_open(&g.src, path);
  if (err) return err;
  return gm_read_source(&g, mp, path);
}

/* The same on the bytes of a file held in memory; name stands for its path. */
int ef_read_gmsh_memory(const char *name, const void *data, size_t size, ef_model_part mp) {
  EF_CHECK(name && mp, EF_ERR_PARAMETER, "ef_read_gmsh_memory: NULL argument");
  EF_CHECK(mp->n_nodes == 0 && mp->n_elements == 0, EF_ERR_PARAMETER,
           "ef_read_gmsh_memory: model part '%s' already holds a mesh", mp->name);
  gm_reader g;
  memset(&g, 0, sizeof g);
  int err = ef_mesh_source_open_memory(&g.src, name, data, size);
  if (err) return err;
  return gm_read_source(&g, mp, name);
}
