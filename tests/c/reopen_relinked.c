/* A name opened, closed, then opened again must reach the object it names at the reopen,
 * however its link changed in between: h5prov remembers what a name resolved to (so that a
 * reopen of the same name needs no identity query) and must forget it at every change.
 * Each dataset is 1-D and its length says which object it is.
 *
 *  1. moved:        "a" [1] opened; "a" moved to "a_old", "b" [2] moved to "a"; "a" reopened.
 *  2. hard link:    "c" [3] opened; "c" deleted; hard link "c" to "d" [4]; "c" reopened.
 *  3. soft link:    soft "s" -> "/e" [5] opened; "s" deleted; soft "s" -> "/f" [6];
 *                   "s" reopened.
 *  4. link copy:    "g" [7] opened; "g" deleted; H5Lcopy "h" [8] to "g"; "g" reopened.
 *  5. object copy:  "i" [9] opened; "i" deleted; H5Ocopy "j" [10] to "i"; "i" reopened.
 *  6. in a group:   "grp/k" [11] opened through the group; "grp/k" moved away and
 *                   "grp/l" [12] moved to "grp/k" (by full path, through the file);
 *                   "k" reopened through the group.
 *  7. H5Oopen:      "m" [13] opened with H5Oopen; "m" deleted; hard link "m" to "n" [14];
 *                   "m" reopened with H5Oopen.
 *  8. anonymous:    "o" [15] opened; "o" deleted; an anonymous dataset [16] linked as "o"
 *                   with H5Olink; "o" reopened.
 *  9. recreated:    "p" [17] opened; "p" deleted; "p" created again as [18] and closed;
 *                   "p" reopened.
 * 10. file reopened: "q" [19] opened; the file closed; "q" moved to "q_old" and "r" [20]
 *                   to "q" by the native connector alone (a fapl naming it: h5prov sees
 *                   nothing); the file reopened through h5prov; "q" reopened.
 * Every reopen is done twice: the second may be answered from what the first found. */
#include "hdf5.h"
#include <stdio.h>

