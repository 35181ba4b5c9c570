// A column of int64 values kept in 4 bytes a row, for the event table's ids and durations.
//
// Why: a trace of short events (MTIA-like runtime calls, about 130 bytes of JSON each) spent 58
// bytes per row in the event table, so peak memory passed half the JSON (issue 18, finding 20).
// Nearly every correlation id, external id, stream and duration fits 32 bits (kNone = -1 too); a
// value that does not is stored once more in a side table of (row, value), in row order, and its
// 32-bit slot holds kWide. Reads return the value, not a reference.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace scaleprof::trace {

class NarrowInt64Column {
 public:
  using value_type = int64_t;

  int64_t operator[](size_t row) const {
    const int32_t v = narrow_[row];
    return v != kWide ? v : wide_value(row);
  }
  void push_back(int64_t value) {
    if (value > kWide && value <= std::numeric_limits<int32_t>::max()) {
      narrow_.push_back(static_cast<int32_t>(value));
      return;
    }
    wide_.emplace_back(static_cast<uint32_t>(narrow_.size()), value);
    narrow_.push_back(kWide);
  }
  // Appends every row of `other` (a window's part merged into the rank's table).
  void append(const NarrowInt64Column& other) {
    const auto row0 = static_cast<uint32_t>(narrow_.size());
    narrow_.insert(narrow_.end(), other.narrow_.begin(), other.narrow_.end());
    for (const auto& [row, value] : other.wide_) wide_.emplace_back(row0 + row, value);
  }
  size_t size() const { return narrow_.size(); }
  bool empty() const { return narrow_.empty(); }
  size_t capacity() const { return narrow_.capacity(); }
  void reserve(size_t rows) { narrow_.reserve(rows); }
  void clear() {
    narrow_.clear();
    wide_.clear();
  }
  void shrink_to_fit() {
    narrow_.shrink_to_fit();
    wide_.shrink_to_fit();
  }
  // Bytes held, reserved ones included.
  size_t memory_bytes() const {
    return narrow_.capacity() * sizeof(int32_t) + wide_.capacity() * sizeof(std::pair<uint32_t, int64_t>);
  }
  // The 4-byte slots, for mapping their pages ahead of the merge (rows_to_map).
  std::vector<int32_t>& slots() { return narrow_; }
  // Every value, for tests and messages.
  std::vector<int64_t> to_vector() const {
    std::vector<int64_t> out;
    out.reserve(size());
    for (size_t i = 0; i < size(); ++i) out.push_back((*this)[i]);
    return out;
  }
  // The encoding is one per sequence of values: equal columns hold equal vectors.
  bool operator==(const NarrowInt64Column& other) const = default;

 private:
  // INT32_MIN: no id, stream or duration takes it, and -1 (kNone) must stay narrow.
  static constexpr int32_t kWide = std::numeric_limits<int32_t>::min();
  static bool by_row(const std::pair<uint32_t, int64_t>& a, const std::pair<uint32_t, int64_t>& b) {
    return a.first < b.first;
  }
  int64_t wide_value(size_t row) const {
    const auto it = std::lower_bound(wide_.begin(), wide_.end(),
                                     std::pair<uint32_t, int64_t>(static_cast<uint32_t>(row), 0), by_row);
    return it->second;
  }

  std::vector<int32_t> narrow_;
  std::vector<std::pair<uint32_t, int64_t>> wide_;  // (row, value) of the values narrow_ cannot hold
};

}  // namespace scaleprof::trace
