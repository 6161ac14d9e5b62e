/* opencl_context.h -- the OpenCL device layer: device choice, context, queue,
 * kernel sources and the program cache.
 *
 * Device choice.  ef_cl_settings names a platform (case-insensitive substring of
 * its name or vendor), a device index among the matching devices and a type
 * (gpu/cpu).  The environment variable EDGEFLOW_OPENCL_DEVICE overrides them:
 * "NVIDIA:0", "Portable:0", "cpu", "gpu", "gpu:1", "any:2", "NVIDIA".  Default:
 * the first GPU with fp64, else the first CPU device with fp64.  A device without
 * cl_khr_fp64 is refused; a choice that matches nothing fails with the list of
 * devices in the message.
 *
 * Kernel sources.  The .cl and .h files of custom_kernels/ are embedded in the
 * library at build time (ef_embedded_sources); EDGEFLOW_KERNEL_DIR makes the library read
 * them from that folder instead.  `#include "x.h"` of our own files is resolved
 * here by textual inclusion, once per file per program, because the OpenCL
 * compiler cannot see embedded strings.  `#line` markers keep build-log line
 * numbers pointing at the right file.
 *
 * Program cache.  A built program is kept in memory for the context's life and
 * its binary on disk in EDGEFLOW_CACHE_DIR (or settings.cache_dir, or
 * ~/.cache/edgeflow), keyed by device name, driver version, platform version,
 * the resolved source and the options.  A cache file that is corrupt or that
 * the driver refuses is ignored and rebuilt.  The counters in ef_cl_context tell
 * tests which path a build took.
 *
 * Errors.  EF_CL_CALL records "file:line: call failed: CL_NAME (code)" with
 * EF_ERR_OPENCL through ef_error.h; nothing here aborts.
 */
#ifndef EF_OPENCL_CONTEXT_H
#define EF_OPENCL_CONTEXT_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdint.h>
#include <stdio.h>

#include "edgeflow/ef_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CL_* name of an OpenCL status code ("CL_OUT_OF_RESOURCES"). */
const char *ef_cl_error_name(cl_int code);

/* Fail with EF_ERR_OPENCL naming the call, its status and the site. */
#define EF_CL_CALL(call)                                                             \
  do {                                                                               \
    cl_int ef_cl_status_ = (call);                                                   \
    if (ef_cl_status_ != CL_SUCCESS)                                                 \
      return ef_error_set(EF_ERR_OPENCL, __FILE__, __LINE__, "%s failed: %s (%d)", #call, \
                          ef_cl_error_name(ef_cl_status_), (int)ef_cl_status_);     \
  } while (0)
/* As EF_CL_CALL, but jump to label with `int err` set. */
#define EF_CL_CALL_GOTO(call, label)                                                 \
  do {                                                                               \
    cl_int ef_cl_status_ = (call);                                                   \
    if (ef_cl_status_ != CL_SUCCESS) {                                               \
      err = ef_error_set(EF_ERR_OPENCL, __FILE__, __LINE__, "%s failed: %s (%d)", #call, \
                         ef_cl_error_name(ef_cl_status_), (int)ef_cl_status_);      \
      goto label;                                                                    \
    }                                                                                \
  } while (0)
/* Kernel arguments, set all at once in order, so that no index is written by hand:
 *   EF_CL_SET_ARGS(kernel, EF_CL_ARG(n), EF_CL_ARG(x), EF_CL_LOCAL(bytes), ...);
 * Argument i of the list is argument i of the kernel; the count must equal the kernel's
 * (CL_KERNEL_NUM_ARGS), otherwise EF_ERR_OPENCL names the kernel, both counts and the site.
 * A failing clSetKernelArg names the argument's position. */
typedef struct {
  size_t size;
  const void *value; /* NULL with a size: __local memory of that many bytes */
} ef_cl_arg;
#define EF_CL_ARG(v) ((ef_cl_arg){sizeof(v), &(v)})
#define EF_CL_LOCAL(bytes) ((ef_cl_arg){(size_t)(bytes), NULL})
int ef_cl_set_args_at(cl_kernel kernel, const char *file, int line, int count, const ef_cl_arg *args);
#define EF_CL_SET_ARGS(kernel, ...)                                                                \
  EF_CALL(ef_cl_set_args_at((kernel), __FILE__, __LINE__,                                       \
                            (int)(sizeof((ef_cl_arg[]){__VA_ARGS__}) / sizeof(ef_cl_arg)),       \
                            (ef_cl_arg[]){__VA_ARGS__}))

/* The same, for a kernel launched again and again (a CG iteration, a multigrid cycle): the values
 * last set are kept in `bound`, and only the arguments that changed since the previous call reach
 * the driver (on NVIDIA's OpenCL each clSetKernelArg costs host time that a small launch cannot
 * hide).  The argument count is checked on the first call.  A kernel bound this way must never
 * have its arguments set by another call (EF_CL_SET_ARGS or another ef_cl_bound_args), or the
 * kept values no longer say what the kernel holds. */
#define EF_CL_BOUND_MAX_ARGS 24
#define EF_CL_BOUND_VALUE_BYTES 16
typedef struct {
  cl_kernel kernel; /* the kernel the values below belong to (NULL: none yet) */
  int count;
  size_t size[EF_CL_BOUND_MAX_ARGS];
  unsigned char value[EF_CL_BOUND_MAX_ARGS][EF_CL_BOUND_VALUE_BYTES];
} ef_cl_bound_args;
int ef_cl_bind_args_at(ef_cl_bound_args *bound, cl_kernel kernel, const char *file, int line, int count,
                       const ef_cl_arg *args);
