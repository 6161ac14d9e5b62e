/* opencl_context.c -- device choice, context and queue, kernel sources, program cache. */
#include "opencl_context.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "edgeflow/ef_log.h"
#include "edgeflow/ef_util.h"

/* The table cmake/embed_kernels.cmake generates from custom_kernels/. */
extern const struct ef_embedded_source {
  const char *name;
  const char *text;
} ef_embedded_sources[];

#define EF_CL_NAME_SIZE 256
#define EF_CL_MAX_INCLUDES 64
#define EF_CL_CACHE_MAGIC "EFCLPRG1"

struct ef_cl_program_entry_s {
  uint64_t key;
  cl_program program;
  ef_cl_program_entry *next;
};

/* ------------------------------------------------------------------------- */
/* Status names. */

/* The CL_* name of a status code, for messages. */
const char *ef_cl_error_name(cl_int code) {
  switch (code) {
#define EF_CL_NAME(c) \
  case c:             \
    return #c;
    EF_CL_NAME(CL_SUCCESS)
    EF_CL_NAME(CL_DEVICE_NOT_FOUND)
    EF_CL_NAME(CL_DEVICE_NOT_AVAILABLE)
    EF_CL_NAME(CL_COMPILER_NOT_AVAILABLE)
    EF_CL_NAME(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    EF_CL_NAME(CL_OUT_OF_RESOURCES)
    EF_CL_NAME(CL_OUT_OF_HOST_MEMORY)
    EF_CL_NAME(CL_PROFILING_INFO_NOT_AVAILABLE)
    EF_CL_NAME(CL_MEM_COPY_OVERLAP)
    EF_CL_NAME(CL_IMAGE_FORMAT_MISMATCH)
    EF_CL_NAME(CL_IMAGE_FORMAT_NOT_SUPPORTED)
    EF_CL_NAME(CL_BUILD_PROGRAM_FAILURE)
    EF_CL_NAME(CL_MAP_FAILURE)
    EF_CL_NAME(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    EF_CL_NAME(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    EF_CL_NAME(CL_COMPILE_PROGRAM_FAILURE)
    EF_CL_NAME(CL_LINKER_NOT_AVAILABLE)
    EF_CL_NAME(CL_LINK_PROGRAM_FAILURE)
    EF_CL_NAME(CL_DEVICE_PARTITION_FAILED)
    EF_CL_NAME(CL_KERNEL_ARG_INFO_NOT_AVAILABLE)
    EF_CL_NAME(CL_INVALID_VALUE)
    EF_CL_NAME(CL_INVALID_DEVICE_TYPE)
    EF_CL_NAME(CL_INVALID_PLATFORM)
    EF_CL_NAME(CL_INVALID_DEVICE)
    EF_CL_NAME(CL_INVALID_CONTEXT)
    EF_CL_NAME(CL_INVALID_QUEUE_PROPERTIES)
    EF_CL_NAME(CL_INVALID_COMMAND_QUEUE)
    EF_CL_NAME(CL_INVALID_HOST_PTR)
    EF_CL_NAME(CL_INVALID_MEM_OBJECT)
    EF_CL_NAME(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR)
    EF_CL_NAME(CL_INVALID_IMAGE_SIZE)
    EF_CL_NAME(CL_INVALID_SAMPLER)
    EF_CL_NAME(CL_INVALID_BINARY)
    EF_CL_NAME(CL_INVALID_BUILD_OPTIONS)
    EF_CL_NAME(CL_INVALID_PROGRAM)
    EF_CL_NAME(CL_INVALID_PROGRAM_EXECUTABLE)
    EF_CL_NAME(CL_INVALID_KERNEL_NAME)
    EF_CL_NAME(CL_INVALID_KERNEL_DEFINITION)
    EF_CL_NAME(CL_INVALID_KERNEL)
    EF_CL_NAME(CL_INVALID_ARG_INDEX)
    EF_CL_NAME(CL_INVALID_ARG_VALUE)
    EF_CL_NAME(CL_INVALID_ARG_SIZE)
    EF_CL_NAME(CL_INVALID_KERNEL_ARGS)
    EF_CL_NAME(CL_INVALID_WORK_DIMENSION)
    EF_CL_NAME(CL_INVALID_WORK_GROUP_SIZE)
    EF_CL_NAME(CL_INVALID_WORK_ITEM_SIZE)
    EF_CL_NAME(CL_INVALID_GLOBAL_OFFSET)
    EF_CL_NAME(CL_INVALID_EVENT_WAIT_LIST)
    EF_CL_NAME(CL_INVALID_EVENT)
    EF_CL_NAME(CL_INVALID_OPERATION)
    EF_CL_NAME(CL_INVALID_GL_OBJECT)
    EF_CL_NAME(CL_INVALID_BUFFER_SIZE)
    EF_CL_NAME(CL_INVALID_MIP_LEVEL)
    EF_CL_NAME(CL_INVALID_GLOBAL_WORK_SIZE)
    EF_CL_NAME(CL_INVALID_PROPERTY)
    EF_CL_NAME(CL_INVALID_IMAGE_DESCRIPTOR)
    EF_CL_NAME(CL_INVALID_COMPILER_OPTIONS)
    EF_CL_NAME(CL_INVALID_LINKER_OPTIONS)
    EF_CL_NAME(CL_INVALID_DEVICE_PARTITION_COUNT)
#undef EF_CL_NAME
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "CL_UNKNOWN_ERROR";
  }
}

/* ------------------------------------------------------------------------- */
/* Small helpers. */

/* FNV-1a over bytes: a stable, dependency-free content hash for cache keys. */
uint64_t ef_cl_hash(uint64_t seed, const void *data, size_t size) {
  const unsigned char *p = data;
  uint64_t h = seed;
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

/* FNV-1a over a string including its terminator (so "ab"+"c" differs from "a"+"bc"). */
uint64_t ef_cl_hash_str(uint64_t seed, const char *s) {
  if (!s) s = "";
  return ef_cl_hash(seed, s, strlen(s) + 1);
}

/* Case-insensitive substring test. */
static int ef_contains_nocase(const char *hay, const char *needle) {
  size_t nl = strlen(needle);
  if (!nl) return 1;
  for (; *hay; ++hay) {
    size_t i = 0;
    while (i < nl && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      ++i;
    if (i == nl) return 1;
  }
  return 0;
}

/* Printf to the context's log when its verbosity reaches level. */
static void ef_cl_log(const ef_cl_context *ctx, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void ef_cl_log(const ef_cl_context *ctx, int level, const char *fmt, ...) {
  if (ctx->verbose < level) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(ctx->log ? ctx->log : stderr, fmt, ap);
  va_end(ap);
}

/* A growable string. */
typedef struct {
  char *data;
  size_t length, capacity;
} ef_strbuf;

/* Append size bytes to a string buffer. */
static int ef_strbuf_append(ef_strbuf *b, const char *text, size_t size) {
  if (b->length + size + 1 > b->capacity) {
    size_t cap = b->capacity ? b->capacity : 4096;
    while (cap < b->length + size + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    EF_CHECK(p, EF_ERR_MEMORY, "out of memory growing a string to %zu bytes", cap);
    b->data = p;
    b->capacity = cap;
  }
  memcpy(b->data + b->length, text, size);
  b->length += size;
  b->data[b->length] = '\0';
  return EF_SUCCESS;
}

/* Append printf-formatted text to a string buffer. */
static int ef_strbuf_printf(ef_strbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int ef_strbuf_printf(ef_strbuf *b, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  if (n < 0) return EF_SUCCESS;
  return ef_strbuf_append(b, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* Read a whole file into a new string. */
static int ef_read_text_file(const char *path, char **text) {
  FILE *f = fopen(path, "rb");
  EF_CHECK(f, EF_ERR_IO, "cannot open kernel source '%s': %s", path, strerror(errno));
  ef_strbuf b = {0};
  char chunk[8192];
  size_t got;
  int err = ef_strbuf_append(&b, "", 0);
  while (!err && (got = fread(chunk, 1, sizeof chunk, f)) > 0) err = ef_strbuf_append(&b, chunk, got);
  if (!err && ferror(f)) err = EF_ERROR(EF_ERR_IO, "cannot read kernel source '%s'", path);
  fclose(f);
  if (err) {
    free(b.data);
    return err;
  }
  *text = b.data;
  return EF_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Device enumeration. */

typedef struct {
  cl_platform_id platform;
  cl_device_id device;
  int platform_index;
  char platform_name[EF_CL_NAME_SIZE], platform_vendor[EF_CL_NAME_SIZE];
  char platform_version[EF_CL_NAME_SIZE];
  char name[EF_CL_NAME_SIZE], driver[EF_CL_NAME_SIZE], c_version[EF_CL_NAME_SIZE];
  cl_device_type type;
  cl_ulong global_mem, max_alloc, local_mem;
  cl_uint compute_units, clock_mhz;
  size_t max_wg;
  int fp64;
} ef_cl_device_info;

/* Query one device's description. */
static int ef_cl_describe(cl_device_id d, ef_cl_device_info *info) {
  cl_device_fp_config fp = 0;
  EF_CL_CALL(clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof info->name, info->name, NULL));
  EF_CL_CALL(clGetDeviceInfo(d, CL_DRIVER_VERSION, sizeof info->driver, info->driver, NULL));
  EF_CL_CALL(clGetDeviceInfo(d, CL_DEVICE_OPENCL_C_VERSION, sizeof info->c_version, info->c_version,
                             NULL));
  EF_CL_CALL(clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof info->type, &info->type, NULL));
  EF_CL_CALL(clGetDeviceInfo(d, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof info->global_mem,
                             &info->global_mem, NULL));
  EF_CL_CALL(clGetDeviceInfo(d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof info->max_alloc,
                             &info->max_alloc, NULL));
  EF_CL_CALL(clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof info->local_mem, &info->local_mem,
                             NULL));
  EF_CL_CALL(clGetDeviceInfo(d, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof info->compute_units,
                             &info->compute_units, NULL));
  EF_CL_CALL(clGetDeviceInfo(d, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof info->clock_mhz,
                             &info->clock_mhz, NULL));
  EF_CL_CALL(clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof info->max_wg, &info->max_wg,
                             NULL));
  /* Devices report fp64 either as the extension or (OpenCL 1.2+) a non-zero config. */
  size_t ext_size = 0;
  EF_CL_CALL(clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_size));
  char *ext = malloc(ext_size + 1);
  EF_CHECK(ext, EF_ERR_MEMORY, "out of memory");
  cl_int st = clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, ext_size, ext, NULL);
  ext[st == CL_SUCCESS ? ext_size : 0] = '\0';
  info->fp64 = strstr(ext, "cl_khr_fp64") != NULL;
  free(ext);
  if (clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp, &fp, NULL) == CL_SUCCESS && fp)
    info->fp64 = 1;
  info->device = d;
  return EF_SUCCESS;
}

/* All devices of all platforms, in platform then device order (*list free()). */
static int ef_cl_enumerate(ef_cl_device_info **list, int *count) {
  *list = NULL;
  *count = 0;
  cl_uint np = 0;
  cl_int st = clGetPlatformIDs(0, NULL, &np);
  if (st == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: no ICD installed */ || np == 0) return EF_SUCCESS;
  EF_CHECK(st == CL_SUCCESS, EF_ERR_OPENCL, "clGetPlatformIDs failed: %s (%d)",
           ef_cl_error_name(st), (int)st);
  cl_platform_id *platforms = calloc(np, sizeof *platforms);
  EF_CHECK(platforms, EF_ERR_MEMORY, "out of memory");
  int err = EF_SUCCESS;
  ef_cl_device_info *all = NULL;
  int total = 0;
  EF_CL_CALL_GOTO(clGetPlatformIDs(np, platforms, NULL), done);
  for (cl_uint p = 0; p < np; ++p) {
    cl_uint nd = 0;
    st = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd);
    if (st == CL_DEVICE_NOT_FOUND || nd == 0) continue;
    EF_CL_CALL_GOTO(st, done);
    cl_device_id *devs = calloc(nd, sizeof *devs);
    ef_cl_device_info *grown = realloc(all, (size_t)(total + (int)nd) * sizeof *all);
    if (!devs || !grown) {
      free(devs);
      free(grown ? grown : all);
      all = NULL;
      err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
      goto done;
    }
    all = grown;
    st = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
    for (cl_uint d = 0; st == CL_SUCCESS && d < nd && !err; ++d) {
      ef_cl_device_info *info = &all[total];
      memset(info, 0, sizeof *info);
      info->platform = platforms[p];
      info->platform_index = (int)p;
      clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof info->platform_name,
                        info->platform_name, NULL);
      clGetPlatformInfo(platforms[p], CL_PLATFORM_VENDOR, sizeof info->platform_vendor,
                        info->platform_vendor, NULL);
      clGetPlatformInfo(platforms[p], CL_PLATFORM_VERSION, sizeof info->platform_version,
                        info->platform_version, NULL);
      err = ef_cl_describe(devs[d], info);
      if (!err) ++total;
    }
    free(devs);
    if (err) goto done;
    EF_CL_CALL_GOTO(st, done);
  }
done:
  free(platforms);
  if (err) {
    free(all);
    return err;
  }
  *list = all;
  *count = total;
  return EF_SUCCESS;
}

/* "GPU", "CPU", "ACCELERATOR" or "OTHER". */
static const char *ef_cl_type_name(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return "GPU";
  if (t & CL_DEVICE_TYPE_CPU) return "CPU";
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return "ACCELERATOR";
  return "OTHER";
}

/* Count devices on all platforms. */
int ef_cl_set_args_at(cl_kernel kernel, const char *file, int line, int count, const ef_cl_arg *args) {
  cl_uint expected = 0;
  char name[128] = "?";
  cl_int st = clGetKernelInfo(kernel, CL_KERNEL_NUM_ARGS, sizeof expected, &expected, NULL);
  if (st != CL_SUCCESS)
    return ef_error_set(EF_ERR_OPENCL, file, line, "clGetKernelInfo(CL_KERNEL_NUM_ARGS) failed: %s (%d)",
                        ef_cl_error_name(st), (int)st);
  if ((cl_uint)count != expected) {
    (void)clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
    name[sizeof name - 1] = '\0';
    return ef_error_set(EF_ERR_OPENCL, file, line, "kernel %s takes %u arguments, %d were given", name,
                        (unsigned)expected, count);
  }
  for (int i = 0; i < count; ++i) {
    st = clSetKernelArg(kernel, (cl_uint)i, args[i].size, args[i].value);
    if (st != CL_SUCCESS) {
      (void)clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
      name[sizeof name - 1] = '\0';
      return ef_error_set(EF_ERR_OPENCL, file, line, "clSetKernelArg(%s, argument %d) failed: %s (%d)", name, i,
                          ef_cl_error_name(st), (int)st);
    }
  }
  return EF_SUCCESS;
}

int ef_cl_bind_args_at(ef_cl_bound_args *b, cl_kernel kernel, const char *file, int line, int count,
                       const ef_cl_arg *args) {
  if (b->kernel != kernel || b->count != count) {
    b->kernel = NULL;
    if (count > EF_CL_BOUND_MAX_ARGS)
      return ef_error_set(EF_ERR_OPENCL, file, line, "a bound kernel takes at most %d arguments, %d were given",
                          EF_CL_BOUND_MAX_ARGS, count);
    int err = ef_cl_set_args_at(kernel, file, line, count, args);
    if (err) return err;
    for (int i = 0; i < count; ++i) {
      b->size[i] = args[i].size;
      memset(b->value[i], 0, EF_CL_BOUND_VALUE_BYTES);
      if (args[i].value && args[i].size <= EF_CL_BOUND_VALUE_BYTES) memcpy(b->value[i], args[i].value, args[i].size);
    }
    b->kernel = kernel;
    b->count = count;
    return EF_SUCCESS;
  }
  for (int i = 0; i < count; ++i) {
    const int kept = args[i].size == b->size[i] &&
                     (args[i].value ? args[i].size <= EF_CL_BOUND_VALUE_BYTES &&
                                          !memcmp(b->value[i], args[i].value, args[i].size)
                                    : 1);
    if (kept) continue;
    cl_int st = clSetKernelArg(kernel, (cl_uint)i, args[i].size, args[i].value);
    if (st != CL_SUCCESS) {
      char name[128] = "?";
      (void)clGetKernelInfo(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
      name[sizeof name - 1] = '\0';
      b->kernel = NULL;
      return ef_error_set(EF_ERR_OPENCL, file, line, "clSetKernelArg(%s, argument %d) failed: %s (%d)", name, i,
                          ef_cl_error_name(st), (int)st);
    }
    b->size[i] = args[i].size;
    memset(b->value[i], 0, EF_CL_BOUND_VALUE_BYTES);
    if (args[i].value && args[i].size <= EF_CL_BOUND_VALUE_BYTES) memcpy(b->value[i], args[i].value, args[i].size);
  }
  return EF_SUCCESS;
}

int ef_cl_count_devices(int *count) {
  ef_cl_device_info *list;
  EF_CALL(ef_cl_enumerate(&list, count));
  free(list);
  return EF_SUCCESS;
}

/* Describe every device in a few lines each. */
int ef_cl_list_devices(FILE *out) {
  ef_cl_device_info *list;
  int count;
  EF_CALL(ef_cl_enumerate(&list, &count));
  if (!out) out = stdout;
  if (count == 0) fprintf(out, "No OpenCL platform or device found (is an ICD installed?)\n");
  int last_platform = -1;
  for (int i = 0; i < count; ++i) {
    const ef_cl_device_info *d = &list[i];
    if (d->platform_index != last_platform) {
      fprintf(out, "Platform %d: %s (%s, %s)\n", d->platform_index, d->platform_name,
              d->platform_vendor, d->platform_version);
      last_platform = d->platform_index;
    }
    fprintf(out,
            "  Device %d: %s\n"
            "    type %s, %u compute units at %u MHz, global memory %.2f GiB "
            "(largest buffer %.2f GiB), local memory %lu KiB\n"
            "    fp64 %s, driver %s, %s\n",
            i, d->name, ef_cl_type_name(d->type), d->compute_units, d->clock_mhz,
            (double)d->global_mem / 1073741824.0, (double)d->max_alloc / 1073741824.0,
            (unsigned long)(d->local_mem / 1024), d->fp64 ? "yes" : "NO (refused)", d->driver,
            d->c_version);
  }
  free(list);
  return EF_SUCCESS;
}

/* A one-line-per-device listing appended to b (for error messages). */
static void ef_cl_listing(ef_strbuf *b, const ef_cl_device_info *list, int count) {
  if (count == 0) {
    ef_strbuf_printf(b, "\n  (no OpenCL platform or device is installed)");
    return;
  }
  ef_strbuf_printf(b, "\n  available devices:");
  for (int i = 0; i < count; ++i)
    ef_strbuf_printf(b, "\n  [%d] platform %d '%s': %s (%s, fp64 %s, %.1f GiB)", i,
                     list[i].platform_index, list[i].platform_name, list[i].name,
                     ef_cl_type_name(list[i].type), list[i].fp64 ? "yes" : "no",
                     (double)list[i].global_mem / 1073741824.0);
}

/* ------------------------------------------------------------------------- */
/* Device choice. */

/* Defaults documented in opencl_context.h. */
void ef_cl_settings_default(ef_cl_settings *s) {
  memset(s, 0, sizeof *s);
  s->device_index = -1;
  s->type = EF_CL_DEVICE_DEFAULT;
  s->verbose = 1;
}

/* Parse "platform[:index]" / "gpu[:index]" / "cpu" / "any" into the choice fields. */
static void ef_cl_parse_spec(const char *spec, char *platform, size_t psize, int *index,
                             ef_cl_device_type *type) {
  char word[EF_CL_NAME_SIZE];
  ef_copy_string(word, sizeof word, spec);
  char *colon = strrchr(word, ':');
  *index = -1;
  if (colon) {
    char *end;
    long v = strtol(colon + 1, &end, 10);
    if (end != colon + 1 && *end == '\0' && v >= 0) {
      *index = (int)v;
      *colon = '\0';
    }
  }
  platform[0] = '\0';
  *type = EF_CL_DEVICE_ANY;
  if (!strcmp(word, "gpu") || !strcmp(word, "GPU"))
    *type = EF_CL_DEVICE_GPU;
  else if (!strcmp(word, "cpu") || !strcmp(word, "CPU"))
    *type = EF_CL_DEVICE_CPU;
  else if (!strcmp(word, "default") || !strcmp(word, ""))
    *type = EF_CL_DEVICE_DEFAULT;
  else if (strcmp(word, "any") != 0)
    ef_copy_string(platform, psize, word);
}

/* Whether a device matches a platform substring and a type. */
static int ef_cl_matches(const ef_cl_device_info *d, const char *platform, ef_cl_device_type t) {
  if (platform && platform[0] && !ef_contains_nocase(d->platform_name, platform) &&
      !ef_contains_nocase(d->platform_vendor, platform))
    return 0;
  if (t == EF_CL_DEVICE_GPU) return (d->type & CL_DEVICE_TYPE_GPU) != 0;
  if (t == EF_CL_DEVICE_CPU) return (d->type & CL_DEVICE_TYPE_CPU) != 0;
  return 1;
}

/* Pick the device index into list following the rules in opencl_context.h. */
static int ef_cl_choose(const ef_cl_device_info *list, int count, const char *platform, int index,
                        ef_cl_device_type type, const char *origin, int *chosen) {
  *chosen = -1;
  int matched = 0, fp64_refused = -1;
  if (index >= 0) {
    for (int i = 0; i < count; ++i) {
      if (!ef_cl_matches(&list[i], platform, type)) continue;
      if (matched++ == index) {
        if (list[i].fp64) *chosen = i;
        else fp64_refused = i;
        break;
      }
    }
  } else if (type == EF_CL_DEVICE_DEFAULT && !(platform && platform[0])) {
    const ef_cl_device_type order[3] = {EF_CL_DEVICE_GPU, EF_CL_DEVICE_CPU, EF_CL_DEVICE_ANY};
    for (int o = 0; o < 3 && *chosen < 0; ++o)
      for (int i = 0; i < count && *chosen < 0; ++i)
        if (ef_cl_matches(&list[i], NULL, order[o])) {
          ++matched;
          if (list[i].fp64) *chosen = i;
          else if (fp64_refused < 0) fp64_refused = i;
        }
  } else {
    for (int i = 0; i < count && *chosen < 0; ++i)
      if (ef_cl_matches(&list[i], platform, type)) {
        ++matched;
        if (list[i].fp64) *chosen = i;
        else if (fp64_refused < 0) fp64_refused = i;
      }
  }
  if (*chosen >= 0) return EF_SUCCESS;
  ef_strbuf msg = {0};
  const char *tname = type == EF_CL_DEVICE_GPU ? "gpu" : type == EF_CL_DEVICE_CPU ? "cpu" : "any";
  if (fp64_refused >= 0 && (index >= 0 || matched == 1))
    ef_strbuf_printf(&msg, "OpenCL device '%s' (%s) has no double precision (cl_khr_fp64): refused",
                     list[fp64_refused].name, list[fp64_refused].platform_name);
  else if (matched > 0 && index < 0)
    ef_strbuf_printf(&msg, "no OpenCL device with double precision (cl_khr_fp64) matches %s "
                     "(platform '%s', type %s)", origin, platform ? platform : "", tname);
  else
    ef_strbuf_printf(&msg, "no OpenCL device matches %s (platform '%s', type %s, index %d)", origin,
                     platform ? platform : "", tname, index);
  ef_cl_listing(&msg, list, count);
  int code = fp64_refused >= 0 ? EF_ERR_UNSUPPORTED : EF_ERR_NOT_FOUND;
  int err = EF_ERROR(code, "%s", msg.data ? msg.data : "no OpenCL device");
  free(msg.data);
  return err;
}

/* Where the program binaries go (see ef_cl_settings.cache_dir). */
static void ef_cl_cache_dir(const ef_cl_settings *s, char *dir, size_t size) {
  const char *env = getenv("EDGEFLOW_CACHE_DIR");
  const char *home = getenv("HOME");
  dir[0] = '\0';
  if (s->cache_dir)
    ef_copy_string(dir, size, s->cache_dir);
  else if (env)
    ef_copy_string(dir, size, env);
  else if (home && home[0])
    snprintf(dir, size, "%s/.cache/edgeflow", home);
}

/* Choose the device and create the context and the profiling queue. */
int ef_cl_context_create(const ef_cl_settings *settings, ef_cl_context **out) {
  EF_CHECK(out, EF_ERR_PARAMETER, "ef_cl_context_create: NULL output");
  *out = NULL;
  ef_cl_settings s;
  if (settings) s = *settings;
  else ef_cl_settings_default(&s);

  char platform[EF_CL_NAME_SIZE];
  ef_copy_string(platform, sizeof platform, s.platform);
  int index = s.device_index;
  ef_cl_device_type type = s.type;
  const char *origin = "the settings";
  const char *env = s.ignore_environment ? NULL : getenv("EDGEFLOW_OPENCL_DEVICE");
  if (env && env[0]) {
    ef_cl_parse_spec(env, platform, sizeof platform, &index, &type);
    origin = "EDGEFLOW_OPENCL_DEVICE";
  }

  ef_cl_device_info *list;
  int count, chosen;
  EF_CALL(ef_cl_enumerate(&list, &count));
  int err = ef_cl_choose(list, count, platform, index, type, origin, &chosen);
  if (err) {
    free(list);
    return err;
  }
  ef_cl_context *ctx = calloc(1, sizeof *ctx);
  if (!ctx) {
    free(list);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory");
  }
  const ef_cl_device_info *d = &list[chosen];
  ctx->platform = d->platform;
  ctx->device = d->device;
  ef_copy_string(ctx->platform_name, sizeof ctx->platform_name, d->platform_name);
  ef_copy_string(ctx->platform_version, sizeof ctx->platform_version, d->platform_version);
  ef_copy_string(ctx->device_name, sizeof ctx->device_name, d->name);
  ef_copy_string(ctx->driver_version, sizeof ctx->driver_version, d->driver);
  ctx->device_type = d->type;
  ctx->global_mem_bytes = d->global_mem;
  ctx->max_alloc_bytes = d->max_alloc;
  ctx->local_mem_bytes = d->local_mem;
  ctx->max_work_group_size = d->max_wg;
  ctx->compute_units = d->compute_units;
  ef_cl_cache_dir(&s, ctx->cache_dir, sizeof ctx->cache_dir);
  free(list);

  cl_int st;
  cl_context_properties props[3] = {CL_CONTEXT_PLATFORM, (cl_context_properties)ctx->platform, 0};
  ctx->context = clCreateContext(props, 1, &ctx->device, NULL, NULL, &st);
  if (st == CL_SUCCESS)
    ctx->queue = clCreateCommandQueue(ctx->context, ctx->device, CL_QUEUE_PROFILING_ENABLE, &st);
  if (st != CL_SUCCESS) {
    err = EF_ERROR(EF_ERR_OPENCL, "creating the context/queue on '%s' failed: %s (%d)",
                   ctx->device_name, ef_cl_error_name(st), (int)st);
    ef_cl_context_destroy(&ctx);
    return err;
  }
  ef_cl_context_announce(ctx, s.verbose, s.log);
  *out = ctx;
  return EF_SUCCESS;
}

/* The device line (verbose >= 1); verbose and log then hold for the context's later messages. */
void ef_cl_context_announce(ef_cl_context *ctx, int verbose, FILE *log) {
  ctx->verbose = verbose;
  ctx->log = log ? log : stderr;
  ef_cl_log(ctx, 1, "edgeflow: OpenCL device '%s' (%s, %s, driver %s, %u compute units, %.1f GiB)\n",
            ctx->device_name, ctx->platform_name, ef_cl_type_name(ctx->device_type),
            ctx->driver_version, ctx->compute_units, (double)ctx->global_mem_bytes / 1073741824.0);
}

/* Release the programs, queue and context. */
void ef_cl_context_destroy(ef_cl_context **pctx) {
  if (!pctx || !*pctx) return;
  ef_cl_context *ctx = *pctx;
  for (ef_cl_program_entry *e = ctx->programs, *next; e; e = next) {
    next = e->next;
    clReleaseProgram(e->program);
    free(e);
  }
  if (ctx->queue) {
    clFinish(ctx->queue);
    clReleaseCommandQueue(ctx->queue);
  }
  if (ctx->context) clReleaseContext(ctx->context);
  free(ctx);
  *pctx = NULL;
}

/* Compare a job's device memory with what the device has. */
int ef_cl_context_check_memory(ef_cl_context *ctx, uint64_t bytes, const char *what) {
  EF_CHECK(ctx, EF_ERR_PARAMETER, "ef_cl_context_check_memory: no context");
  double mib = (double)bytes / 1048576.0, have = (double)ctx->global_mem_bytes / 1048576.0;
  ef_cl_log(ctx, 1, "edgeflow: %s needs %.1f MiB of device memory; '%s' has %.1f MiB\n",
            what ? what : "the job", mib, ctx->device_name, have);
  EF_CHECK((double)bytes <= 0.9 * (double)ctx->global_mem_bytes, EF_ERR_UNSUPPORTED,
           "%s needs %.1f MiB of device memory but OpenCL device '%s' has %.1f MiB "
           "(at most 90%% of it can be used): refused; use a larger device or a smaller problem",
           what ? what : "the job", mib, ctx->device_name, have);
  return EF_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Kernel sources. */

/* The text of a kernel file from EDGEFLOW_KERNEL_DIR or the embedded table. */
int ef_cl_source_load(const char *name, char **text) {
  EF_CHECK(name && text, EF_ERR_PARAMETER, "ef_cl_source_load: NULL argument");
  *text = NULL;
  EF_CHECK(!strchr(name, '/'), EF_ERR_PARAMETER, "kernel source name '%s' must be a bare file name",
           name);
  const char *dir = getenv("EDGEFLOW_KERNEL_DIR");
  if (dir && dir[0]) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    EF_CALL(ef_read_text_file(path, text));
    return EF_SUCCESS;
  }
  for (const struct ef_embedded_source *e = ef_embedded_sources; e->name; ++e)
    if (!strcmp(e->name, name)) {
      *text = strdup(e->text);
      EF_CHECK(*text, EF_ERR_MEMORY, "out of memory");
      return EF_SUCCESS;
    }
  return EF_ERROR(EF_ERR_NOT_FOUND, "kernel source '%s' is not embedded in the library "
                  "(rebuild after adding it to custom_kernels/, or set EDGEFLOW_KERNEL_DIR)", name);
}

typedef struct {
  const char *names[EF_CL_MAX_INCLUDES];
  int count;
} ef_include_set;

/* If line is `#include "file"`, copy file into name and return 1. */
static int ef_parse_include(const char *line, size_t len, char *name, size_t size) {
  size_t i = 0;
  while (i < len && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i >= len || line[i] != '#') return 0;
  ++i;
  while (i < len && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (len - i < 7 || strncmp(line + i, "include", 7) != 0) return 0;
  i += 7;
  while (i < len && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i >= len || line[i] != '"') return 0;
  size_t start = ++i;
  while (i < len && line[i] != '"') ++i;
  if (i >= len || i - start >= size || i == start) return 0;
  memcpy(name, line + start, i - start);
  name[i - start] = '\0';
  return 1;
}

/* Append text (named label) to out with its includes expanded. */
static int ef_resolve_into(ef_strbuf *out, const char *label, const char *text,
                           ef_include_set *seen, int depth) {
  EF_CHECK(depth < 16, EF_ERR_PARSE, "kernel includes nested too deep at '%s'", label);
  int line_no = 1;
  const char *p = text;
  while (*p) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char name[256];
    if (ef_parse_include(p, len, name, sizeof name)) {
      int already = 0;
      for (int i = 0; i < seen->count; ++i) already |= !strcmp(seen->names[i], name);
      if (!already) {
        EF_CHECK(seen->count < EF_CL_MAX_INCLUDES, EF_ERR_PARSE, "too many kernel includes");
        char *inc;
        int load_err = ef_cl_source_load(name, &inc);
        if (load_err)
          return ef_error_push(load_err, __FILE__, __LINE__, "included from '%s' line %d", label,
                               line_no);
        seen->names[seen->count] = strdup(name);
        if (!seen->names[seen->count]) {
          free(inc);
          return EF_ERROR(EF_ERR_MEMORY, "out of memory");
        }
        seen->count++;
        int err = ef_strbuf_printf(out, "#line 1 \"%s\"\n", name);
        if (!err) err = ef_resolve_into(out, name, inc, seen, depth + 1);
        free(inc);
        if (err) return ef_error_push(err, __FILE__, __LINE__, "included from '%s' line %d",
                                      label, line_no);
        if (out->length && out->data[out->length - 1] != '\n') EF_CALL(ef_strbuf_append(out, "\n", 1));
      }
      EF_CALL(ef_strbuf_printf(out, "#line %d \"%s\"\n", line_no + 1, label));
    } else {
      EF_CALL(ef_strbuf_append(out, p, len));
      if (eol) EF_CALL(ef_strbuf_append(out, "\n", 1));
    }
    if (!eol) break;
    p = eol + 1;
    ++line_no;
  }
  return EF_SUCCESS;
}

/* Expand the includes of a given text. */
static int ef_resolve_text(const char *label, const char *text, char **resolved) {
  ef_strbuf out = {0};
  ef_include_set seen = {{0}, 0};
  int err = ef_strbuf_append(&out, "", 0);
  if (!err) {
    seen.names[seen.count] = strdup(label);
    if (seen.names[seen.count]) seen.count++;
    else err = EF_ERROR(EF_ERR_MEMORY, "out of memory");
  }
  if (!err) err = ef_resolve_into(&out, label, text, &seen, 0);
  for (int i = 0; i < seen.count; ++i) free((void *)seen.names[i]);
  if (err) {
    free(out.data);
    return err;
  }
  *resolved = out.data;
  return EF_SUCCESS;
}

/* Load a kernel file and expand its includes. */
int ef_cl_source_resolve(const char *name, char **text) {
  char *raw;
  EF_CALL(ef_cl_source_load(name, &raw));
  int err = ef_resolve_text(name, raw, text);
  free(raw);
  return err;
}

/* ------------------------------------------------------------------------- */
/* Programs. */

/* Path of the cache file for a key. */
static void ef_cache_path(const ef_cl_context *ctx, uint64_t key, char *path, size_t size) {
  snprintf(path, size, "%s/prog-%016" PRIx64 ".bin", ctx->cache_dir, key);
}

/* Try to build the program from its cached binary; 0 with *program NULL when absent or unusable. */
static int ef_cache_load(ef_cl_context *ctx, uint64_t key, const char *options, cl_program *program) {
  *program = NULL;
  if (!ctx->cache_dir[0]) return EF_SUCCESS;
  char path[1200];
  ef_cache_path(ctx, key, path, sizeof path);
  FILE *f = fopen(path, "rb");
  if (!f) return EF_SUCCESS;
  char magic[8];
  uint64_t head[3] = {0, 0, 0}; /* key, size, hash of the binary */
  unsigned char *bin = NULL;
  int ok = fread(magic, 1, 8, f) == 8 && !memcmp(magic, EF_CL_CACHE_MAGIC, 8) &&
           fread(head, 8, 3, f) == 3 && head[0] == key && head[1] > 0 && head[1] < (1ull << 32);
  if (ok) {
    bin = malloc((size_t)head[1]);
    ok = bin && fread(bin, 1, (size_t)head[1], f) == head[1] && fgetc(f) == EOF &&
         ef_cl_hash(EF_FNV_SEED, bin, (size_t)head[1]) == head[2];
  }
  fclose(f);
  if (ok) {
    size_t size = (size_t)head[1];
    const unsigned char *bins[1] = {bin};
    cl_int st, bst = CL_SUCCESS;
    cl_program p = clCreateProgramWithBinary(ctx->context, 1, &ctx->device, &size, bins, &bst, &st);
    if (st == CL_SUCCESS && bst == CL_SUCCESS &&
        clBuildProgram(p, 1, &ctx->device, options, NULL, NULL) == CL_SUCCESS) {
      *program = p;
    } else {
      if (st == CL_SUCCESS) clReleaseProgram(p);
      ok = 0;
    }
  }
  free(bin);
  if (!ok) {
    ctx->disk_cache_rejected++;
    ef_cl_log(ctx, 2, "edgeflow: ignoring unusable program cache file %s\n", path);
  }
  return EF_SUCCESS;
}

/* Store a built program's binary (best effort: a failure only logs). */
static void ef_cache_store(ef_cl_context *ctx, uint64_t key, cl_program program) {
  if (!ctx->cache_dir[0]) return;
  size_t size = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL) != CL_SUCCESS ||
      size == 0)
    return;
  unsigned char *bin = malloc(size);
  unsigned char *bins[1] = {bin};
  if (!bin || clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) != CL_SUCCESS ||
      ef_make_folders(ctx->cache_dir) != EF_SUCCESS) {
    free(bin);
    ef_error_clear();
    return;
  }
  char path[1200], tmp[1300];
  ef_cache_path(ctx, key, path, sizeof path);
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  uint64_t head[3] = {key, (uint64_t)size, ef_cl_hash(EF_FNV_SEED, bin, size)};
  int ok = f && fwrite(EF_CL_CACHE_MAGIC, 1, 8, f) == 8 && fwrite(head, 8, 3, f) == 3 &&
           fwrite(bin, 1, size, f) == size;
  if (f && fclose(f) != 0) ok = 0;
  /* rename() is atomic, so a concurrent reader never sees half a file. */
  if (!ok || rename(tmp, path) != 0) {
    remove(tmp);
    ef_cl_log(ctx, 2, "edgeflow: could not write program cache file %s\n", path);
  }
  free(bin);
}

