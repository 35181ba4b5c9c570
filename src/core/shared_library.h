// A dlopen()ed library that closes itself, and typed dlsym (GPU driver libraries, libcurl).
#pragma once

#include <string>

#include "core/result.h"

namespace scaleprof {

class SharedLibrary {
 public:
  SharedLibrary() = default;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;
  SharedLibrary(SharedLibrary&& other) noexcept : handle_(other.handle_), path_(std::move(other.path_)) {
    other.handle_ = nullptr;
  }
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  ~SharedLibrary();

  // Whether closing the handle may unmap the library. kNever (RTLD_NODELETE) is for a library loaded
  // once per process that must outlive every handle: libcurl brings OpenSSL, whose exit handlers and
  // thread-local data would point into unmapped memory if a static's destructor unloaded it before
  // the process ends (LeakSanitizer's exit check crashed on exactly that stale thread-local entry).
  enum class Unload { kOnClose, kNever };

  // dlopen(path, RTLD_NOW | RTLD_LOCAL): the library's symbols stay out of the global namespace.
  static Result<SharedLibrary> open(const std::string& path, Unload unload = Unload::kOnClose);

  // The symbol as a function pointer of type F, or nullptr when absent.
  template <class F>
  F function(const char* name) const {
    return reinterpret_cast<F>(symbol(name));  // NOLINT: dlsym's void* is how C gives functions
  }
  const std::string& path() const { return path_; }

 private:
  void* symbol(const char* name) const;
  void* handle_ = nullptr;
  std::string path_;
};

}  // namespace scaleprof
