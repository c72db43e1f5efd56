#include "import/test_trace.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gpunoise::testing {

perfetto::TracePacket SwitchBundle(uint32_t cpu, const std::vector<SwitchSpec>& switches) {
  perfetto::TracePacket packet;
  auto* bundle = packet.mutable_ftrace_events();
  bundle->set_cpu(cpu);
  for (const auto& s : switches) {
    auto* e = bundle->add_event();
    e->set_timestamp(s.ts);
    e->set_pid(static_cast<uint32_t>(s.prev));
    auto* sw = e->mutable_sched_switch();
    sw->set_prev_comm(s.prev ? "task" + std::to_string(s.prev) : "swapper");
    sw->set_prev_pid(s.prev);
    sw->set_prev_state(s.next ? 0 : 1);
    sw->set_next_comm(s.next ? "task" + std::to_string(s.next) : "swapper");
    sw->set_next_pid(s.next);
  }
  return packet;
}

std::string Wire::EncodeVarint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}

Wire& Wire::Varint(uint32_t field, uint64_t value) {
  out_ += EncodeVarint(static_cast<uint64_t>(field) << 3 | 0);
  out_ += EncodeVarint(value);
  return *this;
}

Wire& Wire::Bytes(uint32_t field, std::string_view bytes) {
  out_ += EncodeVarint(static_cast<uint64_t>(field) << 3 | 2);
  out_ += EncodeVarint(bytes.size());
  out_.append(bytes.data(), bytes.size());
  return *this;
}

Wire& Wire::Fixed64(uint32_t field, uint64_t value) {
  out_ += EncodeVarint(static_cast<uint64_t>(field) << 3 | 1);
  out_.append(reinterpret_cast<const char*>(&value), 8);
  return *this;
}

Wire& Wire::Raw(std::string_view bytes) {
  out_.append(bytes.data(), bytes.size());
  return *this;
}

void TestTrace::AddSerialized(const std::string& packet) { bytes_ += Wire().Bytes(1, packet).str(); }

ScopedTempDir::ScopedTempDir() {
  std::string tmpl = "/tmp/gpunoise-report-test-" + std::to_string(::getpid()) + "-XXXXXX";
  char* made = ::mkdtemp(tmpl.data());
  path_ = made ? made : "/tmp";
}

ScopedTempDir::~ScopedTempDir() {
  if (path_ != "/tmp") {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
}

std::string TestTrace::Write(const std::string& dir, const std::string& name) const {
  std::string path = dir + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out.write(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
  return path;
}

}  // namespace gpunoise::testing
