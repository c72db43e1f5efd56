// A growable array of trivially copyable records whose large buffers grow
// with mremap(2): the pages move to a bigger mapping without being copied.
// The timeline keeps tens of millions of 24-byte slices; with std::vector a
// quarter of the report's read time went to copying them on each doubling
// (bench/report/report_reader_benchmark.cc measures it).
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace gpunoise::analyze {

template <typename T>
class PodVector {
  static_assert(std::is_trivially_copyable_v<T>, "PodVector moves its records as bytes");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  PodVector() = default;
  PodVector(std::initializer_list<T> items) {
    for (const T& t : items) push_back(t);
  }
  ~PodVector() { Release(); }
  PodVector(const PodVector& o) { *this = o; }
  PodVector& operator=(const PodVector& o) {
    if (this != &o) {
      clear();
      reserve(o.size_);
      if (o.size_) std::memcpy(data_, o.data_, o.size_ * sizeof(T));
      size_ = o.size_;
    }
    return *this;
  }
  PodVector(PodVector&& o) noexcept { Swap(o); }
  PodVector& operator=(PodVector&& o) noexcept {
    if (this != &o) {
      Release();
      Swap(o);
    }
    return *this;
  }

  void push_back(const T& value) {
    if (size_ == capacity_) Grow(size_ + 1);
    data_[size_++] = value;
  }
  void reserve(size_t n) {
    if (n > capacity_) Grow(n);
  }
  void clear() { size_ = 0; }
  void pop_back() { --size_; }
  void truncate(size_t n) { size_ = std::min(size_, n); }

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  // Buffers from this size on are their own mapping.
  static constexpr size_t kMapBytes = 256 << 10;

  void Grow(size_t min_capacity) {
    size_t capacity = std::max<size_t>({min_capacity, capacity_ * 2, 16});
    size_t bytes = capacity * sizeof(T);
    if (bytes >= kMapBytes) {
      bytes = (bytes + kPage - 1) / kPage * kPage;
      void* p;
      if (mapped_) {
        p = ::mremap(data_, capacity_ * sizeof(T), bytes, MREMAP_MAYMOVE);
      } else {
        p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED && size_) std::memcpy(p, data_, size_ * sizeof(T));
        if (p != MAP_FAILED) std::free(data_);
      }
      if (p == MAP_FAILED) throw std::bad_alloc();
      // Huge pages where the kernel allows them on request, and the new
      // part faulted in by one call rather than a trap per page: page
      // faults were most of the cost of keeping slices on a VM.
      if (bytes >= kHugePage) ::madvise(p, bytes, MADV_HUGEPAGE);
      size_t old_bytes = mapped_ ? capacity_ * sizeof(T) : 0;
      old_bytes = old_bytes / kPage * kPage;
#ifdef MADV_POPULATE_WRITE
      ::madvise(static_cast<char*>(p) + old_bytes, bytes - old_bytes, MADV_POPULATE_WRITE);
#endif
      data_ = static_cast<T*>(p);
      mapped_ = true;
      capacity_ = bytes / sizeof(T);
      return;
    }
    void* p = std::realloc(data_, bytes);
    if (!p) throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    capacity_ = capacity;
  }
  void Release() {
    if (mapped_) ::munmap(data_, capacity_ * sizeof(T));
    else std::free(data_);
    data_ = nullptr;
    size_ = capacity_ = 0;
    mapped_ = false;
  }
  void Swap(PodVector& o) {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
    std::swap(mapped_, o.mapped_);
  }

  static constexpr size_t kPage = 4096;
  static constexpr size_t kHugePage = 2 << 20;
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;
  bool mapped_ = false;
};

}  // namespace gpunoise::analyze
