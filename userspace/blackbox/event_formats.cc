#include "blackbox/event_formats.h"

#include <cstring>

#include <fmt/format.h>

#include "common/files.h"
#include "common/strings.h"

namespace gpunoise::blackbox {

std::string LayoutFingerprint(const collect::TraceFormat& format) {
  // FNV-1a over "name:offset:size:signed;" of every field: stable across
  // processes and builds (std::hash is not).
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  for (const collect::TraceField& f : format.fields)
    mix(fmt::format("{}:{}:{}:{};", f.name, f.offset, f.size, f.is_signed ? 1 : 0));
  return fmt::format("{:016x}", h);
}

void EventTable::Add(EventFormat format) {
  uint32_t id = format.format.id;
  by_id_[id] = std::move(format);
}

const EventFormat* EventTable::Find(uint32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &it->second;
}

const EventFormat* EventTable::FindByName(std::string_view group, std::string_view name) const {
  for (const auto& [id, f] : by_id_)
    if (f.group == group && f.name == name) return &f;
  return nullptr;
}

EventTable LoadEventTable(const std::string& events_dir, std::span<const std::string> names,
                          std::vector<std::string>* missing) {
  EventTable table;
  for (const std::string& full : names) {
    auto slash = full.find('/');
    if (slash == full.npos) {
      if (missing) missing->push_back(full);
      continue;
    }
    auto text = ReadFileToString(events_dir + "/" + full + "/format");
    if (!text.ok()) {
      if (missing) missing->push_back(full);
      continue;
    }
    auto format = collect::ParseTraceFormat(*text);
    if (!format.ok() || format->id == 0) {
      if (missing) missing->push_back(full);
      continue;
    }
    table.Add(EventFormat{full.substr(0, slash), full.substr(slash + 1), std::move(*format)});
  }
  return table;
}

std::optional<uint16_t> RecordType(std::span<const uint8_t> payload) {
  if (payload.size() < 2) return std::nullopt;
  uint16_t t;
  std::memcpy(&t, payload.data(), 2);
  return t;
}

const collect::TraceField* RecordView::Field(std::string_view name) const {
  for (const collect::TraceField& f : format_->fields)
    if (f.name == name) return &f;
  return nullptr;
}

std::optional<uint64_t> RecordView::Raw(const collect::TraceField& f) const {
  if (f.size == 0 || f.size > 8 || uint64_t{f.offset} + f.size > payload_.size()) return std::nullopt;
  uint64_t v = 0;
  std::memcpy(&v, payload_.data() + f.offset, f.size);  // little endian
  return v;
}

std::optional<uint64_t> RecordView::Uint(std::string_view name) const {
  const collect::TraceField* f = Field(name);
  if (!f) return std::nullopt;
  return Raw(*f);
}

std::optional<int64_t> RecordView::Int(std::string_view name) const {
  const collect::TraceField* f = Field(name);
  if (!f) return std::nullopt;
  auto v = Raw(*f);
  if (!v) return std::nullopt;
  if (f->is_signed && f->size < 8) {
    uint64_t sign = 1ull << (f->size * 8 - 1);
    if (*v & sign) *v |= ~((sign << 1) - 1);
  }
  return static_cast<int64_t>(*v);
}

std::string_view RecordView::String(std::string_view name) const {
  const collect::TraceField* f = Field(name);
  if (!f) return {};
  auto bytes = [&](size_t off, size_t len) -> std::string_view {
    if (off > payload_.size()) return {};
    len = std::min(len, payload_.size() - off);
    const char* p = reinterpret_cast<const char*>(payload_.data() + off);
    return std::string_view(p, strnlen(p, len));
  };
  bool data_loc = StartsWith(f->type, "__data_loc");
  bool rel_loc = StartsWith(f->type, "__rel_loc");
  if (data_loc || rel_loc) {
    auto v = Raw(*f);
    if (!v || f->size != 4) return {};
    // Low 16 bits: offset (from the record start, or for __rel_loc from the
    // end of this field), high 16 bits: length with the NUL
    // (include/trace/stages/stage5_get_offsets.h).
    size_t off = *v & 0xffff, len = (*v >> 16) & 0xffff;
    if (rel_loc) off += f->offset + f->size;
    return bytes(off, len);
  }
  if (f->size == 0) return bytes(f->offset, payload_.size());  // char buf[]: the rest
  return bytes(f->offset, f->size);
}

uint16_t RecordView::type() const { return RecordType(payload_).value_or(0); }
uint8_t RecordView::flags() const { return payload_.size() > 2 ? payload_[2] : 0; }
int32_t RecordView::pid() const {
  if (payload_.size() < 8) return 0;
  int32_t p;
  std::memcpy(&p, payload_.data() + 4, 4);
  return p;
}

}  // namespace gpunoise::blackbox
