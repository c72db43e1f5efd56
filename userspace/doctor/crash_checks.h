// Whether a node that crashes reboots with evidence or hangs for ever:
// the panic settings, where the crashed kernel's last words go (pstore,
// kdump), and the black box (docs/blackbox.md).
#pragma once

#include "doctor/check_result.h"
#include "doctor/doctor_inputs.h"

namespace gpunoise::doctor {

CheckResult CheckPanicSettings(const DoctorInputs& in);   // kernel.panic
CheckResult CheckCrashEvidence(const DoctorInputs& in);   // kernel.evidence
CheckResult CheckBlackBox(const DoctorInputs& in);        // kernel.blackbox

}  // namespace gpunoise::doctor
