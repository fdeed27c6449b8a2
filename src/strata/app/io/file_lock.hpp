// Locks between Strata runs: which files a live run holds, so that another run neither writes the same restart nor
// copies a history that is still being written.
//
// Both are Linux open file description locks (fcntl F_OFD_SETLK): they belong to the open file, so they are released
// when the process ends however it ends (a kill -9 included), and they are independent of the flock() locks HDF5 takes
// when a reader opens a netCDF-4 file (a reader of a history being written is never refused). Advisory: they keep
// Strata runs apart, not other programs. On a file system without such locks (Lustre mounted without flock, some
// FUSE file systems) the run goes on without them: RunLock says so (held() false, and the run prints a note), a
// WriterLock is not taken, and the checks that need them cannot refuse anything.
//
// RunLock: "<path>.lock", created next to a file the run will write (the restart), holding "pid PID on HOST" for the
// messages of the runs it refuses. Removed when the run ends; a kill leaves the file, unlocked, and the next run takes
// it. Whoever takes the lock checks afterwards that the file at the path is still the one it locked (a run ending at
// that moment removes it), so two runs never both hold it.
//
// WriterLock: held by a run on the history it writes (its temporary file, then the finished file until it is closed);
// writerHolds() tells a continuation that a live run still writes a file.
#pragma once

#include <string>

namespace strata::app {

class RunLock {
public:
    RunLock() = default; // holds nothing
    ~RunLock();
    RunLock(RunLock&& other) noexcept;
    RunLock& operator=(RunLock&& other) noexcept;
    RunLock(RunLock const&) = delete;
    RunLock& operator=(RunLock const&) = delete;

    // Takes "<path>.lock". Returns false, with `holder` saying who ("pid 123 on host n1"), when a live run holds it;
    // true when this run holds it, or when the file system has no locks (held() false). Throws strata::Error when
    // the lock file cannot be created or locked for another reason.
    bool tryLock(std::string const& path, std::string& holder);
    bool held() const { return m_fd >= 0; }
    void release(); // removes the lock file; also done by the destructor

private:
    int m_fd = -1;
    std::string m_file;
};

// Who holds "<path>.lock" ("pid 123 on host n1"), or empty when no live run does (also when there is no lock file).
// Creates nothing: `strata validate` asks this.
std::string runLockHolder(std::string const& path);

class WriterLock {
public:
    WriterLock() = default;
    ~WriterLock();
    WriterLock(WriterLock const&) = delete;
    WriterLock& operator=(WriterLock const&) = delete;
    // Locks `file` (which exists) for as long as this object lives or until release(); nothing on a file system
    // without locks. Throws strata::Error when it cannot be opened or locked for another reason.
    void lock(std::string const& file);
    void release();

private:
    int m_fd = -1;
};

// Whether a live process holds a WriterLock on `file` (false when the file cannot be opened).
bool writerHolds(std::string const& file);

} // namespace strata::app
