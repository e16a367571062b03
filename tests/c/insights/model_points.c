/* model_points: reads 800 rows of a 1000 x 1000 int dataset, each row as a point
 * selection of its 1000 elements (H5Sselect_elements), as a program that gathers
 * coordinates it computed. With --fixed each row is one hyperslab (the cost model's
 * `point_selection`).
 *
 * Usage: model_points [--fixed]. Writes model_points.h5 in the current directory. */
#include "fixture.h"

enum { N = 1000, ROWS_READ = 800 };

int main(int argc, char **argv)
{
    struct fixture_ranks me = fixture_init(&argc, &argv);
    int      fixed = fixture_fixed(argc, argv);
    hsize_t  dims[2] = {N, N}, one[1] = {N};
    int     *all = malloc(sizeof(int) * N * N), row[N];
    hsize_t *coord = malloc(sizeof(hsize_t) * 2 * N);
    hid_t    f, space, d, mem;
    long     sum = 0;
    (void)me;
    for (size_t i = 0; i < (size_t)N * N; i++)
        all[i] = (int)(i % 977);
    CHECK(f = H5Fcreate("model_points.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
    CHECK(space = H5Screate_simple(2, dims, NULL));
    CHECK(d = H5Dcreate2(f, "grid", H5T_NATIVE_INT, space, H5P_DEFAULT, H5P_DEFAULT,
                         H5P_DEFAULT));
    CHECK(H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    CHECK(mem = H5Screate_simple(1, one, NULL));
    for (int r = 0; r < ROWS_READ; r++) {
        if (fixed) {
            hsize_t start[2] = {(hsize_t)r, 0}, count[2] = {1, N};
            CHECK(H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL));
        }
        else {
            for (int c = 0; c < N; c++) {
                coord[2 * c]     = (hsize_t)r;
                coord[2 * c + 1] = (hsize_t)c;
            }
            CHECK(H5Sselect_elements(space, H5S_SELECT_SET, N, coord));
        }
        CHECK(H5Dread(d, H5T_NATIVE_INT, mem, space, H5P_DEFAULT, row));
        sum += row[r];
    }
    if (sum < 0)
        return 2;
    CHECK(H5Sclose(mem));
    CHECK(H5Dclose(d));
    CHECK(H5Sclose(space));
    CHECK(H5Fclose(f));
    free(all);
    free(coord);
    fixture_finish();
    return 0;
}
