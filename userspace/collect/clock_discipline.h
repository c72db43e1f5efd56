// Reads the state of this machine's clock discipline (adjtimex(2), the clock
// daemons running, the PTP hardware clocks), at the start and at the end of
// a recording.
#pragma once

#include <string>

#include "model/clock_discipline.h"

namespace gpunoise::collect {

// `proc` and `sys_ptp` are parameters so tests can point them at a fixture.
model::ClockDiscipline ReadClockDiscipline(const std::string& proc = "/proc",
                                           const std::string& sys_ptp = "/sys/class/ptp");

}  // namespace gpunoise::collect
