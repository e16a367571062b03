/*
 * The globals that HDF5 1.14.5's API tests (test/API) use from HDF5's test library.
 *
 * In an HDF5 build tree h5_api_test links libh5test (test/h5test.c, testframe.c, ...).
 * HDF5 2.2.0 has no test/ directory to build it from, and 1.14.5's h5test.c reaches into
 * library internals (H5Gpkg.h) that changed in 2.x. Of all of it, the API tests use only
 * these five variables: the counters behind the TESTING/PASSED/H5_FAILED/SKIPPED macros of
 * h5test.h and the connector's capability flags. The definitions are those of 1.14.5's
 * test/h5test.c ("Global variables for testing").
 *
 * hdf5-test-harness build-hdf5 --variant v2 compiles this file into h5_api_test.
 */
#include "hdf5.h"

size_t   n_tests_run_g     = 0;
size_t   n_tests_passed_g  = 0;
size_t   n_tests_failed_g  = 0;
size_t   n_tests_skipped_g = 0;
uint64_t vol_cap_flags_g   = H5VL_CAP_FLAG_NONE;