static int make(hid_t loc, const char *name, hsize_t n)
{
    hsize_t dims[1] = {n};
    hid_t   s       = H5Screate_simple(1, dims, NULL);
    hid_t   d       = H5Dcreate2(loc, name, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Sclose(s);
    return d < 0 || H5Dclose(d) < 0;
}

/* Opens `name` at `loc` and closes it; `how` 1 opens with H5Oopen. Returns its length, or
 * -1. */
static long reopen(hid_t loc, const char *name, int how)
{
    hid_t   d = how ? H5Oopen(loc, name, H5P_DEFAULT) : H5Dopen2(loc, name, H5P_DEFAULT);
    hsize_t n = 0;
    if (d < 0)
        return -1;
    hid_t s = H5Dget_space(d);
    if (s < 0 || H5Sget_simple_extent_dims(s, &n, NULL) != 1 || H5Sclose(s) < 0)
        n = 0;
    if (H5Dclose(d) < 0)
        return -1;
    return (long)n;
}

/* Opens `name` twice; both must find a dataset of length `want`. */
static int check(hid_t loc, const char *name, int how, long want)
{
    for (int i = 0; i < 2; i++) {
        long n = reopen(loc, name, how);
        if (n != want) {
            fprintf(stderr, "%s: length %ld, want %ld\n", name, n, want);
            return 1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "relinked.h5";
    hid_t       f    = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return 2;
    if (make(f, "a", 1) || make(f, "b", 2) || make(f, "c", 3) || make(f, "d", 4) ||
        make(f, "e", 5) || make(f, "f", 6) || make(f, "g", 7) || make(f, "h", 8) ||
        make(f, "i", 9) || make(f, "j", 10) || make(f, "m", 13) || make(f, "n", 14) ||
        make(f, "o", 15) || make(f, "p", 17) || make(f, "q", 19) || make(f, "r", 20))
        return 3;
    hid_t g = H5Gcreate2(f, "grp", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0 || make(g, "k", 11) || make(g, "l", 12))
        return 4;
    if (H5Lcreate_soft("/e", f, "s", H5P_DEFAULT, H5P_DEFAULT) < 0)
        return 5;

    /* 1. */
    if (check(f, "a", 0, 1) || H5Lmove(f, "a", f, "a_old", H5P_DEFAULT, H5P_DEFAULT) < 0 ||
        H5Lmove(f, "b", f, "a", H5P_DEFAULT, H5P_DEFAULT) < 0 || check(f, "a", 0, 2))
        return 11;
    /* 2. */
    if (check(f, "c", 0, 3) || H5Ldelete(f, "c", H5P_DEFAULT) < 0 ||
        H5Lcreate_hard(f, "d", f, "c", H5P_DEFAULT, H5P_DEFAULT) < 0 || check(f, "c", 0, 4))
        return 12;
    /* 3. */
    if (check(f, "s", 0, 5) || H5Ldelete(f, "s", H5P_DEFAULT) < 0 ||
        H5Lcreate_soft("/f", f, "s", H5P_DEFAULT, H5P_DEFAULT) < 0 || check(f, "s", 0, 6))
        return 13;
    /* 4. */
    if (check(f, "g", 0, 7) || H5Ldelete(f, "g", H5P_DEFAULT) < 0 ||
        H5Lcopy(f, "h", f, "g", H5P_DEFAULT, H5P_DEFAULT) < 0 || check(f, "g", 0, 8))
        return 14;
    /* 5. */
    if (check(f, "i", 0, 9) || H5Ldelete(f, "i", H5P_DEFAULT) < 0 ||
        H5Ocopy(f, "j", f, "i", H5P_DEFAULT, H5P_DEFAULT) < 0 || check(f, "i", 0, 10))
        return 15;
    /* 6. */
    if (check(g, "k", 0, 11) || H5Lmove(f, "grp/k", f, "grp/k_old", H5P_DEFAULT, H5P_DEFAULT) < 0 ||
        H5Lmove(f, "grp/l", f, "grp/k", H5P_DEFAULT, H5P_DEFAULT) < 0 || check(g, "k", 0, 12))
        return 16;
    /* 7. */
    if (check(f, "m", 1, 13) || H5Ldelete(f, "m", H5P_DEFAULT) < 0 ||
        H5Lcreate_hard(f, "n", f, "m", H5P_DEFAULT, H5P_DEFAULT) < 0 || check(f, "m", 1, 14))
        return 17;
    /* 8. */
    {
        hsize_t dims[1] = {16};
        hid_t   s       = H5Screate_simple(1, dims, NULL);
        if (check(f, "o", 0, 15) || H5Ldelete(f, "o", H5P_DEFAULT) < 0)
            return 18;
        hid_t d = H5Dcreate_anon(f, H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT);
        if (d < 0 || H5Olink(d, f, "o", H5P_DEFAULT, H5P_DEFAULT) < 0 || H5Dclose(d) < 0 ||
            H5Sclose(s) < 0 || check(f, "o", 0, 16))
            return 18;
    }
    /* 9. */
    if (check(f, "p", 0, 17) || H5Ldelete(f, "p", H5P_DEFAULT) < 0 || make(f, "p", 18) ||
        check(f, "p", 0, 18))
        return 19;
    /* 10. */
    if (check(f, "q", 0, 19) || H5Gclose(g) < 0 || H5Fclose(f) < 0)
        return 20;
    {
        hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
        if (fapl < 0 || H5Pset_vol(fapl, H5VL_NATIVE, NULL) < 0)
            return 21;
        hid_t nf = H5Fopen(path, H5F_ACC_RDWR, fapl);
        if (nf < 0 || H5Lmove(nf, "q", nf, "q_old", H5P_DEFAULT, H5P_DEFAULT) < 0 ||
            H5Lmove(nf, "r", nf, "q", H5P_DEFAULT, H5P_DEFAULT) < 0 || H5Fclose(nf) < 0 ||
            H5Pclose(fapl) < 0)
            return 22;
    }
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0 || check(f, "q", 0, 20))
        return 23;
    return H5Fclose(f) < 0 ? 10 : 0;
}
