/* vlen_log: a per-step log line (h5py `dset[i] = "step 00012 ok"` with a
 * `string_dtype()` dataset, PyTables VLStringAtom) written as a variable-length string in
 * the time loop: 4000 steps, each an H5Dwrite of one element of a variable-length string
 * dataset, which allocates a global-heap object for the string and rewrites the heap
 * collection that holds it. With --fixed the dataset holds fixed-length 32-byte strings
 * (H5Tset_size(type, 32)): each step's write is 32 bytes in place, no heap.
 *
 * Usage: vlen_log [--fixed]. Writes vlen_log.h5 in the current directory; exits non-zero
 * on any HDF5 error. */
#include "fixture.h"

enum { STEPS = 4000, LEN = 32 };

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int     fixed   = fixture_fixed(argc, argv);
    hid_t   fapl    = fixture_fapl();
    hsize_t dims[1] = {STEPS}, one[1] = {1};
    hid_t   f, type, space, mem, d;
    CHECK(type = H5Tcopy(H5T_C_S1));
    CHECK(H5Tset_size(type, fixed ? LEN : H5T_VARIABLE));
    CHECK(f = H5Fcreate("vlen_log.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl));
    CHECK(space = H5Screate_simple(1, dims, NULL));
    CHECK(mem = H5Screate_simple(1, one, NULL));
    CHECK(d = H5Dcreate2(f, "log", type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    for (hsize_t s = 0; s < STEPS; s++) {
        char line[LEN];
        memset(line, 0, sizeof line);
        snprintf(line, sizeof line, "step %05d ok", (int)s);
        CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &s, NULL, one, NULL));
        if (fixed)
            CHECK(H5Dwrite(d, type, mem, space, H5P_DEFAULT, line));
        else {
            const char *p = line;
            CHECK(H5Dwrite(d, type, mem, space, H5P_DEFAULT, &p));
        }
    }
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(mem));
    CHECK(H5Sclose(space));
    CHECK(H5Tclose(type));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    fixture_finish();
    return 0;
}
