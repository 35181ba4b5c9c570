#include "collect/child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace scaleprof::collect {

namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

// Restores the caller's signal mask on every path out of run_child.
class MaskGuard {
 public:
  explicit MaskGuard(const sigset_t& block) { pthread_sigmask(SIG_BLOCK, &block, &old_); }
  ~MaskGuard() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  MaskGuard(const MaskGuard&) = delete;
  MaskGuard& operator=(const MaskGuard&) = delete;
  const sigset_t& old() const { return old_; }

 private:
  sigset_t old_{};
};

}  // namespace

IgnoredSignal::IgnoredSignal(int signal) {
  previous_.signal = signal;
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(signal, &ignore, &previous_.action);
}

IgnoredSignal::~IgnoredSignal() {
  sigaction(previous_.signal, &previous_.action, nullptr);
}

Result<ChildExit> run_child(const std::vector<std::string>& argv, const Environment& env,
                            const std::function<void(pid_t)>& started, int* exec_errno,
                            const std::vector<ChildSignal>& child_signals) {
  *exec_errno = 0;
  if (argv.empty()) return Error{"no command given"};
  sigset_t waited;
  sigemptyset(&waited);
  for (int s : kForwarded) sigaddset(&waited, s);
  sigaddset(&waited, SIGCHLD);
  MaskGuard mask(waited);

  // Everything the child needs is built before fork(): after it, only async-signal-safe calls.
  std::vector<std::string> env_strings = env.to_strings();
  std::vector<char*> c_env, c_argv;
  c_env.reserve(env_strings.size() + 1);
  for (std::string& s : env_strings) c_env.push_back(s.data());
  c_env.push_back(nullptr);
  std::vector<std::string> args = argv;
  c_argv.reserve(args.size() + 1);
  for (std::string& s : args) c_argv.push_back(s.data());
  c_argv.push_back(nullptr);

  // A close-on-exec pipe tells the parent whether exec worked: it reads EOF on success, errno on failure.
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0)
    return Error{fmt::format("cannot create a pipe: {}", std::strerror(errno)), ErrorKind::kInternal};
  const pid_t wrapper = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return Error{fmt::format("cannot start {}: fork failed: {}", argv[0], std::strerror(e)), ErrorKind::kInternal};
  }
  if (pid == 0) {
    close(pipe_fds[0]);
    // The command must not outlive the wrapper (kill -9 of `scaleprof run` would orphan the training):
    // the kernel sends SIGTERM when the wrapper dies. If it died before prctl, getppid() has changed.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != wrapper) _exit(128 + SIGTERM);
    for (int s : kForwarded) signal(s, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    for (const ChildSignal& s : child_signals) sigaction(s.signal, &s.action, nullptr);
    sigprocmask(SIG_SETMASK, &mask.old(), nullptr);
    // execvpe searches this process's PATH; the wrapper hands the child the same PATH.
    execvpe(c_argv[0], c_argv.data(), c_env.data());
    int e = errno;
    ssize_t ignored = write(pipe_fds[1], &e, sizeof(e));
    (void)ignored;
    _exit(127);
  }
  close(pipe_fds[1]);
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(pipe_fds[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  close(pipe_fds[0]);
  if (n == static_cast<ssize_t>(sizeof(child_errno))) {
    waitpid(pid, nullptr, 0);
    *exec_errno = child_errno;
    return Error{fmt::format("cannot run {}: {}", argv[0],
                             child_errno == ENOENT ? "command not found" : std::strerror(child_errno)),
                 child_errno == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo};
  }

  if (started) started(pid);
  ChildExit result;
  while (true) {
    siginfo_t info{};
    int sig = sigwaitinfo(&waited, &info);
    if (sig < 0) {
      if (errno == EINTR) continue;
      return Error{fmt::format("waiting for {} failed: {}", argv[0], std::strerror(errno)), ErrorKind::kInternal};
    }
    if (sig != SIGCHLD) {
      if (info.si_code != SI_KERNEL) {
        kill(pid, sig);
        ++result.forwarded;
      }
      continue;
    }
    int status = 0;
    pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == 0) continue;  // another child of this process (none expected) or a stop
    if (done < 0 && errno == EINTR) continue;
    if (done < 0)
      return Error{fmt::format("waiting for {} failed: {}", argv[0], std::strerror(errno)), ErrorKind::kInternal};
    if (WIFEXITED(status)) {
      result.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      result.signal = WTERMSIG(status);
      result.exit_code = 128 + result.signal;
    } else {
      continue;
    }
    return result;
  }
}

}  // namespace scaleprof::collect
