#include "collect/mapped_map.h"

#include <sys/mman.h>
#include <unistd.h>

namespace gpunoise::collect {

MappedMap::~MappedMap() {
  if (addr) ::munmap(addr, size);
}

bool MappedMap::Map(int fd, size_t bytes, bool writable) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const size_t rounded = (bytes + page - 1) / page * page;
  void* p = ::mmap(nullptr, rounded, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return false;
  if (addr) ::munmap(addr, size);
  addr = p;
  size = rounded;
  return true;
}

}  // namespace gpunoise::collect
