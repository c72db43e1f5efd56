// The fuzz targets (tests/fuzz, built only in build-fuzz/) and their
// checked-in coverage floors stay in step: every target has a floor, and
// every floor names a target, so tools/fuzz_tests.sh never runs a target
// that nothing holds to a floor, nor keeps a floor for one that is gone.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace gpunoise {
namespace {

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(GPUNOISE_SOURCE_DIR) + "/" + relative);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(FuzzTargets, EachHasACoverageFloorAndEachFloorATarget) {
  std::string cmake = ReadSource("tests/fuzz/CMakeLists.txt");
  std::string floors = ReadSource("tests/fuzz/coverage_floors.txt");
  ASSERT_FALSE(cmake.empty());
  ASSERT_FALSE(floors.empty());
  std::set<std::string> targets, floored;
  std::regex target_re(R"(gpunoise_fuzzer\((\w+)_fuzzer)");
  for (std::sregex_iterator it(cmake.begin(), cmake.end(), target_re), end; it != end; ++it)
    targets.insert((*it)[1]);
  std::istringstream lines(floors);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string name;
    long value = 0;
    if (!(fields >> name) || name[0] == '#') continue;
    ASSERT_TRUE(fields >> value) << line;
    EXPECT_GT(value, 0) << line;
    floored.insert(name);
  }
  EXPECT_GE(targets.size(), 9u);
  EXPECT_EQ(targets, floored);
}

}  // namespace
}  // namespace gpunoise
