// bpf/nic.bpf.c: NIC-driver tracepoints. Which drivers expose tracepoints,
// and which, differs per node and kernel, so the collector looks in tracefs
// at start, attaches one generic program to every event of the driver
// categories it finds, and counts hits per event, device and CPU. On a node
// without any (virtio, veth, most VMs) it says so and stays off; the other
// network collectors do not depend on it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "collect/net_collector.h"
#include "collect/tracefs_format.h"

struct nic_bpf;

namespace gpunoise::collect {

class NicCollector : public NetCollector {
 public:
  // tracefs event categories of NIC drivers (and devlink, which carries NIC
  // firmware health reports), looked for when --nic-tracepoints is not set.
  static constexpr std::string_view kKnownDriverCategories[] = {
      "mlx5", "mlx4", "mlxsw", "ice", "i40e", "iavf", "idpf", "ixgbe", "ixgbevf",
      "igb", "igc", "e1000e", "bnxt", "bnxt_en", "ena", "gve", "mana", "hns3",
      "qede", "sfc", "nfp", "fbnic", "cxgb4", "devlink"};

  explicit NicCollector(NetOptions options);
  ~NicCollector() override;

  std::string_view name() const override { return "nic"; }
  void Start(const CollectorContext& context) override;
  void AddMapLosses(std::vector<model::MapLoss>& out) const override;
  void ReadCounters(model::NetSnapshot* out) const override;

  // "category/event" of each attached event, by the index records carry.
  const std::vector<std::string>& event_names() const { return event_names_; }
  // The categories looked for, for messages: --nic-tracepoints, else the
  // event systems of the NIC drivers' modules (driver_tracepoints.h), else
  // kKnownDriverCategories.
  std::vector<std::string> searched_categories() const;
  // "mlx5_core (eth0,eth1): mlx5" per module of a NIC driver found.
  const std::vector<std::string>& driver_notes() const { return driver_notes_; }

 private:
  struct Event {
    std::string category;
    std::string name;
    std::optional<DeviceNameField> device_field;
  };
  std::vector<Event> Discover(const TracepointCatalog& catalog) const;
  void DiscoverDriverSystems(const TracepointCatalog& catalog);

  NetOptions options_;
  nic_bpf* skel_ = nullptr;
  std::vector<std::string> event_names_;
  std::vector<std::string> driver_systems_;
  std::vector<std::string> driver_notes_;
};

}  // namespace gpunoise::collect
