// `--redact`: command lines in traces and dumps keep only the program's name.
// Arguments often carry tokens, passwords and paths (`--api-key=...`), and a
// trace leaves the node: it is sent to whoever analyses it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/process_snapshot.h"

namespace gpunoise::model {

// The program's name: the last path component of argv[0] ("python3" for
// "/usr/bin/python3").
std::string ProgramName(std::string_view argv0);

// Every process's command line becomes its program's name alone.
void RedactCommandLines(ProcessSnapshot* snapshot);

}  // namespace gpunoise::model
