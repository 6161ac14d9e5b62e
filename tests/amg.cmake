# The aggregation multigrid preconditioner: host set-up, refresh and apply; device hierarchy,
# refresh, cycle and (flexible) CG against the host; oclgrind on a tiny device run.
ef_add_c_test(test_amg_host SOURCES test_amg.c LABELS "unit" ARGS host)
set_property(TEST test_amg_host APPEND PROPERTY ENVIRONMENT "OMP_NUM_THREADS=2;OMP_WAIT_POLICY=passive")
