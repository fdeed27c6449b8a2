// runIsolated: see isolated.hpp.
#include <strata/app/io/isolated.hpp>

#include <mpi.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <streambuf>
#include <sys/wait.h>
#include <unistd.h>

namespace strata::app {
namespace {

// An unbuffered stream buffer over a file descriptor: each write reaches the parent at once, so what the work
// wrote before a crash is not lost.
class FdBuffer : public std::streambuf {
public:
    explicit FdBuffer(int fd) : m_fd(fd) {}

protected:
    std::streamsize xsputn(char const* s, std::streamsize n) override {
        std::streamsize done = 0;
        while (done < n) {
            ssize_t const w = ::write(m_fd, s + done, static_cast<std::size_t>(n - done));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            done += w;
        }
        return done;
    }
    int_type overflow(int_type c) override {
        if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
        char const ch = traits_type::to_char_type(c);
        return xsputn(&ch, 1) == 1 ? c : traits_type::eof();
    }

private:
    int m_fd;
};

bool mpiInitialised() {
    int initialised = 0, finalised = 0;
    MPI_Initialized(&initialised);
    MPI_Finalized(&finalised);
    return initialised && !finalised;
}

} // namespace

IsolatedResult runIsolated(std::ostream& out, std::function<int(std::ostream&)> const& work) {
    if (mpiInitialised()) return {work(out), 0};
    int fds[2];
    if (::pipe(fds) != 0) return {work(out), 0};
    // Nothing buffered may be written twice, once by each process.
    out.flush();
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    pid_t const pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        return {work(out), 0};
    }
    if (pid == 0) {
        ::close(fds[0]);
        FdBuffer buffer(fds[1]);
        std::ostream stream(&buffer);
        int code = 2;
        try {
            code = work(stream);
        } catch (...) { // never unwind into the caller's code: the child must end here
            ::abort();
        }
        ::_exit(code & 0xff);
    }
    ::close(fds[1]);
    char chunk[4096];
    for (;;) {
        ssize_t const n = ::read(fds[0], chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.write(chunk, n);
    }
    ::close(fds[0]);
    int status = 0;
    pid_t waited = 0;
    while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (waited < 0) return {0, -1};
    if (WIFSIGNALED(status)) return {0, WTERMSIG(status)};
    return {WEXITSTATUS(status), 0};
}

} // namespace strata::app
