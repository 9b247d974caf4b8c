#include "cli/rank_launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

namespace shotchain::cli {
namespace {

using Clock = std::chrono::steady_clock;

// A port the kernel says is free on the loopback interface (rank 0's TCPStore binds it next).
int freeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(std::string("--ranks: no socket for a free port: ") + std::strerror(errno));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    const std::string error = std::strerror(errno);
    ::close(fd);
    throw std::runtime_error("--ranks: cannot find a free loopback port: " + error);
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

// A TERM, HUP or INT another process sent the launcher (`kill`, `timeout`), for the loop to pass
// on. The terminal's own signals (Ctrl+C, a hangup) already reach the ranks, which share the
// launcher's process group: passing those on too would make one Ctrl+C count twice.
volatile std::sig_atomic_t gSignalToForward = 0;

void onLauncherSignal(int signal, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code <= 0)
    gSignalToForward = signal;  // SI_USER, SI_QUEUE, SI_TKILL: sent by a process
}

void catchLauncherSignals() {
  struct sigaction action {};
  action.sa_sigaction = onLauncherSignal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGTERM, SIGHUP, SIGINT}) ::sigaction(signal, &action, nullptr);
}

struct Child {
  int rank = 0;
  pid_t pid = -1;
  int err = -1, out = -1;        // read ends (out: −1 for rank 0, whose stdout is ours)
  std::string errLine, outLine;  // partial lines
  bool running = true;
  int status = 0;
};

void forward(int rank, std::string& partial, const char* data, std::size_t size, bool flush) {
  partial.append(data, size);
  std::size_t start = 0;
  for (std::size_t newline; (newline = partial.find('\n', start)) != std::string::npos; start = newline + 1)
    std::fprintf(stderr, "[rank %d] %.*s\n", rank, static_cast<int>(newline - start), partial.data() + start);
  partial.erase(0, start);
  if (flush && !partial.empty()) {
    std::fprintf(stderr, "[rank %d] %s\n", rank, partial.c_str());
    partial.clear();
  }
  std::fflush(stderr);
}

std::string describe(const Child& child) {
  if (WIFSIGNALED(child.status))
    return "rank " + std::to_string(child.rank) + " was killed by signal " + std::to_string(WTERMSIG(child.status)) +
           " (" + strsignal(WTERMSIG(child.status)) + ")";
  return "rank " + std::to_string(child.rank) + " exited with code " + std::to_string(WEXITSTATUS(child.status));
}

bool failed(const Child& child) { return WIFSIGNALED(child.status) || WEXITSTATUS(child.status) != 0; }

}  // namespace

