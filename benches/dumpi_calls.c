/* Many tiny MPI calls, for benches/bench_dumpi_read.py: a DUMPI trace of millions of call
 * records from a short run.
 *
 * Usage: dumpi_calls [ITERATIONS]  (any number of ranks, 4 in the benchmark; default 1000)
 *
 * Each iteration, on every rank: a ring exchange of 8 bytes both ways (MPI_Irecv from the
 * left and the right, MPI_Isend to the right and the left, one MPI_Waitall: 5 calls), then a
 * shift of 8 bytes to the right by MPI_Send/MPI_Recv (even ranks send first, odd ranks
 * receive first; with an odd number of ranks the last rank's pair is ordered as an odd one:
 * 2 calls); every 16th iteration an MPI_Allreduce of one double (1 call). So 7 calls an
 * iteration and rank, plus 1/16: RANKS * (7 * ITERATIONS + ITERATIONS / 16) calls in the
 * loop, and 6 a rank around it (MPI_Init, MPI_Comm_rank, MPI_Comm_size; two MPI_Reduce, of
 * the counts and of the checks, and MPI_Finalize).
 *
 * Prints "dumpi_calls: RANKS ranks, ITERATIONS iterations, CALLS calls, checksum X" on rank 0,
 * CALLS the MPI calls of all ranks (as counted by the program), X a sum over the received
 * values that a lost or misrouted message would change. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long iterations = argc > 1 ? atol(argv[1]) : 1000;
    if (iterations < 0) iterations = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* The first to send in the blocking shift: even ranks, unless the ring is odd and this is
     * its last rank (then rank 0, also even, receives from it last: no cycle of senders). */
    int sends_first = (rank % 2 == 0) && !(size % 2 == 1 && rank == size - 1 && size > 1);
    long calls = 3; /* MPI_Init, MPI_Comm_rank, MPI_Comm_size */
    double mine = rank + 1, sum = 0.0, check = 0.0;
    double out_r, out_l, in_r, in_l, shifted;
    MPI_Request reqs[4];
    for (long i = 0; i < iterations; i++) {
        out_r = mine + (double)i;
        out_l = mine - (double)i;
        MPI_Irecv(&in_l, 1, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &reqs[0]);
        MPI_Irecv(&in_r, 1, MPI_DOUBLE, right, 2, MPI_COMM_WORLD, &reqs[1]);
        MPI_Isend(&out_r, 1, MPI_DOUBLE, right, 1, MPI_COMM_WORLD, &reqs[2]);
        MPI_Isend(&out_l, 1, MPI_DOUBLE, left, 2, MPI_COMM_WORLD, &reqs[3]);
        MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
        check += in_l - in_r;
        if (sends_first) {
            MPI_Send(&out_r, 1, MPI_DOUBLE, right, 3, MPI_COMM_WORLD);
            MPI_Recv(&shifted, 1, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&shifted, 1, MPI_DOUBLE, left, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(&out_r, 1, MPI_DOUBLE, right, 3, MPI_COMM_WORLD);
        }
        check += shifted;
        calls += 7;
        if (i % 16 == 15) {
            MPI_Allreduce(&check, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            calls += 1;
        }
    }
    calls += 3; /* the two MPI_Reduce and MPI_Finalize, below */
    long total = 0;
    double checksum = 0.0;
    MPI_Reduce(&calls, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&check, &checksum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("dumpi_calls: %d ranks, %ld iterations, %ld calls, checksum %.17g\n", size, iterations, total, checksum);
    MPI_Finalize();
    return 0;
}
