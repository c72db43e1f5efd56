#include "blackbox/saved_table.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/files.h"
#include "common/private_file.h"
#include "common/strings.h"

namespace gpunoise::blackbox {

Status SaveMarkerLines(const std::string& state_dir, const std::string& boot_id,
                       const std::vector<std::string>& lines) {
  if (boot_id.empty() || boot_id.find('/') != std::string::npos)
    return MakeError("failed to save the marker table: no usable boot id");
  if (::mkdir(state_dir.c_str(), 0700) != 0 && errno != EEXIST)
    return MakeError("failed to create {}: {}", state_dir, std::strerror(errno));
  std::string path = state_dir + "/ids-" + boot_id;
  if (std::string why = CheckOutputPath(path); !why.empty()) return MakeError("{}", why);
  std::string temp, error;
  UniqueFd fd = CreatePrivateTemp(path, "tmp", &temp, &error);
  if (!fd.valid()) return MakeError("{}", error);
  std::string text;
  for (const std::string& l : lines) text += l + "\n";
  const char* p = text.data();
  size_t left = text.size();
  while (left) {
    ssize_t n = ::write(fd.get(), p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string why = std::strerror(errno);
      ::unlink(temp.c_str());
      return MakeError("failed to write {}: {}", temp, why);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0 || !RenameIntoPlace(temp, path, &error)) {
    ::unlink(temp.c_str());
    return MakeError("failed to save {}: {}", path, error.empty() ? std::strerror(errno) : error);
  }
  return OkStatus();
}

Result<MarkerSet> LoadSavedMarkers(const std::string& state_dir, const std::string& boot_id,
                                   const std::string& except_boot_id, std::string* path_out) {
  std::string path;
  if (!boot_id.empty()) {
    path = state_dir + "/ids-" + boot_id;
  } else {
    auto names = ListDirectory(state_dir);
    if (!names.ok()) return MakeError("no saved marker table in {}: {}", state_dir, names.error().message);
    int64_t newest = -1;
    for (const std::string& n : *names) {
      if (!StartsWith(n, "ids-") || n == "ids-" + except_boot_id) continue;
      struct stat st {};
      if (::stat((state_dir + "/" + n).c_str(), &st) != 0) continue;
      if (st.st_mtime > newest) {
        newest = st.st_mtime;
        path = state_dir + "/" + n;
      }
    }
    if (path.empty()) return MakeError("no saved marker table of an earlier boot in {}", state_dir);
  }
  auto text = ReadFileToString(path);
  if (!text.ok()) return MakeError("no saved marker table at {}", path);
  MarkerSet set;
  for (std::string_view line : Split(*text, '\n')) AddMarker(line, 0, &set);
  if (set.ids.empty()) return MakeError("{} holds no event-id table", path);
  if (path_out) *path_out = path;
  return set;
}

}  // namespace gpunoise::blackbox
