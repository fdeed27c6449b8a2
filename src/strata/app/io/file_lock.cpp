// RunLock and WriterLock: see file_lock.hpp for the contract.
#include <strata/app/io/file_lock.hpp>

#include <strata/core/error.hpp>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utility>

namespace strata::app {
namespace {

std::string lockFileOf(std::string const& path) { return path + ".lock"; }

std::string systemMessage(int error) { return std::strerror(error); }

// What fcntl answers on a file system that has no such locks.
bool locksUnsupported(int error) {
    return error == ENOLCK || error == ENOSYS || error == EOPNOTSUPP || error == EINVAL;
}

struct flock wholeFile(short type) {
    struct flock range {};
    range.l_type = type;
    range.l_whence = SEEK_SET;
    range.l_start = 0;
    range.l_len = 0; // to the end, however long the file grows
    return range;
}

// Another open file holds a lock on fd's file that conflicts with a read lock.
bool lockedByOther(int fd) {
    struct flock probe = wholeFile(F_RDLCK);
    if (::fcntl(fd, F_OFD_GETLK, &probe) != 0) return false;
    return probe.l_type != F_UNLCK;
}

std::string holderText(int fd) {
    char text[256] = {};
    ssize_t const n = ::pread(fd, text, sizeof text - 1, 0);
    std::string holder(text, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0'))
        holder.pop_back();
    return holder.empty() ? "another run" : holder;
}

std::string thisRun() {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    return "pid " + std::to_string(static_cast<long long>(::getpid())) + " on host " + (host[0] ? host : "?");
}

} // namespace

RunLock::~RunLock() { release(); }

RunLock::RunLock(RunLock&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)), m_file(std::move(other.m_file)) {}

RunLock& RunLock::operator=(RunLock&& other) noexcept {
    if (this != &other) {
        release();
        m_fd = std::exchange(other.m_fd, -1);
        m_file = std::move(other.m_file);
    }
    return *this;
}

bool RunLock::tryLock(std::string const& path, std::string& holder) {
    release();
    std::string const file = lockFileOf(path);
    // A holder that ends between our open and our lock removes the file we opened: lock again, on the new one.
    for (int attempt = 0; attempt < 16; ++attempt) {
        int const fd = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) throw Error("cannot create the lock file " + file + ": " + systemMessage(errno), path);
        struct flock range = wholeFile(F_WRLCK);
        if (::fcntl(fd, F_OFD_SETLK, &range) != 0) {
            int const error = errno;
            if (error == EAGAIN || error == EACCES) {
                holder = holderText(fd);
                ::close(fd);
                return false;
            }
            ::close(fd);
            if (locksUnsupported(error)) {
                ::unlink(file.c_str());
                return true;
            }
            throw Error("cannot lock " + file + ": " + systemMessage(error), path);
        }
        struct stat locked = {}, named = {};
        if (::fstat(fd, &locked) != 0 || ::stat(file.c_str(), &named) != 0 || locked.st_ino != named.st_ino ||
            locked.st_dev != named.st_dev) {
            ::close(fd);
            continue;
        }
        std::string const text = thisRun() + "\n";
        // Only the messages of refused runs read the text: the lock holds without it.
        [[maybe_unused]] bool const written =
            ::ftruncate(fd, 0) == 0 && ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
        m_fd = fd;
        m_file = file;
        return true;
    }
    throw Error("cannot take the lock " + file + ": it is replaced again and again", path);
}

void RunLock::release() {
    if (m_fd < 0) return;
    // Removed while still locked: a run that opened it in the meantime sees on locking that it is gone.
    ::unlink(m_file.c_str());
    ::close(m_fd);
    m_fd = -1;
}

std::string runLockHolder(std::string const& path) {
    int const fd = ::open(lockFileOf(path).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return "";
    std::string holder = lockedByOther(fd) ? holderText(fd) : "";
    ::close(fd);
    return holder;
}

WriterLock::~WriterLock() { release(); }

void WriterLock::lock(std::string const& file) {
    release();
    int const fd = ::open(file.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) throw Error("cannot open " + file + " to lock it: " + systemMessage(errno), file);
    struct flock range = wholeFile(F_WRLCK);
    if (::fcntl(fd, F_OFD_SETLK, &range) != 0) {
        int const error = errno;
        ::close(fd);
        if (locksUnsupported(error)) return;
        throw Error("cannot lock " + file + ": " + systemMessage(error), file);
    }
    m_fd = fd;
}

void WriterLock::release() {
    if (m_fd < 0) return;
    ::close(m_fd);
    m_fd = -1;
}

bool writerHolds(std::string const& file) {
    int const fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool const held = lockedByOther(fd);
    ::close(fd);
    return held;
}

} // namespace strata::app
