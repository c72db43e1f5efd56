// The BPF programs loaded in the kernel now, by name: what a test checks to
// know that a collector did, or did not, put a program on a hook.
#pragma once

#include <set>
#include <string>

namespace gpunoise::testing {

// The names (as the kernel keeps them: 15 characters at most) of every
// loaded BPF program.
std::set<std::string> LoadedBpfProgramNames();

}  // namespace gpunoise::testing
