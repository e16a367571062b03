/* vlen_strings: 64 Ki short labels ("item-000000", 11 characters) stored as
 * variable-length strings, written in one call and read back in one call: each string is
 * its own object in the file's global heap, written, looked up and read one by one, and
 * the read allocates every string. With --fixed they are fixed-length 16-byte strings
 * (H5Tset_size(type, 16)): one contiguous transfer each way.
 *
 * Usage: vlen_strings [--fixed]. Writes vlen_strings.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 64 * 1024, LEN = 16 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N};
    char   *text    = malloc((size_t)N * LEN);
    char  **ptrs    = malloc(sizeof(char *) * N);
    if (!text || !ptrs)
        return 1;
    for (size_t i = 0; i < N; i++) {
        snprintf(text + i * LEN, LEN, "item-%06zu", i);
        ptrs[i] = text + i * LEN;
    }
    hid_t f, space, type, d;
    CHECK(f = H5Fcreate("vlen_strings.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(type = H5Tcopy(H5T_C_S1));
    CHECK(H5Tset_size(type, fixed ? LEN : H5T_VARIABLE));
    CHECK(d = H5Dcreate2(f, "labels", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    if (fixed) {
        CHECK(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text));
        memset(text, 0, (size_t)N * LEN);
        CHECK(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, text));
        if (strcmp(text + (size_t)(N - 1) * LEN, ptrs[N - 1]) != 0)
            return 2;
    }
    else {
        CHECK(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs));
        char **back = malloc(sizeof(char *) * N);
        if (!back)
            return 1;
        CHECK(H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back));
        if (strcmp(back[N - 1], text + (size_t)(N - 1) * LEN) != 0)
            return 2;
        CHECK(H5Treclaim(type, space, H5P_DEFAULT, back));
        free(back);
    }
    CHECK(H5Dclose(d));
    CHECK(H5Tclose(type));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(ptrs);
    free(text);
    fixture_finish();
    return 0;
}
