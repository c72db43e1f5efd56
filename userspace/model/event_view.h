// Events read in an order of their own: an array and, when the order is not
// the array's, the positions to read in turn. The recorder's staging hands a
// drain's events to the writer this way: with batching every drain
// interleaves several sources, and putting 96-byte events in order by
// moving them was most of the staging's cost (a gather from memory per
// event), where reading them through their positions moves nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <concepts>
#include <iterator>
#include <ranges>
#include <type_traits>
#include <span>

#include "model/events.h"

namespace gpunoise::model {

class EventView {
 public:
  EventView() = default;
  // The events of a contiguous range in their own order (implicit, so any
  // caller with events in order passes its vector or span as it is).
  template <std::ranges::contiguous_range Range>
    requires std::same_as<std::remove_cv_t<std::ranges::range_value_t<Range>>, Event>
  EventView(const Range& events)  // NOLINT(google-explicit-constructor)
      : base_(std::ranges::data(events)), size_(std::ranges::size(events)) {}
  // base[order[0]], base[order[1]], ...
  EventView(const Event* base, std::span<const uint32_t> order)
      : base_(base), order_(order.data()), size_(order.size()) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Event& operator[](size_t i) const { return base_[order_ ? order_[i] : i]; }
  const Event& front() const { return (*this)[0]; }
  const Event& back() const { return (*this)[size_ - 1]; }

  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Event;
    using difference_type = std::ptrdiff_t;
    using pointer = const Event*;
    using reference = const Event&;
    iterator() = default;
    iterator(const EventView* view, size_t at) : view_(view), at_(at) {}
    reference operator*() const { return (*view_)[at_]; }
    pointer operator->() const { return &(*view_)[at_]; }
    iterator& operator++() {
      ++at_;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++at_;
      return before;
    }
    bool operator==(const iterator& o) const { return at_ == o.at_; }

   private:
    const EventView* view_ = nullptr;
    size_t at_ = 0;
  };
  iterator begin() const { return {this, 0}; }
  iterator end() const { return {this, size_}; }

 private:
  const Event* base_ = nullptr;
  const uint32_t* order_ = nullptr;  // null: base_[0..size_) in order
  size_t size_ = 0;
};

}  // namespace gpunoise::model
