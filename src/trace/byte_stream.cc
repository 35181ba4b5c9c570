#include "trace/byte_stream.h"

#include <fmt/format.h>
#include <isa-l/igzip_lib.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace scaleprof::trace {

namespace {

// Where raw (possibly compressed) bytes come from.
class Source {
 public:
  virtual ~Source() = default;
  virtual size_t read(char* dst, size_t n, std::string* error) = 0;
};

class FileSource final : public Source {
 public:
  explicit FileSource(FILE* f) : f_(f) {}
  // The file size, and the last 4 bytes (a gzip trailer's uncompressed size modulo 2^32).
  void probe(uint64_t* size, uint32_t* trailer) const {
    *size = 0;
    *trailer = 0;
    if (std::fseek(f_, 0, SEEK_END) != 0) return;
    long end = std::ftell(f_);
    if (end >= 4 && std::fseek(f_, end - 4, SEEK_SET) == 0 && std::fread(trailer, 1, 4, f_) != 4) *trailer = 0;
    *size = end > 0 ? static_cast<uint64_t>(end) : 0;
    std::rewind(f_);
  }
  ~FileSource() override { std::fclose(f_); }
  size_t read(char* dst, size_t n, std::string* error) override {
    size_t got = std::fread(dst, 1, n, f_);
    if (got < n && std::ferror(f_)) *error = std::strerror(errno);
    return got;
  }

 private:
  FILE* f_;
};

class MemorySource final : public Source {
 public:
  explicit MemorySource(std::string_view bytes) : bytes_(bytes) {}
  size_t read(char* dst, size_t n, std::string* /*error*/) override {
    size_t got = std::min(n, bytes_.size() - pos_);
    std::memcpy(dst, bytes_.data() + pos_, got);
    pos_ += got;
    return got;
  }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

// Bytes already read to sniff the gzip magic are replayed before the rest of the source.
class PlainStream final : public ByteStream {
 public:
  PlainStream(std::string path, std::unique_ptr<Source> src, std::string head)
      : path_(std::move(path)), src_(std::move(src)), head_(std::move(head)) {}
  size_t read(char* dst, size_t n) override {
    size_t got = 0;
    if (head_pos_ < head_.size()) {
      got = std::min(n, head_.size() - head_pos_);
      std::memcpy(dst, head_.data() + head_pos_, got);
      head_pos_ += got;
    }
    if (got < n && error_.empty()) {
      std::string err;
      got += src_->read(dst + got, n - got, &err);
      if (!err.empty()) error_ = fmt::format("{}: read error: {}", path_, err);
    }
    total_ += got;
    return got;
  }
  const std::string& error() const override { return error_; }
  uint64_t compressed_bytes() const override { return total_; }

 private:
  std::string path_;
  std::unique_ptr<Source> src_;
  std::string head_;
  size_t head_pos_ = 0;
  uint64_t total_ = 0;
  std::string error_;
};

// Gzip inflated with ISA-L's igzip: about twice as fast as zlib, with a hardware CRC, and streaming
// so memory stays bounded. Concatenated members are read as one stream.
class GzipStream final : public ByteStream {
 public:
  GzipStream(std::string path, std::unique_ptr<Source> src, const std::string& head)
      : path_(std::move(path)), src_(std::move(src)), in_(kInputChunk), state_(std::make_unique<inflate_state>()) {
    std::memcpy(in_.data(), head.data(), head.size());
    isal_inflate_init(state_.get());
    state_->crc_flag = ISAL_GZIP;
    state_->next_in = reinterpret_cast<uint8_t*>(in_.data());
    state_->avail_in = static_cast<uint32_t>(head.size());
    consumed_ = head.size();
  }

