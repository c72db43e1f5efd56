#include "collect/kmsg_reader.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "common/strings.h"

namespace gpunoise::collect {
namespace {

constexpr std::string_view kAnchorText = kKmsgAnchorText;

uint64_t BoottimeNs() {
  struct timespec ts {};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string UnescapeKmsg(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() + 0 && text[i + 1] == 'x' && Hex(text[i + 2]) >= 0 &&
        Hex(text[i + 3]) >= 0) {
      out.push_back(static_cast<char>(Hex(text[i + 2]) * 16 + Hex(text[i + 3])));
      i += 3;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

std::optional<model::KernelLogEntry> ParseKmsgEntry(std::string_view record) {
  auto semi = record.find(';');
  if (semi == record.npos) return std::nullopt;
  auto fields = Split(record.substr(0, semi), ',');
  if (fields.size() < 3) return std::nullopt;
  auto prefix = ParseUint64(fields[0]);
  auto seq = ParseUint64(fields[1]);
  auto usec = ParseUint64(fields[2]);
  if (!prefix || !seq || !usec) return std::nullopt;
  model::KernelLogEntry e;
  e.level = static_cast<uint8_t>(*prefix & 7);
  e.facility = static_cast<uint8_t>(*prefix >> 3);
  e.seq = *seq;
  e.usec = *usec;
  std::string_view rest = record.substr(semi + 1);
  auto nl = rest.find('\n');
  e.text = UnescapeKmsg(rest.substr(0, nl));
  // Continuation lines: " KEY=VALUE".
  while (nl != rest.npos) {
    rest = rest.substr(nl + 1);
    nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    if (line.empty() || line[0] != ' ') continue;
    line.remove_prefix(1);
    if (StartsWith(line, "SUBSYSTEM=")) e.subsystem = std::string(line.substr(10));
    else if (StartsWith(line, "DEVICE=")) e.device = std::string(line.substr(7));
  }
  model::KernelLogMatch m = model::ClassifyKernelLog(e.text);
  e.cls = m.cls;
  // DEVICE= is the kernel's own word for the device (a netdev's parent,
  // "+pci:0000:3b:00.0", or the net device itself, "n3"); a netdev without
  // a parent (veth, bridge) has none, and the text names it instead.
  if (m) e.about = !e.device.empty() ? e.device : m.device;
  return e;
}

Result<KmsgReader> KmsgReader::Open(const std::string& path, bool anchor) {
  KmsgReader r;
  r.fd_ = UniqueFd(::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
  if (!r.fd_.valid()) r.fd_ = UniqueFd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (!r.fd_.valid()) return MakeError("failed to open {}: {}", path, std::strerror(errno));
  // SEEK_END: the next read is the next record logged (devkmsg_llseek).
  if (::lseek(r.fd_.get(), 0, SEEK_END) < 0) return MakeError("failed to seek {}: {}", path, std::strerror(errno));
  if (!anchor) return r;
  uint64_t before = BoottimeNs();
  std::string line = fmt::format("<6>{}\n", kAnchorText);
  if (::write(r.fd_.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    return r;  // read-only: records keep the local clock's offset 0 (said in the summary)
  uint64_t after = BoottimeNs();
  // The anchor is the first record after our position (unless another was
  // logged in between); read until it shows.
  char buf[8192];
  for (int tries = 0; tries < 200; ++tries) {
    ssize_t n = ::read(r.fd_.get(), buf, sizeof(buf));
    if (n < 0 && errno == EAGAIN) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (n <= 0) continue;
    auto e = ParseKmsgEntry(std::string_view(buf, static_cast<size_t>(n)));
    if (!e) continue;
    r.Account(e->seq);
    if (!(e->text == kAnchorText && e->facility == 1)) {
      r.early_.push_back(std::move(*e));  // logged before the anchor: kept, timed below
      continue;
    }
    {
      // The kernel stamped it between the two reads.
      uint64_t mid = before + (after - before) / 2;
      r.offset_ns_ = static_cast<int64_t>(mid) - static_cast<int64_t>(e->usec * 1000);
      r.offset_error_ns_ = (after - before) / 2 + 1000;
      r.anchored_ = true;
      break;
    }
  }
  return r;
}

void KmsgReader::Account(uint64_t seq) {
  if (next_seq_ && seq > *next_seq_) lost_ += seq - *next_seq_;
  next_seq_ = seq + 1;
}

Status KmsgReader::ReadAvailable(std::vector<model::KernelLogEntry>* out) {
  for (model::KernelLogEntry& e : early_) {
    ++read_;
    e.ts = static_cast<uint64_t>(static_cast<int64_t>(e.usec * 1000) + offset_ns_);
    out->push_back(std::move(e));
  }
  early_.clear();
  char buf[8192];  // a record is at most 8 KiB (CONSOLE_EXT_LOG_MAX)
  while (true) {
    ssize_t n = ::read(fd_.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return OkStatus();
    // EPIPE: the ring overwrote records we had not read; the next read
    // returns the oldest one left, whose sequence number shows how many.
    if (n < 0 && errno == EPIPE) continue;
    if (n < 0) return MakeError("failed to read the kernel log: {}", std::strerror(errno));
    if (n == 0) return OkStatus();
    auto e = ParseKmsgEntry(std::string_view(buf, static_cast<size_t>(n)));
    if (!e) continue;
    Account(e->seq);
    if (e->facility == 1 && e->text == kAnchorText) continue;
    ++read_;
    e->ts = static_cast<uint64_t>(static_cast<int64_t>(e->usec * 1000) + offset_ns_);
    out->push_back(std::move(*e));
  }
}

}  // namespace gpunoise::collect
