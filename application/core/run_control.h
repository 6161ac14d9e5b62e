/* run_control.h -- what the analysis loop needs to stop cleanly and to know its files
 * (private to the core): stop requests from signals, file lists of an output folder and the
 * run's manifest, restart-file names and their retention. */
#ifndef EF_RUN_CONTROL_H
#define EF_RUN_CONTROL_H

#include <stddef.h>

/* The manifest a run keeps in its output folder: one path (relative to the folder) per line,
 * every file the run created there. */
#define EF_MANIFEST_NAME "edgeflow_manifest.txt"

/* The signal that asked the run to stop (0: none).  Set by ef_request_stop. */
int ef_stop_requested(void);
/* Forget a stop request (a new run in the same process). */
void ef_stop_clear(void);

/* A sorted list of relative file names. */
typedef struct {
  int n, cap;
  char **names;
} ef_file_list;
void ef_file_list_free(ef_file_list *l);
int ef_file_list_add(ef_file_list *l, const char *name);
void ef_file_list_sort(ef_file_list *l);
/* 1 when name is in the sorted list. */
int ef_file_list_has(const ef_file_list *l, const char *name);

/* Every regular file under folder (relative names; temporary files of atomic writes and the
 * manifest left out), sorted.  A missing folder gives an empty list. */
int ef_folder_scan(const char *folder, ef_file_list *out);
/* The manifest of folder (empty list and *exists = 0 when there is none). */
int ef_manifest_read(const char *folder, ef_file_list *out, int *exists);
/* Write the manifest atomically: the files of now that are not in before. */
int ef_manifest_write(const char *folder, const ef_file_list *now, const ef_file_list *before);
/* Remove the files a manifest lists (only plain relative names inside folder), then the
 * manifest itself; empty folders left behind are removed too.  *removed counts the files. */
int ef_manifest_remove_files(const char *folder, const ef_file_list *files, int *removed);

/* The analysis's restart, stop and output-folder state (embedded in the analysis). */
typedef struct {
  /* save_restart_process (Kratos' keys) or the defaults for restarts on a stop. */
  int configured;        /* a save_restart_process block was given */
  int control;           /* restart_control_type as an ef_output_control: "step" (the user's time steps,
                            as every step schedule), "time", "solver_step" */
  double frequency;      /* restart_save_frequency; 0: every solver step */
  double next;           /* the next save, on the schedule's clock (ef_output_clock) */
  int max_files;         /* max_files_to_keep; <= 0: all */
  int echo_level;
  char folder[4096];     /* where restart files go */
  char base[256];        /* their name prefix */
  ef_file_list written;  /* restart files of this run and the runs it continues, oldest first */
  char last[4400];       /* the last one written */
  double restart_seconds, output_seconds; /* measured: the last restart, the largest step output */
  /* Stops and limits. */
  double max_wall_time;  /* seconds; 0: none */
  int stopped;           /* 1: the loop was asked to stop and did */
  int stop_signal;       /* the signal (0: max_wall_time) */
  const char *status;    /* "running", "completed", "interrupted", "failed" */
  char error[4096];
  /* Restart being loaded. */
  void *reader;          /* ef_restart_reader * between initialize's two halves */
  int restarted;
  long first_step;       /* the step this run started from */
  double time;           /* the time it started from */
  long saved_step;       /* the step of the last restart file written (-1: none) */
  /* Files in the output folder that are not this run chain's (never listed, never removed). */
  int tracking;
  ef_file_list foreign;
} ef_run_state;

#endif
