// A copy of the marker lines on disk (the state directory, default
// /var/lib/gpunoise/blackbox): the ring buffer overwrites its oldest pages,
// so on a CPU that a NIC keeps busy the markers written at arm time are gone
// after seconds. The copy, one file per boot (ids-BOOT_ID), survives the
// reboot with the disk; collect uses it when the buffer's own table is gone.
#pragma once

#include <string>
#include <vector>

#include "blackbox/markers.h"
#include "common/result.h"

namespace gpunoise::blackbox {

inline constexpr std::string_view kDefaultStateDir = "/var/lib/gpunoise/blackbox";

// Writes `lines` to STATE_DIR/ids-BOOT_ID (0600, created via a private
// temporary and renamed into place); the directory is created 0700.
Status SaveMarkerLines(const std::string& state_dir, const std::string& boot_id,
                       const std::vector<std::string>& lines);

// The saved markers of `boot_id`, or, with an empty `boot_id`, of the newest
// saved boot other than `except_boot_id`. Error when there is none.
Result<MarkerSet> LoadSavedMarkers(const std::string& state_dir, const std::string& boot_id,
                                   const std::string& except_boot_id, std::string* path = nullptr);

}  // namespace gpunoise::blackbox
