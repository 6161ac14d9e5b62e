/* registry.c -- strategies, linear solvers and processes registered by name. */
#define _GNU_SOURCE 1 /* dladdr */
#include "edgeflow/ef_registry.h"
#include "edgeflow/ef_error.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EF_REGISTRY_MAX 64

typedef struct {
  const char *names[EF_REGISTRY_MAX];
  const void *ops[EF_REGISTRY_MAX];
  int count;
} ef_table;

static ef_table ef_strategies, ef_processes, ef_commands;
static pthread_mutex_t ef_registry_lock = PTHREAD_MUTEX_INITIALIZER;

/* Loaded applications: name and dlopen handle (kept open for the process lifetime). */
static struct {
  char name[64];
  void *handle;
} ef_applications[16];
static int ef_n_applications;

static int ef_table_add(ef_table *t, const char *kind, const char *name, const void *ops) {
  EF_CHECK(name && name[0], EF_ERR_INTERNAL, "a %s needs a name", kind);
  pthread_mutex_lock(&ef_registry_lock);
  for (int i = 0; i < t->count; i++) {
    if (!strcmp(t->names[i], name)) {
      int same = t->ops[i] == ops;
      pthread_mutex_unlock(&ef_registry_lock);
      EF_CHECK(same, EF_ERR_INTERNAL, "%s '%s' is registered twice with different implementations", kind, name);
      return EF_SUCCESS;
    }
  }
  if (t->count == EF_REGISTRY_MAX) {
    pthread_mutex_unlock(&ef_registry_lock);
    return EF_ERROR(EF_ERR_INTERNAL, "too many %s registrations (max %d)", kind, EF_REGISTRY_MAX);
  }
  t->names[t->count] = name;
  t->ops[t->count] = ops;
  t->count++;
  pthread_mutex_unlock(&ef_registry_lock);
  return EF_SUCCESS;
}

static const void *ef_table_lookup(ef_table *t, const char *name) {
  const void *found = NULL;
  pthread_mutex_lock(&ef_registry_lock);
  for (int i = 0; i < t->count && name; i++)
    if (!strcmp(t->names[i], name)) found = t->ops[i];
  pthread_mutex_unlock(&ef_registry_lock);
  return found;
}

static void ef_table_list(ef_table *t, char *buffer, size_t size) {
  size_t used = 0;
  buffer[0] = '\0';
  pthread_mutex_lock(&ef_registry_lock);
  for (int i = 0; i < t->count; i++) {
    int n = snprintf(buffer + used, size - used, "%s%s", i ? ", " : "", t->names[i]);
    if (n < 0 || (size_t)n >= size - used) break;
    used += (size_t)n;
  }
  pthread_mutex_unlock(&ef_registry_lock);
}

int ef_registry_add_strategy(const ef_strategy_ops *ops) {
  return ef_table_add(&ef_strategies, "strategy", ops->name, ops);
}

int ef_registry_add_process(const ef_process_ops *ops) {
  return ef_table_add(&ef_processes, "process", ops->name, ops);
}

int ef_registry_add_command(const ef_command_ops *ops) {
  return ef_table_add(&ef_commands, "command", ops->name, ops);
}

const ef_command_ops *ef_registry_lookup_command(const char *name) { return ef_table_lookup(&ef_commands, name); }

const ef_process_ops *ef_registry_lookup_process(const char *name) {
  return ef_table_lookup(&ef_processes, name);
}

int ef_registry_find_strategy(const char *name, const ef_strategy_ops **ops) {
  *ops = ef_table_lookup(&ef_strategies, name);
  if (!*ops) {
    char list[1024];
    ef_table_list(&ef_strategies, list, sizeof list);
    return EF_ERROR(EF_ERR_NOT_FOUND, "unknown solver_type '%s'; registered strategies: %s", name ? name : "(null)",
                    list[0] ? list : "none (was an application loaded?)");
  }
  return EF_SUCCESS;
}

