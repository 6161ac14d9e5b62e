/* test_bad_input.c -- broken mesh files are refused with a message that names the
 * file, the line (or the byte offset in binary gmsh data) and what was expected.
 *
 * Each case starts from a good file (an inline .mdpa, or a committed .msh), breaks
 * one thing, writes it to a temporary directory as bad_NN.<ext> and reads it with
 * ef_read_mesh.  The good files are read first, so a case cannot pass because its
 * base was already broken. */
#include "edgeflow/ef_error.h"
#include "edgeflow/ef_mesh_io.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ef_test.h"

static char tmpdir[64];

static const char *mdpa_base =
    "Begin ModelPartData\n"                                 /*  1 */
    "//  VARIABLE_NAME value\n"                             /*  2 */
    "End ModelPartData\n"                                   /*  3 */
    "Begin Properties 1\n"                                  /*  4 */
    "    DENSITY 1000.0\n"                                  /*  5 */
    "End Properties\n"                                      /*  6 */
    "Begin Nodes\n"                                         /*  7 */
    "    1 0.0 0.0 0.0\n"                                   /*  8 */
    "    2 1.0 0.0 0.0\n"                                   /*  9 */
    "    3 1.0 1.0 0.0\n"                                   /* 10 */
    "    4 0.0 1.0 0.0\n"                                   /* 11 */
    "End Nodes\n"                                           /* 12 */
    "Begin Elements Element2D3N// GUI group identifier: Parts\n" /* 13 */
    "    1 1 1 2 3\n"                                       /* 14 */
    "    2 1 1 3 4\n"                                       /* 15 */
    "End Elements\n"                                        /* 16 */
    "Begin Conditions LineCondition2D2N\n"                  /* 17 */
    "    1 0 1 2\n"                                         /* 18 */
    "End Conditions\n"                                      /* 19 */
    "Begin SubModelPart Inlet\n"                            /* 20 */
    "    Begin SubModelPartNodes\n"                         /* 21 */
    "        1\n"                                           /* 22 */
    "        2\n"                                           /* 23 */
    "    End SubModelPartNodes\n"                           /* 24 */
    "    Begin SubModelPartConditions\n"                    /* 25 */
    "        1\n"                                           /* 26 */
    "    End SubModelPartConditions\n"                      /* 27 */
    "End SubModelPart\n";                                   /* 28 */

enum { REPLACE, INSERT_AFTER, KEEP_LINES, WHOLE };

typedef struct {
  const char *base; /* "mdpa" (inline) or a file in tests/data/mesh_io */
  int op;
  int line, last;   /* REPLACE lines [line, last] (last 0: just line); INSERT_AFTER line; KEEP_LINES first line lines */
  const char *text; /* replacement / inserted lines (no final newline); NULL deletes */
  int expect_line;
  const char *keyword;
} text_case;

