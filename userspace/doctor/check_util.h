// Small formatting helpers the check families share.
#pragma once

#include <string>
#include <vector>

#include "doctor/check_result.h"
#include "doctor/doctor_inputs.h"

namespace gpunoise::doctor {

// "a, b, c and 4 more"
std::string JoinLimited(const std::vector<std::string>& items, size_t limit = 4);
// Shell commands joined with "; " (duplicates dropped), the first `limit`
// of them, then "(and N more like these)".
std::string JoinCommands(const std::vector<std::string>& commands, size_t limit = 4);
std::string CpuListText(const std::vector<int>& cpus);  // "2-7" or "none"
// The fix prefix for moving things off the focus CPUs: names the
// housekeeping CPUs, or says to pin the training first when there are none.
std::string HousekeepingOrPinFirst(const DoctorInputs& in);
// The worst verdict among per-item verdicts; kUnknown when there are none.
Verdict WorstOf(const std::vector<Verdict>& verdicts);
// A CPU list as a hex mask for sysfs files that take one ("ff,00000001").
std::string CpuMaskText(const std::vector<int>& cpus);
// Physical NICs by name with their interface record.
std::vector<const NetInterface*> PhysicalNics(const DoctorInputs& in);

}  // namespace gpunoise::doctor
