/* Two HDF5 libraries in one process, as when Python imports h5py and netCDF4: each wheel
 * brings its own HDF5 and loads it with RTLD_LOCAL.
 *
 * Usage: two_hdf5 LIBHDF5_A LIBHDF5_B FILE_A FILE_B
 * Loads both libraries RTLD_LOCAL, then creates FILE_A with A and FILE_B with B, in that
 * order, and prints for each library its version and whether the create succeeded. A failed
 * create is reported, not fatal: the point is that nothing crashes.
 *
 * (Neither library may be linked by the program itself: a library in the global scope
 * interposes the other's internal calls, and such a process crashes without h5prov too.) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

typedef int64_t hid_t;
typedef int     herr_t;
typedef hid_t (*fcreate_t)(const char *, unsigned, hid_t, hid_t);
typedef herr_t (*fclose_t)(hid_t);
typedef herr_t (*libversion_t)(unsigned *, unsigned *, unsigned *);

static int use(const char *label, const char *lib, const char *file)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
        return 2;
    }
    fcreate_t    create  = (fcreate_t)dlsym(h, "H5Fcreate");
    fclose_t     close   = (fclose_t)dlsym(h, "H5Fclose");
    libversion_t version = (libversion_t)dlsym(h, "H5get_libversion");
    if (!create || !close || !version) {
        fprintf(stderr, "%s is not an HDF5 library\n", lib);
        return 2;
    }
    unsigned ma, mi, re;
    version(&ma, &mi, &re);
    /* H5F_ACC_TRUNC is 2 and H5P_DEFAULT is 0 in every HDF5. */
    hid_t f = create(file, 2u, 0, 0);
    printf("%s %u.%u.%u create %s\n", label, ma, mi, re, f >= 0 ? "ok" : "failed");
    fflush(stdout);
    if (f >= 0)
        close(f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: two_hdf5 LIBHDF5_A LIBHDF5_B FILE_A FILE_B\n");
        return 2;
    }
    /* Load both before either initialises, so h5prov sees two HDF5s when it binds. */
    if (!dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) || !dlopen(argv[2], RTLD_NOW | RTLD_LOCAL)) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    int r = use("A", argv[1], argv[3]);
    return r ? r : use("B", argv[2], argv[4]);
}