static const text_case text_cases[] = {
    /* .mdpa */
    {"mdpa", REPLACE, 9, 0, "    2 1.0 abc 0.0", 9, "finite number"},
    {"mdpa", REPLACE, 9, 0, "    2 1.0 nan 0.0", 9, "finite number"},
    {"mdpa", REPLACE, 9, 0, "    2 inf 0.0 0.0", 9, "finite number"},
    {"mdpa", REPLACE, 9, 0, "    2 1.0 0.0", 9, "4 fields"},
    {"mdpa", REPLACE, 10, 0, "    1 1.0 1.0 0.0", 10, "duplicate node id 1"},
    {"mdpa", REPLACE, 8, 0, "    0 0.0 0.0 0.0", 8, "node id"},
    {"mdpa", REPLACE, 8, 0, "    99999999999999999999 0.0 0.0 0.0", 8, "node id"}, /* overflows int64 */
    {"mdpa", REPLACE, 14, 0, "    -1 1 1 2 3", 14, "element id"},
    {"mdpa", REPLACE, 13, 0, "Begin Elements Element2D4N", 13, "2D3N"},
    {"mdpa", REPLACE, 15, 0, "    2 1 1 3 9", 15, "node 9"},
    {"mdpa", REPLACE, 15, 0, "    2 1 1 3", 15, "fields"},
    {"mdpa", REPLACE, 14, 0, "    1 1 1 2 3 7", 14, "fields"},
    {"mdpa", REPLACE, 12, 0, NULL, 12, "End Nodes"},
    {"mdpa", KEEP_LINES, 27, 0, NULL, 27, "unterminated block 'SubModelPart'"},
    {"mdpa", KEEP_LINES, 26, 0, NULL, 26, "unterminated block 'SubModelPartConditions'"},
    {"mdpa", REPLACE, 16, 0, "End Conditions", 16, "End Elements"},
    {"mdpa", REPLACE, 23, 0, "        7", 23, "node 7"},
    {"mdpa", REPLACE, 26, 0, "        5", 26, "condition 5"},
    {"mdpa", INSERT_AFTER, 16, 0, "Begin Elements Element3D4N\n    3 1 1 2 3 4\nEnd Elements", 17, "mixed"},
    {"mdpa", REPLACE, 1, 0, "Begin Foo", 1, "unknown block"},
    {"mdpa", REPLACE, 15, 0, "    1 1 1 3 4", 15, "duplicate element id 1"},
    {"mdpa", REPLACE, 15, 0, "    2 1 1 3 1", 15, "twice"},
    {"mdpa", REPLACE, 5, 0, "    DENSITY 1.0x", 5, "number"},
    {"mdpa", INSERT_AFTER, 19, 0, "Begin NodalData VELOCITY_X\n    1 2 0.0\nEnd NodalData", 21, "is_fixed"},
    {"mdpa", INSERT_AFTER, 11, 0, "    5 5.0 5.0 0.0", 12, "used by no element"},
    {"mdpa", REPLACE, 25, 0, "    Begin SubModelPartFoo", 25, "unknown block"},
    {"mdpa", REPLACE, 20, 0, "Begin SubModelPart In.let", 20, "'.'"},
    {"mdpa", REPLACE, 4, 0, "Begin Properties x", 4, "property id"},
    {"mdpa", REPLACE, 17, 19, "Begin Conditions SurfaceCondition3D3N\n    1 0 1 2 3\nEnd Conditions", 17, "3D"},
    {"mdpa", REPLACE, 7, 0, "Nodes", 7, "expected 'Begin"},
    {"mdpa", WHOLE, 0, 0, "", 1, "Begin Nodes"},
    {"mdpa", WHOLE, 0, 0, "// only a comment\n", 1, "Begin Nodes"},
    /* MSH 4.1 ASCII */
    {"square_41.msh", REPLACE, 2, 0, "4.0 0 8", 2, "unsupported MSH version"},
    {"square_41.msh", REPLACE, 25, 0, "9 13 1 12", 25, "wrong count"},
    {"square_41.msh", REPLACE, 40, 0, "0.499999999998694 abc 0", 40, "finite number"},
    {"square_41.msh", REPLACE, 40, 0, "nan 0 0", 40, "finite number"},
    {"square_41.msh", REPLACE, 77, 0, "10 6 3 99", 77, "node 99"},
    {"square_41.msh", REPLACE, 76, 0, "2 1 3 14", 76, "type 3"},
    {"square_41.msh", KEEP_LINES, 85, 0, NULL, 86, "end of file"},
    {"square_41.msh", REPLACE, 61, 0, "6 22 1 23", 76, "wrong count"},
    {"square_41.msh", REPLACE, 39, 0, "1", 39, "duplicate node tag 1"},
    {"square_41.msh", REPLACE, 18, 0, "1 0 0 0 1 0 0 1 3 2 1", 18, "bounding entity"},
    {"square_41.msh", REPLACE, 76, 0, "2 5 2 14", 76, "entity (dimension 2, tag 5)"},
    {"square_41.msh", REPLACE, 59, 0, NULL, 59, "$EndNodes"},
    {"square_41.msh", REPLACE, 7, 0, "1 2 Inlet", 7, "quoted"},
    {"square_41.msh", REPLACE, 27, 0, "0", 27, "node tag"},
    {"square_41.msh", REPLACE, 26, 0, "0 1 2 1", 26, "parametric"},
    {"square_41.msh", REPLACE, 11, 23, NULL, 47, "$Entities"}, /* $Elements moves up to line 47 */
    {"square_41.msh", REPLACE, 1, 0, "$MeshFormat x", 1, "$MeshFormat"},
    /* MSH 2.2 ASCII */
    {"square_22.msh", REPLACE, 12, 0, "13", 25, "node tag"},
    {"square_22.msh", REPLACE, 17, 0, "5 0.499999999998694 0", 17, "z coordinate"},
    {"square_22.msh", REPLACE, 37, 0, "10 2 2 1 1 6 3", 37, "node tag"},
    {"square_22.msh", REPLACE, 37, 0, "10 9 2 1 1 6 3 11 1 2 3", 37, "type 9"},
    {"square_22.msh", REPLACE, 2, 0, "2.2 1 8", 2, "binary MSH 2.2"},
    {"square_22.msh", REPLACE, 1, 0, "MeshFormat", 1, "$MeshFormat"},
    {"square_22.msh", REPLACE, 38, 0, "11 2 2 1 1 8 1 1", 38, "twice"},
    {"square_22.msh", REPLACE, 28, 0, "1 15 2 8 3 77", 28, "node 77"},
    {"square_22.msh", REPLACE, 27, 0, "2000000000", 27, "count"},
    {"square_22.msh", REPLACE, 27, 0, "2x3", 27, "number of elements"},
    {"square_22.msh", KEEP_LINES, 40, 0, NULL, 41, "end of file"},
    {"square_22.msh", WHOLE, 0, 0, "", 1, "$MeshFormat"},
};

