// runIsolated: work that may crash inside a library, run in a child process, so that the crash ends the child and
// the program can report it.
//
// libnetcdf 4.9 crashes (SIGSEGV) opening some damaged files, e.g. a classic file with the top bit of its dimension
// count flipped; no check done before the call can rule every such file out. The work runs in a forked child: what it
// writes to its stream reaches `out` as it is written (through a pipe), its return value (0..255) comes back as
// `code`, and a child ended by a signal comes back as that signal, for the caller to report as an unreadable file.
//
// The child shares nothing back but the stream and the code: state the work changes stays in the child. It ends with
// _exit, so exit handlers (HDF5's, stdio's) run only once, in the parent. Where fork is unavailable or unsafe (it
// fails; MPI is initialised, whose libraries do not support a child that goes on using the process's state) the work
// runs in this process.
#pragma once

#include <functional>
#include <ostream>

namespace strata::app {

struct IsolatedResult {
    int code = 0;   // the work's return value (0..255), when no signal ended it
    int signal = 0; // the signal that ended the child: 0 if none, -1 if how it ended could not be learnt
};

IsolatedResult runIsolated(std::ostream& out, std::function<int(std::ostream&)> const& work);

} // namespace strata::app
