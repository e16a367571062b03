/* Enables h5prov through the API instead of the environment: registers it by name and
 * sets it on a FAPL with H5Pset_vol and an info string from argv[1]. Exits 0 when the
 * file was created through h5prov, 1 when the info string was rejected (and HDF5's error
 * stack was printed), other codes on unexpected failures. */
#include "hdf5.h"
#include <stdio.h>

int main(int argc, char **argv)
{
    const char *info_str = argc > 1 ? argv[1] : "under_vol=0;under_info={}";
    const char *path     = argc > 2 ? argv[2] : "setvol.h5";
    hid_t       id       = H5VLregister_connector_by_name("h5prov", H5P_DEFAULT);
    if (id < 0)
        return 2;
    void *info = NULL;
    if (H5VLconnector_str_to_info(info_str, id, &info) < 0) {
        H5Eprint2(H5E_DEFAULT, stderr);
        return 1;
    }
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (H5Pset_vol(fapl, id, info) < 0)
        return 3;
    H5VLfree_connector_info(id, info);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (f < 0)
        return 4;
    char name[64] = "";
    if (H5VLget_connector_name(f, name, sizeof(name)) < 0)
        return 6;
    printf("file=%s\n", name);
    H5Pclose(fapl);
    H5VLclose(id);
    return H5Fclose(f) < 0 ? 5 : 0;
}