/* ------------------------------------------------------------------------- */

typedef struct {
  char *data;
  size_t size;
} buffer;

static int slurp(const char *path, buffer *b) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  int ok = n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (b->data = malloc((size_t)n + 1)) &&
           fread(b->data, 1, (size_t)n, f) == (size_t)n;
  fclose(f);
  if (!ok) {
    free(b->data);
    b->data = NULL;
    return -1;
  }
  b->data[n] = '\0';
  b->size = (size_t)n;
  return 0;
}

static int spill(const char *path, const char *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(data, 1, size, f);
  return (fclose(f) == 0 && w == size) ? 0 : -1;
}

/* Apply a text case to base, giving a new NUL-terminated string. */
static char *mutate_text(const char *base, const text_case *c) {
  if (c->op == WHOLE) {
    char *out = malloc(strlen(c->text) + 1);
    if (out) strcpy(out, c->text);
    return out;
  }
  size_t cap = strlen(base) + (c->text ? strlen(c->text) : 0) + 8;
  char *out = malloc(cap);
  if (!out) return NULL;
  size_t used = 0;
  int line = 1;
  int last = c->last ? c->last : c->line;
  for (const char *p = base; *p; ++line) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p) + 1 : strlen(p);
    int keep = 1;
    if (c->op == KEEP_LINES && line > c->line) keep = 0;
    if (c->op == REPLACE && line >= c->line && line <= last) {
      keep = 0;
      if (line == c->line && c->text) used += (size_t)sprintf(out + used, "%s\n", c->text);
    }
    if (keep) {
      memcpy(out + used, p, len);
      used += len;
    }
    if (c->op == INSERT_AFTER && line == c->line) used += (size_t)sprintf(out + used, "%s\n", c->text);
    p += len;
  }
  out[used] = '\0';
  return out;
}

