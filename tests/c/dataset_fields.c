/* The storage and transfer fields of issue 17: a chunked float64 dataset with
 * shuffle+deflate and an explicit chunk cache, written from float32 (conversion) through a
 * regular hyperslab of 2 blocks and read back as float64 (no conversion); a contiguous
 * big-endian int32 dataset written from native int (conversion: byte order) and read back
 * in part through two adjacent hyperslab blocks; a compact
 * uint8 dataset written through 3 points; an int64be attribute written from native long
 * long at create and read after a reopen; the chunked dataset reopened with the default
 * DAPL. Object times are not stored so the file is reproducible. */
#include "hdf5.h"
#include <stdio.h>

#define N 1024

static float  wbuf[200];
static double rbuf[200];

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "dataset_fields.h5";
    hid_t       f    = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return 2;

    /* chunked 1024x1024 float64, chunks 64x64, shuffle then deflate(6) */
    hsize_t dims[2]  = {N, N};
    hsize_t chunk[2] = {64, 64};
    hid_t   s        = H5Screate_simple(2, dims, NULL);
    hid_t   dcpl     = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl, 0);
    H5Pset_chunk(dcpl, 2, chunk);
    H5Pset_shuffle(dcpl);
    H5Pset_deflate(dcpl, 6);
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_chunk_cache(dapl, 12421, 16 * 1024 * 1024, 1.0);
    hid_t d = H5Dcreate2(f, "chunked", H5T_IEEE_F64LE, s, H5P_DEFAULT, dcpl, dapl);
    if (d < 0)
        return 3;
    /* rows 0-9 and 100-109, columns 0-9: 2 blocks, 200 points */
    hsize_t start[2] = {0, 0}, stride[2] = {100, 1}, count[2] = {2, 1}, block[2] = {10, 10};
    if (H5Sselect_hyperslab(s, H5S_SELECT_SET, start, stride, count, block) < 0)
        return 4;
    hsize_t mdims[1] = {200};
    hid_t   m        = H5Screate_simple(1, mdims, NULL);
    for (int i = 0; i < 200; i++)
        wbuf[i] = (float)i * 0.5f;
    if (H5Dwrite(d, H5T_NATIVE_FLOAT, m, s, H5P_DEFAULT, wbuf) < 0)
        return 5;
    if (H5Dread(d, H5T_NATIVE_DOUBLE, m, s, H5P_DEFAULT, rbuf) < 0)
        return 6;
    for (int i = 0; i < 200; i++)
        if (rbuf[i] != (double)i * 0.5)
            return 7;

    /* an int64 big-endian attribute, written at create from native long long */
    hid_t     as = H5Screate(H5S_SCALAR);
    hid_t     a  = H5Acreate2(d, "a", H5T_STD_I64BE, as, H5P_DEFAULT, H5P_DEFAULT);
    long long av = 42, back = 0;
    if (a < 0 || H5Awrite(a, H5T_NATIVE_LLONG, &av) < 0 || H5Aclose(a) < 0)
        return 8;
    a = H5Aopen(d, "a", H5P_DEFAULT);
    if (a < 0 || H5Aread(a, H5T_NATIVE_LLONG, &back) < 0 || back != 42 || H5Aclose(a) < 0)
        return 9;
    if (H5Dclose(d) < 0 || H5Sclose(m) < 0 || H5Sclose(s) < 0 || H5Sclose(as) < 0)
        return 10;

    /* contiguous int32 big-endian, written whole from native int */
    hsize_t cdims[1] = {100};
    int     ibuf[100];
    for (int i = 0; i < 100; i++)
        ibuf[i] = i - 50;
    hid_t cs    = H5Screate_simple(1, cdims, NULL);
    hid_t dcpl2 = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl2, 0);
    d = H5Dcreate2(f, "contig_be", H5T_STD_I32BE, cs, H5P_DEFAULT, dcpl2, H5P_DEFAULT);
    if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, ibuf) < 0)
        return 11;
    /* elements 10-29 read back through two adjacent blocks of 10 */
    hsize_t cstart[1] = {10}, cstride[1] = {10}, ccount[1] = {2}, cblock[1] = {10};
    hsize_t rdims[1] = {20};
    int     rback[20];
    hid_t   rs = H5Screate_simple(1, rdims, NULL);
    if (H5Sselect_hyperslab(cs, H5S_SELECT_SET, cstart, cstride, ccount, cblock) < 0 ||
        H5Dread(d, H5T_NATIVE_INT, rs, cs, H5P_DEFAULT, rback) < 0 || rback[0] != -40 ||
        rback[19] != -21 || H5Sclose(rs) < 0 || H5Dclose(d) < 0)
        return 14;

    /* compact uint8, 3 points written */
    hsize_t kdims[1] = {16};
    hid_t   ks       = H5Screate_simple(1, kdims, NULL);
    hid_t   dcpl3    = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_obj_track_times(dcpl3, 0);
    H5Pset_layout(dcpl3, H5D_COMPACT);
    d = H5Dcreate2(f, "compact", H5T_STD_U8LE, ks, H5P_DEFAULT, dcpl3, H5P_DEFAULT);
    hsize_t       coords[3] = {2, 5, 9};
    unsigned char kbuf[3]   = {7, 8, 9};
    hsize_t       pdims[1]  = {3};
    hid_t         ps        = H5Screate_simple(1, pdims, NULL);
    if (d < 0 || H5Sselect_elements(ks, H5S_SELECT_SET, 3, coords) < 0 ||
        H5Dwrite(d, H5T_NATIVE_UCHAR, ps, ks, H5P_DEFAULT, kbuf) < 0 || H5Dclose(d) < 0)
        return 12;

    /* the chunked dataset again, with the default DAPL */
    d = H5Dopen2(f, "chunked", H5P_DEFAULT);
    if (d < 0 || H5Dclose(d) < 0)
        return 13;

    H5Sclose(cs);
    H5Sclose(ks);
    H5Sclose(ps);
    H5Pclose(dcpl);
    H5Pclose(dcpl2);
    H5Pclose(dcpl3);
    H5Pclose(dapl);
    return H5Fclose(f) < 0 ? 14 : 0;
}
