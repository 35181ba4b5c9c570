#include "trace/byte_stream.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "trace/file_source.h"

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

class GzipStream final : public ByteStream {
 public:
  GzipStream(std::string path, std::unique_ptr<Source> src, std::string head)
      : path_(std::move(path)), src_(std::move(src)), in_(kInputChunk) {
    std::memcpy(in_.data(), head.data(), head.size());
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
    zs_.avail_in = static_cast<uInt>(head.size());
    consumed_ = head.size();
    if (inflateInit2(&zs_, 15 + 16) != Z_OK) error_ = fmt::format("{}: cannot initialise zlib", path_);
  }
  ~GzipStream() override { inflateEnd(&zs_); }

  size_t read(char* dst, size_t n) override {
    if (!error_.empty() || finished_) return 0;
    zs_.next_out = reinterpret_cast<Bytef*>(dst);
    zs_.avail_out = static_cast<uInt>(n);
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0 && !refill()) break;
      int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // Another member may follow (concatenated gzip); anything else after the end is ignored.
        if (zs_.avail_in == 0 && !refill()) {
          finished_ = true;
          break;
        }
        if (zs_.avail_in >= 2 && zs_.next_in[0] == 0x1f && zs_.next_in[1] == 0x8b) {
          inflateReset(&zs_);
          continue;
        }
        finished_ = true;
        break;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        error_ = fmt::format("{}: corrupt gzip data at compressed byte {}", path_, consumed_ - zs_.avail_in);
        break;
      }
      if (rc == Z_BUF_ERROR && zs_.avail_in == 0 && source_done_) break;
    }
    size_t produced = n - zs_.avail_out;
    if (produced == 0 && !finished_ && error_.empty()) {
      error_ = fmt::format("{}: truncated gzip stream: the compressed data ends at byte {} before the end marker",
                           path_, consumed_);
    }
    return produced;
  }
  const std::string& error() const override { return error_; }
  uint64_t compressed_bytes() const override { return consumed_; }

 private:
  static constexpr size_t kInputChunk = 256 * 1024;

  bool refill() {
    if (source_done_) return false;
    std::string err;
    size_t got = src_->read(in_.data(), in_.size(), &err);
    if (!err.empty()) {
      error_ = fmt::format("{}: read error: {}", path_, err);
      return false;
    }
    if (got == 0) {
      source_done_ = true;
      return false;
    }
    consumed_ += got;
    zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
    zs_.avail_in = static_cast<uInt>(got);
    return true;
  }

  std::string path_;
  std::unique_ptr<Source> src_;
  std::vector<char> in_;
  z_stream zs_{};
  uint64_t consumed_ = 0;
  bool source_done_ = false;
  bool finished_ = false;
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
  if (looks_gzipped(head)) return std::make_unique<GzipStream>(std::move(name), std::move(src), std::move(head));
  return std::make_unique<PlainStream>(std::move(name), std::move(src), std::move(head));
}

}  // namespace

std::unique_ptr<ByteStream> open_trace_stream(const std::string& path, std::string* error) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    *error = fmt::format("{}: cannot open: {}", path, std::strerror(errno));
    return nullptr;
  }
  return make_stream(path, std::make_unique<FileSource>(f), error);
}

std::unique_ptr<ByteStream> memory_stream(std::string_view name, std::string_view bytes) {
  std::string error;
  return make_stream(std::string(name), std::make_unique<MemorySource>(bytes), &error);
}

}  // namespace scaleprof::trace