/* Read the broken file and check the message; where < 0: binary, offset unknown. */
static void expect_failure(int id, const char *ext, const char *data, size_t size, const char *where_text,
                           const char *keyword, const char *label) {
  char path[128], name[32];
  snprintf(name, sizeof name, "bad_%02d.%s", id, ext);
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  if (spill(path, data, size)) {
    fprintf(stderr, "case %d: cannot write %s\n", id, path);
    failures++;
    return;
  }
  ef_model_part mp = NULL;
  int rc = ef_read_mesh(path, NULL, &mp);
  const char *msg = ef_error_message();
  int ok = rc != 0 && mp == NULL && strstr(msg, name) && strstr(msg, where_text) && strstr(msg, keyword);
  if (!ok) {
    fprintf(stderr, "case %d (%s): expected failure naming '%s', '%s' and '%s'; got rc=%d: %s\n", id, label, name,
            where_text, keyword, rc, rc ? msg : "(success)");
    failures++;
  }
  ef_model_part_destroy(&mp);
  remove(path);
}

static int read_ok(const char *path) {
  ef_model_part mp = NULL;
  int rc = ef_read_mesh(path, NULL, &mp);
  if (rc) fprintf(stderr, "base file %s does not read: %s\n", path, ef_error_message());
  ef_model_part_destroy(&mp);
  return rc == 0;
}

/* ------------------------------------------------------------------------- */
/* Binary MSH 4.1 cases: mutate a copy of square_41_bin.msh in memory. */

static size_t find(const buffer *b, const char *needle) {
  size_t n = strlen(needle);
  for (size_t i = 0; i + n <= b->size; ++i)
    if (memcmp(b->data + i, needle, n) == 0) return i;
  return (size_t)-1;
}

static void put_u64(char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (char)((v >> (8 * i)) & 0xff);
}
static void put_i32(char *p, int32_t v) {
  uint32_t u = (uint32_t)v;
  for (int i = 0; i < 4; ++i) p[i] = (char)((u >> (8 * i)) & 0xff);
}

typedef struct {
  const char *label;
  const char *keyword;
} binary_case;

/* Layout (data size 8): $Nodes header = 4 x u64, then per block 3 x i32 + u64, tags, coords;
 * $Elements header = 4 x u64, then per block 3 x i32 + u64, then (tag, nodes...) as u64. */
