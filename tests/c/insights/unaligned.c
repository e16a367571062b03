/* Pathology: large contiguous datasets allocated wherever HDF5's allocator happens to be
 * (just after the metadata), not on stripe boundaries: on a striped parallel file system
 * (Lustre, GPFS, BeeGFS) every stripe-sized access then touches two stripes, often two
 * servers (Howison et al. 2010). `--fixed`: H5Pset_alignment(fapl, 1 MiB, 1 MiB), the
 * stripe size the test gives the analyzer (`--stripe-size 1048576`). Serial. */
#include "fixture.h"

#define NSETS 4
#define N (512 * 1024) /* 4 MiB of doubles per dataset */

int main(int argc, char **argv)
{
    fixture_init(&argc, &argv);
    int fixed = fixture_fixed(argc, argv);
    double *v = malloc(N * sizeof *v);
    if (!v)
        return 1;
    for (int i = 0; i < N; i++)
        v[i] = i;
    hid_t fapl = fixture_fapl();
    if (fixed)
        CHECK(H5Pset_alignment(fapl, 1 << 20, 1 << 20));
    hid_t f = H5Fcreate("unaligned.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(f);
    hsize_t dims[1] = {N};
    hid_t s = H5Screate_simple(1, dims, NULL);
    CHECK(s);
    for (int i = 0; i < NSETS; i++) {
        char name[32];
        snprintf(name, sizeof name, "field%d", i);
        hid_t d = H5Dcreate2(f, name, H5T_NATIVE_DOUBLE, s, H5P_DEFAULT, H5P_DEFAULT,
                             H5P_DEFAULT);
        CHECK(d);
        CHECK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
        CHECK(H5Dclose(d));
    }
    CHECK(H5Sclose(s));
    CHECK(fixture_close(f));
    CHECK(H5Pclose(fapl));
    free(v);
    fixture_finish();
    return 0;
}
