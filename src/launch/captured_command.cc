#include "launch/captured_command.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

extern char** environ;  // NOLINT(readability-redundant-declaration): POSIX declares it nowhere else

namespace scaleprof::launch {

namespace {

struct Pipe {
  int read = -1, write = -1;
  bool open() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return false;
    read = fds[0];
    write = fds[1];
    return true;
  }
  void close_read() {
    if (read >= 0) ::close(read);
    read = -1;
  }
  void close_write() {
    if (write >= 0) ::close(write);
    write = -1;
  }
  ~Pipe() {
    close_read();
    close_write();
  }
};

}  // namespace

Result<Captured> run_captured(const std::vector<std::string>& argv, const std::string& input) {
  if (argv.empty()) return Error{std::string("no command")};
  Pipe in, out, err;
  if (!in.open() || !out.open() || !err.open())
    return Error{fmt::format("cannot create pipes: {}", std::strerror(errno))};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.write, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write, STDERR_FILENO);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return Error{fmt::format("cannot run {}: {}{}", argv[0], std::strerror(rc),
                             rc == ENOENT ? " (is SLURM installed and on PATH?)" : "")};
  }
  in.close_read();
  out.close_write();
  err.close_write();
  // Feed stdin and drain both outputs together, so no side blocks on a full pipe.
  Captured result;
  size_t written = 0;
  if (input.empty()) in.close_write();
  ::signal(SIGPIPE, SIG_IGN);  // a child that stops reading stdin must not kill us
  while (out.read >= 0 || err.read >= 0 || in.write >= 0) {
    std::array<pollfd, 3> fds{};
    nfds_t n = 0;
    if (out.read >= 0) fds[n++] = {out.read, POLLIN, 0};
    if (err.read >= 0) fds[n++] = {err.read, POLLIN, 0};
    if (in.write >= 0) fds[n++] = {in.write, POLLOUT, 0};
    if (::poll(fds.data(), n, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in.write) {
        const ssize_t w = ::write(in.write, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 || written == input.size()) in.close_write();
        continue;
      }
      char buf[4096];
      const ssize_t r = ::read(fds[i].fd, buf, sizeof(buf));
      if (r > 0) {
        (fds[i].fd == out.read ? result.out : result.err).append(buf, static_cast<size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        if (fds[i].fd == out.read) {
          out.close_read();
        } else {
          err.close_read();
        }
      }
    }
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace scaleprof::launch
