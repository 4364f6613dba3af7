/* An LU-like (NPB LU, SSOR) communication pattern for benches/bench_myrinet.py: ranks on a
 * 2D grid (PX x PY); each iteration a lower sweep (receive from north and west, compute,
 * send south and east, one small message per k-plane) and an upper sweep back, then a halo
 * exchange with all four neighbours and an allreduce of the residual. Usage:
 *   lu_stencil ITERS NZ NX_LOCAL  (defaults 50 33 9, about NPB LU class W on 16 ranks) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 50;
    int nz = argc > 2 ? atoi(argv[2]) : 33;
    int nx = argc > 3 ? atoi(argv[3]) : 9;
    int px = 1;
    while ((px * 2) * (px * 2) <= size) px *= 2;
    int py = size / px;
    int x = rank % px, y = rank / px;
    int north = y > 0 ? rank - px : -1, south = y < py - 1 ? rank + px : -1;
    int west = x > 0 ? rank - 1 : -1, east = x < px - 1 ? rank + 1 : -1;
    int line = 5 * nx; /* 5 variables per point along an edge of a k-plane */
    double *buf = calloc((size_t)line * nz * 4, sizeof(double));
    double *edge = buf + (size_t)line * nz * 2;
    MPI_Status st;
    for (int it = 0; it < iters; it++) {
        for (int k = 1; k < nz - 1; k++) { /* lower triangular sweep: blts */
            if (north >= 0) MPI_Recv(buf, line, MPI_DOUBLE, north, 1, MPI_COMM_WORLD, &st);
            if (west >= 0) MPI_Recv(buf + line, line, MPI_DOUBLE, west, 2, MPI_COMM_WORLD, &st);
            smpi_execute_flops(40.0 * nx * nx);
            if (south >= 0) MPI_Send(buf, line, MPI_DOUBLE, south, 1, MPI_COMM_WORLD);
            if (east >= 0) MPI_Send(buf + line, line, MPI_DOUBLE, east, 2, MPI_COMM_WORLD);
        }
        for (int k = nz - 2; k >= 1; k--) { /* upper triangular sweep: buts */
            if (south >= 0) MPI_Recv(buf, line, MPI_DOUBLE, south, 3, MPI_COMM_WORLD, &st);
            if (east >= 0) MPI_Recv(buf + line, line, MPI_DOUBLE, east, 4, MPI_COMM_WORLD, &st);
            smpi_execute_flops(40.0 * nx * nx);
            if (north >= 0) MPI_Send(buf, line, MPI_DOUBLE, north, 3, MPI_COMM_WORLD);
            if (west >= 0) MPI_Send(buf + line, line, MPI_DOUBLE, west, 4, MPI_COMM_WORLD);
        }
        /* exchange_3: halo of the whole face with each neighbour */
        MPI_Request rq[8];
        int nr = 0;
        int nb[4] = {north, south, west, east};
        for (int i = 0; i < 4; i++)
            if (nb[i] >= 0) MPI_Irecv(edge + i * line, line * nz / 4, MPI_DOUBLE, nb[i], 5, MPI_COMM_WORLD, &rq[nr++]);
        for (int i = 0; i < 4; i++)
            if (nb[i] >= 0) MPI_Isend(buf, line * nz / 4, MPI_DOUBLE, nb[i], 5, MPI_COMM_WORLD, &rq[nr++]);
        MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE);
        smpi_execute_flops(200.0 * nx * nx * nz);
        double r = 1.0, s;
        if (it % 5 == 0) MPI_Allreduce(&r, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
