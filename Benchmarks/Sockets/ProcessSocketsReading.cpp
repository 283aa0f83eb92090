// One reading of a process's own sockets (ForEachProcessSocket: what the IngestWatcher does at each
// tick, and IngestState::ConnectionOf when an association starts), with OTHERS other sockets in
// the network namespace's TCP table (held by child processes: connections on loopback, a third of
// them TIME_WAIT) and CONNECTIONS connections to this process's own port (its "Orthanc port"). The
// reading's cost is that of this process's descriptors, whatever the table holds: this shows it.
// Run it in a network namespace of its own, as root:
//   unshare -n sh -c 'ip link set lo up && sysctl -qw net.ipv4.ip_local_port_range="1024 65000" &&
//                     ./build-bench/ProcessSocketsReading 10000 1000'
#include "Correlation/ProcessSockets.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace
{
  constexpr int kPerChild = 16000;  // descriptors per child, under the usual hard limit of 20,000
  constexpr int kReadings = 200;

  int64_t Now(clockid_t clock)
  {
    timespec now;
    clock_gettime(clock, &now);
    return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
  }

  void RaiseDescriptorLimit()
  {
    rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }

  int Listen(uint16_t& port)
  {
    const int listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 || listen(listener, 4096) != 0 ||
        getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    {
      perror("listen");
      exit(1);
    }
    port = ntohs(address.sin_port);
    return listener;
  }

  // A connection to the listener: both ends stay open in this process (false: out of descriptors or ports).
  bool Connect(int listener, uint16_t port, bool timeWait)
  {
    const int client = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = htons(port);
    if (client < 0 || connect(client, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0)
    {
      return false;
    }
    const int server = accept(listener, nullptr, nullptr);
    if (server < 0)
    {
      return false;
    }
    if (timeWait)
    {
      close(client);  // the end that closes first keeps the TIME_WAIT
      close(server);
    }
    return true;
  }

  // Children that hold `count` other sockets between them; returns once they hold them.
  std::vector<pid_t> HoldOtherSockets(int count)
  {
    std::vector<pid_t> children;
    for (int made = 0; made < count; made += kPerChild)
    {
      int ready[2];
      if (pipe(ready) != 0)
      {
        exit(1);
      }
      const pid_t child = fork();
      if (child == 0)
      {
        uint16_t port = 0;
        const int listener = Listen(port);
        const int sockets = std::min(kPerChild, count - made);
        for (int i = 0; i < sockets; i += 2)
        {
          if (!Connect(listener, port, i % 6 == 0))  // a third of the sockets in TIME_WAIT
          {
            fprintf(stderr, "only %d other sockets in this child\n", i);
            break;
          }
        }
        const char one = 1;
        if (write(ready[1], &one, 1) != 1)
        {
          exit(1);
        }
        pause();
        exit(0);
      }
      char one = 0;
      if (read(ready[0], &one, 1) != 1)
      {
        exit(1);
      }
      close(ready[0]);
      close(ready[1]);
      children.push_back(child);
    }
    return children;
  }
}


int main(int argc, char** argv)
{
  if (argc != 3)
  {
    fprintf(stderr, "usage: %s OTHER_SOCKETS CONNECTIONS\n", argv[0]);
    return 2;
  }
  const int others = atoi(argv[1]);
  const int connections = atoi(argv[2]);
  RaiseDescriptorLimit();
  const std::vector<pid_t> children = HoldOtherSockets(others);
  uint16_t port = 0;
  const int listener = Listen(port);
  for (int i = 0; i < connections; i++)
  {
    if (!Connect(listener, port, false))
    {
      fprintf(stderr, "only %d connections\n", i);
      break;
    }
  }
  std::vector<int64_t> cpu;
  std::vector<int64_t> wall;
  size_t seen = 0;
  for (int i = 0; i < kReadings; i++)
  {
    const int64_t cpuStart = Now(CLOCK_THREAD_CPUTIME_ID);
    const int64_t wallStart = Now(CLOCK_MONOTONIC);
    size_t count = 0;
    IngestPerf::ForEachProcessSocket(port, 0, [&count](const IngestPerf::SocketInfo&) { count++; });
    wall.push_back(Now(CLOCK_MONOTONIC) - wallStart);
    cpu.push_back(Now(CLOCK_THREAD_CPUTIME_ID) - cpuStart);
    seen = count;
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  printf("other sockets %d, connections to the port %d: sockets of the port seen %zu (the listener included); "
         "one reading: CPU %.1f us (median of %d), wall %.1f us\n",
         others, connections, seen, static_cast<double>(cpu[cpu.size() / 2]) / 1000.0, kReadings,
         static_cast<double>(wall[wall.size() / 2]) / 1000.0);
  for (pid_t child : children)
  {
    kill(child, SIGTERM);
    waitpid(child, nullptr, 0);
  }
  return 0;
}
