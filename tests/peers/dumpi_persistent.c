/* Persistent requests under DUMPI: each rank sends 3 rounds of 100 doubles to its right
 * neighbour and receives from its left one with MPI_Send_init / MPI_Recv_init, started by
 * MPI_Startall and completed by MPI_Waitall; then one more round with MPI_Start and MPI_Wait
 * on each; then both requests are freed. */
#include <mpi.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int r, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  double out[100] = {0}, in[100];
  MPI_Request reqs[2];
  MPI_Recv_init(in, 100, MPI_DOUBLE, (r + p - 1) % p, 5, MPI_COMM_WORLD, &reqs[0]);
  MPI_Send_init(out, 100, MPI_DOUBLE, (r + 1) % p, 5, MPI_COMM_WORLD, &reqs[1]);
  for (int k = 0; k < 3; k++) {
    MPI_Startall(2, reqs);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  }
  MPI_Start(&reqs[0]);
  MPI_Start(&reqs[1]);
  MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
  MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
  MPI_Request_free(&reqs[0]);
  MPI_Request_free(&reqs[1]);
  MPI_Finalize();
  return 0;
}