/* Build from source; on failure print and return the build log. */
static int ef_build_source(ef_cl_context *ctx, const char *label, const char *text,
                           const char *options, cl_program *program) {
  cl_int st;
  const char *texts[1] = {text};
  cl_program p = clCreateProgramWithSource(ctx->context, 1, texts, NULL, &st);
  EF_CL_CHECK_STATUS(st, "clCreateProgramWithSource");
  st = clBuildProgram(p, 1, &ctx->device, options, NULL, NULL);
  if (st == CL_SUCCESS) {
    *program = p;
    return EF_SUCCESS;
  }
  size_t log_size = 0;
  char *log = NULL;
  if (clGetProgramBuildInfo(p, ctx->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_size) == CL_SUCCESS &&
      (log = malloc(log_size + 1)) != NULL) {
    if (clGetProgramBuildInfo(p, ctx->device, CL_PROGRAM_BUILD_LOG, log_size, log, NULL) != CL_SUCCESS)
      log_size = 0;
    log[log_size] = '\0';
  }
  clReleaseProgram(p);
  fprintf(ctx->log ? ctx->log : stderr,
          "edgeflow: building OpenCL program '%s' with options '%s' for '%s' failed: %s\n"
          "---- build log ----\n%s\n-------------------\n",
          label, options ? options : "", ctx->device_name, ef_cl_error_name(st), log ? log : "");
  int err = EF_ERROR(EF_ERR_OPENCL, "clBuildProgram of '%s' (options '%s') failed: %s (%d); "
                     "build log:\n%s", label, options ? options : "", ef_cl_error_name(st), (int)st,
                     log ? log : "(none)");
  free(log);
  return err;
}

