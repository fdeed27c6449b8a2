// strata::Error: an error as a value with context (what went wrong, where, what was expected).
//
// Every layer throws it; the CLI turns it into one message and an exit code. `where` names the place in the user's
// terms (a config key path, a kernel, a file), `expected` says what would have been accepted.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace strata {

class Error : public std::runtime_error {
public:
    Error(std::string what, std::string where = {}, std::string expected = {})
        : std::runtime_error(compose(what, where, expected)), m_what(std::move(what)), m_where(std::move(where)),
          m_expected(std::move(expected)) {}

    const std::string& problem() const { return m_what; }
    const std::string& where() const { return m_where; }
    const std::string& expected() const { return m_expected; }

private:
    static std::string compose(const std::string& what, const std::string& where, const std::string& expected) {
        std::string msg = where.empty() ? what : where + ": " + what;
        if (!expected.empty()) msg += " (expected " + expected + ")";
        return msg;
    }

    std::string m_what, m_where, m_expected;
};

} // namespace strata
