// Shared pieces of the command-line front ends.
#pragma once

#include <csignal>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace gpunoise::cli {

// Routes libbpf's messages through gpunoise's log; its debug output only
// with -v (as libbpf-tools do).
void InstallLibbpfLogger(bool verbose);

// Blocks SIGINT, SIGTERM and SIGHUP and returns a signalfd that becomes
// readable when one arrives, so the recording loop can stop cleanly.
UniqueFd BlockStopSignals();
// Reads the pending signal's name from a signalfd ("SIGINT").
std::string ReadSignalName(int signal_fd);

// The original command line, for the trace's metadata.
std::string JoinArgs(int argc, char** argv);

// A default output name: gpunoise-<host>-<YYYYmmdd-HHMMSS>.pftrace
std::string DefaultTraceName();

// The running gpunoise binary (/proc/self/exe), to find files installed beside it.
std::string SelfExecutable();

}  // namespace gpunoise::cli
