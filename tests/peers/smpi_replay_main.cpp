/* commaware's SMPI replay program: SimGrid 3.32's smpireplaymain (run it with
   `smpirun -replay INDEX ... smpi_replay_main`), plus one line per rank when it ends:
   `COMMAWARE_RANK_END RANK CLOCK` with the simulated clock in 17 digits (SMPI's own
   "Simulation time" line has 6 decimals). Built by tests/peers/smpi_replay.py with smpicxx. */
#include <cstdio>
#include <string>

#include "simgrid/s4u.hpp"
#include "smpi/smpi.h"
#include "xbt/replay.hpp"

int main(int argc, char* argv[])
{
  const auto* self = simgrid::s4u::Actor::self();
  if (self == nullptr || self->get_property("smpi_replay") == nullptr) {
    std::fprintf(stderr, "run this program with smpirun -replay INDEX\n");
    return 1;
  }
  const char* instance = self->get_property("instance_id");
  const int rank       = std::stoi(self->get_property("rank"));
  const char* shared   = self->get_property("tracefile");
  smpi_replay_init(instance, rank, 0.0);
  if (shared != nullptr)
    xbt_replay_set_tracefile(shared);
  smpi_replay_main(rank, argc > 1 ? argv[1] : nullptr);
  std::printf("COMMAWARE_RANK_END %d %.17g\n", rank, simgrid::s4u::Engine::get_clock());
  std::fflush(stdout);
  return 0;
}
