#include "trace/file_source.h"

#include <fmt/format.h>
#include <libdeflate.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace scaleprof::trace {

namespace {

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};

struct DecompressorFree {
  void operator()(libdeflate_decompressor* d) const { libdeflate_free_decompressor(d); }
};

// Streaming inflate with zlib: handles any size and concatenated members, and reports where a
// corrupt or truncated stream stops.
Result<FileBytes> inflate_streaming(std::string_view path, std::string_view in) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) return Error{fmt::format("{}: cannot initialise zlib", path)};
  std::vector<char> out;
  out.reserve(in.size() * 8);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  char chunk[1 << 16];
  int rc = Z_OK;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk);
    zs.avail_out = sizeof(chunk);
    rc = inflate(&zs, Z_NO_FLUSH);
    out.insert(out.end(), chunk, chunk + (sizeof(chunk) - zs.avail_out));
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0) break;
      inflateReset(&zs);  // another gzip member follows
      continue;
    }
    if (rc != Z_OK) break;
    if (zs.avail_in == 0 && zs.avail_out != 0) {
      rc = Z_BUF_ERROR;
      break;
    }
  }
  size_t offset = in.size() - zs.avail_in;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    if (rc == Z_BUF_ERROR || zs.avail_in == 0) {
      return Error{
          fmt::format("{}: truncated gzip stream: compressed data ends at byte {} before the end "
                      "marker ({} bytes inflated)",
                      path, in.size(), out.size())};
    }
    return Error{fmt::format("{}: corrupt gzip data at compressed byte {}", path, offset)};
  }
  FileBytes result;
  result.text = simdjson::padded_string(out.data(), out.size());
  result.compressed_bytes = in.size();
  return result;
}

}  // namespace

bool looks_gzipped(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

Result<FileBytes> inflate_gzip(std::string_view path, std::string_view in) {
  if (in.size() < 18) {
    return Error{fmt::format("{}: truncated gzip stream: only {} bytes", path, in.size())};
  }
  // ISIZE (last 4 bytes) is the uncompressed size modulo 2^32 of the last member.
  uint32_t isize = 0;
  std::memcpy(&isize, in.data() + in.size() - 4, 4);
  // A gzip member cannot expand beyond ~1032:1; a larger ISIZE is corrupt, so do not allocate it.
  if (isize > 0 && static_cast<uint64_t>(isize) <= in.size() * 1040ULL) {
    std::unique_ptr<libdeflate_decompressor, DecompressorFree> d(libdeflate_alloc_decompressor());
    if (d) {
      FileBytes result;
      result.text = simdjson::padded_string(isize);
      size_t in_used = 0;
      size_t out_size = 0;
      libdeflate_result rc =
          libdeflate_gzip_decompress_ex(d.get(), in.data(), in.size(), result.text.data(), isize, &in_used, &out_size);
      if (rc == LIBDEFLATE_SUCCESS && in_used == in.size() && out_size == isize) {
        result.compressed_bytes = in.size();
        return result;
      }
    }
  }
  // Multi-member, >4 GiB or corrupt: zlib streams it and locates any error.
  return inflate_streaming(path, in);
}

Result<FileBytes> read_trace_bytes(const std::string& path) {
  std::unique_ptr<FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return Error{fmt::format("{}: cannot open: {}", path, std::strerror(errno))};
  if (std::fseek(f.get(), 0, SEEK_END) != 0) return Error{fmt::format("{}: cannot seek", path)};
  long size = std::ftell(f.get());
  if (size < 0) return Error{fmt::format("{}: cannot read size (is it a regular file?)", path)};
  std::rewind(f.get());
  if (size == 0) return Error{fmt::format("{}:0: empty file", path)};
  simdjson::padded_string raw(static_cast<size_t>(size));
  if (std::fread(raw.data(), 1, raw.size(), f.get()) != raw.size()) {
    return Error{fmt::format("{}: read error: {}", path, std::strerror(errno))};
  }
  std::string_view bytes(raw.data(), raw.size());
  if (looks_gzipped(bytes)) {
    auto inflated = inflate_gzip(path, bytes);
    if (!inflated) return inflated.error();
    if (inflated.value().text.size() == 0) return Error{fmt::format("{}:0: empty file (empty gzip stream)", path)};
    return inflated;
  }
  FileBytes result;
  result.compressed_bytes = raw.size();
  result.text = std::move(raw);
  return result;
}

}  // namespace scaleprof::trace
