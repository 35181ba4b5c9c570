// A minimal PNG reader for the browser screenshot tests: 8-bit greyscale, RGB or RGBA, not
// interlaced (what headless Chromium writes). Pixels come back as RGB.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace scaleprof::testing {

struct PngImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3
  std::string error;         // empty when the image was read

  const uint8_t* at(int x, int y) const { return &rgb[(static_cast<size_t>(y) * width + x) * 3]; }
};

inline uint32_t png_be32(const std::string& s, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(s[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(s[at + 2])) << 8) | static_cast<uint8_t>(s[at + 3]);
}

inline PngImage read_png(const std::string& path) {
  PngImage img;
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string data = ss.str();
  if (data.size() < 8 || data.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) {
    img.error = "not a PNG file";
    return img;
  }
  std::string idat;
  int depth = 0;
  int color = 0;
  int interlace = 0;
  for (size_t at = 8; at + 12 <= data.size();) {
    const uint32_t len = png_be32(data, at);
    const std::string type = data.substr(at + 4, 4);
    if (at + 12 + len > data.size()) break;
    if (type == "IHDR") {
      img.width = static_cast<int>(png_be32(data, at + 8));
      img.height = static_cast<int>(png_be32(data, at + 12));
      depth = static_cast<uint8_t>(data[at + 16]);
      color = static_cast<uint8_t>(data[at + 17]);
      interlace = static_cast<uint8_t>(data[at + 20]);
    } else if (type == "IDAT") {
      idat += data.substr(at + 8, len);
    }
    at += 12 + len;
  }
  const int channels = color == 0 ? 1 : color == 2 ? 3 : color == 6 ? 4 : 0;
  if (depth != 8 || channels == 0 || interlace != 0 || img.width <= 0 || img.height <= 0) {
    img.error = "unsupported PNG (depth, colour type or interlace)";
    return img;
  }
  const size_t stride = static_cast<size_t>(img.width) * channels;
  std::vector<uint8_t> raw((stride + 1) * img.height);
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_len != raw.size()) {
    img.error = "PNG data does not inflate";
    return img;
  }
  std::vector<uint8_t> prev(stride, 0);
  std::vector<uint8_t> cur(stride);
  img.rgb.resize(static_cast<size_t>(img.width) * img.height * 3);
  for (int y = 0; y < img.height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* line = &raw[y * (stride + 1) + 1];
    for (size_t i = 0; i < stride; ++i) {
      const int a = i >= static_cast<size_t>(channels) ? cur[i - channels] : 0;
      const int b = prev[i];
      const int c = i >= static_cast<size_t>(channels) ? prev[i - channels] : 0;
      int pred = 0;
      switch (filter) {
        case 1:
          pred = a;
          break;
        case 2:
          pred = b;
          break;
        case 3:
          pred = (a + b) / 2;
          break;
        case 4: {
          const int p = a + b - c;
          const int pa = std::abs(p - a);
          const int pb = std::abs(p - b);
          const int pc = std::abs(p - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
          break;
        }
        default:
          pred = 0;
      }
      cur[i] = static_cast<uint8_t>(line[i] + pred);
    }
    for (int x = 0; x < img.width; ++x) {
      uint8_t* px = &img.rgb[(static_cast<size_t>(y) * img.width + x) * 3];
      const uint8_t* src = &cur[static_cast<size_t>(x) * channels];
      px[0] = src[0];
      px[1] = channels >= 3 ? src[1] : src[0];
      px[2] = channels >= 3 ? src[2] : src[0];
    }
    prev.swap(cur);
  }
  return img;
}

}  // namespace scaleprof::testing
