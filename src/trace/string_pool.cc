#include "trace/string_pool.h"

#include <bit>
#include <cstring>

namespace scaleprof::trace {

namespace {
constexpr size_t kBlockBytes = 64 * 1024;
// Strings longer than this get a block of their own so the common small-name case packs densely.
constexpr size_t kOwnBlockAbove = kBlockBytes / 4;
constexpr size_t kFirstIndexSlots = 256;  // a power of two

uint64_t load8(const char* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, 8);
  return v;
}

uint32_t load4(const char* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, 4);
  return v;
}

uint64_t mix(uint64_t h, uint64_t word) {
  return (std::rotl(h, 5) ^ word) * 0x517CC1B727220A95ULL;
}

// Eight bytes at a time, each word folded in by a multiply (as FxHash does), the last bytes read as
// one possibly overlapping word, then murmur3's finaliser so the low bits (the slot) depend on
// every byte. Not seeded: like std::hash, a file could choose names that collide, costing time,
// never a wrong id.
uint64_t hash_text(std::string_view s) {
  const char* p = s.data();
  size_t n = s.size();
  uint64_t h = n * 0x9E3779B97F4A7C15ULL;
  if (n >= 8) {
    for (; n > 8; p += 8, n -= 8) h = mix(h, load8(p));
    h = mix(h, load8(p + n - 8));
  } else if (n >= 4) {
    h = mix(h, (uint64_t{load4(p)} << 32) | load4(p + n - 4));
  } else if (n > 0) {
    const auto bytes = static_cast<uint64_t>(static_cast<unsigned char>(p[0])) |
                       static_cast<uint64_t>(static_cast<unsigned char>(p[n / 2])) << 8 |
                       static_cast<uint64_t>(static_cast<unsigned char>(p[n - 1])) << 16;
    h = mix(h, bytes);
  }
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDULL;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace

StringPool::StringPool() {
  views_.emplace_back();
  hashes_.push_back(0);
  index_.resize(kFirstIndexSlots);
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

size_t StringPool::slot_of(std::string_view s, uint64_t hash) const {
  const size_t mask = index_.size() - 1;
  const auto tag = static_cast<uint32_t>(hash >> 32);
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& slot = index_[i];
    if (slot.id == 0) return i;
    if (slot.tag == tag && views_[slot.id] == s) return i;
  }
}

void StringPool::grow_index() {
  std::vector<Slot> old = std::move(index_);
  index_.assign(old.size() * 2, Slot{});
  for (const Slot& slot : old) {
    if (slot.id != 0) index_[slot_of(views_[slot.id], hashes_[slot.id])] = slot;
  }
}

StringId StringPool::intern(std::string_view s) {
  if (s.empty()) return 0;
  return intern(s, hash_text(s));
}

StringId StringPool::intern_from(const StringPool& other, StringId id) {
  if (id == 0) return 0;
  return intern(other.views_[id], other.hashes_[id]);
}

StringId StringPool::intern(std::string_view s, uint64_t hash) {
  size_t i = slot_of(s, hash);
  if (index_[i].id != 0) return index_[i].id;
  std::string_view stored = store(s);
  auto id = static_cast<StringId>(views_.size());
  views_.push_back(stored);
  hashes_.push_back(hash);
  // views_ holds the empty string too, so it counts the index's entries plus one.
  if (2 * views_.size() > index_.size()) {
    grow_index();
    i = slot_of(s, hash);
  }
  index_[i] = Slot{id, static_cast<uint32_t>(hash >> 32)};
  return id;
}

bool StringPool::find(std::string_view s, StringId* id) const {
  if (s.empty()) {
    *id = 0;
    return true;
  }
  const Slot& slot = index_[slot_of(s, hash_text(s))];
  if (slot.id == 0) return false;
  *id = slot.id;
  return true;
}

size_t StringPool::memory_bytes() const {
  size_t bytes = views_.capacity() * sizeof(std::string_view) + hashes_.capacity() * sizeof(uint64_t) + block_bytes_;
  bytes += index_.capacity() * sizeof(Slot);
  return bytes;
}

}  // namespace scaleprof::trace
