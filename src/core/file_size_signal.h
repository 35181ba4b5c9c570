// Writes past a file-size limit (`ulimit -f`, RLIMIT_FSIZE) that fail instead of killing the process.
//
// The kernel answers such a write with SIGXFSZ, whose default action ends the process, and only when
// the signal is ignored or blocked does write() return EFBIG. scaleprof writes from inside the
// user's training (the Python API) and beside it (`scaleprof run`), where "monitoring never kills
// training" holds: its own writes run under this guard, so a limit reached by gpu.csv or epochs.csv
// is a counted write error, while the process-wide disposition stays the user's (the training's own
// writes behave as they would without scaleprof).
#pragma once

#include <signal.h>

namespace scaleprof {

// While alive, SIGXFSZ is blocked in the calling thread (SIGXFSZ from a write is sent to the thread
// that wrote), so a write past the limit fails with EFBIG. On destruction a SIGXFSZ raised meanwhile
// is taken off the thread's pending set (it was ours, not the user's) and the mask is restored. Cheap
// (a few system calls): used around every scaleprof write of a record or file.
class FileSizeSignalBlock {
 public:
  FileSizeSignalBlock();
  ~FileSizeSignalBlock();
  FileSizeSignalBlock(const FileSizeSignalBlock&) = delete;
  FileSizeSignalBlock& operator=(const FileSizeSignalBlock&) = delete;

 private:
  sigset_t old_mask_{};
  bool was_pending_ = false;  // a SIGXFSZ pending before the guard is the caller's: left as it is
};

}  // namespace scaleprof
