#include <gtest/gtest.h>

#include "record/net_recording.h"

namespace gpunoise::record {
namespace {

model::NetNames NamesOf(std::initializer_list<std::pair<model::NetDeviceKey, std::string>> devices) {
  model::NetNames names;
  for (const auto& [dev, name] : devices) names.devices.emplace(dev, name);
  return names;
}

TEST(NetNames, DeviceNamesAreReadAgainOnlyForADeviceWithoutAName) {
  const model::NetDeviceKey eth0{4026531840u, 2}, veth1{4026532801u, 7};
  model::NetSnapshot s;
  s.devices.push_back({.dev = eth0});
  s.napi.push_back({.dev = eth0});
  EXPECT_FALSE(HasUnnamedDevice(s, NamesOf({{eth0, "eth0"}})));
  EXPECT_TRUE(HasUnnamedDevice(s, NamesOf({})));

  // A new device in any of the three tables asks for the names again.
  model::NetSnapshot drop = s;
  drop.drops.push_back({.dev = veth1});
  EXPECT_TRUE(HasUnnamedDevice(drop, NamesOf({{eth0, "eth0"}})));
  model::NetSnapshot napi = s;
  napi.napi.push_back({.dev = veth1});
  EXPECT_TRUE(HasUnnamedDevice(napi, NamesOf({{eth0, "eth0"}})));
  EXPECT_FALSE(HasUnnamedDevice(napi, NamesOf({{eth0, "eth0"}, {veth1, "veth1"}})));
}

TEST(NetNames, TheBacklogAndDropsWithoutADeviceNeverAskForNames) {
  model::NetSnapshot s;
  s.napi.push_back({.dev = {4026531840u, 0}});
  s.drops.push_back({.dev = {4026531840u, 0}});
  EXPECT_FALSE(HasUnnamedDevice(s, NamesOf({})));
}

}  // namespace
}  // namespace gpunoise::record