const char *ef_registry_list(const char *kind, char *buffer, size_t size) {
  const int solvers = !strcmp(kind, "linear_solver"), pcs = !strcmp(kind, "preconditioner");
  if (solvers || pcs) {
    char host[512], device[512];
    if (solvers) {
      ef_linear_solver_list(EF_MEMORY_HOST, host, sizeof host);
      ef_linear_solver_list(EF_MEMORY_DEVICE, device, sizeof device);
    } else {
      ef_preconditioner_list(EF_MEMORY_HOST, host, sizeof host);
      ef_preconditioner_list(EF_MEMORY_DEVICE, device, sizeof device);
    }
    snprintf(buffer, size, "host: %s; device: %s", host[0] ? host : "none", device[0] ? device : "none");
    return buffer;
  }
  ef_table *t = !strcmp(kind, "strategy") ? &ef_strategies : !strcmp(kind, "command") ? &ef_commands : &ef_processes;
  ef_table_list(t, buffer, size);
  return buffer;
}

/* Try dlopen on dir/libedgeflow_<name>.so; returns the handle or NULL (reason in why). */
static void *ef_try_open(const char *dir, const char *name, char *why, size_t why_size) {
  char path[4096];
  snprintf(path, sizeof path, "%s%slibedgeflow_%s.so", dir, dir[0] ? "/" : "", name);
  void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
  if (!h) {
    size_t used = strlen(why);
    const char *msg = dlerror();
    snprintf(why + used, why_size - used, "\n  %s: %s", path, msg ? msg : "?");
  }
  return h;
}

int ef_registry_open_library(const char *name, void **handle_out) {
  EF_CHECK(handle_out, EF_ERR_PARAMETER, "ef_registry_open_library: NULL result");
  *handle_out = NULL;
  EF_CHECK(name && strlen(name) < 64 && !strchr(name, '/'), EF_ERR_PARAMETER, "invalid library name '%s'",
           name ? name : "(null)");
  char why[4096] = "";
  void *handle = NULL;
  const char *env = getenv("EDGEFLOW_PLUGIN_DIR");
  if (env && env[0]) handle = ef_try_open(env, name, why, sizeof why);
  /* Next to libedgeflow_core itself (installed or build tree). */
  if (!handle) {
    Dl_info info;
    if (dladdr((void *)&ef_registry_load_application, &info) && info.dli_fname) {
      char dir[4096];
      snprintf(dir, sizeof dir, "%s", info.dli_fname);
      char *slash = strrchr(dir, '/');
      if (slash) {
        *slash = '\0';
        handle = ef_try_open(dir, name, why, sizeof why);
      }
    }
  }
#ifdef EF_PLUGIN_DIR
  if (!handle) handle = ef_try_open(EF_PLUGIN_DIR, name, why, sizeof why);
#endif
  EF_CHECK(handle, EF_ERR_NOT_FOUND, "cannot load library 'libedgeflow_%s.so'; tried:%s", name, why);
  *handle_out = handle;
  return EF_SUCCESS;
}

int ef_registry_load_application(const char *name) {
  EF_CHECK(name && strlen(name) < 64 && !strchr(name, '/'), EF_ERR_PARAMETER, "invalid application name '%s'",
           name ? name : "(null)");
  for (int i = 0; i < ef_n_applications; i++)
    if (!strcmp(ef_applications[i].name, name)) return EF_SUCCESS;
  EF_CHECK(ef_n_applications < 16, EF_ERR_INTERNAL, "too many applications loaded");

  void *handle = NULL;
  int open_err = ef_registry_open_library(name, &handle);
  if (open_err) return ef_error_push(open_err, __FILE__, __LINE__, "cannot load application '%s'", name);

  ef_application_register_fn reg;
  *(void **)(&reg) = dlsym(handle, "ef_application_register");
  if (!reg) {
    dlclose(handle);
    return EF_ERROR(EF_ERR_NOT_FOUND, "application '%s' has no ef_application_register()", name);
  }
  int err = reg();
  if (err) return ef_error_push(err, __FILE__, __LINE__, "registering application '%s' failed", name);
  snprintf(ef_applications[ef_n_applications].name, sizeof ef_applications[0].name, "%s", name);
  ef_applications[ef_n_applications].handle = handle;
  ef_n_applications++;
  return EF_SUCCESS;
}
