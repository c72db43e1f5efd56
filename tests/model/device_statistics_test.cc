#include "model/device_statistics.h"

#include <gtest/gtest.h>

namespace gpunoise::model {
namespace {

constexpr NetDeviceKey kEth0{100, 2};
constexpr NetDeviceKey kVeth{100, 7};

DeviceQueueCount Rx(NetDeviceKey dev, uint64_t packets) {
  return {dev, -1, NetDirection::kRx, kDeviceWideCpu, packets, packets * 100, 0};
}

uint64_t Packets(const DeviceStatisticsSeries& s, NetDeviceKey dev) {
  NetSnapshot out;
  s.AppendTo(&out);
  for (const auto& c : out.devices)
    if (c.dev == dev && c.dir == NetDirection::kRx) return c.packets;
  return ~0ull;
}

TEST(DeviceStatisticsSeries, ADeviceCountsFromTheFirstReadingThatSawItNotFromItsCreation) {
  DeviceStatisticsSeries s;
  s.Observe(std::vector{Rx(kEth0, 5'000'000)});
  EXPECT_EQ(Packets(s, kEth0), 0u);
  s.Observe(std::vector{Rx(kEth0, 5'000'300), Rx(kVeth, 90'000)});  // kVeth moved in with its past
  EXPECT_EQ(Packets(s, kEth0), 300u);
  EXPECT_EQ(Packets(s, kVeth), 0u);
  s.Observe(std::vector{Rx(kEth0, 5'000'400), Rx(kVeth, 90'050)});
  EXPECT_EQ(Packets(s, kVeth), 50u);
}

TEST(DeviceStatisticsSeries, ADeviceGoneOrAReadCutShortKeepsItsLastCount) {
  DeviceStatisticsSeries s;
  s.Observe(std::vector{Rx(kEth0, 10), Rx(kVeth, 20)});
  s.Observe(std::vector{Rx(kEth0, 15), Rx(kVeth, 29)});
  s.Observe(std::vector{Rx(kEth0, 18)});  // kVeth deleted, or the dump stopped early
  EXPECT_EQ(Packets(s, kVeth), 9u);
  NetSnapshot out;
  s.AppendTo(&out);
  ASSERT_EQ(out.devices.size(), 2u);
  EXPECT_EQ(out.devices[1].bytes, 900u);
  EXPECT_EQ(out.devices[1].cpu, kDeviceWideCpu);
}

TEST(DeviceStatisticsSeries, ADeviceMadeAgainUnderItsIfindexCarriesOnFromWhatItCounted) {
  DeviceStatisticsSeries s;
  s.Observe(std::vector{Rx(kVeth, 1000)});
  s.Observe(std::vector{Rx(kVeth, 1400)});
  s.Observe(std::vector{Rx(kVeth, 30)});  // deleted and made again: counts from its creation
  EXPECT_EQ(Packets(s, kVeth), 430u);
  s.Observe(std::vector{Rx(kVeth, 50)});
  EXPECT_EQ(Packets(s, kVeth), 450u);
}

}  // namespace
}  // namespace gpunoise::model