/* Serve a program from memory, disk or a fresh build (see opencl_context.h). */
static int ef_program_from_resolved(ef_cl_context *ctx, const char *label, const char *resolved,
                                    const char *options, cl_program *program) {
  uint64_t key = ef_cl_hash_str(EF_FNV_SEED, ctx->device_name);
  key = ef_cl_hash_str(key, ctx->driver_version);
  key = ef_cl_hash_str(key, ctx->platform_version);
  key = ef_cl_hash_str(key, resolved);
  key = ef_cl_hash_str(key, options);
  for (ef_cl_program_entry *e = ctx->programs; e; e = e->next)
    if (e->key == key) {
      EF_CL_CALL(clRetainProgram(e->program));
      ctx->builds_from_memory++;
      *program = e->program;
      return EF_SUCCESS;
    }
  cl_program p = NULL;
  /* Timed as one setup event over all programs: on NVIDIA a cached binary is PTX, still compiled here. */
  const int event = ef_log_event("setup", "OpenCL programs (disk cache or source)");
  ef_log_event_begin(event);
  int err = ef_cache_load(ctx, key, options, &p);
  if (!err && !p) {
    err = ef_build_source(ctx, label, resolved, options, &p);
    if (!err) {
      ctx->builds_from_source++;
      ef_cl_log(ctx, 2, "edgeflow: program '%s' [%s] built from source\n", label, options);
      ef_cache_store(ctx, key, p);
    }
  } else if (!err) {
    ctx->builds_from_disk_cache++;
    ef_cl_log(ctx, 2, "edgeflow: program '%s' [%s] from the disk cache\n", label, options);
  }
  ef_log_event_end(event);
  EF_CALL(err);
  ef_cl_program_entry *e = calloc(1, sizeof *e);
  if (!e) {
    clReleaseProgram(p);
    return EF_ERROR(EF_ERR_MEMORY, "out of memory");
  }
  e->key = key;
  e->program = p;
  e->next = ctx->programs;
  ctx->programs = e;
  cl_int st = clRetainProgram(p);
  EF_CL_CHECK_STATUS(st, "clRetainProgram");
  *program = p;
  return EF_SUCCESS;
}