#define EF_CL_BIND_ARGS(bound, kernel, ...)                                                        \
  EF_CALL(ef_cl_bind_args_at((bound), (kernel), __FILE__, __LINE__,                             \
                             (int)(sizeof((ef_cl_arg[]){__VA_ARGS__}) / sizeof(ef_cl_arg)),      \
                             (ef_cl_arg[]){__VA_ARGS__}))

/* For the clCreate* calls that return their status through a pointer. */
#define EF_CL_CHECK_STATUS(status, what)                                             \
  do {                                                                               \
    if ((status) != CL_SUCCESS)                                                      \
      return ef_error_set(EF_ERR_OPENCL, __FILE__, __LINE__, "%s failed: %s (%d)", what, \
                          ef_cl_error_name(status), (int)(status));                 \
  } while (0)

typedef enum {
  EF_CL_DEVICE_DEFAULT = 0, /* first GPU, else first CPU */
  EF_CL_DEVICE_GPU = 1,
  EF_CL_DEVICE_CPU = 2,
  EF_CL_DEVICE_ANY = 3
} ef_cl_device_type;

typedef struct {
  const char *platform;   /* substring of the platform name or vendor; NULL: any */
  int device_index;       /* index among the matching devices; -1: the first usable */
  ef_cl_device_type type;
  int ignore_environment; /* 1: EDGEFLOW_OPENCL_DEVICE is not read (tests) */
  const char *cache_dir;  /* NULL: EDGEFLOW_CACHE_DIR, else ~/.cache/edgeflow; "": no disk cache */
  int verbose;            /* 0 quiet, 1 device/memory/tuning lines, 2 every build */
  FILE *log;              /* where messages go; NULL: stderr */
} ef_cl_settings;

/* Defaults: the default device, environment read, disk cache on, verbose 1. */
void ef_cl_settings_default(ef_cl_settings *s);

typedef struct ef_cl_program_entry_s ef_cl_program_entry;

typedef struct {
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue; /* in order, CL_QUEUE_PROFILING_ENABLE */
  char platform_name[256];
  char platform_version[256];
  char device_name[256];
  char driver_version[256];
  cl_device_type device_type;
  cl_ulong global_mem_bytes;
  cl_ulong max_alloc_bytes;
  cl_ulong local_mem_bytes;
  size_t max_work_group_size;
  cl_uint compute_units;
  int verbose;
  FILE *log;
  char cache_dir[1024];   /* "" when the disk cache is off */
  /* Counters: how program requests were served (tests read them). */
  int builds_from_source;
  int builds_from_disk_cache;
  int builds_from_memory;
  int disk_cache_rejected; /* cache files found but unusable (corrupt, refused) */
  ef_cl_program_entry *programs;
} ef_cl_context;

/* Number of OpenCL devices on all platforms (0 when there is no ICD/platform). */
int ef_cl_count_devices(int *count);

/* Print every platform and device: type, global memory, largest buffer,
 * compute units, clock, fp64 support, driver and OpenCL C version. */
int ef_cl_list_devices(FILE *out);

/* Choose a device (settings may be NULL: defaults), create context and queue. */
int ef_cl_context_create(const ef_cl_settings *settings, ef_cl_context **out);
/* Print the device line (at verbose >= 1) and keep verbose and log for the context's later messages:
 * ef_cl_context_create does it; a context created quietly (on another thread) is announced by its user. */
void ef_cl_context_announce(ef_cl_context *ctx, int verbose, FILE *log);
/* Release everything; accepts NULL and *ctx == NULL, sets *ctx to NULL. */
void ef_cl_context_destroy(ef_cl_context **ctx);

/* Print the device memory a job needs (bytes, described by what) against the
 * device's global memory and refuse with EF_ERR_UNSUPPORTED when it exceeds 90%
 * of it (the driver, the display and fragmentation need the rest). */
int ef_cl_context_check_memory(ef_cl_context *ctx, uint64_t bytes, const char *what);

/* Kernel source text of a file of custom_kernels/ (from EDGEFLOW_KERNEL_DIR when
 * set, else the embedded copy).  *text is malloc'ed (free()). */
int ef_cl_source_load(const char *name, char **text);

/* Source of name with our quoted #includes replaced by the files' text (once
 * each).  *text is malloc'ed (free()). */
int ef_cl_source_resolve(const char *name, char **text);

/* A built program for the named kernel file and options ("-D WGS_BITS=8 ...").
 * Served from memory, the disk cache or a fresh build; a failed build returns
 * EF_ERR_OPENCL with the build log, file and options in the message and on the
 * log.  The caller owns one reference (clReleaseProgram). */
int ef_cl_program_get(ef_cl_context *ctx, const char *name, const char *options,
                      cl_program *program);
/* The same for a source text given directly (label names it in messages); the
 * text's quoted #includes still resolve against custom_kernels/. */
int ef_cl_program_get_text(ef_cl_context *ctx, const char *label, const char *text,
                           const char *options, cl_program *program);

/* 64-bit FNV-1a hash of bytes, continuing from seed (use EF_FNV_SEED to start). */
#define EF_FNV_SEED 14695981039346656037ull
uint64_t ef_cl_hash(uint64_t seed, const void *data, size_t size);
/* Same for a NUL-terminated string (NULL hashes as ""). */
uint64_t ef_cl_hash_str(uint64_t seed, const char *s);


/* Elapsed device time of a finished profiled event, in seconds. */
int ef_cl_event_seconds(cl_event event, double *seconds);

#ifdef __cplusplus
}
#endif
#endif
