#include "core/shared_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

namespace scaleprof {

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = other.handle_;
    path_ = std::move(other.path_);
    other.handle_ = nullptr;
  }
  return *this;
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

Result<SharedLibrary> SharedLibrary::open(const std::string& path, Unload unload) {
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | (unload == Unload::kNever ? RTLD_NODELETE : 0));
  if (handle == nullptr) {
    const char* why = dlerror();
    std::string text = why != nullptr ? why : "cannot be loaded";
    // dlerror usually starts with the path already.
    return Error{text.rfind(path, 0) == 0 ? text : fmt::format("{}: {}", path, text), ErrorKind::kNotFound};
  }
  SharedLibrary lib;
  lib.handle_ = handle;
  lib.path_ = path;
  return lib;
}

void* SharedLibrary::symbol(const char* name) const {
  return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

}  // namespace scaleprof
