// GPU health through NVML: persistence mode, clock throttle reasons, ECC
// errors and retired/remapped memory, PCIe replays.
#pragma once

#include "doctor/check_result.h"
#include "doctor/doctor_inputs.h"

namespace gpunoise::doctor {

CheckResult CheckPersistence(const DoctorInputs& in);  // gpu.persistence
CheckResult CheckThrottle(const DoctorInputs& in);     // gpu.throttle
CheckResult CheckEcc(const DoctorInputs& in);          // gpu.ecc
CheckResult CheckPcieReplay(const DoctorInputs& in);   // gpu.pcie_replay

}  // namespace gpunoise::doctor
