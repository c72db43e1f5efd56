// The gpunoise subcommands. Each returns the process exit status.
#pragma once

namespace gpunoise::cli {

int RunRecord(int argc, char** argv);
int RunReport(int argc, char** argv);
int RunDoctor(int argc, char** argv);

int RunMerge(int argc, char** argv);
int RunEnv(int argc, char** argv);
int RunPodDirs(int argc, char** argv);
int RunMonitor(int argc, char** argv);
int RunBlackbox(int argc, char** argv);

}  // namespace gpunoise::cli
