// SimGrid peer for commaware's agreement tests and benchmarks (SimGrid 3.32, s4u API).
//
// Platform: HOSTS hosts h0..h{N-1} on a StarZone; host i owns one SPLITDUPLEX link (BANDWIDTH
// bytes/s, LATENCY s per direction), so a route i -> j crosses up(i) then down(j) and has latency
// 2 * LATENCY. Messages go through mailboxes (put_async / get_async), never Comm::sendto.
//
//   simgrid_star flows    HOSTS BANDWIDTH LATENCY FLOWFILE OUTFILE [--cfg=...]
//     FLOWFILE: one "src dst bytes" per line. Every flow starts at t = 0: host s runs one sender
//     actor that posts its flows in file order, host d one receiver actor that posts a receive per
//     incoming flow. OUTFILE gets "src dst bytes start finish" per flow, in FLOWFILE order.
//
//   simgrid_star alltoall RANKS BANDWIDTH LATENCY BYTES [--cfg=...]
//     MPI-style pairwise alltoall, rank r on host r: rounds i = 1..P-1 exchange BYTES with
//     partner r^i (P a power of two), else send to (r+i)%P and receive from (r-i+P)%P; each round
//     posts the send and the receive, then waits for both.
//
// Both print one line "RESULT {json}" (run_s = wall time of Engine::run, cpu_s = its process CPU
// time, makespan_s = simulated time when the run ended). Bad input: exit 2; an alltoall message
// delivered to the wrong round or from the wrong rank: exit 3.
#include <simgrid/s4u.hpp>
#include <simgrid/version.h>

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace s4u = simgrid::s4u;

namespace {

[[noreturn]] void die(const std::string& msg, int code = 2)
{
  std::fprintf(stderr, "simgrid_star: %s\n", msg.c_str());
  std::exit(code);
}

double cpu_seconds()
{
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double wall_seconds()
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double max_rss_mb()
{
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

double parse_double(const char* text, const char* what)
{
  char* end     = nullptr;
  double value  = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value >= 0))
    die(std::string("bad ") + what + ": '" + text + "'");
  return value;
}

long parse_count(const char* text, const char* what)
{
  char* end  = nullptr;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 2)
    die(std::string("bad ") + what + " (need an integer >= 2): '" + text + "'");
  return value;
}

// The star: one split-duplex link per host, used UP towards the centre and DOWN from it.
std::vector<s4u::Host*> build_star(long n_hosts, double bandwidth, double latency)
{
  if (bandwidth <= 0)
    die("the bandwidth must be positive");
  s4u::NetZone* star = s4u::create_star_zone("star");
  std::vector<s4u::Host*> hosts;
  hosts.reserve(static_cast<size_t>(n_hosts));
  for (long i = 0; i < n_hosts; i++) {
    std::string id = std::to_string(i);
    s4u::Host* host = star->create_host("h" + id, 1e9)->seal();
    s4u::Link* nic  = star->create_split_duplex_link("nic" + id, bandwidth)->set_latency(latency)->seal();
    star->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {s4u::LinkInRoute(nic, s4u::LinkInRoute::Direction::UP)}, true);
    hosts.push_back(host);
  }
  star->seal();
  return hosts;
}

std::string version()
{
  return std::to_string(SIMGRID_VERSION_MAJOR) + "." + std::to_string(SIMGRID_VERSION_MINOR) + "." +
         std::to_string(SIMGRID_VERSION_PATCH);
}

struct Timing {
  double run_s;
  double cpu_s;
};

Timing run_engine(s4u::Engine& engine)
{
  double wall0 = wall_seconds();
  double cpu0  = cpu_seconds();
  engine.run();
  return {wall_seconds() - wall0, cpu_seconds() - cpu0};
}

// ---------------------------------------------------------------------------------------------
// flows mode
// ---------------------------------------------------------------------------------------------

struct Flow {
  long src;
  long dst;
  uint64_t bytes;
};

