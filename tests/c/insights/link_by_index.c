/* link_by_index: a group of 3000 links (soft links, the default old-style group: a symbol
 * table) listed by a loop that asks for the i-th name with H5Lget_name_by_idx(group, ".",
 * H5_INDEX_NAME, H5_ITER_INC, i, ...) and the i-th link's value by index for i = 0..2999:
 * without a creation-order index HDF5 walks the group's links up to i on every call,
 * quadratic in the group's size. With --fixed one H5Literate2 pass visits every link.
 *
 * Usage: link_by_index [--fixed]. Writes link_by_index.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { NLINKS = 3000 };

static herr_t visit(hid_t g, const char *name, const H5L_info2_t *info, void *op)
{
    char value[64];
    if (H5Lget_val(g, name, value, sizeof value, H5P_DEFAULT) < 0 || info->type != H5L_TYPE_SOFT)
        return -1;
    (*(long *)op) += (long)strlen(name) + (long)strlen(value);
    return 0;
}

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int   fixed = fixture_fixed(argc, argv);
    hid_t fapl  = fixture_fapl();
    hid_t f, g;
    CHECK(f = H5Fcreate("link_by_index.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(g = H5Gcreate2(f, "index", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    for (int i = 0; i < NLINKS; i++) {
        char name[32], target[48];
        snprintf(name, sizeof name, "entry%05d", i);
        snprintf(target, sizeof target, "/objects/object%05d", i);
        CHECK(H5Lcreate_soft(target, g, name, H5P_DEFAULT, H5P_DEFAULT));
    }
    long total = 0;
    if (fixed) {
        hsize_t idx = 0;
        CHECK(H5Literate2(g, H5_INDEX_NAME, H5_ITER_INC, &idx, visit, &total));
    }
    else
        for (hsize_t i = 0; i < NLINKS; i++) {
            char name[64], value[64];
            if (H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, sizeof name,
                                   H5P_DEFAULT) < 0)
                return 2;
            CHECK(H5Lget_val_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, i, value,
                                    sizeof value, H5P_DEFAULT));
            total += (long)strlen(name) + (long)strlen(value);
        }
    if (total != (long)NLINKS * (10 + 20))
        return 3;
    CHECK(H5Gclose(g));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return 0;
}
