#include "core/file_size_signal.h"

#include <pthread.h>

#include <ctime>

namespace scaleprof {

namespace {

sigset_t file_size_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGXFSZ);
  return set;
}

bool file_size_signal_pending() {
  sigset_t pending;
  sigemptyset(&pending);
  return sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
}

}  // namespace

FileSizeSignalBlock::FileSizeSignalBlock() {
  const sigset_t set = file_size_signal_set();
  pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
  // Only a caller that blocks SIGXFSZ itself can have one pending here (otherwise it would have been
  // delivered): one system call fewer on the usual path.
  was_pending_ = sigismember(&old_mask_, SIGXFSZ) == 1 && file_size_signal_pending();
}

FileSizeSignalBlock::~FileSizeSignalBlock() {
  if (!was_pending_ && file_size_signal_pending()) {
    // Our write raised it: consume it now, or unblocking would deliver it and end the process.
    const sigset_t set = file_size_signal_set();
    const timespec no_wait{};
    (void)sigtimedwait(&set, nullptr, &no_wait);
  }
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

}  // namespace scaleprof