std::vector<Flow> read_flows(const std::string& path, long n_hosts)
{
  std::ifstream in(path);
  if (!in)
    die("cannot read the flow file " + path);
  std::vector<Flow> flows;
  std::string line;
  long lineno = 0;
  while (std::getline(in, line)) {
    lineno++;
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    std::istringstream fields(line);
    long long src = -1;
    long long dst = -1;
    long long bytes = -1;
    std::string extra;
    if (!(fields >> src >> dst >> bytes) || (fields >> extra) || bytes < 0 || src < 0 || dst < 0 ||
        src >= n_hosts || dst >= n_hosts || src == dst)
      die(path + ":" + std::to_string(lineno) + ": expected 'src dst bytes' with two different hosts below " +
          std::to_string(n_hosts) + " and bytes >= 0, got '" + line + "'");
    flows.push_back({static_cast<long>(src), static_cast<long>(dst), static_cast<uint64_t>(bytes)});
  }
  if (flows.empty())
    die("the flow file " + path + " has no flows");
  return flows;
}

int run_flows(s4u::Engine& engine, int argc, char** argv)
{
  if (argc != 7)
    die("usage: simgrid_star flows HOSTS BANDWIDTH LATENCY FLOWFILE OUTFILE [--cfg=...]");
  long n_hosts      = parse_count(argv[2], "HOSTS");
  double bandwidth  = parse_double(argv[3], "BANDWIDTH");
  double latency    = parse_double(argv[4], "LATENCY");
  std::string out   = argv[6];
  std::vector<Flow> flows = read_flows(argv[5], n_hosts);
  std::vector<s4u::Host*> hosts = build_star(n_hosts, bandwidth, latency);

  // Flow indices per sender, and the number of receives per receiver, in file order.
  std::vector<std::vector<size_t>> outgoing(static_cast<size_t>(n_hosts));
  std::vector<size_t> incoming(static_cast<size_t>(n_hosts), 0);
  for (size_t i = 0; i < flows.size(); i++) {
    outgoing[static_cast<size_t>(flows[i].src)].push_back(i);
    incoming[static_cast<size_t>(flows[i].dst)]++;
  }

  std::vector<s4u::CommPtr> sends(flows.size());  // kept for their start and finish times
  for (long h = 0; h < n_hosts; h++) {
    auto idx = static_cast<size_t>(h);
    if (!outgoing[idx].empty())
      s4u::Actor::create("send" + std::to_string(h), hosts[idx], [&flows, &sends, &hosts, mine = outgoing[idx]]() {
        for (size_t i : mine)
          sends[i] = s4u::Mailbox::by_name(hosts[static_cast<size_t>(flows[i].dst)]->get_name())
                         ->put_async(&sends[i], flows[i].bytes);
        for (size_t i : mine)
          sends[i]->wait();
      });
  }
  // Receivers after all senders: same results, ~7% less CPU in Engine::run than interleaving them.
  for (long h = 0; h < n_hosts; h++) {
    auto idx = static_cast<size_t>(h);
    if (incoming[idx] > 0)
      s4u::Actor::create("recv" + std::to_string(h), hosts[idx], [count = incoming[idx]]() {
        s4u::Mailbox* box = s4u::Mailbox::by_name(s4u::this_actor::get_host()->get_name());
        std::vector<s4u::CommPtr*> payloads(count, nullptr);
        std::vector<s4u::CommPtr> gets;
        gets.reserve(count);
        for (size_t k = 0; k < count; k++)
          gets.push_back(box->get_async<s4u::CommPtr>(&payloads[k]));
        for (auto const& get : gets)
          get->wait();
      });
  }

  long advances = 0;
  s4u::Engine::on_time_advance_cb([&advances](double) { advances++; });
  Timing t = run_engine(engine);

  FILE* f = std::fopen(out.c_str(), "w");
  if (f == nullptr)
    die("cannot write " + out);
  for (size_t i = 0; i < flows.size(); i++)
    std::fprintf(f, "%ld %ld %llu %.17g %.17g\n", flows[i].src, flows[i].dst,
                 static_cast<unsigned long long>(flows[i].bytes), sends[i]->get_start_time(),
                 sends[i]->get_finish_time());
  if (std::fclose(f) != 0)
    die("cannot write " + out);

  std::printf("RESULT {\"simgrid\": \"%s\", \"mode\": \"flows\", \"hosts\": %ld, \"flows\": %zu, "
              "\"run_s\": %.6f, \"cpu_s\": %.6f, \"makespan_s\": %.17g, \"time_advances\": %ld, "
              "\"maxrss_MB\": %.1f}\n",
              version().c_str(), n_hosts, flows.size(), t.run_s, t.cpu_s, s4u::Engine::get_clock(), advances,
              max_rss_mb());
  return 0;
}

