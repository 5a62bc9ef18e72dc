#pragma once
/// @file Errors that every rank agrees on before anyone throws.
#include <stdexcept>
#include <string>

namespace kembed {

class Comm;

/// The one exception type of kembed: a message meant for the user.
/// When it escapes to main, every rank holds the same message (see agree()).
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// Collective: every rank passes its local error message (empty when fine).
/// If any rank has one, every rank throws Error with the message of the lowest
/// such rank; otherwise returns on every rank. Must be reached by all ranks.
void agree(const Comm& comm, const std::string& local_error);

/// Collective: runs `body` (which must not call collectives), catching any
/// exception it throws (Error, std::bad_alloc, ...), then agree()s.
template <class F>
void collectively(const Comm& comm, F&& body) {
  std::string message;
  try {
    body();
  } catch (const std::bad_alloc&) {
    message = "out of memory";
  } catch (const std::exception& e) {
    message = e.what();
    if (message.empty()) message = "unknown error";
  }
  agree(comm, message);
}

}  // namespace kembed
