// The core's one error model: a value, or a negative errno.
//
// Factories return Result<T>; plain operations return int (0 or -errno).
// One whose failure an operator reads about returns Result<T, Failure>
// (or a Failure, error 0 for success): the errno and why, as one value.
// A caller that needs more to decide what to do next gets a Failure with
// the rest (see QueueFailure).  No out-parameter buffers: the C API turns
// these into OVS's positive errno and message exactly once, at the edge.
#ifndef AFXDP_RESULT_HH
#define AFXDP_RESULT_HH

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <utility>

namespace afxdp {

// The length of every reason the core gives an operator (status, log).
constexpr size_t kWhyLen = 288;

// A failure: a negative errno, and why in words.  Error 0: none.
struct Failure {
    int error = 0;
    char why[kWhyLen] = "";

    explicit operator bool() const noexcept { return error != 0; }
};

// A Failure of 'error' (negative), its reason printf-style.
__attribute__((format(printf, 2, 3))) inline Failure
fail(int error, const char *format, ...) noexcept
{
    Failure f;
    f.error = error;
    va_list args;
    va_start(args, format);
    std::vsnprintf(f.why, sizeof f.why, format, args);
    va_end(args);
    return f;
}

template <typename T, typename E = int>
class Result {
public:
    Result(T &&value) : value_(std::move(value)) {}   // NOLINT: implicit.
    static Result failure(E error)
    {
        return Result(FailureTag{}, std::move(error));
    }

    bool ok() const noexcept { return value_.has_value(); }
    // With E = int: 0 or a negative errno.
    const E &error() const noexcept { return error_; }
    T &value() noexcept { return *value_; }
    T &&take() noexcept { return std::move(*value_); }

private:
    struct FailureTag {};
    Result(FailureTag, E &&error) : error_(std::move(error)) {}
    std::optional<T> value_;
    E error_{};
};

}  // namespace afxdp

#endif  // AFXDP_RESULT_HH
