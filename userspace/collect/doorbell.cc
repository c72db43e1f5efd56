#include "collect/doorbell.h"

#include <bpf/libbpf.h>
#include <fcntl.h>

#include <cerrno>
#include <cstring>

#include "common/unique_fd.h"

namespace gpunoise::collect {
namespace {

class RingDoorbell final : public Doorbell {
 public:
  RingDoorbell(UniqueFd fd, ring_buffer* rb) : fd_(std::move(fd)), rb_(rb) {}
  ~RingDoorbell() override { ring_buffer__free(rb_); }
  RingDoorbell(const RingDoorbell&) = delete;
  RingDoorbell& operator=(const RingDoorbell&) = delete;

  int fd() const override { return fd_.get(); }
  void Clear() override { ring_buffer__consume(rb_); }

 private:
  UniqueFd fd_;
  ring_buffer* rb_;
};

// What rang does not matter: a ring is a ring.
int IgnoreRing(void*, void*, size_t) { return 0; }

}  // namespace

Result<std::unique_ptr<Doorbell>> OpenRingDoorbell(int map_fd) {
  UniqueFd fd(::fcntl(map_fd, F_DUPFD_CLOEXEC, 0));
  if (!fd.valid()) return MakeError("failed to open the drain's doorbell: {}", std::strerror(errno));
  ring_buffer* rb = ring_buffer__new(fd.get(), IgnoreRing, nullptr, nullptr);
  if (!rb) return MakeError("failed to map the drain's doorbell: {}", std::strerror(errno));
  return std::unique_ptr<Doorbell>(std::make_unique<RingDoorbell>(std::move(fd), rb));
}

}  // namespace gpunoise::collect
