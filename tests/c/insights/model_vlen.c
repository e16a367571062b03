/* model_vlen: writes and reads back 50000 names of up to 15 characters as
 * variable-length strings, each element a separate global-heap object. With --fixed they
 * are fixed-length 16-byte strings (the cost model's `variable_length_data`).
 *
 * Usage: model_vlen [--fixed]. Writes model_vlen.h5 in the current directory. */
#include "fixture.h"

enum { N = 50000, LEN = 16 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int      fixed = fixture_fixed(argc, argv);
    hsize_t  dims[1] = {N};
    char    *text = malloc((size_t)N * LEN);
    char   **ptrs = malloc(sizeof(char *) * N);
    hid_t    f, space, type, d;
    (void)me;
    for (int i = 0; i < N; i++) {
        snprintf(text + (size_t)i * LEN, LEN, "particle-%d", i);
        ptrs[i] = text + (size_t)i * LEN;
    }
    CHECK(f = H5Fcreate("model_vlen.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(type = H5Tcopy(H5T_C_S1));
    CHECK(H5Tset_size(type, fixed ? LEN : H5T_VARIABLE));
    CHECK(d = H5Dcreate2(f, "names", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (fixed) {
        CHECK(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text));
        CHECK(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text));
    }
    else {
        CHECK(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs));
        CHECK(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs));
        CHECK(H5Treclaim(type, space, H5P_DEFAULT, ptrs));
    }
    CHECK(H5Dclose(d));
    CHECK(H5Tclose(type));
    CHECK(H5Sclose(space));
    CHECK(H5Fclose(f));
    free(text);
    free(ptrs);
    fixture_finish();
    return 0;
}