/* A program for a kernel file. */
int ef_cl_program_get(ef_cl_context *ctx, const char *name, const char *options,
                      cl_program *program) {
  EF_CHECK(ctx && name && program, EF_ERR_PARAMETER, "ef_cl_program_get: NULL argument");
  *program = NULL;
  char *resolved;
  EF_CALL(ef_cl_source_resolve(name, &resolved));
  int err = ef_program_from_resolved(ctx, name, resolved, options ? options : "", program);
  free(resolved);
  return err;
}

/* A program for a given source text. */
int ef_cl_program_get_text(ef_cl_context *ctx, const char *label, const char *text,
                           const char *options, cl_program *program) {
  EF_CHECK(ctx && text && program, EF_ERR_PARAMETER, "ef_cl_program_get_text: NULL argument");
  *program = NULL;
  char *resolved;
  EF_CALL(ef_resolve_text(label ? label : "<text>", text, &resolved));
  int err = ef_program_from_resolved(ctx, label ? label : "<text>", resolved,
                                     options ? options : "", program);
  free(resolved);
  return err;
}

/* Device time between start and end of a profiled command. */
int ef_cl_event_seconds(cl_event event, double *seconds) {
  cl_ulong start = 0, end = 0;
  EF_CL_CALL(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
  EF_CL_CALL(clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
  *seconds = end > start ? (double)(end - start) * 1e-9 : 0.0;
  return EF_SUCCESS;
}
