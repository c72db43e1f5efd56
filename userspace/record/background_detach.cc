#include "record/background_detach.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

#include "common/unique_fd.h"

namespace gpunoise::record {

bool DetachUnlessStopped(const std::vector<std::unique_ptr<collect::Collector>>& collectors, int stop_fd) {
  std::vector<collect::Collector*> raw;
  for (const auto& c : collectors) raw.push_back(c.get());
  auto done = std::make_shared<UniqueFd>(::eventfd(0, EFD_CLOEXEC));
  if (stop_fd < 0 || !done->valid()) {
    collect::StopCollectors(raw);
    return true;
  }
  std::thread detacher([raw, done] {
    collect::StopCollectors(raw);
    uint64_t one = 1;
    (void)!::write(done->get(), &one, sizeof(one));
  });
  pollfd fds[2] = {{done->get(), POLLIN, 0}, {stop_fd, POLLIN, 0}};
  for (;;) {
    int n = ::poll(fds, 2, -1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || (fds[0].revents & POLLIN)) {
      detacher.join();
      return true;
    }
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo info{};
      (void)!::read(stop_fd, &info, sizeof(info));
      detacher.detach();
      return false;
    }
  }
}

void LeaveToDetacher(std::vector<std::unique_ptr<collect::Collector>>& collectors) {
  for (auto& c : collectors) (void)c.release();  // NOLINT: deliberately left to the detaching thread
  collectors.clear();
}

}  // namespace gpunoise::record
