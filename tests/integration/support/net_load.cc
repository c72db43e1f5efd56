#include "integration/support/net_load.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <future>
#include <thread>
#include <vector>

namespace gpunoise::testing {
namespace {

using Clock = std::chrono::steady_clock;

void Pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  ::sched_setaffinity(0, sizeof(set), &set);
}

pid_t Tid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

sockaddr_in Address(const std::string& ip, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, ip.c_str(), &a.sin_addr);
  return a;
}

// Runs `body` on a thread inside `side`'s namespace without waiting for it.
std::thread InNamespace(const VethPair& pair, VethPair::Side side, std::function<void()> body) {
  return std::thread([&pair, side, body = std::move(body)] { pair.RunIn(side, body); });
}

}  // namespace

UdpFloodResult RunUdpFlood(const VethPair& pair, const UdpFloodOptions& options) {
  UdpFloodResult result;
  std::promise<bool> receiver_ready;
  std::future<bool> ready = receiver_ready.get_future();
  std::atomic<bool> stop{false};

  std::thread receiver = InNamespace(pair, VethPair::Side::kReceiver, [&] {
    pthread_setname_np(pthread_self(), "gnt-udp-recv");
    Pin(options.receiver_cpu);
    result.receiver_tid = Tid();
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (options.receive_buffer_bytes > 0)
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &options.receive_buffer_bytes,
                   sizeof(options.receive_buffer_bytes));
    sockaddr_in any = Address("0.0.0.0", options.port);
    bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&any), sizeof(any)) == 0;
    receiver_ready.set_value(ok);
    if (!ok) {
      if (fd >= 0) ::close(fd);
      return;
    }
    constexpr unsigned kBatch = 64;
    std::vector<char> buffers(kBatch * 2048);
    std::vector<iovec> iov(kBatch);
    std::vector<mmsghdr> msgs(kBatch);
    for (unsigned i = 0; i < kBatch; ++i) {
      iov[i] = {buffers.data() + i * 2048, 2048};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    while (!stop.load(std::memory_order_relaxed)) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0 || !options.receiver_reads) continue;
      int n = ::recvmmsg(fd, msgs.data(), kBatch, MSG_DONTWAIT, nullptr);
      if (n > 0) result.received += static_cast<uint64_t>(n);
    }
    // Whatever is still queued was delivered too.
    while (options.receiver_reads) {
      int n = ::recvmmsg(fd, msgs.data(), kBatch, MSG_DONTWAIT, nullptr);
      if (n <= 0) break;
      result.received += static_cast<uint64_t>(n);
    }
    ::close(fd);
  });

  if (!ready.get()) {
    stop = true;
    receiver.join();
    return result;
  }

  pair.RunIn(VethPair::Side::kSender, [&] {
    pthread_setname_np(pthread_self(), "gnt-udp-send");
    Pin(options.sender_cpu);
    result.sender_tid = Tid();
    int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in to = Address(pair.address(VethPair::Side::kReceiver), options.port);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
      if (fd >= 0) ::close(fd);
      return;
    }
    const unsigned batch = std::max(1u, options.batch);
    std::vector<char> payload(options.payload_bytes, 'g');
    iovec iov{payload.data(), payload.size()};
    std::vector<mmsghdr> msgs(batch);
    for (auto& m : msgs) {
      m = {};
      m.msg_hdr.msg_iov = &iov;
      m.msg_hdr.msg_iovlen = 1;
    }
    if (options.on_ready) options.on_ready();
    const auto start = Clock::now();
    const auto deadline = start + options.duration;
    while (Clock::now() < deadline) {
      unsigned want = batch;
      if (options.max_packets) {
        if (result.sent >= options.max_packets) break;
        want = static_cast<unsigned>(std::min<uint64_t>(batch, options.max_packets - result.sent));
      }
      int n = ::sendmmsg(fd, msgs.data(), want, 0);
      if (n > 0) result.sent += static_cast<uint64_t>(n);
      else ++result.send_errors;
    }
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    ::close(fd);
  });

  // Let the last datagrams arrive before the receiver stops reading.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop = true;
  receiver.join();
  return result;
}

TcpStreamResult RunTcpStream(const VethPair& pair, const TcpStreamOptions& options) {
  TcpStreamResult result;
  std::promise<bool> listening;
  std::future<bool> ready = listening.get_future();

  std::thread receiver = InNamespace(pair, VethPair::Side::kReceiver, [&] {
    pthread_setname_np(pthread_self(), "gnt-tcp-recv");
    Pin(options.receiver_cpu);
    int lfd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    ::setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in any = Address("0.0.0.0", options.port);
    bool ok = lfd >= 0 && ::bind(lfd, reinterpret_cast<sockaddr*>(&any), sizeof(any)) == 0 &&
              ::listen(lfd, 1) == 0;
    listening.set_value(ok);
    if (!ok) {
      if (lfd >= 0) ::close(lfd);
      return;
    }
    pollfd p{lfd, POLLIN, 0};
    int timeout_ms = static_cast<int>(options.duration.count()) + 2000;
    if (::poll(&p, 1, timeout_ms) <= 0) {
      ::close(lfd);
      return;
    }
    int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
    ::close(lfd);
    if (fd < 0) return;
    std::vector<char> buf(256 * 1024);
    // The sender bounds the stream; this only guards against a lost FIN.
    const auto deadline = Clock::now() + options.duration + std::chrono::seconds(5);
    while (Clock::now() < deadline) {
      pollfd q{fd, POLLIN, 0};
      if (::poll(&q, 1, 100) <= 0) continue;
      ssize_t n = ::recv(fd, buf.data(), buf.size(), 0);
      if (n <= 0) break;
      result.bytes_received += static_cast<uint64_t>(n);
    }
    ::close(fd);
  });

  if (!ready.get()) {
    receiver.join();
    return result;
  }

  pair.RunIn(VethPair::Side::kSender, [&] {
    pthread_setname_np(pthread_self(), "gnt-tcp-send");
    Pin(options.sender_cpu);
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in to = Address(pair.address(VethPair::Side::kReceiver), options.port);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
      if (fd >= 0) ::close(fd);
      return;
    }
    result.connected = true;
    std::vector<char> buf(options.write_bytes, 'g');
    const auto start = Clock::now();
    const auto deadline = start + options.duration;
    while (Clock::now() < deadline) {
      ssize_t n = ::send(fd, buf.data(), buf.size(), MSG_NOSIGNAL);
      if (n <= 0) break;
      result.bytes_sent += static_cast<uint64_t>(n);
    }
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    ::shutdown(fd, SHUT_WR);
    ::close(fd);
  });
  receiver.join();
  return result;
}

}  // namespace gpunoise::testing
