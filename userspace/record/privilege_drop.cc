#include "record/privilege_drop.h"

#include <sys/stat.h>
#include <unistd.h>

#include "common/private_file.h"

namespace gpunoise::record {

CapMask RecordKeeps(const RecordNeeds& needs, std::vector<std::string>* reasons) {
  CapMask keep = 0;
  // The trace is written through an fd opened before the drop, but at the
  // end it is renamed into place, which needs write access to the
  // directory: root owns it, or root may only with CAP_DAC_OVERRIDE (a
  // user's home or project directory under sudo).
  std::string dir = PrivateFileDirName(needs.output_path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && st.st_uid != ::geteuid() && !(st.st_mode & S_IWOTH)) {
    keep |= CapBit(kCapDacOverride);
    reasons->push_back("cap_dac_override: the trace is renamed into " + dir + " (owned by uid " +
                       std::to_string(st.st_uid) + ") when the recording ends");
  }
  // GPU fragments: each process writes its own into the directory `gpunoise
  // env` gave its user (0700, owned by that user); record reads them at the
  // end and removes them and the directory.
  if (!needs.gpu_dir.empty() && !(keep & CapBit(kCapDacOverride))) {
    keep |= CapBit(kCapDacOverride);
    reasons->push_back("cap_dac_override: GPU fragments are read from and removed in " + needs.gpu_dir +
                       " (0700, owned by the user whose processes wrote them)");
  }
  // --gpu-pod-dirs: each pod's directory is made root's and handed to the
  // pod's user when its first process appears, during the recording.
  if (needs.pod_dirs) {
    keep |= CapBit(kCapChown);
    reasons->push_back("cap_chown: the per-pod GPU fragment directories under " + needs.gpu_dir +
                       " are handed to each pod's user as its first process appears");
  }
  return keep;
}

}  // namespace gpunoise::record
