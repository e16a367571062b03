/* Objects HDF5 opens itself for an iteration or a visit, and registers to hand the
 * application's callback an id (H5VL_wrap_register in H5A__iterate, H5G_iterate, H5G_visit
 * and H5O__visit): each must be filed under its own path, and so must what the callback
 * opens relative to that id.
 *
 * /g holds datasets d1 and d2, /g/d1 holds attributes a0..a2, and /h is not opened by
 * the application after the file is opened again. Each iteration runs with its object
 * open and, where HDF5 allows a name, not open. The link iteration's callback opens each dataset by its name relative
 * to the group id it is given, and reads it. */
#include "hdf5.h"
#include <stdio.h>

static int links_seen, attrs_seen, objects_seen;

static herr_t on_link(hid_t g, const char *name, const H5L_info2_t *info, void *data)
{
    (void)info;
    (void)data;
    links_seen++;
    hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
    int   v[4];
    if (d < 0 || H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        return -1;
    return H5Dclose(d) < 0 ? -1 : 0;
}

static herr_t on_attr(hid_t o, const char *name, const H5A_info_t *info, void *data)
{
    (void)o;
    (void)name;
    (void)info;
    (void)data;
    attrs_seen++;
    return 0;
}

static herr_t on_object(hid_t o, const char *name, const H5O_info2_t *info, void *data)
{
    (void)o;
    (void)name;
    (void)info;
    (void)data;
    objects_seen++;
    return 0;
}

int main(int argc, char **argv)
{
    const char *path    = argc > 1 ? argv[1] : "iterated.h5";
    hsize_t     dims[1] = {4};
    int         v[4]    = {1, 2, 3, 4};
    hid_t       f       = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t       s       = H5Screate_simple(1, dims, NULL);
    hid_t       g       = H5Gcreate2(f, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t       h       = H5Gcreate2(f, "h", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0 || s < 0 || g < 0 || h < 0 || H5Gclose(h) < 0)
        return 2;
    const char *names[2] = {"d1", "d2"};
    for (int i = 0; i < 2; i++) {
        hid_t d = H5Dcreate2(g, names[i], H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
            return 3;
        for (int a = 0; i == 0 && a < 3; a++) {
            char  an[4] = {'a', (char)('0' + a), 0, 0};
            hid_t at    = H5Acreate2(d, an, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT);
            if (at < 0 || H5Awrite(at, H5T_NATIVE_INT, v) < 0 || H5Aclose(at) < 0)
                return 4;
        }
        if (H5Dclose(d) < 0)
            return 5;
    }

    /* The file closed and opened again: nothing of it is left open or parked in h5prov. */
    if (H5Gclose(g) < 0 || H5Fclose(f) < 0)
        return 15;
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    g = H5Gopen2(f, "g", H5P_DEFAULT);
    if (f < 0 || g < 0)
        return 16;
    /* Links of /g: by the open group itself, and by name from the file. */
    if (H5Literate2(g, H5_INDEX_NAME, H5_ITER_INC, NULL, on_link, NULL) < 0)
        return 6;
    if (H5Gclose(g) < 0)
        return 7;
    if (H5Literate_by_name2(f, "/g", H5_INDEX_NAME, H5_ITER_INC, NULL, on_link, NULL, H5P_DEFAULT) < 0)
        return 8;
    /* Attributes of /g/d1: by name (not open), then by the open dataset itself. */
    if (H5Aiterate_by_name(f, "g/d1", H5_INDEX_NAME, H5_ITER_INC, NULL, on_attr, NULL, H5P_DEFAULT) < 0)
        return 9;
    hid_t d1 = H5Dopen2(f, "/g/d1", H5P_DEFAULT);
    if (d1 < 0 || H5Aiterate2(d1, H5_INDEX_NAME, H5_ITER_INC, NULL, on_attr, NULL) < 0)
        return 10;
    if (H5Dclose(d1) < 0)
        return 11;
    /* Visits: the whole file from the root group, and /h, never opened, by name. */
    if (H5Ovisit3(f, H5_INDEX_NAME, H5_ITER_INC, on_object, NULL, H5O_INFO_BASIC) < 0)
        return 12;
    if (H5Ovisit_by_name3(f, "h", H5_INDEX_NAME, H5_ITER_INC, on_object, NULL, H5O_INFO_BASIC,
                          H5P_DEFAULT) < 0)
        return 13;
    H5Sclose(s);
    if (H5Fclose(f) < 0)
        return 14;
    printf("links %d attrs %d objects %d\n", links_seen, attrs_seen, objects_seen);
    return 0;
}
