// The include rules of docs/architecture.md ("What each folder holds"),
// checked on the source tree: a layer that reaches up, or one pipeline's
// command folder included by another, fails here with the file and line.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// Keep in step with the table in docs/architecture.md.
const std::map<std::string, std::set<std::string>>& Allowed() {
  static const std::map<std::string, std::set<std::string>> allowed = {
      {"common", {}},
      {"model", {"common"}},
      {"compression", {"common"}},
      {"collect", {"bpf", "common", "model"}},
      {"cupti", {"common", "model"}},
      {"record", {"bpf", "collect", "common", "model", "import", "export/perfetto", "merge"}},
      {"export/perfetto", {"common", "compression", "model"}},
      {"merge", {"common", "compression", "model", "export/perfetto"}},
      {"import", {"common", "compression", "model"}},
      {"analyze", {"common", "model", "import"}},
      {"report", {"analyze", "common", "model", "import", "export/perfetto", "merge"}},
      {"monitor", {"analyze", "bpf", "collect", "common", "model", "export/perfetto", "export/openmetrics"}},
      {"export/openmetrics", {"common"}},
      {"doctor", {"collect", "common", "model"}},
      {"blackbox", {"collect", "common", "model", "export/perfetto"}},
  };
  return allowed;
}

constexpr const char* kGeneratedFieldTable = "export/perfetto/protos/perfetto_fields.h";

// "export/perfetto/x.h" -> "export/perfetto"; "model/y.h" -> "model".
std::string LayerOf(const std::string& path) {
  std::string first = path.substr(0, path.find('/'));
  if (first != "export") return first;
  size_t second = path.find('/', first.size() + 1);
  return path.substr(0, second);
}

struct Violation {
  std::string file;
  int line;
  std::string include;
};

std::vector<Violation> Violations(const fs::path& userspace) {
  static const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+/[^"]+)")re");
  std::vector<Violation> out;
  for (const auto& entry : fs::recursive_directory_iterator(userspace)) {
    if (!entry.is_regular_file()) continue;
    std::string ext = entry.path().extension().string();
    if (ext != ".cc" && ext != ".h") continue;
    std::string rel = fs::relative(entry.path(), userspace).string();
    std::string from = LayerOf(rel);
    auto rules = Allowed().find(from);
    std::ifstream in(entry.path());
    std::string text;
    for (int n = 1; std::getline(in, text); ++n) {
      std::smatch m;
      if (!std::regex_search(text, m, include_line)) continue;
      // The field table generated from the .proto subset depends on
      // nothing: it is the wire codec's, below every layer.
      if (m[1].str() == kGeneratedFieldTable) continue;
      std::string to = LayerOf(m[1].str());
      if (to == from || (!Allowed().count(to) && to != "bpf")) continue;  // same folder, or not ours
      if (rules == Allowed().end() || !rules->second.count(to)) out.push_back({rel, n, m[1].str()});
    }
  }
  return out;
}

TEST(Layers, EveryIncludeBetweenFoldersIsOneTheArchitectureAllows) {
  fs::path userspace = fs::path(GPUNOISE_SOURCE_DIR) / "userspace";
  ASSERT_TRUE(fs::is_directory(userspace)) << userspace;
  std::string report;
  for (const Violation& v : Violations(userspace))
    report += "  " + v.file + ":" + std::to_string(v.line) + " includes " + v.include + "\n";
  EXPECT_TRUE(report.empty()) << "includes docs/architecture.md does not allow:\n" << report;
}

TEST(Layers, EveryFolderUnderUserspaceHasRules) {
  fs::path userspace = fs::path(GPUNOISE_SOURCE_DIR) / "userspace";
  for (const auto& entry : fs::directory_iterator(userspace)) {
    if (!entry.is_directory()) continue;
    std::string name = entry.path().filename().string();
    if (name == "export") {
      for (const auto& sub : fs::directory_iterator(entry.path()))
        if (sub.is_directory()) {
          EXPECT_TRUE(Allowed().count("export/" + sub.path().filename().string())) << sub.path();
        }
      continue;
    }
    EXPECT_TRUE(Allowed().count(name)) << "no include rules for userspace/" << name;
  }
}

TEST(Layers, ALayerReachingUpIsFound) {
  // The checker itself: a model file including analyze/ is a violation.
  fs::path root = fs::temp_directory_path() / ("gn-layers-" + std::to_string(::getpid()));
  fs::create_directories(root / "model");
  fs::create_directories(root / "analyze");
  std::ofstream(root / "model" / "up.h") << "#pragma once\n#include \"common/result.h\"\n#include \"analyze/finding.h\"\n";
  std::ofstream(root / "analyze" / "fine.cc") << "#include \"model/up.h\"\n#include <vector>\n";
  std::vector<Violation> v = Violations(root);
  fs::remove_all(root);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].file, "model/up.h");
  EXPECT_EQ(v[0].line, 3);
  EXPECT_EQ(v[0].include, "analyze/finding.h");
}

}  // namespace
