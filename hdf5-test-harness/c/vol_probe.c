/*
 * vol_probe: prints which VOL connector HDF5 really uses in the current environment.
 *
 * HDF5 falls back to the native connector when the connector named in HDF5_VOL_CONNECTOR
 * cannot be loaded, so a suite "run through a connector" may silently run natively. The
 * harness runs this probe with each mode's environment and requires both names printed
 * below to equal the first word of the mode's connector string.
 *
 * Usage: vol_probe <scratch-dir>. Prints key=value lines; exits non-zero on any HDF5 error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hdf5.h"

#define NAME_MAX_LEN 256

static int fail(const char *what)
{
    fprintf(stderr, "vol_probe: %s failed\n", what);
    H5Eprint2(H5E_DEFAULT, stderr);
    return 1;
}

int main(int argc, char **argv)
{
    const char        *dir = argc > 1 ? argv[1] : ".";
    const char        *env = getenv("HDF5_VOL_CONNECTOR");
    char               path[4096];
    char               file_name[NAME_MAX_LEN] = "";
    unsigned           maj = 0, min = 0, rel = 0;
    hid_t              fapl = H5I_INVALID_HID, fapl_vol = H5I_INVALID_HID;
    hid_t              file = H5I_INVALID_HID, file_vol = H5I_INVALID_HID, by_name = H5I_INVALID_HID;
    H5VL_class_value_t fapl_value = -1, file_value = -1;
    void              *info     = NULL;
    char              *info_str = NULL;
    int                cmp      = 1;

    if (H5open() < 0)
        return fail("H5open");
    if (H5get_libversion(&maj, &min, &rel) < 0)
        return fail("H5get_libversion");
    printf("library_version=%u.%u.%u\n", maj, min, rel);
    printf("env_HDF5_VOL_CONNECTOR=%s\n", env ? env : "(unset)");

    /* The connector of a fresh FAPL is the library's default connector. */
    if ((fapl = H5Pcreate(H5P_FILE_ACCESS)) < 0)
        return fail("H5Pcreate(H5P_FILE_ACCESS)");
    if (H5Pget_vol_id(fapl, &fapl_vol) < 0)
        return fail("H5Pget_vol_id");
    if (H5VLget_value(fapl_vol, &fapl_value) < 0)
        return fail("H5VLget_value(FAPL connector)");
    printf("fapl_connector_value=%d\n", (int)fapl_value);
    if (H5Pget_vol_info(fapl, &info) < 0)
        return fail("H5Pget_vol_info");
    if (info) {
        if (H5VLconnector_info_to_str(info, fapl_vol, &info_str) < 0)
            return fail("H5VLconnector_info_to_str");
        printf("fapl_connector_info=%s\n", info_str ? info_str : "");
        if (info_str)
            H5free_memory(info_str);
        if (H5VLfree_connector_info(fapl_vol, info) < 0)
            return fail("H5VLfree_connector_info");
    }
    else
        printf("fapl_connector_info=\n");

    /* Create and close a file through that connector; ask the file which connector it has. */
    if ((size_t)snprintf(path, sizeof path, "%s/vol_probe.h5", dir) >= sizeof path) {
        fprintf(stderr, "vol_probe: scratch directory path too long\n");
        return 1;
    }
    if ((file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0)
        return fail("H5Fcreate");
    if (H5VLget_connector_name(file, file_name, sizeof file_name) < 0)
        return fail("H5VLget_connector_name(file)");
    if ((file_vol = H5VLget_connector_id(file)) < 0)
        return fail("H5VLget_connector_id(file)");
    if (H5VLget_value(file_vol, &file_value) < 0)
        return fail("H5VLget_value(file connector)");
    printf("file_connector=%s\n", file_name);
    printf("file_connector_value=%d\n", (int)file_value);

    /* H5VLget_connector_name() takes object IDs only: name the FAPL's connector by comparing
     * its class with the class registered under the file connector's name. */
    if ((by_name = H5VLget_connector_id_by_name(file_name)) < 0)
        return fail("H5VLget_connector_id_by_name");
    if (H5VLcmp_connector_cls(&cmp, fapl_vol, by_name) < 0)
        return fail("H5VLcmp_connector_cls");
    printf("fapl_connector=%s\n", cmp == 0 ? file_name : "(differs from the file's connector)");

    if (H5Fclose(file) < 0)
        return fail("H5Fclose");
    remove(path);
    H5VLclose(by_name);
    H5VLclose(file_vol);
    H5VLclose(fapl_vol);
    H5Pclose(fapl);
    if (H5close() < 0)
        return fail("H5close");
    printf("status=ok\n");
    return 0;
}
