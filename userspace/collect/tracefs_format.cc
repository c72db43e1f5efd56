#include "collect/tracefs_format.h"

#include <array>

#include "common/strings.h"

namespace gpunoise::collect {
namespace {

// "field:unsigned int len;	offset:16;	size:4;	signed:0;"
std::optional<TraceField> ParseFieldLine(std::string_view line) {
  line = Trim(line);
  if (!StartsWith(line, "field:")) return std::nullopt;
  TraceField f;
  bool have_offset = false, have_size = false;
  for (std::string_view part : Split(line, ';')) {
    part = Trim(part);
    auto colon = part.find(':');
    if (colon == part.npos) continue;
    std::string_view key = part.substr(0, colon), value = Trim(part.substr(colon + 1));
    if (key == "field") {
      // The name is the last word, with any array suffix ("hist[4]") moved
      // onto the type so the name stays an identifier.
      size_t space = value.find_last_of(" \t");
      if (space == value.npos) return std::nullopt;
      std::string_view decl = Trim(value.substr(space + 1));
      std::string type(Trim(value.substr(0, space)));
      auto bracket = decl.find('[');
      if (bracket != decl.npos) {
        type += std::string(decl.substr(bracket));
        decl = decl.substr(0, bracket);
      }
      f.type = type;
      f.name = std::string(decl);
    } else if (key == "offset") {
      auto v = ParseUint64(value);
      if (!v) return std::nullopt;
      f.offset = static_cast<uint32_t>(*v);
      have_offset = true;
    } else if (key == "size") {
      auto v = ParseUint64(value);
      if (!v) return std::nullopt;
      f.size = static_cast<uint32_t>(*v);
      have_size = true;
    } else if (key == "signed") {
      f.is_signed = value == "1";
    }
  }
  if (f.name.empty() || !have_offset || !have_size) return std::nullopt;
  f.is_common = StartsWith(f.name, "common_");
  return f;
}

}  // namespace

Result<TraceFormat> ParseTraceFormat(std::string_view text) {
  TraceFormat out;
  for (std::string_view line : Split(text, '\n')) {
    std::string_view t = Trim(line);
    if (StartsWith(t, "name:")) {
      out.name = std::string(Trim(t.substr(5)));
    } else if (StartsWith(t, "ID:")) {
      if (auto id = ParseUint64(Trim(t.substr(3)))) out.id = static_cast<uint32_t>(*id);
    } else if (StartsWith(t, "field:")) {
      auto f = ParseFieldLine(t);
      if (!f) return MakeError("failed to parse format line '{}'", t);
      out.fields.push_back(std::move(*f));
    }
  }
  if (out.fields.empty()) return MakeError("no fields in the format text");
  return out;
}

std::optional<DeviceNameField> FindDeviceNameField(const TraceFormat& format) {
  static constexpr std::array<std::string_view, 7> kNames = {
      "devname", "dev_name", "ifname", "netdev", "name", "dev", "device"};
  for (std::string_view wanted : kNames) {
    for (const TraceField& f : format.fields) {
      if (f.is_common || f.name != wanted) continue;
      if (StartsWith(f.type, "__data_loc char[]") || StartsWith(f.type, "__data_loc const char[]"))
        return DeviceNameField{true, f.offset, f.size, f.name};
      if (StartsWith(f.type, "char[") || StartsWith(f.type, "const char["))
        return DeviceNameField{false, f.offset, f.size, f.name};
    }
  }
  return std::nullopt;
}

}  // namespace gpunoise::collect
