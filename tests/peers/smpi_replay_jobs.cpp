/* commaware's peer for jobs that share a cluster: several time-independent (TI) traces replayed
   in one SMPI simulation, each job's ranks started at the job's start time on the hosts it lists
   (the setting of SimGrid 3.32's examples/smpi/replay_multiple_manual_deploy, written here for
   the agreement tests, without that example's noise actors and its one-second sleep after each
   job). Built with g++ against libsimgrid by tests/peers/smpi_replay_jobs.py.

   Usage: smpi_replay_jobs PLATFORM.xml WORKLOAD [--cfg=NAME:VALUE ...]
   WORKLOAD has one job a line: NAME INDEX RANKS START HOSTS
     NAME   the job's SMPI instance name (unique)
     INDEX  a TI index file: one rank file a line, relative to the index's folder
     RANKS  the job's number of ranks
     START  when its ranks start, in seconds (an integer, as in SimGrid's example)
     HOSTS  RANKS host indices, comma-separated, in the engine's host order (sorted by name)
   Prints `COMMAWARE_JOB_RANK_END NAME RANK CLOCK` as each rank ends, the clock in 17 digits.

   Waits: SMPI 3.32's replay files a non-blocking request under (sender's pid - 1, receiver's
   pid - 1, tag) and a `wait` looks it up under the trace's (src rank, dst rank, tag)
   (src/smpi/internals/smpi_replay.cpp, RequestStorage and WaitAction). The two agree only when
   rank r is actor r + 1, as under smpirun; with several jobs (and in SimGrid's example) they do
   not, the lookup finds nothing and the wait returns at once. So each rank replays a copy of
   its file whose `wait` lines name the actors' pids - 1 (written next to WORKLOAD), which
   makes every job replay as smpirun replays it alone. `test` lines are left as they are (the
   replay also files them by rank): traces with `test` are refused. */
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>
#include <smpi/smpi.h>

namespace {

struct Job {
  std::string name;
  std::vector<std::string> rank_files;
  double start = 0;
  std::vector<int> hosts;
};

[[noreturn]] void die(const std::string& what)
{
  std::fprintf(stderr, "smpi_replay_jobs: %s\n", what.c_str());
  std::exit(2);
}

std::string folder_of(const std::string& path)
{
  auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

/* `file` rewritten for a rank whose job's ranks are the actors `pids`: a `wait` line's src and
   dst ranks become those actors' pids - 1 (see the header). */
std::string with_wait_pids(const std::string& file, const std::vector<aid_t>& pids, const std::string& out)
{
  std::ifstream in(file);
  if (not in)
    die("cannot open " + file);
  std::ofstream copy(out);
  auto pid_of = [&](const std::string& word) {
    long rank = std::stol(word);
    if (rank < 0 or static_cast<size_t>(rank) >= pids.size())
      die(file + ": rank " + word + " out of range");
    return std::to_string(pids[rank] - 1);
  };
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string x; words >> x;)
      w.push_back(x);
    if (w.size() > 1 and w[1] == "test")
      die(file + ": `test` actions are not supported by this peer");
    if (w.size() >= 5 and w[1] == "wait") {
      w[2] = pid_of(w[2]);
      w[3] = pid_of(w[3]);
      line.clear();
      for (const auto& x : w)
        line += (line.empty() ? "" : " ") + x;
    }
    copy << line << '\n';
  }
  if (not copy)
    die("cannot write " + out);
  return out;
}

std::vector<Job> read_workload(const std::string& path, size_t n_hosts)
{
  std::ifstream in(path);
  if (not in)
    die("cannot open " + path);
  std::vector<Job> jobs;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    Job job;
    std::string index;
    std::string hosts;
    int ranks  = 0;
    long start = 0;
    if (not(words >> job.name >> index >> ranks >> start >> hosts))
      continue;
    job.start = static_cast<double>(start);
    std::istringstream list(hosts);
    for (std::string h; std::getline(list, h, ',');) {
      int k = std::stoi(h);
      if (k < 0 or static_cast<size_t>(k) >= n_hosts)
        die("job " + job.name + ": host index " + h + " out of range");
      job.hosts.push_back(k);
    }
    std::ifstream files(index);
    if (not files)
      die("cannot open " + index);
    for (std::string f; std::getline(files, f);)
      if (not f.empty())
        job.rank_files.push_back(f[0] == '/' ? f : folder_of(index) + "/" + f);
    if (static_cast<int>(job.hosts.size()) != ranks or static_cast<int>(job.rank_files.size()) != ranks)
      die("job " + job.name + ": " + std::to_string(ranks) + " ranks, " + std::to_string(job.hosts.size()) +
          " hosts, " + std::to_string(job.rank_files.size()) + " rank files");
    jobs.push_back(job);
  }
  return jobs;
}

} // namespace

int main(int argc, char* argv[])
{
  // SMPI's options must exist before the engine reads the command line's --cfg=smpi/...
  // (smpirun's smpi_main does the same); SimGrid's example skips this, so it sees none of them.
  smpi_init_options();
  simgrid::s4u::Engine engine(&argc, argv);
  if (argc != 3)
    die("usage: smpi_replay_jobs PLATFORM.xml WORKLOAD [--cfg=NAME:VALUE ...]");
  engine.load_platform(argv[1]);
  const std::vector<simgrid::s4u::Host*> hosts = engine.get_all_hosts();
  static std::vector<Job> jobs = read_workload(argv[2], hosts.size());
  static const std::string work_dir = folder_of(argv[2]);
  for (const Job& job : jobs)
    SMPI_app_instance_register(job.name.c_str(), nullptr, static_cast<int>(job.rank_files.size()));
  SMPI_init();

  for (const Job& job : jobs) {
    // A launcher per job creates its ranks at its start time.
    simgrid::s4u::Actor::create("launch_" + job.name, hosts[job.hosts[0]], [&job, &hosts]() {
      simgrid::s4u::this_actor::sleep_until(job.start);
      // Every rank joins the job's MPI world before any rank sends (as smpirun's deployment
      // registers every rank before they run): a barrier between the two halves of
      // smpi_replay_run, which takes no simulated time.
      auto joined = simgrid::s4u::Barrier::create(static_cast<unsigned>(job.rank_files.size()));
      auto pids   = std::make_shared<std::vector<aid_t>>();
      for (size_t r = 0; r < job.rank_files.size(); ++r) {
        auto rank = simgrid::s4u::Actor::create(job.name + "_" + std::to_string(r), hosts[job.hosts[r]], [&job, r, joined, pids]() {
          smpi_replay_init(job.name.c_str(), static_cast<int>(r), 0.0);
          joined->wait();
          std::string file = with_wait_pids(job.rank_files[r], *pids, work_dir + "/" + job.name + "_" + std::to_string(r) + ".txt");
          smpi_replay_main(static_cast<int>(r), file.c_str());
          std::printf("COMMAWARE_JOB_RANK_END %s %zu %.17g\n", job.name.c_str(), r,
                      simgrid::s4u::Engine::get_clock());
          std::fflush(stdout);
        });
        pids->push_back(rank->get_pid());
      }
    });
  }
  engine.run();
  SMPI_finalize();
  return 0;
}
