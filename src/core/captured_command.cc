#include "core/captured_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere else

namespace scaleprof {

namespace {

using Clock = std::chrono::steady_clock;

struct PipeFd {
  int fd = -1;
  PipeFd() = default;
  PipeFd(const PipeFd&) = delete;
  PipeFd& operator=(const PipeFd&) = delete;
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  ~PipeFd() { close(); }
};

struct Pipe {
  PipeFd read, write;
  bool open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    read.fd = fds[0];
    write.fd = fds[1];
    return true;
  }
};

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// A file descriptor that becomes readable when the process exits (Linux 5.3+), or -1: then exits
// are noticed by polling in short slices.
int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  return fd >= 0 ? static_cast<int>(fd) : -1;
#else
  (void)pid;
  return -1;
#endif
}

// True once the child has exited; it stays a zombie (WNOWAIT), so its pid, which is also its
// process group's id, cannot be reused while the group is signalled.
bool has_exited(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

std::string duration_text(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0) return fmt::format("{} s", d.count() / 1000);
  return fmt::format("{} ms", d.count());
}

std::string size_text(size_t bytes) {
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

// write() without SIGPIPE: the signal is blocked for this thread around the call and a SIGPIPE it
// raised is taken back, so a child that stops reading its input can neither kill this process nor
// require changing the process-wide disposition.
ssize_t write_no_sigpipe(int fd, const char* data, size_t size) {
  sigset_t pipe_set, old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  sigset_t pending;
  sigemptyset(&pending);
  ::sigpending(&pending);
  const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
  ::pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  const ssize_t w = ::write(fd, data, size);
  const int saved = errno;
  if (w < 0 && saved == EPIPE && !was_pending) {
    const timespec zero{};
    while (::sigtimedwait(&pipe_set, nullptr, &zero) < 0 && errno == EINTR) {
    }
  }
  ::pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  errno = saved;
  return w;
}

// Stops the child's whole process group: SIGTERM, then SIGKILL when the child has not exited within
// `grace`. Descendants that outlive the child are killed with it.
void stop_group(pid_t pid, int pidfd, std::chrono::milliseconds grace) {
  ::kill(-pid, SIGTERM);
  const Clock::time_point until = Clock::now() + grace;
  while (!has_exited(pid) && Clock::now() < until) {
    pollfd p{pidfd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
    const int slice = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(left, pidfd >= 0 ? left : 20)));
    ::poll(&p, pidfd >= 0 ? 1 : 0, slice);
  }
  ::kill(-pid, SIGKILL);
}

}  // namespace

Result<Captured> run_captured(const std::vector<std::string>& argv, const std::string& input,
                              const CaptureLimits& limits) {
  if (argv.empty()) return Error{std::string("no command")};
  const std::string& name = argv[0];
  Pipe in, out, err;
  if (!in.open() || !out.open() || !err.open()) {
    return Error{fmt::format("{}: cannot create pipes: {}", name, std::strerror(errno)), ErrorKind::kInternal};
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read.fd, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.write.fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write.fd, STDERR_FILENO);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults, empty;
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGCHLD, SIGALRM, SIGUSR1, SIGUSR2, SIGXFSZ, SIGTTIN,
                  SIGTTOU, SIGTSTP}) {
    sigaddset(&defaults, sig);
  }
  sigemptyset(&empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setpgroup(&attr, 0);  // a group of its own: stopped whole, descendants included
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    return Error{fmt::format("cannot run {}: {}{}", name, std::strerror(rc),
                             rc == ENOENT ? " (is SLURM installed and on PATH?)" : ""),
                 rc == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo};
  }
  in.read.close();
  out.write.close();
  err.write.close();
  PipeFd pidfd;
  pidfd.fd = open_pidfd(pid);
  set_nonblocking(out.read.fd);
  set_nonblocking(err.read.fd);
  set_nonblocking(in.write.fd);
  if (input.empty()) in.write.close();

  Captured result;
  size_t written = 0;
  const Clock::time_point deadline = Clock::now() + limits.deadline;
  std::string failure;  // set when the child had to be stopped
  bool exited = false;
  // Reads what is there now; false when the output passed the cap.
  auto drain = [&](PipeFd& fd, std::string& into) {
    char buf[65536];
    while (fd.fd >= 0) {
      const ssize_t r = ::read(fd.fd, buf, sizeof(buf));
      if (r > 0) {
        const size_t total = result.out.size() + result.err.size();
        const size_t room = limits.max_output_bytes > total ? limits.max_output_bytes - total : 0;
        into.append(buf, std::min(room, static_cast<size_t>(r)));
        if (static_cast<size_t>(r) > room) return false;
        continue;
      }
      if (r < 0 && errno == EINTR) continue;
      if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
      fd.close();  // end of file or an error
    }
    return true;
  };
  while (true) {
    exited = exited || has_exited(pid);
    if (exited) {
      // Everything the child wrote is in the pipes now; a descendant holding them is not waited for.
      if (!drain(out.read, result.out) || !drain(err.read, result.err)) {
        failure = fmt::format("{}: printed more than {}; stopped it", name, size_text(limits.max_output_bytes));
      }
      break;
    }
    const Clock::time_point now = Clock::now();
    if (now >= deadline) {
      failure = fmt::format("{}: no answer within {}; stopped it", name, duration_text(limits.deadline));
      break;
    }
    std::array<pollfd, 4> fds{};
    nfds_t n = 0;
    if (out.read.fd >= 0) fds[n++] = {out.read.fd, POLLIN, 0};
    if (err.read.fd >= 0) fds[n++] = {err.read.fd, POLLIN, 0};
    if (in.write.fd >= 0) fds[n++] = {in.write.fd, POLLOUT, 0};
    if (pidfd.fd >= 0) fds[n++] = {pidfd.fd, POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    // Without a pidfd, the exit is noticed by looking every 20 ms.
    const int timeout = static_cast<int>(std::min<int64_t>(left, pidfd.fd >= 0 ? 60'000 : 20));
    if (::poll(fds.data(), n, timeout) < 0 && errno != EINTR) {
      failure = fmt::format("{}: cannot wait for it: {}", name, std::strerror(errno));
      break;
    }
    bool over_cap = false;
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in.write.fd) {
        const ssize_t w = write_no_sigpipe(in.write.fd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) in.write.close();
      } else if (fds[i].fd == out.read.fd) {
        over_cap = over_cap || !drain(out.read, result.out);
      } else if (fds[i].fd == err.read.fd) {
        over_cap = over_cap || !drain(err.read, result.err);
      }
    }
    if (over_cap) {
      failure = fmt::format("{}: printed more than {}; stopped it", name, size_text(limits.max_output_bytes));
      break;
    }
  }
  if (!failure.empty()) {
    stop_group(pid, pidfd.fd, limits.grace);
  } else if (out.read.fd >= 0 || err.read.fd >= 0) {
    ::kill(-pid, SIGKILL);  // descendants still holding the output open: abandoned, stopped
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!failure.empty()) return Error{failure};
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace scaleprof