int launchLocalRanks(const std::string& verb, const Args& args, int ranks, std::chrono::milliseconds timeout) {
  const int port = freeLoopbackPort();
  std::vector<std::string> argv{"/proc/self/exe", verb};
  for (const std::string& arg : args) argv.push_back(arg);  // --ranks stays: a placed rank joins instead
  std::vector<char*> raw;
  for (std::string& arg : argv) raw.push_back(arg.data());
  raw.push_back(nullptr);
  std::fprintf(stderr, "shotchain %s: %d ranks on this machine, rendezvous at 127.0.0.1:%d\n", verb.c_str(), ranks,
               port);
  std::fflush(stderr);

  std::signal(SIGPIPE, SIG_IGN);  // our stderr closing must not end us while ranks run
  catchLauncherSignals();
  const pid_t launcher = ::getpid();
  std::vector<Child> children(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    Child& child = children[static_cast<std::size_t>(r)];
    child.rank = r;
    int errPipe[2], outPipe[2] = {-1, -1};
    // Close-on-exec: a rank holds no end of another rank's pipes (dup2 clears it on 1 and 2).
    if (::pipe2(errPipe, O_CLOEXEC) != 0 || (r > 0 && ::pipe2(outPipe, O_CLOEXEC) != 0))
      throw std::runtime_error(std::string("--ranks: pipe: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("--ranks: fork: ") + std::strerror(errno));
    if (pid == 0) {
      // A launcher that dies, however it dies (KILL included), takes its ranks with it: nobody
      // would watch them, and they hold the output folder. (--resume continues from what is on disk.)
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != launcher) ::_exit(127);  // it died before the line above
      ::dup2(errPipe[1], STDERR_FILENO);
      if (r > 0) ::dup2(outPipe[1], STDOUT_FILENO);
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(ranks).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(ranks).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::execv("/proc/self/exe", raw.data());
      std::fprintf(stderr, "cannot start rank %d: %s\n", r, std::strerror(errno));
      ::_exit(127);
    }
    child.pid = pid;
    ::close(errPipe[1]);
    child.err = errPipe[0];
    if (r > 0) {
      ::close(outPipe[1]);
      child.out = outPipe[0];
    }
  }

  const Child* firstFailure = nullptr;
  int stoppedBy = 0;  // the TERM or HUP passed on to the ranks
  Clock::time_point deadline = Clock::time_point::max();
  auto anyRunning = [&] {
    for (const Child& c : children)
      if (c.running || c.err >= 0 || c.out >= 0) return true;
    return false;
  };
  while (anyRunning()) {
    if (const int signal = gSignalToForward; signal != 0) {
      gSignalToForward = 0;
      std::fprintf(stderr, "shotchain %s: %s: passing it on to the ranks\n", verb.c_str(), strsignal(signal));
      for (Child& c : children)
        if (c.running) ::kill(c.pid, signal);
      if (signal != SIGINT) {  // INT: rank 0 finishes the shot (README); TERM, HUP: they end now
        stoppedBy = signal;
        deadline = std::min(deadline, Clock::now() + std::chrono::seconds(10));
      }
    }
    std::vector<pollfd> fds;
    std::vector<std::pair<Child*, bool>> owners;  // (child, is stderr)
    for (Child& c : children) {
      if (c.err >= 0) fds.push_back({c.err, POLLIN, 0}), owners.push_back({&c, true});
      if (c.out >= 0) fds.push_back({c.out, POLLIN, 0}), owners.push_back({&c, false});
    }
    if (!fds.empty())
      ::poll(fds.data(), fds.size(), 50);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      auto [child, isErr] = owners[i];
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      std::string& partial = isErr ? child->errLine : child->outLine;
      if (n > 0) {
        forward(child->rank, partial, buffer, static_cast<std::size_t>(n), false);
      } else {
        forward(child->rank, partial, buffer, 0, true);
        ::close(fds[i].fd);
        (isErr ? child->err : child->out) = -1;
      }
    }
    for (Child& c : children) {
      if (!c.running || ::waitpid(c.pid, &c.status, WNOHANG) != c.pid) continue;
      c.running = false;
      if (failed(c) && firstFailure == nullptr) {
        firstFailure = &c;
        if (stoppedBy != 0) continue;  // ended by the signal passed on
        std::fprintf(stderr, "shotchain %s: %s; the other ranks stop within the %.0f s collective timeout\n",
                     verb.c_str(), describe(c).c_str(), timeout.count() / 1000.0);
        deadline = std::min(deadline, Clock::now() + timeout + std::chrono::seconds(15));
      }
    }
    if (Clock::now() > deadline) {
      for (Child& c : children)
        if (c.running) {
          std::fprintf(
              stderr, "shotchain %s: rank %d did not stop after %s: killing it\n", verb.c_str(), c.rank,
              firstFailure ? ("rank " + std::to_string(firstFailure->rank) + " failed").c_str() : strsignal(stoppedBy));
          ::kill(c.pid, SIGKILL);
        }
      deadline = Clock::time_point::max();
    }
  }
  if (stoppedBy != 0) return 128 + stoppedBy;  // as a shell reports a process the signal ended
  if (firstFailure == nullptr) return 0;
  for (const Child& c : children)
    if (WIFSIGNALED(c.status)) return kRankLostExit;
  if (failed(children.front())) return WEXITSTATUS(children.front().status);
  return WEXITSTATUS(firstFailure->status);
}

}  // namespace shotchain::cli
