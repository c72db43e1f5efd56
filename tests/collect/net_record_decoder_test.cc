// Decoding of the network collectors' ring records (bpf/net.h).
#include <gtest/gtest.h>

#include <cstring>

#include "collect/record_decoder.h"
#include "collect/records.h"

namespace gpunoise::collect {
namespace {

template <typename T>
std::span<const uint8_t> Bytes(const T& rec) {
  return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(&rec), sizeof(rec));
}

TEST(NetRecordDecoder, DecodesNapiPollWithDeviceIdentity) {
  gn_napi_poll_rec r{};
  r.hdr.ts = 42;
  r.hdr.kind = GN_REC_NAPI_POLL;
  r.dev = {4026531840u, 2};
  r.napi_id = 8193;
  r.queue = 3;
  r.work = 64;
  r.budget = 64;
  std::strcpy(r.name, "eth0");
  model::Event ev;
  ASSERT_EQ(DecodeRecord(Bytes(r), 5, &ev), DecodeResult::kOk);
  const auto& p = std::get<model::NapiPoll>(ev.payload);
  EXPECT_EQ(p.dev.netns, 4026531840u);
  EXPECT_EQ(p.dev.ifindex, 2u);
  EXPECT_EQ(p.dev.name.view(), "eth0");
  EXPECT_EQ(p.napi_id, 8193u);
  EXPECT_EQ(p.queue, 3);
  EXPECT_EQ(p.work, p.budget);
  EXPECT_EQ(ev.cpu, 5u);
}

TEST(NetRecordDecoder, DecodesReceiveAndTransmitFromTheSameLayout) {
  gn_net_pkt_rec r{};
  r.hdr.kind = GN_REC_NET_RECEIVE;
  r.skbaddr = 0xffff888012345678ull;
  r.len = 46;
  r.queue = 0;
  r.segs = 3;
  std::strcpy(r.name, "veth0");
  model::Event ev;
  ASSERT_EQ(DecodeRecord(Bytes(r), 0, &ev), DecodeResult::kOk);
  const auto& rx = std::get<model::NetReceive>(ev.payload);
  EXPECT_EQ(rx.len, 46u);
  EXPECT_EQ(rx.segs, 3u);
  EXPECT_EQ(rx.skbaddr, 0xffff888012345678ull);
  r.hdr.kind = GN_REC_NET_XMIT;
  r.rc = 0x10;
  ASSERT_EQ(DecodeRecord(Bytes(r), 0, &ev), DecodeResult::kOk);
  EXPECT_EQ(std::get<model::NetTransmit>(ev.payload).rc, 0x10);
}

TEST(NetRecordDecoder, DecodesDropWithReasonAndLocation) {
  gn_skb_drop_rec r{};
  r.hdr.kind = GN_REC_SKB_DROP;
  r.reason = 6;
  r.location = 0xffffffff81abcdefull;
  r.protocol = 0x0800;
  model::Event ev;
  ASSERT_EQ(DecodeRecord(Bytes(r), 0, &ev), DecodeResult::kOk);
  const auto& d = std::get<model::SkbDrop>(ev.payload);
  EXPECT_EQ(d.reason, 6u);
  EXPECT_EQ(d.location, 0xffffffff81abcdefull);
  EXPECT_EQ(d.protocol, 0x0800);
}

TEST(NetRecordDecoder, DecodesTxTimeoutWithDriver) {
  gn_xmit_timeout_rec r{};
  r.hdr.kind = GN_REC_NET_XMIT_TIMEOUT;
  r.queue = 7;
  std::strcpy(r.name, "eth1");
  std::strcpy(r.driver, "mlx5_core");
  model::Event ev;
  ASSERT_EQ(DecodeRecord(Bytes(r), 0, &ev), DecodeResult::kOk);
  const auto& t = std::get<model::NetTxTimeout>(ev.payload);
  EXPECT_EQ(t.queue, 7);
  EXPECT_EQ(t.dev.name.view(), "eth1");
  EXPECT_EQ(t.driver.view(), "mlx5_core");
}

TEST(NetRecordDecoder, DecodesRetransmitAddresses) {
  gn_tcp_retransmit_rec r{};
  r.hdr.kind = GN_REC_TCP_RETRANSMIT;
  r.family = 2;
  r.sport = 40000;
  r.dport = 5201;
  r.state = 1;
  const uint8_t saddr[4] = {10, 0, 0, 1};
  std::memcpy(r.saddr, saddr, 4);
  model::Event ev;
  ASSERT_EQ(DecodeRecord(Bytes(r), 0, &ev), DecodeResult::kOk);
  const auto& t = std::get<model::TcpRetransmit>(ev.payload);
  EXPECT_EQ(t.sport, 40000);
  EXPECT_EQ(t.dport, 5201);
  EXPECT_EQ(t.saddr[0], 10);
  EXPECT_EQ(t.saddr[3], 1);
}

TEST(NetRecordDecoder, ShortNetRecordIsRejected) {
  gn_net_pkt_rec r{};
  r.hdr.kind = GN_REC_NET_RECEIVE;
  model::Event ev;
  auto bytes = Bytes(r).first(sizeof(r) - 1);
  EXPECT_EQ(DecodeRecord(bytes, 0, &ev), DecodeResult::kTooShort);
}

TEST(NetRecordDecoder, EveryNetKindBelongsToANetCollector) {
  for (int kind = GN_REC_NET_FIRST; kind <= GN_REC_NET_LAST; ++kind) {
    std::string_view owner = CollectorOfKind(static_cast<uint16_t>(kind));
    EXPECT_TRUE(owner == "napi" || owner == "netdev" || owner == "drops" || owner == "nic")
        << kind << " -> '" << owner << "'";
  }
}

}  // namespace
}  // namespace gpunoise::collect
