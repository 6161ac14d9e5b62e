/* output_check.h -- every output destination a case names is checked before the first step
 * (private to the analysis). */
#ifndef EF_OUTPUT_CHECK_H
#define EF_OUTPUT_CHECK_H

#include "edgeflow/ef_parameters.h"

/* The output folder and the output_path (or Kratos' folder_name) of every block of project's
 * "output_processes" lists, relative to output_folder unless absolute: each is created when
 * missing and must take a new file.  The error names the folder, the key that gave it and why. */
int ef_output_destinations_check(ef_parameters project, const char *output_folder);

/* The folder restart files will go to (save_restart_process, or the default of a stop by a signal or
 * max_wall_time), checked before the first step: created when create is set and must take a new file;
 * else nothing is created, and the folder or its nearest existing ancestor must be a writable folder.
 * The error names the folder, given_by (the key or default that gave it) and why. */
int ef_restart_destination_check(const char *folder, const char *given_by, int create);

#endif
