/* opencl_commands.c -- `edgeflow devices`: every OpenCL platform and device. */
#include <stdio.h>
#include <string.h>

#include "edgeflow/ef_error.h"
#include "edgeflow/ef_registry.h"
#include "fluid_application.h"
#include "opencl_context.h"

/* List platforms and devices with memory, compute units, fp64 and driver version. */
static int ef_command_devices(int argc, char **argv) {
  (void)argv;
  EF_CHECK(argc == 1, EF_ERR_PARAMETER, "usage: edgeflow devices");
  return ef_cl_list_devices(stdout);
}

static const ef_command_ops ef_devices_command = {
    .name = "devices",
    .help = "list OpenCL platforms and devices (memory, compute units, fp64, driver)",
    .run = ef_command_devices,
};

int ef_register_opencl_commands(void) { return ef_registry_add_command(&ef_devices_command); }
