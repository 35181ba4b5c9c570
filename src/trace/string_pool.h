// StringPool: interns strings so tables store 4-byte ids instead of names.
//
// Lifetime: string_views returned by `view()` stay valid for the life of the pool, moves included.
// Storage is a list of fixed-size heap blocks that are never resized: short strings are packed into
// the current block, a long string gets an exact-size block of its own that nothing is appended to.
// Id 0 is always the empty string.
//
// The index is an open-addressing table of ids (linear probing, at most half full) keyed by a
// hash of the text: the reader interns every event's name, and std::unordered_map's node per
// string, murmur hash and out-of-line compares were 7 % of its time on df_index_resolver.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
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
  // intern(other.view(id)) without hashing the text again: the parallel reader moves every string
  // of each window's pool into the rank's.
  StringId intern_from(const StringPool& other, StringId id);
  // Returns the id of `s` if present.
  bool find(std::string_view s, StringId* id) const;
  std::string_view view(StringId id) const { return views_[id]; }
  size_t size() const { return views_.size(); }
  // Bytes held by the pool (strings, index and hash table), for memory accounting.
  size_t memory_bytes() const;

 private:
  std::string_view store(std::string_view s);
  // The slot holding `s`, or the empty slot where it would go.
  size_t slot_of(std::string_view s, uint64_t hash) const;
  StringId intern(std::string_view s, uint64_t hash);
  void grow_index();

  // One slot of the index: the id (0: empty, as the empty string is never stored in it) and the
  // hash's high bits, compared before the text.
  struct Slot {
    StringId id = 0;
    uint32_t tag = 0;
  };

  // Heap blocks own the bytes; a block never grows, so views into it never dangle.
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_bytes_ = 0;  // bytes allocated in blocks_, for memory_bytes()
  char* free_ = nullptr;    // next free byte of the block short strings are packed into
  size_t free_left_ = 0;    // bytes left there
  std::vector<std::string_view> views_;
  std::vector<uint64_t> hashes_;  // per id, so growing the index and intern_from never hash again
  std::vector<Slot> index_;       // size a power of two
};

}  // namespace scaleprof::trace
