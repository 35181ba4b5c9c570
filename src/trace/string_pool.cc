#include "trace/string_pool.h"

#include <cstring>

namespace scaleprof::trace {

namespace {
constexpr size_t kBlockBytes = 64 * 1024;
// Strings longer than this get a block of their own so the common small-name case packs densely.
constexpr size_t kOwnBlockAbove = kBlockBytes / 4;
}  // namespace

StringPool::StringPool() {
  views_.emplace_back();
  index_.emplace(std::string_view(), 0);
}

std::string_view StringPool::store(std::string_view s) {
  if (s.size() > kOwnBlockAbove) {
    // Does not touch free_: the packing block stays the one short strings go to.
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(s.size()));
    block_bytes_ += s.size();
    std::memcpy(blocks_.back().get(), s.data(), s.size());
    return {blocks_.back().get(), s.size()};
  }
  if (s.size() > free_left_) {
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(kBlockBytes));
    block_bytes_ += kBlockBytes;
    free_ = blocks_.back().get();
    free_left_ = kBlockBytes;
  }
  if (!s.empty()) std::memcpy(free_, s.data(), s.size());
  std::string_view stored(free_, s.size());
  free_ += s.size();
  free_left_ -= s.size();
  return stored;
}

StringId StringPool::intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  std::string_view stored = store(s);
  auto id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  index_.emplace(stored, id);
  return id;
}

bool StringPool::find(std::string_view s, StringId* id) const {
  auto it = index_.find(s);
  if (it == index_.end()) return false;
  *id = it->second;
  return true;
}

size_t StringPool::memory_bytes() const {
  size_t bytes = views_.capacity() * sizeof(std::string_view) + block_bytes_;
  bytes += index_.bucket_count() * sizeof(void*) + index_.size() * (sizeof(std::string_view) + 16);
  return bytes;
}

}  // namespace scaleprof::trace