  size_t read(char* dst, size_t n) override {
    if (!error_.empty() || finished_) return 0;
    inflate_state& st = *state_;
    st.next_out = reinterpret_cast<uint8_t*>(dst);
    st.avail_out = static_cast<uint32_t>(std::min<size_t>(n, UINT32_MAX));
    const uint32_t asked = st.avail_out;
    while (st.avail_out > 0) {
      if (st.block_state == ISAL_BLOCK_FINISH) {
        // End of a member: another may follow (concatenated gzip); anything else ends the data.
        if (st.avail_in == 0 && !refill()) {
          finished_ = true;
          break;
        }
        if (st.avail_in == 1) refill();  // keeps the byte: the next member's magic may straddle reads
        if (st.avail_in >= 2 && st.next_in[0] == 0x1f && st.next_in[1] == 0x8b) {
          uint8_t* next = st.next_in;
          uint32_t avail = st.avail_in;
          isal_inflate_reset(&st);
          st.crc_flag = ISAL_GZIP;
          st.next_in = next;
          st.avail_in = avail;
          continue;
        }
        report_trailing_garbage();
        finished_ = true;
        break;
      }
      if (st.avail_in == 0 && !refill()) break;
      int rc = isal_inflate(&st);
      if (rc < 0) {
        error_ = rc == ISAL_INCORRECT_CHECKSUM
                     ? fmt::format("{}: corrupt gzip data: checksum mismatch at compressed byte {}", path_,
                                   consumed_ - st.avail_in)
                     : fmt::format("{}: corrupt gzip data at compressed byte {}", path_, consumed_ - st.avail_in);
        break;
      }
    }
    size_t produced = asked - st.avail_out;
    if (produced == 0 && !finished_ && error_.empty()) {
      error_ = fmt::format("{}: truncated gzip stream: the compressed data ends at byte {} before the end marker",
                           path_, consumed_);
    }
    return produced;
  }
  const std::string& error() const override { return error_; }
  const std::string& warning() const override { return warning_; }
  uint64_t compressed_bytes() const override { return consumed_; }

 private:
  static constexpr size_t kInputChunk = 256 * 1024;

  // Bytes after the last member that do not start another one: gzip(1) ignores them with a
  // warning; so does the reader, after counting them (the text before them is complete).
  void report_trailing_garbage() {
    const uint64_t at = consumed_ - state_->avail_in;
    uint64_t bytes = state_->avail_in;
    state_->avail_in = 0;
    while (refill()) {
      bytes += state_->avail_in;
      state_->avail_in = 0;
    }
    if (!error_.empty()) return;
    warning_ =
        fmt::format("{}: {} bytes after the end of the gzip data (from compressed byte {}) ignored", path_, bytes, at);
  }

  // Reads the next chunk of compressed bytes; the unconsumed input (at most a few bytes) is kept
  // in front of it.
  bool refill() {
    if (source_done_) return false;
    const uint32_t keep = state_->avail_in;
    if (keep > 0) std::memmove(in_.data(), state_->next_in, keep);
    std::string err;
    size_t got = src_->read(in_.data() + keep, in_.size() - keep, &err);
    if (!err.empty()) {
      error_ = fmt::format("{}: read error: {}", path_, err);
      return false;
    }
    if (got == 0) {
      source_done_ = true;
      return false;
    }
    consumed_ += got;
    state_->next_in = reinterpret_cast<uint8_t*>(in_.data());
    state_->avail_in = static_cast<uint32_t>(keep + got);
    return true;
  }

  std::string path_;
  std::unique_ptr<Source> src_;
  std::vector<char> in_;
  std::unique_ptr<inflate_state> state_;  // large (tens of kB): on the heap
  uint64_t consumed_ = 0;
  bool source_done_ = false;
  bool finished_ = false;
  std::string error_;
  std::string warning_;
};

// Passes bytes through and writes each one to `copy_` (see recording_stream()).
class RecordingStream final : public ByteStream {
 public:
  RecordingStream(std::unique_ptr<ByteStream> in, FILE* copy) : in_(std::move(in)), copy_(copy) {}
  ~RecordingStream() override {
    if (copy_ != nullptr) std::fclose(copy_);
  }
  RecordingStream(const RecordingStream&) = delete;
  RecordingStream& operator=(const RecordingStream&) = delete;
  size_t read(char* dst, size_t n) override {
    size_t got = in_->read(dst, n);
    if (got > 0 && error_.empty() && std::fwrite(dst, 1, got, copy_) != got) {
      error_ = fmt::format("cannot keep a copy of a non-regular input for repair: {}", std::strerror(errno));
    }
    return got;
  }
  const std::string& error() const override { return in_->error().empty() ? error_ : in_->error(); }
  const std::string& warning() const override { return in_->warning(); }
  uint64_t compressed_bytes() const override { return in_->compressed_bytes(); }
  // Hands over the copy, positioned at its first byte.
  FILE* take_copy() {
    FILE* f = copy_;
    copy_ = nullptr;
    return f;
  }

