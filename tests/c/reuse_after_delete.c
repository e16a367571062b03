/* Objects closed and then deleted or renamed must not come back as the nodes h5prov kept
 * for a reopen: the next object may get the deleted one's address (its token).
 *
 * 1. "x": 1-D [8] doubles, created and closed, then its link deleted; a new "x" of [9] is
 *    created and closed (HDF5 may put it where the first one was).
 * 2. "y": 1-D [4] created and closed, renamed to "z", reopened as "z" and closed.
 * 3. Attribute "a" on the root group: 1-D [2] created and closed, deleted, created again
 *    as [3] and closed.
 * 4. "w": 1-D [5] created, deleted while still open, then closed (HDF5 frees it only
 *    then); "v" of [6] is created and closed (perhaps where "w" was).
 * 5. Attributes "p" [1] and "q" [2] on the root group, then the root's attributes 0 and 1
 *    by name order ("a" and "p") opened and closed by index: H5Aopen_by_idx gives the
 *    connector no name.
 * 6. Groups "g" and "h" with an attribute "b" each ([7] and [8]), then H5Aopen_by_name
 *    of "g"'s "b" and of "h"'s "b", each closed: the same attribute name on two
 *    holders named by path.
 * Prints the address of each "x" ("x1=<addr> x2=<addr>") so a test can say whether the
 * token was reused. */
#include "hdf5.h"
#include <stdio.h>

static hid_t make(hid_t f, const char *name, hsize_t n)
{
    hsize_t dims[1] = {n};
    hid_t   s       = H5Screate_simple(1, dims, NULL);
    hid_t   d       = H5Dcreate2(f, name, H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sclose(s);
    return d;
}

static int attr_named(hid_t f, const char *name, hsize_t n)
{
    hsize_t dims[1] = {n};
    hid_t   s       = H5Screate_simple(1, dims, NULL);
    hid_t   a       = H5Acreate2(f, name, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT);
    H5Sclose(s);
    return a < 0 || H5Aclose(a) < 0;
}

static int attr(hid_t f, hsize_t n)
{
    return attr_named(f, "a", n);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "reuse.h5";
    hid_t       f    = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5O_info2_t i1, i2;
    if (f < 0)
        return 2;

    hid_t d = make(f, "x", 8);
    if (d < 0 || H5Oget_info3(d, &i1, H5O_INFO_BASIC) < 0 || H5Dclose(d) < 0)
        return 3;
    if (H5Ldelete(f, "x", H5P_DEFAULT) < 0)
        return 4;
    d = make(f, "x", 9);
    if (d < 0 || H5Oget_info3(d, &i2, H5O_INFO_BASIC) < 0 || H5Dclose(d) < 0)
        return 5;

    d = make(f, "y", 4);
    if (d < 0 || H5Dclose(d) < 0)
        return 6;
    if (H5Lmove(f, "y", f, "z", H5P_DEFAULT, H5P_DEFAULT) < 0)
        return 7;
    d = H5Dopen2(f, "z", H5P_DEFAULT);
    if (d < 0 || H5Dclose(d) < 0)
        return 8;

    if (attr(f, 2) || H5Adelete(f, "a") < 0 || attr(f, 3))
        return 9;

    d = make(f, "w", 5);
    if (d < 0 || H5Ldelete(f, "w", H5P_DEFAULT) < 0 || H5Dclose(d) < 0)
        return 11;
    d = make(f, "v", 6);
    if (d < 0 || H5Dclose(d) < 0)
        return 12;

    if (attr_named(f, "p", 1) || attr_named(f, "q", 2))
        return 13;
    for (hsize_t i = 0; i < 2; i++) {
        hid_t a = H5Aopen_by_idx(f, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT);
        if (a < 0 || H5Aclose(a) < 0)
            return 14;
    }

    {
        const char *groups[2] = {"g", "h"};
        for (int i = 0; i < 2; i++) {
            hid_t g = H5Gcreate2(f, groups[i], H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            if (g < 0 || attr_named(g, "b", (hsize_t)(7 + i)) || H5Gclose(g) < 0)
                return 15;
        }
        for (int i = 0; i < 2; i++) {
            hid_t a = H5Aopen_by_name(f, groups[i], "b", H5P_DEFAULT, H5P_DEFAULT);
            if (a < 0 || H5Aclose(a) < 0)
                return 16;
        }
    }

    {
        haddr_t a1 = 0, a2 = 0;
        H5VLnative_token_to_addr(f, i1.token, &a1);
        H5VLnative_token_to_addr(f, i2.token, &a2);
        printf("x1=%llu x2=%llu\n", (unsigned long long)a1, (unsigned long long)a2);
    }
    return H5Fclose(f) < 0 ? 10 : 0;
}
