// Running one command as a child and waiting for it while forwarding the signals a batch system or a
// user sends to the wrapper (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "collect/environment.h"
#include "core/result.h"

namespace scaleprof::collect {

struct ChildExit {
  int exit_code = 0;  // the child's code; 128+N when killed by signal N (as shells report it)
  int signal = 0;     // N, or 0 when it exited
  int forwarded = 0;  // signals passed on to the child
};

// A signal disposition the child gets in place of the caller's.
struct ChildSignal {
  int signal = 0;
  struct sigaction action {};
};

// Ignores `signal` in the whole process while alive and restores the previous disposition after.
// for_child() is that previous disposition: what a command started meanwhile must get (SIG_IGN is
// inherited through exec, and the command is the user's program, which should run as it would
// without scaleprof). Used by `scaleprof run` for SIGXFSZ (see wrapper.cc).
class IgnoredSignal {
 public:
  explicit IgnoredSignal(int signal);
  ~IgnoredSignal();
  IgnoredSignal(const IgnoredSignal&) = delete;
  IgnoredSignal& operator=(const IgnoredSignal&) = delete;
  ChildSignal for_child() const { return previous_; }

 private:
  ChildSignal previous_;
};

// Starts argv[0] (searched in PATH) with exactly `env`, calls `started(pid)` once it runs (with the
// forwarded signals blocked in the calling thread, so threads started there inherit the block and the
// wait below receives them), and waits for it. Signals from another process (kill, scancel) are
// forwarded to the child; those the terminal generated (Ctrl-C) already reached the child through
// its process group and are not sent twice. A command that cannot be started is an error whose
// message says why; *exec_errno receives errno (ENOENT -> shells' 127, else 126). The child gets
// SIGTERM when the calling thread's process dies (PR_SET_PDEATHSIG), so a `kill -9` of the wrapper
// does not leave the command running orphaned. The child gets the dispositions in `child_signals`
// (before exec) in place of the caller's.
Result<ChildExit> run_child(const std::vector<std::string>& argv, const Environment& env,
                            const std::function<void(pid_t)>& started, int* exec_errno,
                            const std::vector<ChildSignal>& child_signals = {});

}  // namespace scaleprof::collect
