/* model_frag: reads 200 overlapping bands of 64 rows of a 1024 x 1024 int contiguous
 * dataset, each band as a strided hyperslab of every other element (32768 blocks of 4
 * bytes per read), as a program that takes one of two interleaved channels. With --fixed
 * each band is read whole (one block) and the channel is picked in memory (the cost
 * model's `fragmented_selection`).
 *
 * Usage: model_frag [--fixed]. Writes model_frag.h5 in the current directory. */
#include "fixture.h"

enum { N = 1024, BAND = 64, BANDS = 200, STEP = 4 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int      fixed = fixture_fixed(argc, argv);
    hsize_t  dims[2] = {N, N};
    int     *all = malloc(sizeof(int) * N * N);
    int     *band = malloc(sizeof(int) * BAND * N);
    hid_t    f, space, d, mem;
    long     sum = 0;
    (void)me;
    for (size_t i = 0; i < (size_t)N * N; i++)
        all[i] = (int)(i % 977);
    CHECK(f = H5Fcreate("model_frag.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(d = H5Dcreate2(f, "channels", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    for (int b = 0; b < BANDS; b++) {
        /* A different band each time (no selection is read twice). */
        hsize_t start[2] = {(hsize_t)b * STEP, 0};
        if (fixed) {
            hsize_t count[2] = {BAND, N}, m[1] = {(hsize_t)BAND * N};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
            CHECK(mem = H5Screate_simple(1, m, NULL));
        }
        else {
            hsize_t stride[2] = {1, 2}, count[2] = {BAND, N / 2};
            hsize_t m[1] = {(hsize_t)BAND * N / 2};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, stride, count, NULL));
            CHECK(mem = H5Screate_simple(1, m, NULL));
        }
        CHECK(H5Dread(d, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, band));
        CHECK(H5Sclose(mem));
        sum += band[b];
    }
    if (sum < 0)
        return 2;
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(H5Fclose(f));
    free(all);
    free(band);
    fixture_finish();
    return 0;
}
