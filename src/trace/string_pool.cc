#include "trace/string_pool.h"

namespace scaleprof::trace {

namespace {
constexpr size_t kChunkBytes = 64 * 1024;
}

StringPool::StringPool() {
  views_.emplace_back();
  index_.emplace(std::string_view(), 0);
}

std::string_view StringPool::store(std::string_view s) {
  // Long strings get a chunk of their own so the common small-name case packs densely.
  if (s.size() > kChunkBytes / 4) {
    chunks_.emplace_front(s);
    return chunks_.front();
  }
  if (chunks_.empty() || chunk_used_ + s.size() > kChunkBytes) {
    chunks_.emplace_back();
    chunks_.back().reserve(kChunkBytes);
    chunk_used_ = 0;
  }
  std::string& chunk = chunks_.back();
  // reserve() above guarantees appends never reallocate, so earlier views stay valid.
  chunk.append(s);
  std::string_view stored(chunk.data() + chunk_used_, s.size());
  chunk_used_ += s.size();
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
  size_t bytes = views_.capacity() * sizeof(std::string_view);
  for (const auto& c : chunks_) bytes += c.capacity();
  bytes += index_.bucket_count() * sizeof(void*) + index_.size() * (sizeof(std::string_view) + 16);
  return bytes;
}

}  // namespace scaleprof::trace
