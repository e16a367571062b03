/* How many copies of the under connector's info copying a FAPL makes, for
 * tests/tests/connector.rs (`copying_a_fapl_does_not_copy_the_under_connectors_info`):
 *
 *   info_copies FILE COPIES
 *
 * Run with HDF5_VOL_CONNECTOR naming h5prov over HDF5's pass_through (value 1) over native:
 * pass_through's info holds one reference to the native connector's id for each copy alive
 * (H5VL_pass_through_info_copy: H5Iinc_ref). The program copies the default FAPL (which
 * carries the connector from HDF5_VOL_CONNECTOR) COPIES times and prints the native
 * connector id's reference count before, with the copies alive, and after closing them;
 * then creates, writes and reads back FILE through one of the copies.
 *
 * Output: "refs_before=<n> refs_copies=<n> refs_after=<n> read_back=ok|bad".
 * Exit status 0 when every call succeeded; 1 otherwise (the reason on stderr). */
#include "hdf5.h"
#include <stdio.h>
#include <stdlib.h>

#define CHECK(c, what)                                                                          \
    do {                                                                                        \
        if (!(c)) {                                                                             \
            fprintf(stderr, "info_copies: %s failed\n", what);                                  \
            return 1;                                                                           \
        }                                                                                       \
    } while (0)

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: info_copies FILE COPIES\n");
        return 2;
    }
    int n = atoi(argv[2]);
    CHECK(n > 0 && n <= 1000, "COPIES (1..1000)");
    hid_t native = H5VLget_connector_id_by_value(H5_VOL_NATIVE);
    CHECK(native >= 0, "H5VLget_connector_id_by_value");
    int before = H5Iget_ref(native);
    hid_t *fapls = malloc((size_t)n * sizeof *fapls);
    CHECK(fapls != NULL, "malloc");
    for (int i = 0; i < n; i++) {
        fapls[i] = H5Pcopy(H5P_FILE_ACCESS_DEFAULT);
        CHECK(fapls[i] >= 0, "H5Pcopy");
    }
    int copies = H5Iget_ref(native);

    /* The copies work: a file through the last one. */
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, fapls[n - 1]);
    CHECK(f >= 0, "H5Fcreate");
    hsize_t dims = 16;
    int data[16], back[16];
    for (int i = 0; i < 16; i++)
        data[i] = i * i;
    hid_t space = H5Screate_simple(1, &dims, NULL);
    hid_t d = H5Dcreate2(f, "d", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(d >= 0, "H5Dcreate2");
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0, "H5Dwrite");
    CHECK(H5Dclose(d) >= 0 && H5Sclose(space) >= 0 && H5Fclose(f) >= 0, "closing");
    f = H5Fopen(argv[1], H5F_ACC_RDONLY, fapls[0]);
    CHECK(f >= 0, "H5Fopen");
    d = H5Dopen2(f, "d", H5P_DEFAULT);
    CHECK(d >= 0, "H5Dopen2");
    CHECK(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0, "H5Dread");
    CHECK(H5Dclose(d) >= 0 && H5Fclose(f) >= 0, "closing");
    int same = 1;
    for (int i = 0; i < 16; i++)
        same &= back[i] == data[i];

    for (int i = 0; i < n; i++)
        CHECK(H5Pclose(fapls[i]) >= 0, "H5Pclose");
    int after = H5Iget_ref(native);
    printf("refs_before=%d refs_copies=%d refs_after=%d read_back=%s\n", before, copies, after,
           same ? "ok" : "bad");
    free(fapls);
    CHECK(H5VLclose(native) >= 0, "H5VLclose");
    return 0;
}