// ---------------------------------------------------------------------------------------------
// alltoall mode
// ---------------------------------------------------------------------------------------------

struct Tag {  // what a message says about itself, checked on arrival
  long src;
  long round;
};

int run_alltoall(s4u::Engine& engine, int argc, char** argv)
{
  if (argc != 6)
    die("usage: simgrid_star alltoall RANKS BANDWIDTH LATENCY BYTES [--cfg=...]");
  long p           = parse_count(argv[2], "RANKS");
  double bandwidth = parse_double(argv[3], "BANDWIDTH");
  double latency   = parse_double(argv[4], "LATENCY");
  double bytes_d   = parse_double(argv[5], "BYTES");
  auto bytes       = static_cast<uint64_t>(bytes_d);
  if (static_cast<double>(bytes) != bytes_d)
    die(std::string("BYTES must be an integer: '") + argv[5] + "'");
  std::vector<s4u::Host*> hosts = build_star(p, bandwidth, latency);
  bool xor_partner = (p & (p - 1)) == 0;

  long misdelivered = 0;
  for (long r = 0; r < p; r++)
    s4u::Actor::create("rank" + std::to_string(r), hosts[static_cast<size_t>(r)], [r, p, bytes, xor_partner,
                                                                                    &misdelivered]() {
      s4u::Mailbox* mine = s4u::Mailbox::by_name("rank" + std::to_string(r));
      for (long i = 1; i < p; i++) {
        long to   = xor_partner ? (r ^ i) : (r + i) % p;
        long from = xor_partner ? (r ^ i) : (r - i + p) % p;
        Tag* got  = nullptr;
        // The receiver owns (and frees) the tag: the sender may be a round ahead when it is read.
        s4u::CommPtr send = s4u::Mailbox::by_name("rank" + std::to_string(to))->put_async(new Tag{r, i}, bytes);
        s4u::CommPtr recv = mine->get_async<Tag>(&got);
        send->wait();
        recv->wait();
        if (got == nullptr || got->src != from || got->round != i)
          misdelivered++;
        delete got;
      }
    });

  long advances = 0;
  s4u::Engine::on_time_advance_cb([&advances](double) { advances++; });
  Timing t = run_engine(engine);

  std::printf("RESULT {\"simgrid\": \"%s\", \"mode\": \"alltoall\", \"ranks\": %ld, \"bytes\": %llu, "
              "\"partner\": \"%s\", \"rounds\": %ld, \"messages\": %ld, \"misdelivered\": %ld, "
              "\"run_s\": %.6f, \"cpu_s\": %.6f, \"makespan_s\": %.17g, \"time_advances\": %ld, "
              "\"maxrss_MB\": %.1f}\n",
              version().c_str(), p, static_cast<unsigned long long>(bytes), xor_partner ? "xor" : "shift", p - 1,
              p * (p - 1), misdelivered, t.run_s, t.cpu_s, s4u::Engine::get_clock(), advances, max_rss_mb());
  return misdelivered == 0 ? 0 : 3;
}

}  // namespace

int main(int argc, char** argv)
{
  s4u::Engine engine(&argc, argv);  // takes the --cfg= and --log= options out of argv
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "flows")
    return run_flows(engine, argc, argv);
  if (mode == "alltoall")
    return run_alltoall(engine, argc, argv);
  die("usage: simgrid_star flows|alltoall ... [--cfg=...] (see the comment at the top of simgrid_star.cpp)");
}
