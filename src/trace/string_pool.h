// StringPool: interns strings so tables store 4-byte ids instead of names.
//
// Lifetime: string_views returned by `view()` stay valid for the life of the pool (storage is a
// deque of chunks that never moves). Id 0 is always the empty string.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace scaleprof::trace {

using StringId = uint32_t;

class StringPool {
 public:
  StringPool();
  StringPool(const StringPool&) = delete;
  StringPool& operator=(const StringPool&) = delete;
  StringPool(StringPool&&) = default;
  StringPool& operator=(StringPool&&) = default;

  // Returns the id of `s`, adding it if new.
  StringId intern(std::string_view s);
  // Returns the id of `s` if present.
  bool find(std::string_view s, StringId* id) const;
  std::string_view view(StringId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }
  // Bytes held by the pool (strings, index and hash table), for memory accounting.
  size_t memory_bytes() const;

 private:
  std::string_view store(std::string_view s);

  std::deque<std::string> chunks_;
  size_t chunk_used_ = 0;
  std::vector<std::string_view> views_;
  std::unordered_map<std::string_view, StringId> index_;
};

}  // namespace scaleprof::trace
