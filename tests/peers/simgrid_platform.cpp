// SimGrid peer for commaware's topology tests (SimGrid 3.32, s4u API): loads any SimGrid
// platform file and reports what SimGrid itself computes on it.
//
//   simgrid_platform routes PLATFORM.xml [SRC DST]
//     Without SRC/DST: every ordered pair of distinct hosts, hosts in the order
//     Engine::get_all_hosts() gives them. One line per pair:
//       ROUTE <src> <dst> <latency_s> <link> <link> ...
//     (links in the order a message crosses them, by their SimGrid names).
//   simgrid_platform links PLATFORM.xml
//     One line per link: LINK <name> <bandwidth_Bps> <latency_s> <sharing_policy>
//   simgrid_platform hosts PLATFORM.xml
//     One line per host in SimGrid's order: HOST <name> <speed_flops> <cores>
//   simgrid_platform flows PLATFORM.xml FLOWFILE [--cfg=...]
//     FLOWFILE: one "src_host dst_host bytes start_s" per line. Each flow is a Comm::sendto
//     started at its start time. Prints "FLOW <index> <start> <finish>" per flow in file order,
//     then "RESULT {json}" with the wall time of Engine::run.
// Bad input: exit 2 with one line on stderr.
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace s4u = simgrid::s4u;

namespace {

[[noreturn]] void die(const std::string& msg)
{
  std::fprintf(stderr, "simgrid_platform: %s\n", msg.c_str());
  std::exit(2);
}

const char* policy_name(s4u::Link::SharingPolicy p)
{
  switch (p) {
    case s4u::Link::SharingPolicy::SHARED: return "SHARED";
    case s4u::Link::SharingPolicy::FATPIPE: return "FATPIPE";
    case s4u::Link::SharingPolicy::SPLITDUPLEX: return "SPLITDUPLEX";
    case s4u::Link::SharingPolicy::WIFI: return "WIFI";
    default: return "OTHER";
  }
}

void print_route(const s4u::Host* src, const s4u::Host* dst)
{
  std::vector<s4u::Link*> links;
  double latency = 0;
  src->route_to(dst, links, &latency);
  std::printf("ROUTE %s %s %.17g", src->get_cname(), dst->get_cname(), latency);
  for (const auto* l : links)
    std::printf(" %s", l->get_cname());
  std::printf("\n");
}

struct Flow {
  std::string src, dst;
  double bytes = 0, start = 0, finish = -1;
};

} // namespace

int main(int argc, char** argv)
{
  if (argc < 3)
    die("usage: simgrid_platform routes|links|hosts|flows PLATFORM.xml [...]");
  const std::string mode = argv[1];
  const std::string platform = argv[2];
  std::vector<char*> args = {argv[0]};
  for (int i = 3; i < argc; i++)
    if (std::string(argv[i]).rfind("--cfg=", 0) == 0)
      args.push_back(argv[i]);
  int eargc = static_cast<int>(args.size());
  s4u::Engine e(&eargc, args.data());
  e.load_platform(platform);
  // Floyd and Dijkstra zones compute their paths when sealed, which Engine::run does; routes
  // are asked before any run, so seal here (without it, multi-hop routes are "No route").
  e.seal_platform();
  auto hosts = e.get_all_hosts();

  if (mode == "hosts") {
    for (const auto* h : hosts)
      std::printf("HOST %s %.17g %d\n", h->get_cname(), h->get_speed(), h->get_core_count());
    return 0;
  }
  if (mode == "links") {
    for (const auto* l : e.get_all_links())
      std::printf("LINK %s %.17g %.17g %s\n", l->get_cname(), l->get_bandwidth(), l->get_latency(),
                  policy_name(l->get_sharing_policy()));
    return 0;
  }
  if (mode == "routes") {
    if (argc >= 5 && std::string(argv[3]).rfind("--cfg=", 0) != 0) {
      const auto* s = e.host_by_name_or_null(argv[3]);
      const auto* d = e.host_by_name_or_null(argv[4]);
      if (!s || !d)
        die("unknown host");
      print_route(s, d);
      return 0;
    }
    for (const auto* s : hosts)
      for (const auto* d : hosts)
        if (s != d)
          print_route(s, d);
    return 0;
  }
  if (mode != "flows")
    die("unknown mode " + mode);
  if (argc < 4)
    die("flows needs FLOWFILE");
  std::ifstream in(argv[3]);
  if (!in)
    die(std::string("cannot read ") + argv[3]);
  std::vector<Flow> flows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty())
      continue;
    std::istringstream ss(line);
    Flow f;
    if (!(ss >> f.src >> f.dst >> f.bytes >> f.start))
      die("bad flow line: " + line);
    if (!e.host_by_name_or_null(f.src) || !e.host_by_name_or_null(f.dst))
      die("unknown host in: " + line);
    flows.push_back(f);
  }
  s4u::Actor::create("driver", hosts.front(), [&flows]() {
    std::vector<size_t> order(flows.size());
    for (size_t i = 0; i < flows.size(); i++)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return flows[a].start < flows[b].start; });
    std::vector<s4u::CommPtr> pending;
    std::vector<size_t> owner;
    size_t next = 0;
    // Start every flow at its time; between starts, record the completions.
    while (next < order.size() || !pending.empty()) {
      while (next < order.size() && flows[order[next]].start <= s4u::Engine::get_clock()) {
        auto& f = flows[order[next]];
        pending.push_back(s4u::Comm::sendto_async(s4u::Host::by_name(f.src), s4u::Host::by_name(f.dst),
                                                  static_cast<uint64_t>(f.bytes)));
        owner.push_back(order[next]);
        next++;
      }
      double timeout = next < order.size() ? flows[order[next]].start - s4u::Engine::get_clock() : -1;
      if (pending.empty()) {
        s4u::this_actor::sleep_until(flows[order[next]].start);
        continue;
      }
      ssize_t k = s4u::Comm::wait_any_for(pending, timeout);
      if (k < 0)
        continue;
      flows[owner[k]].finish = s4u::Engine::get_clock();
      pending.erase(pending.begin() + k);
      owner.erase(owner.begin() + k);
    }
  });
  auto t0 = std::chrono::steady_clock::now();
  e.run();
  double run_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (size_t i = 0; i < flows.size(); i++)
    std::printf("FLOW %zu %.17g %.17g\n", i, flows[i].start, flows[i].finish);
  std::printf("RESULT {\"run_s\": %.6f, \"flows\": %zu}\n", run_s, flows.size());
  return 0;
}