static void run_binary_cases(int *id) {
  buffer good = {0};
  if (slurp(EF_TEST_DATA "/mesh_io/square_41_bin.msh", &good)) {
    fprintf(stderr, "cannot read square_41_bin.msh\n");
    failures++;
    return;
  }
  size_t fmt = find(&good, "4.1 1 8\n") + 8;   /* the endianness check integer */
  size_t nodes = find(&good, "$Nodes\n") + 7;  /* node section header */
  size_t nblock = nodes + 32;                  /* first node block header */
  size_t ntag = nblock + 20;                   /* its first node tag */
  size_t ncoord = ntag + 8;                    /* and that node's x (the block has one node) */
  size_t elems = find(&good, "$Elements\n") + 10;
  size_t eblock = elems + 32;
  size_t etag = eblock + 20;                   /* first element: a point (tag, 1 node) */
  size_t end_nodes = find(&good, "\n$EndNodes") + 1;
  size_t end_elems = find(&good, "\n$EndElements");
  size_t ents = find(&good, "$Entities\n") + 10;
  if (fmt < 8 || nodes < 7 || elems < 10 || end_nodes == 0 || ents < 10) {
    fprintf(stderr, "square_41_bin.msh does not have the expected layout\n");
    failures++;
    free(good.data);
    return;
  }
  struct {
    size_t at;        /* where the reader must point */
    size_t cut;       /* truncate to this size (0: keep) */
    size_t poke;      /* offset to overwrite (or SIZE_MAX) */
    int width;        /* 4 or 8 bytes */
    uint64_t value;
    const char *label, *keyword;
  } cases[] = {
      {fmt, 0, fmt, 4, 0x01000000, "big-endian marker", "big-endian"},
      {nodes, 0, nodes + 8, 8, (uint64_t)1 << 62, "huge node count", "count"},
      {nodes, 0, nodes + 8, 8, 13, "node count one too many", "wrong count"},
      {ncoord, 0, ncoord, 8, 0x7ff8000000000000ull, "NaN coordinate", "finite number"},
      {ntag, 0, ntag, 8, 0, "zero node tag", "positive tag"},
      {nblock, 0, nblock, 4, 7, "node block dimension 7", "entityDim"},
      {eblock, 0, eblock + 8, 4, 3, "quadrangle element type", "type 3"},
      {etag, 0, etag + 8, 8, 99, "point on missing node 99", "node 99"},
      {elems, 0, elems + 8, 8, 24, "element count one too many", "wrong count"},
      {eblock, 0, eblock + 12, 8, 1000, "element block larger than the section", "wrong count"},
      {elems, 0, elems + 8, 8, UINT64_MAX, "element count 2^64-1", "count"},
      {ents, 0, ents, 8, (uint64_t)1 << 40, "huge entity count", "count"},
      {nodes, nodes, SIZE_MAX, 0, 0, "file ends after $Nodes", "end of file"},
      {end_elems - 8, end_elems - 4, SIZE_MAX, 0, 0, "file ends inside the last element", "end of file"},
      {end_nodes, 0, end_nodes + 8, 1, 'X', "$EndNodes misspelt", "$EndNodes"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    buffer b = {malloc(good.size + 1), good.size};
    if (!b.data) break;
    memcpy(b.data, good.data, good.size);
    if (cases[i].cut) b.size = cases[i].cut;
    if (cases[i].poke != SIZE_MAX) {
      if (cases[i].width == 8) put_u64(b.data + cases[i].poke, cases[i].value);
      else if (cases[i].width == 4) put_i32(b.data + cases[i].poke, (int32_t)(uint32_t)cases[i].value);
      else b.data[cases[i].poke] = (char)cases[i].value;
    }
    char where[48];
    snprintf(where, sizeof where, "byte %zu:", cases[i].at);
    expect_failure((*id)++, "msh", b.data, b.size, where, cases[i].keyword, cases[i].label);
    free(b.data);
  }
  free(good.data);
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/ef_bad_input_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  /* The bases must read cleanly. */
  char base_path[128];
  snprintf(base_path, sizeof base_path, "%s/base.mdpa", tmpdir);
  if (spill(base_path, mdpa_base, strlen(mdpa_base)) || !read_ok(base_path)) failures++;
  remove(base_path);
  if (!read_ok(EF_TEST_DATA "/mesh_io/square_41.msh") || !read_ok(EF_TEST_DATA "/mesh_io/square_22.msh") ||
      !read_ok(EF_TEST_DATA "/mesh_io/square_41_bin.msh"))
    failures++;

  int id = 0;
  for (size_t i = 0; i < sizeof text_cases / sizeof text_cases[0]; ++i) {
    const text_case *c = &text_cases[i];
    buffer base = {0};
    int inline_base = strcmp(c->base, "mdpa") == 0;
    if (!inline_base) {
      char path[512];
      snprintf(path, sizeof path, "%s/mesh_io/%s", EF_TEST_DATA, c->base);
      if (slurp(path, &base)) {
        fprintf(stderr, "cannot read %s\n", path);
        failures++;
        continue;
      }
    }
    char *text = mutate_text(inline_base ? mdpa_base : base.data, c);
    char where[32], label[64];
    snprintf(where, sizeof where, ":%d:", c->expect_line);
    snprintf(label, sizeof label, "%s line %d", c->base, c->line);
    if (text) expect_failure(id, inline_base ? "mdpa" : "msh", text, strlen(text), where, c->keyword, label);
    ++id;
    free(text);
    free(base.data);
  }
  run_binary_cases(&id);
  rmdir(tmpdir);
  if (failures) fprintf(stderr, "%d of %d cases failed\n", failures, id);
  return failures ? 1 : 0;
}
