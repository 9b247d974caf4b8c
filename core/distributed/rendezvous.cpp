#include "distributed/rendezvous.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace shotchain::distributed {
namespace {

std::optional<std::string> variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

long number(const char* name, const std::string& text, long low, long high) {
  char* end = nullptr;
  errno = 0;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end == nullptr || *end != '\0' || errno != 0 || value < low || value > high)
    throw std::invalid_argument("environment variable " + std::string(name) + "=\"" + text +
                                "\": expected a whole number in " + std::to_string(low) + "-" + std::to_string(high));
  return value;
}

}  // namespace

std::optional<Rendezvous> rendezvousFromEnvironment() {
  const std::optional<std::string> rank = variable("RANK"), world = variable("WORLD_SIZE");
  if (!rank && !world) return std::nullopt;
  auto require = [](const char* name) {
    const std::optional<std::string> value = variable(name);
    if (!value)
      throw std::invalid_argument(
          "environment variable " + std::string(name) +
          " is not set (a distributed run needs RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT)");
    return *value;
  };
  Rendezvous r;
  r.worldSize = static_cast<int>(number("WORLD_SIZE", require("WORLD_SIZE"), 1, 65536));
  r.rank = static_cast<int>(number("RANK", require("RANK"), 0, r.worldSize - 1));
  r.masterAddress = require("MASTER_ADDR");
  if (r.masterAddress.empty()) throw std::invalid_argument("environment variable MASTER_ADDR is empty");
  r.masterPort = static_cast<int>(number("MASTER_PORT", require("MASTER_PORT"), 1, 65535));
  r.agentStore = variable("TORCHELASTIC_USE_AGENT_STORE").value_or("") == "True";
  if (const std::optional<std::string> local = variable("LOCAL_RANK"))
    r.localRank = static_cast<int>(number("LOCAL_RANK", *local, 0, 65535));
  return r;
}

std::string rendezvousPortProblem(const Rendezvous& r) {
  if (r.rank != 0 || r.agentStore) return "";
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);  // as c10d's server does: a port in TIME_WAIT is free
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);  // c10d's server listens on every address
  address.sin_port = htons(static_cast<std::uint16_t>(r.masterPort));
  const bool inUse = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 && errno == EADDRINUSE;
  ::close(fd);
  if (!inUse) return "";
  return "MASTER_PORT " + std::to_string(r.masterPort) +
         " is already in use by another program, so rank 0 cannot serve the rendezvous there: set MASTER_PORT to a "
         "free "
         "port on every rank (or run with --ranks N and no torchrun variables: it picks one)";
}

std::chrono::milliseconds collectiveTimeoutFromEnvironment(std::chrono::milliseconds fallback) {
  const std::optional<std::string> text = variable("SHOTCHAIN_COLLECTIVE_TIMEOUT");
  if (!text) return fallback;
  return std::chrono::seconds(number("SHOTCHAIN_COLLECTIVE_TIMEOUT", *text, 1, 86400));
}

}  // namespace shotchain::distributed