 private:
  std::unique_ptr<ByteStream> in_;
  FILE* copy_;
  std::string error_;
};

std::unique_ptr<ByteStream> make_stream(std::string name, std::unique_ptr<Source> src, std::string* error) {
  std::string head(2, '\0');
  std::string err;
  size_t got = src->read(head.data(), 2, &err);
  if (!err.empty()) {
    *error = fmt::format("{}: read error: {}", name, err);
    return nullptr;
  }
  head.resize(got);
  if (looks_gzipped(head)) return std::make_unique<GzipStream>(std::move(name), std::move(src), head);
  return std::make_unique<PlainStream>(std::move(name), std::move(src), std::move(head));
}

}  // namespace

bool looks_gzipped(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::unique_ptr<ByteStream> open_trace_stream(const std::string& path, std::string* error) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    *error = fmt::format("{}: cannot open: {}", path, std::strerror(errno));
    return nullptr;
  }
  auto source = std::make_unique<FileSource>(f);
  uint64_t size = 0;
  uint32_t trailer = 0;
  source->probe(&size, &trailer);
  auto stream = make_stream(path, std::move(source), error);
  if (stream) {
    const bool gzipped = dynamic_cast<GzipStream*>(stream.get()) != nullptr;
    // A gzip trailer smaller than the file is not the size (several members, or over 4 GiB).
    stream->set_size_hint(!gzipped ? size : (trailer >= size ? trailer : size * 16));
  }
  return stream;
}

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::unique_ptr<ByteStream> recording_stream(std::unique_ptr<ByteStream> in) {
  FILE* copy = std::tmpfile();
  if (copy == nullptr) return nullptr;
  const uint64_t hint = in->size_hint();
  auto recording = std::make_unique<RecordingStream>(std::move(in), copy);
  recording->set_size_hint(hint);
  return recording;
}

std::unique_ptr<ByteStream> replay_recording(std::unique_ptr<ByteStream> recording, std::string* error) {
  auto* rec = dynamic_cast<RecordingStream*>(recording.get());
  if (rec == nullptr) {
    *error = "internal: not a recording stream";
    return nullptr;
  }
  std::vector<char> chunk(1 << 16);
  while (rec->read(chunk.data(), chunk.size()) > 0) {
  }
  if (!rec->error().empty()) {
    *error = rec->error();
    return nullptr;
  }
  FILE* copy = rec->take_copy();
  if (std::fflush(copy) != 0 || std::fseek(copy, 0, SEEK_SET) != 0) {
    *error = fmt::format("cannot read back the copy of a non-regular input: {}", std::strerror(errno));
    std::fclose(copy);
    return nullptr;
  }
  // The copy holds inflated text: a plain stream (even if that text happened to start like gzip).
  return std::make_unique<PlainStream>("copy", std::make_unique<FileSource>(copy), std::string());
}

Result<simdjson::padded_string> read_whole_stream(ByteStream& in) {
  std::string text;
  char chunk[1 << 16];
  while (size_t n = in.read(chunk, sizeof(chunk))) text.append(chunk, n);
  if (!in.error().empty()) return Error{in.error()};
  return simdjson::padded_string(text);
}

std::unique_ptr<ByteStream> memory_stream(std::string_view name, std::string_view bytes) {
  std::string error;
  return make_stream(std::string(name), std::make_unique<MemorySource>(bytes), &error);
}

}  // namespace scaleprof::trace
