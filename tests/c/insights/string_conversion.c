/* string_conversion: 64 Ki station names stored as fixed-length 32-byte null-padded
 * strings (numpy's and Fortran's 'S32', H5T_STR_NULLPAD), read back 8 times into C strings
 * of 33 bytes with a terminator (H5T_STR_NULLTERM): the memory type differs from the file
 * type in size and padding, so every string is converted element by element (the
 * string-to-string conversion path) through the 1 MiB type-conversion buffer. With
 * --fixed the memory type is the file's own (32-byte null-padded strings, terminated by
 * the program when it needs them), so each read is one 2 MiB copy.
 *
 * Usage: string_conversion [--fixed]. Writes string_conversion.h5 in the current
 * directory; exits non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 65536, LEN = 32, READS = 8 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hsize_t dims[1] = {N};
    hid_t   f, space, ftype, vtype, d;
    char   *fixbuf = calloc(N, LEN);
    char   *cbuf   = malloc((size_t)N * (LEN + 1));
    if (!fixbuf || !cbuf)
        return 1;
    for (int i = 0; i < N; i++)
        snprintf(fixbuf + (size_t)i * LEN, LEN, "station-%06d-%08x", i, (unsigned)(i * 2654435761u));
    CHECK(ftype = H5Tcopy(H5T_C_S1));
    CHECK(H5Tset_size(ftype, LEN));
    CHECK(H5Tset_strpad(ftype, H5T_STR_NULLPAD));
    CHECK(vtype = H5Tcopy(H5T_C_S1));
    CHECK(H5Tset_size(vtype, LEN + 1));
    CHECK(H5Tset_strpad(vtype, H5T_STR_NULLTERM));
    CHECK(f = H5Fcreate("string_conversion.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(d = H5Dcreate2(f, "names", ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(H5Dwrite(d, ftype, H5S_ALL, H5S_ALL, H5P_DEFAULT, fixbuf));
    long sum = 0;
    for (int r = 0; r < READS; r++) {
        if (fixed) {
            CHECK(H5Dread(d, ftype, H5S_ALL, H5S_ALL, H5P_DEFAULT, fixbuf));
            sum += fixbuf[(size_t)(r * 1000) * LEN + 8];
        }
        else {
            CHECK(H5Dread(d, vtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, cbuf));
            sum += cbuf[(size_t)(r * 1000) * (LEN + 1) + 8];
        }
    }
    if (sum == 0)
        return 1;
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(H5Tclose(vtype));
    CHECK(H5Tclose(ftype));
    CHECK(fixture_close(f));
    free(cbuf);
    free(fixbuf);
    fixture_finish();
    return 0;
}
