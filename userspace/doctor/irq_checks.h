// IRQ placement: device interrupts, irqbalance and packet steering (RPS,
// XPS, RFS) against the focus CPUs.
#pragma once

#include "doctor/check_result.h"
#include "doctor/doctor_inputs.h"

namespace gpunoise::doctor {

// irq.placement: NIC, NVMe and GPU IRQs whose effective affinity overlaps
// the focus CPUs.
CheckResult CheckIrqPlacement(const DoctorInputs& in);
// irq.irqbalance: irqbalance running and free to move IRQs onto focus CPUs.
CheckResult CheckIrqBalance(const DoctorInputs& in);
// irq.steering: RPS/RFS steering receive work onto focus CPUs; XPS reported.
CheckResult CheckPacketSteering(const DoctorInputs& in);

// irqbalance's banned CPUs from its environment (IRQBALANCE_BANNED_CPUS hex
// mask, IRQBALANCE_BANNED_CPULIST) or its EnvironmentFile; public for tests.
std::vector<int> IrqbalanceBannedCpus(const SystemView& view, int pid);

}  // namespace gpunoise::doctor
