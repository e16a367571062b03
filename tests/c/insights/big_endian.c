/* datatype_conversion (byte order): a dataset created with a big-endian file type
 * (H5T_IEEE_F64BE, as written by a tool on another platform or by a careless
 * "portable" choice) written and read from native little-endian doubles: every element
 * is byte-swapped through the 1 MiB type-conversion buffer. 4 Mi doubles in 4 writes and
 * 4 reads of 8 MiB. With --fixed the dataset is H5T_NATIVE_DOUBLE (little-endian here).
 *
 * Usage: big_endian [--fixed]. Writes big_endian.h5 in the current directory; exits
 * non-zero on any HDF5 error. */
#include "fixture.h"

enum { N = 4 << 20, PIECES = 4, PER = N / PIECES };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {N}, count[1] = {PER};
    double *buf     = malloc(sizeof(double) * PER);
    if (!buf)
        return 1;
    hid_t f, space, mem, d;
    CHECK(f = H5Fcreate("big_endian.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(mem = H5Screate_simple(1, count, NULL));
    CHECK(d = H5Dcreate2(f, "series", fixed ? H5T_NATIVE_DOUBLE : H5T_IEEE_F64BE, space,
                         H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    for (int pass = 0; pass < 2; pass++)
        for (hsize_t p = 0; p < PIECES; p++) {
            hsize_t start[1] = {p * PER};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
            if (pass == 0) {
                for (size_t i = 0; i < PER; i++)
                    buf[i] = (double)(start[0] + i);
                CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
            }
            else {
                CHECK(H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, buf));
                if (buf[PER - 1] != (double)(start[0] + PER - 1))
                    return 2;
            }
        }
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(buf);
    fixture_finish();
    return 0;
}
