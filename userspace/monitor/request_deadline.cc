#include "monitor/request_deadline.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "common/capabilities.h"
#include "common/unique_fd.h"

namespace gpunoise::monitor {

namespace {

// The address and port of a sockaddr, as cpp-httplib writes them into
// Request::remote_addr (inet_ntop) and remote_port.
bool AddressOf(const sockaddr_storage& ss, std::string* addr, int* port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(ss);
    if (!inet_ntop(AF_INET, &a.sin_addr, buf, sizeof(buf))) return false;
    *port = ntohs(a.sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(ss);
    if (!inet_ntop(AF_INET6, &a.sin6_addr, buf, sizeof(buf))) return false;
    *port = ntohs(a.sin6_port);
  } else {
    return false;
  }
  *addr = buf;
  return true;
}

}  // namespace

RequestDeadlines::RequestDeadlines(int port, std::chrono::milliseconds limit, std::chrono::milliseconds scan)
    : port_(port), limit_(limit), scan_(scan) {
  thread_ = std::thread([this] { Run(); });
}

RequestDeadlines::~RequestDeadlines() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void RequestDeadlines::RequestRead(const std::string& peer_addr, int peer_port) {
  std::lock_guard<std::mutex> lock(mu_);
  Peer peer{peer_addr, peer_port};
  for (auto& [inode, c] : connections_) {
    if (c.peer == peer) {
      c.armed = false;
      return;
    }
  }
  answered_before_seen_.insert(std::move(peer));
}

void RequestDeadlines::ResponseWritten(const std::string& peer_addr, int peer_port) {
  std::lock_guard<std::mutex> lock(mu_);
  Peer peer{peer_addr, peer_port};
  answered_before_seen_.erase(peer);
  for (auto& [inode, c] : connections_) {
    if (c.peer == peer) {
      c.armed = true;
      c.deadline = std::chrono::steady_clock::now() + limit_;
      return;
    }
  }
}

uint64_t RequestDeadlines::expired() const {
  std::lock_guard<std::mutex> lock(mu_);
  return expired_;
}

void RequestDeadlines::Scan(std::chrono::steady_clock::time_point now) {
  for (auto& [inode, c] : connections_) c.seen = false;
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return;
  while (dirent* d = ::readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(d->d_name, &end, 10);
    if (end == d->d_name || *end || fd == ::dirfd(dir)) continue;
    struct stat st {};
    if (::fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage local{}, remote{};
    socklen_t len = sizeof(local);
    std::string addr;
    int port = 0;
    if (::getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &len) != 0) continue;
    if (!AddressOf(local, &addr, &port) || port != port_) continue;
    len = sizeof(remote);
    // The listening socket has no peer.
    if (::getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&remote), &len) != 0) continue;
    Peer peer;
    if (!AddressOf(remote, &peer.first, &peer.second)) continue;
    auto [it, fresh] = connections_.try_emplace(static_cast<uint64_t>(st.st_ino));
    Connection& c = it->second;
    c.seen = true;
    c.fd = static_cast<int>(fd);
    if (fresh) {
      c.peer = peer;
      c.deadline = now + limit_;
      if (answered_before_seen_.erase(peer)) c.armed = false;
    }
  }
  ::closedir(dir);
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (!it->second.seen) {
      it = connections_.erase(it);
      continue;
    }
    Connection& c = it->second;
    if (c.armed && c.deadline <= now) {
      // The descriptor may have been closed and reused since the scan
      // above: act only on a dup that is still this socket.
      UniqueFd dup(::fcntl(c.fd, F_DUPFD_CLOEXEC, 0));
      struct stat st {};
      if (dup.valid() && ::fstat(dup.get(), &st) == 0 && static_cast<uint64_t>(st.st_ino) == it->first) {
        // The server's blocked read returns 0 and it closes the connection.
        ::shutdown(dup.get(), SHUT_RDWR);
        ++expired_;
      }
      c.armed = false;
    }
    ++it;
  }
}

void RequestDeadlines::Run() {
  // It only ever looks at and shuts down its own process's sockets.
  (void)DropAllCapabilitiesOfThisThread();
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    Scan(std::chrono::steady_clock::now());
    cv_.wait_for(lock, scan_, [this] { return stop_; });
  }
}

}  // namespace gpunoise::monitor
